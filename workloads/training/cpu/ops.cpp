#include "workloads/training/cpu/ops.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include <dnnl.hpp>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "kernels/attention/cpu/flash_attention.hpp"
#include "workloads/training/cpu/fast_kernel.hpp"

namespace accelbench::training {

// ---------------------------------------------------------------------------------------------
// matmul

float round_to_bf16(float x) { return bf16_to_float(float_to_bf16(x)); }

namespace {

// n floats -> bf16, round to nearest even (float_to_bf16, branch-free after if-conversion, so the
// AVX clones vectorise it: the same bits, a fraction of the time of the scalar loop).
k_fast_kernel void convert_row_bf16(uint16_t* d, const float* s, int64_t n) {
  for (int64_t c = 0; c < n; c++)
    d[c] = float_to_bf16(s[c]);
}

// rows x cols matrix with leading dimension ld -> contiguous bf16
void convert_bf16(std::vector<uint16_t>& dst, const float* src, int64_t rows, int64_t cols,
                  int64_t ld) {
  dst.resize(size_t(rows * cols));
  uint16_t* d = dst.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++)
    convert_row_bf16(d + r * cols, src + r * ld, cols);
}

struct dnnl_env {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  // Primitive creation costs far more than a small matmul, so primitives are cached per shape.
  std::map<std::tuple<int, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool>,
           dnnl::matmul>
      cache;
  std::mutex mu;
  std::vector<uint16_t> a16, b16;
  // One scratchpad for all primitives (user mode): oneDNN's default allocates and frees it on
  // every call, which costs page faults on each of the hundreds of matmuls of a step.
  std::vector<char> scratchpad;
};

dnnl_env& env() {
  static dnnl_env e;
  return e;
}

} // namespace

void matmul(compute_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
            const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
            bool accumulate) {
  using dnnl::memory;
  auto& e = env();
  std::lock_guard<std::mutex> lock(e.mu);
  const bool bf = dt == compute_dtype::bf16;
  int64_t lda_eff = lda, ldb_eff = ldb;
  const void* pa = a;
  const void* pb = b;
  if (bf) {
    // Stored shapes: A is [M,K] or, transposed, [K,M]; B is [K,N] or [N,K].
    convert_bf16(e.a16, a, trans_a ? k : m, trans_a ? m : k, lda);
    convert_bf16(e.b16, b, trans_b ? n : k, trans_b ? k : n, ldb);
    lda_eff = trans_a ? m : k;
    ldb_eff = trans_b ? k : n;
    pa = e.a16.data();
    pb = e.b16.data();
  }
  auto key = std::make_tuple(int(bf), trans_a, trans_b, m, n, k, lda_eff, ldb_eff, ldc, accumulate);
  auto it = e.cache.find(key);
  const auto in_t = bf ? memory::data_type::bf16 : memory::data_type::f32;
  memory::desc a_md({m, k}, in_t, trans_a ? memory::dims{1, lda_eff} : memory::dims{lda_eff, 1});
  memory::desc b_md({k, n}, in_t, trans_b ? memory::dims{1, ldb_eff} : memory::dims{ldb_eff, 1});
  memory::desc c_md({m, n}, memory::data_type::f32, memory::dims{ldc, 1});
  if (it == e.cache.end()) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (accumulate) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, e.eng);
    e.scratchpad.resize(
        std::max({e.scratchpad.size(), pd.scratchpad_desc().get_size(), size_t(64)}));
    it = e.cache.emplace(key, dnnl::matmul(pd)).first;
  }
  memory am(a_md, e.eng, const_cast<void*>(pa));
  memory bm(b_md, e.eng, const_cast<void*>(pb));
  memory cm(c_md, e.eng, c);
  memory sm({{int64_t(e.scratchpad.size())}, memory::data_type::u8, memory::format_tag::a}, e.eng,
            e.scratchpad.data());
  it->second.execute(
      e.strm,
      {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}, {DNNL_ARG_SCRATCHPAD, sm}});
  e.strm.wait();
}

void linear_forward(compute_dtype dt, float* out, const float* inp, const float* w, int64_t bt,
                    int64_t c, int64_t oc) {
  matmul(dt, false, true, bt, oc, c, inp, c, w, c, out, oc, false);
}

void linear_backward(compute_dtype dt, float* dinp, float* dw, const float* dout, const float* inp,
                     const float* w, int64_t bt, int64_t c, int64_t oc, bool accumulate_dinp) {
  if (dinp)
    matmul(dt, false, false, bt, c, oc, dout, oc, w, c, dinp, c, accumulate_dinp);
  matmul(dt, true, false, oc, c, bt, dout, oc, inp, c, dw, c, true);
}

// ---------------------------------------------------------------------------------------------
// embedding

void embedding_forward(float* out, const int32_t* tokens, const float* wte, int64_t bt, int64_t c) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++)
    std::memcpy(out + i * c, wte + int64_t(tokens[i]) * c, size_t(c) * sizeof(float));
}

void embedding_backward(float* dwte, const float* dout, const int32_t* tokens, int64_t bt,
                        int64_t c) {
  // Serial over tokens (a token id may repeat): the summation order is fixed, so the result is
  // bit-identical for any thread count.
  for (int64_t i = 0; i < bt; i++) {
    float* d = dwte + int64_t(tokens[i]) * c;
    const float* g = dout + i * c;
    for (int64_t j = 0; j < c; j++)
      d[j] += g[j];
  }
}

// ---------------------------------------------------------------------------------------------
// RMSNorm: one pass per row for the statistics, sums in 16 lanes (vectorised; the order differs
// from reference::, within the bound the tests state), the gain gradient in the reference's order.

namespace {

constexpr int64_t k_lanes = 16;

// sum_j a[j] * b[j] in k_lanes partial sums (lane l takes j = l mod k_lanes), then the tail, then
// the lanes in order: the same bits on every ISA clone (no FMA contraction in ISO C++ mode).
k_fast_kernel float lane_dot(const float* a, const float* b, int64_t n) {
  float acc[k_lanes] = {};
  int64_t j = 0;
  for (; j + k_lanes <= n; j += k_lanes)
    for (int64_t l = 0; l < k_lanes; l++)
      acc[l] += a[j + l] * b[j + l];
  float s = 0;
  for (; j < n; j++)
    s += a[j] * b[j];
  for (float lane : acc)
    s += lane;
  return s;
}

k_fast_kernel void scale_row(float* o, const float* x, float r, const float* w, int64_t c) {
  for (int64_t j = 0; j < c; j++)
    o[j] = x[j] * r * w[j];
}

// dx += r w dy - coef x, with wdy = w * dy (the reference's products, in its order)
k_fast_kernel void rms_dx_row(float* dx, const float* x, const float* dy, const float* w, float r,
                              int64_t c, float* wdy) {
  for (int64_t j = 0; j < c; j++)
    wdy[j] = w[j] * dy[j];
  const float coef = lane_dot(wdy, x, c) * r * r * r / float(c);
  for (int64_t j = 0; j < c; j++)
    dx[j] += r * w[j] * dy[j] - coef * x[j];
}

// dweight[j0, j1) += sum_i dout[i,j] inp[i,j] rstd[i], rows in order (the reference's sums).
k_fast_kernel void rms_dweight_block(float* dweight, const float* dout, const float* inp,
                                     const float* rstd, int64_t bt, int64_t c, int64_t j0,
                                     int64_t j1) {
  float s[64] = {};
  const int64_t n = j1 - j0;
  for (int64_t i = 0; i < bt; i++) {
    const float* dy = dout + i * c + j0;
    const float* x = inp + i * c + j0;
    const float r = rstd[i];
    for (int64_t j = 0; j < n; j++)
      s[j] += dy[j] * x[j] * r;
  }
  for (int64_t j = 0; j < n; j++)
    dweight[j0 + j] += s[j];
}

} // namespace

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t bt,
                     int64_t c, float eps) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++) {
    const float* x = inp + i * c;
    float r = 1.0f / std::sqrt(lane_dot(x, x, c) / float(c) + eps);
    rstd[i] = r;
    scale_row(out + i * c, x, r, weight, c);
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t bt, int64_t c) {
  // y_j = x_j r w_j, r = (mean(x^2)+eps)^-1/2  =>  dx_j = r w_j dy_j - x_j r^3/C sum_k(w_k dy_k
  // x_k)
#pragma omp parallel
  {
    std::vector<float> wdy(static_cast<size_t>(c));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < bt; i++)
      rms_dx_row(dinp + i * c, inp + i * c, dout + i * c, weight, rstd[i], c, wdy.data());
  }
  // dweight: blocks of 64 channels in parallel, rows in order within each (deterministic).
  const int64_t blocks = (c + 63) / 64;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; b++)
    rms_dweight_block(dweight, dout, inp, rstd, bt, c, b * 64, std::min(c, b * 64 + 64));
}

// ---------------------------------------------------------------------------------------------
// RoPE

namespace {
void rope_apply(float* x, const rope_table& r, int64_t b, int64_t t, int64_t nh, int64_t hd,
                float sign) {
  const int64_t half = hd / 2;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t bi = 0; bi < b; bi++)
    for (int64_t ti = 0; ti < t; ti++) {
      const float* cs = r.cos.data() + ti * half;
      const float* sn = r.sin.data() + ti * half;
      for (int64_t h = 0; h < nh; h++) {
        float* v = x + ((bi * t + ti) * nh + h) * hd;
        for (int64_t i = 0; i < half; i++) {
          float x1 = v[i], x2 = v[i + half], s = sign * sn[i];
          v[i] = x1 * cs[i] - x2 * s;
          v[i + half] = x2 * cs[i] + x1 * s;
        }
      }
    }
}
} // namespace

void rope_forward(float* x, const rope_table& r, int64_t b, int64_t t, int64_t nh, int64_t hd) {
  rope_apply(x, r, b, t, nh, hd, 1.0f);
}

void rope_backward(float* dx, const rope_table& r, int64_t b, int64_t t, int64_t nh, int64_t hd) {
  rope_apply(dx, r, b, t, nh, hd, -1.0f);
}

// ---------------------------------------------------------------------------------------------
// attention

namespace {

k_fast_kernel void widen_row_bf16(float* d, const uint16_t* s, int64_t n) {
  for (int64_t c = 0; c < n; c++)
    d[c] = bf16_to_float(s[c]);
}

// The bf16 attention tensors widened back to fp32, in rows of 4096 across the threads (the
// rounding the other way is convert_bf16's).
void to_float(float* dst, const std::vector<uint16_t>& src, int64_t n) {
  constexpr int64_t chunk = 4096;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i += chunk)
    widen_row_bf16(dst + i, src.data() + i, std::min(chunk, n - i));
}

// q-shaped [B, Tq, NH, HD] and kv-shaped [B, Tk, KVH, HD] tensors -> bf16, a row per token.
void q_to_bf16(std::vector<uint16_t>& dst, const float* x, const attention::attention_shape& s) {
  convert_bf16(dst, x, s.batch * s.seq_q, s.heads * s.head_dim, s.heads * s.head_dim);
}
void kv_to_bf16(std::vector<uint16_t>& dst, const float* x, const attention::attention_shape& s) {
  convert_bf16(dst, x, s.batch * s.seq_k, s.kv_heads * s.head_dim, s.kv_heads * s.head_dim);
}

// The calling thread's bf16 copies of the attention tensors (grow-only; a data-parallel replica
// on its own thread has its own).
struct attention_bf16 {
  std::vector<uint16_t> q, k, v, o, d_o, dq, dk, dv;
};

// Elements of Q (and O, dO, dQ) and of K (and V, dK, dV) in the layouts of attention_shape.hpp.
int64_t q_elems(const attention::attention_shape& s) {
  return s.batch * s.seq_q * s.heads * s.head_dim;
}
int64_t kv_elems(const attention::attention_shape& s) {
  return s.batch * s.seq_k * s.kv_heads * s.head_dim;
}

// The calling thread's buffers, with Q, K and V of shape s rounded to bf16 in them.
attention_bf16& attention_inputs_bf16(const attention::attention_shape& s, const float* q,
                                      const float* k, const float* v) {
  thread_local attention_bf16 w;
  q_to_bf16(w.q, q, s);
  kv_to_bf16(w.k, k, s);
  kv_to_bf16(w.v, v, s);
  return w;
}

} // namespace

void attention_forward(compute_dtype dt, const attention::attention_shape& s,
                       const attention_io& io) {
  if (dt != compute_dtype::bf16) {
    attention::flash_forward(s, io.q, io.k, io.v, io.out, io.lse);
    return;
  }
  attention_bf16& w = attention_inputs_bf16(s, io.q, io.k, io.v);
  const int64_t nq = q_elems(s);
  w.o.resize(size_t(nq));
  attention::flash_forward_bf16(s, w.q.data(), w.k.data(), w.v.data(), w.o.data(), io.lse);
  to_float(io.out, w.o, nq);
}

void attention_backward(compute_dtype dt, const attention::attention_shape& s,
                        const attention_io& io) {
  if (dt != compute_dtype::bf16) {
    attention::flash_backward(s, io.q, io.k, io.v, io.out, io.dout, io.lse, io.dq, io.dk, io.dv);
    return;
  }
  attention_bf16& w = attention_inputs_bf16(s, io.q, io.k, io.v);
  const int64_t nq = q_elems(s), nk = kv_elems(s);
  q_to_bf16(w.o, io.out, s); // exact: the forward's bf16 O, widened
  q_to_bf16(w.d_o, io.dout, s);
  w.dq.resize(size_t(nq));
  w.dk.resize(size_t(nk));
  w.dv.resize(size_t(nk));
  attention::flash_backward_bf16(s, w.q.data(), w.k.data(), w.v.data(), w.o.data(), w.d_o.data(),
                                 io.lse, w.dq.data(), w.dk.data(), w.dv.data());
  to_float(io.dq, w.dq, nq);
  to_float(io.dk, w.dk, nk);
  to_float(io.dv, w.dv, nk);
}

// ---------------------------------------------------------------------------------------------
// SwiGLU, residual

namespace {

// e^x for float, branch-free so that the loops calling it vectorise: Cody-Waite reduction
// x = n ln2 + r, |r| <= ln2/2, and Cephes' degree-7 polynomial for e^r (relative error about
// 2e-7, i.e. 1-2 ulp from the correctly rounded value); x is clamped to [-87, 88], so the result
// stays finite and normal (e^x below e^-87 reads e^-87: 1 + e^-87 == 1 in float). NaN stays NaN.
inline __attribute__((always_inline)) float exp_approx(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; // round to nearest
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // A NaN x leaves p NaN (the result); its n must not reach the int conversion, which is
  // undefined for NaN: a select, which still vectorises.
  const float n_finite = n == n ? n : 0.0f;
  const int32_t bits = (int32_t(n_finite) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

k_fast_kernel void swiglu_forward_chunk(float* out, const float* h1, const float* h3, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float x = h1[i];
    out[i] = x / (1.0f + exp_approx(-x)) * h3[i];
  }
}

k_fast_kernel void swiglu_backward_chunk(float* dh1, float* dh3, const float* dout, const float* h1,
                                         const float* h3, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float x = h1[i];
    float s = 1.0f / (1.0f + exp_approx(-x));
    float silu = x * s;
    float d = dout[i];
    dh3[i] = d * silu;
    dh1[i] = d * h3[i] * s * (1.0f + x * (1.0f - s));
  }
}

constexpr int64_t k_chunk = 4096; // elements per task of the element-wise loops

} // namespace

void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n) {
  const int64_t chunks = (n + k_chunk - 1) / k_chunk;
#pragma omp parallel for schedule(static)
  for (int64_t ch = 0; ch < chunks; ch++) {
    const int64_t i = ch * k_chunk;
    swiglu_forward_chunk(out + i, h1 + i, h3 + i, std::min(k_chunk, n - i));
  }
}

void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n) {
  const int64_t chunks = (n + k_chunk - 1) / k_chunk;
#pragma omp parallel for schedule(static)
  for (int64_t ch = 0; ch < chunks; ch++) {
    const int64_t i = ch * k_chunk;
    swiglu_backward_chunk(dh1 + i, dh3 + i, dout + i, h1 + i, h3 + i, std::min(k_chunk, n - i));
  }
}

void residual_forward(float* out, const float* a, const float* b, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
    out[i] = a[i] + b[i];
}

// ---------------------------------------------------------------------------------------------
// cross-entropy

void softmax_crossentropy_forward(float* logits, float* losses, const int32_t* targets, int64_t bt,
                                  int64_t v) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++) {
    float* p = logits + i * v;
    float mx = p[0];
    for (int64_t j = 1; j < v; j++)
      mx = std::max(mx, p[j]);
    double sum = 0;
    for (int64_t j = 0; j < v; j++) {
      p[j] = std::exp(p[j] - mx);
      sum += p[j];
    }
    float inv = float(1.0 / sum);
    for (int64_t j = 0; j < v; j++)
      p[j] *= inv;
    // -log p[target] from the log-sum-exp, not from the rounded probability (no log(0)).
    losses[i] = float(std::log(sum)) - std::log(p[targets[i]] / inv);
  }
}

void crossentropy_softmax_backward(float* probs, const int32_t* targets, int64_t bt, int64_t v,
                                   float dloss) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++) {
    float* p = probs + i * v;
    for (int64_t j = 0; j < v; j++)
      p[j] *= dloss;
    p[targets[i]] -= dloss;
  }
}

} // namespace accelbench::training
