#include "workloads/attention/attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace accelbench::attention {

// Plain loops over the layouts of attention_shape.hpp; double accumulation.
namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

struct ref_index {
  const attention_shape& s;
  int64_t group() const { return s.heads / s.kv_heads; }
  int64_t q(int64_t b, int64_t i, int64_t h) const {
    return ((b * s.seq_q + i) * s.heads + h) * s.head_dim;
  }
  int64_t k(int64_t b, int64_t j, int64_t hk) const {
    return ((b * s.seq_k + j) * s.kv_heads + hk) * s.head_dim;
  }
  // Keys visible to query row i: [0, end).
  int64_t end(int64_t i) const {
    if (!s.causal)
      return s.seq_k;
    return std::clamp<int64_t>(i + s.seq_k - s.seq_q + 1, 0, s.seq_k);
  }
};

double dot(const float* a, const float* b, int64_t n) {
  double acc = 0;
  for (int64_t d = 0; d < n; ++d)
    acc += double(a[d]) * double(b[d]);
  return acc;
}

// Scaled scores of row i into p[0, end) and their softmax in place; returns lse.
double softmax_row(const attention_shape& s, const float* q, const float* k, int64_t b, int64_t h,
                   int64_t i, std::vector<double>& p) {
  ref_index ix{s};
  const int64_t end = ix.end(i), hk = h / ix.group(), D = s.head_dim;
  const double scale = s.effective_scale();
  p.assign(size_t(s.seq_k), 0.0);
  if (end == 0)
    return k_inf;
  double mx = -k_inf;
  for (int64_t j = 0; j < end; ++j) {
    p[j] = scale * dot(q + ix.q(b, i, h), k + ix.k(b, j, hk), D);
    mx = std::max(mx, p[j]);
  }
  double sum = 0;
  for (int64_t j = 0; j < end; ++j)
    sum += (p[j] = std::exp(p[j] - mx));
  for (int64_t j = 0; j < end; ++j)
    p[j] /= sum;
  return mx + std::log(sum);
}

} // namespace

double reference_forward_row(const attention_shape& s, const float* q, const float* k,
                             const float* v, int64_t b, int64_t h, int64_t i, double* o_row) {
  ref_index ix{s};
  std::vector<double> p;
  const double lse = softmax_row(s, q, k, b, h, i, p);
  const int64_t hk = h / ix.group(), D = s.head_dim;
  std::fill(o_row, o_row + D, 0.0);
  for (int64_t j = 0; j < ix.end(i); ++j) {
    const float* vr = v + ix.k(b, j, hk);
    for (int64_t d = 0; d < D; ++d)
      o_row[d] += p[j] * vr[d];
  }
  return lse;
}

void reference_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                       double* o, double* lse) {
  check_shape(s);
  ref_index ix{s};
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.seq_q; ++i)
        lse[(b * s.heads + h) * s.seq_q + i] =
            reference_forward_row(s, q, k, v, b, h, i, o + ix.q(b, i, h));
}

void reference_dq_row(const attention_shape& s, const float* q, const float* k, const float* v,
                      const float* d_o, int64_t b, int64_t h, int64_t i, double* dq_row) {
  ref_index ix{s};
  const int64_t D = s.head_dim, hk = h / ix.group(), end = ix.end(i);
  const double scale = s.effective_scale();
  std::vector<double> p, o(size_t(D), 0.0);
  softmax_row(s, q, k, b, h, i, p);
  const float* dor = d_o + ix.q(b, i, h);
  for (int64_t j = 0; j < end; ++j) {
    const float* vr = v + ix.k(b, j, hk);
    for (int64_t d = 0; d < D; ++d)
      o[d] += p[j] * vr[d];
  }
  double di = 0;
  for (int64_t d = 0; d < D; ++d)
    di += double(dor[d]) * o[d];
  std::fill(dq_row, dq_row + D, 0.0);
  for (int64_t j = 0; j < end; ++j) {
    const double ds = p[j] * (dot(dor, v + ix.k(b, j, hk), D) - di);
    const float* kr = k + ix.k(b, j, hk);
    for (int64_t d = 0; d < D; ++d)
      dq_row[d] += scale * ds * kr[d];
  }
}

void reference_row_stats(const attention_shape& s, const float* q, const float* k, const float* v,
                         const float* d_o, int64_t b, int64_t h, double* lse, double* di) {
  ref_index ix{s};
  const int64_t D = s.head_dim;
#pragma omp parallel
  {
    std::vector<double> o(static_cast<size_t>(D));
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < s.seq_q; ++i) {
      lse[i] = reference_forward_row(s, q, k, v, b, h, i, o.data());
      const float* dor = d_o + ix.q(b, i, h);
      double acc = 0;
      for (int64_t d = 0; d < D; ++d)
        acc += double(dor[d]) * o[size_t(d)];
      di[i] = acc;
    }
  }
}

void reference_dkv_row(const attention_shape& s, const float* q, const float* k, const float* v,
                       const float* d_o, const double* lse, const double* di, int64_t b, int64_t hk,
                       int64_t j, double* dk_row, double* dv_row) {
  ref_index ix{s};
  const int64_t D = s.head_dim, G = ix.group();
  const double scale = s.effective_scale();
  std::fill(dk_row, dk_row + D, 0.0);
  std::fill(dv_row, dv_row + D, 0.0);
  const float* kr = k + ix.k(b, j, hk);
  const float* vr = v + ix.k(b, j, hk);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t i = 0; i < s.seq_q; ++i) {
      if (j >= ix.end(i))
        continue;
      const double l = lse[g * s.seq_q + i];
      if (std::isinf(l))
        continue;
      const int64_t h = hk * G + g;
      const float* qr = q + ix.q(b, i, h);
      const float* dor = d_o + ix.q(b, i, h);
      const double p = std::exp(scale * dot(qr, kr, D) - l);
      const double ds = p * (dot(dor, vr, D) - di[g * s.seq_q + i]);
      for (int64_t d = 0; d < D; ++d) {
        dv_row[d] += p * dor[d];
        dk_row[d] += scale * ds * qr[d];
      }
    }
}

void reference_backward(const attention_shape& s, const float* q, const float* k, const float* v,
                        const float* d_o, double* dq, double* dk, double* dv) {
  check_shape(s);
  ref_index ix{s};
  const int64_t D = s.head_dim, SQ = s.seq_q, SK = s.seq_k;
  const double scale = s.effective_scale();
  std::fill(dk, dk + s.batch * SK * s.kv_heads * D, 0.0);
  std::fill(dv, dv + s.batch * SK * s.kv_heads * D, 0.0);
  // The whole probability matrix of one head, materialised (seq_q x seq_k doubles).
  std::vector<double> P(size_t(SQ * SK)), row;
  std::vector<double> o(static_cast<size_t>(D));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t hk = h / ix.group();
      for (int64_t i = 0; i < SQ; ++i) {
        softmax_row(s, q, k, b, h, i, row);
        std::copy(row.begin(), row.end(), P.begin() + i * SK);
      }
      for (int64_t i = 0; i < SQ; ++i) {
        const float* dor = d_o + ix.q(b, i, h);
        double* dqr = dq + ix.q(b, i, h);
        std::fill(o.begin(), o.end(), 0.0);
        std::fill(dqr, dqr + D, 0.0);
        for (int64_t j = 0; j < SK; ++j)
          for (int64_t d = 0; d < D; ++d)
            o[d] += P[i * SK + j] * v[ix.k(b, j, hk) + d];
        double di = 0;
        for (int64_t d = 0; d < D; ++d)
          di += dor[d] * o[d];
        for (int64_t j = 0; j < SK; ++j) {
          const double p = P[i * SK + j];
          if (p == 0)
            continue;
          const double ds = p * (dot(dor, v + ix.k(b, j, hk), D) - di);
          const float* kr = k + ix.k(b, j, hk);
          const float* qr = q + ix.q(b, i, h);
          double* dkr = dk + ix.k(b, j, hk);
          double* dvr = dv + ix.k(b, j, hk);
          for (int64_t d = 0; d < D; ++d) {
            dqr[d] += scale * ds * kr[d];
            dkr[d] += scale * ds * qr[d];
            dvr[d] += p * dor[d];
          }
        }
      }
    }
}

} // namespace accelbench::attention
