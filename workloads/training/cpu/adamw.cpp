#include "workloads/training/cpu/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "workloads/training/cpu/fast_kernel.hpp"

namespace accelbench::training {

double sum_of_squares(const float* x, size_t n) {
  const size_t chunk = 1 << 16;
  const size_t chunks = (n + chunk - 1) / chunk;
  std::vector<double> part(chunks, 0.0);
#pragma omp parallel for schedule(static)
  for (size_t c = 0; c < chunks; c++) {
    double s = 0;
    size_t end = std::min(n, (c + 1) * chunk);
    for (size_t i = c * chunk; i < end; i++)
      s += double(x[i]) * x[i];
    part[c] = s;
  }
  double total = 0;
  for (double p : part)
    total += p;
  return total;
}

double clip_grad_norm(float* grads, size_t n, double max_norm) {
  double norm = std::sqrt(sum_of_squares(grads, n));
  if (max_norm > 0 && norm > max_norm) {
    // torch.nn.utils.clip_grad_norm_ uses max_norm / (norm + 1e-6).
    float s = float(max_norm / (norm + 1e-6));
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
      grads[i] *= s;
  }
  return norm;
}

adamw::adamw(size_t n) : m_m(new float[n]), m_v(new float[n]) {
  std::memset(m_m.get(), 0, n * sizeof(float));
  std::memset(m_v.get(), 0, n * sizeof(float));
}

namespace {

struct adamw_scalars {
  float b1, b2, eps, bc1, bc2, lr, wd;
};

// torch.optim.AdamW's update of n parameters, element by element. Vectorised: this file is built
// with -fno-math-errno (sqrt stays correctly rounded), so the bits are those of the scalar loop.
k_fast_kernel void adamw_chunk(float* p, const float* g, float* m, float* v, int64_t n,
                               adamw_scalars s) {
  for (int64_t i = 0; i < n; i++) {
    m[i] = s.b1 * m[i] + (1 - s.b1) * g[i];
    v[i] = s.b2 * v[i] + (1 - s.b2) * g[i] * g[i];
    float mhat = m[i] / s.bc1, vhat = v[i] / s.bc2;
    // Decoupled decay: p -= lr * (adam_update + wd * p), as torch.optim.AdamW.
    p[i] -= s.lr * (mhat / (std::sqrt(vhat) + s.eps) + s.wd * p[i]);
  }
}

} // namespace

void adamw::step(float* params, const float* grads, const std::vector<param_tensor>& tensors,
                 double lr, const adamw_config& c) {
  m_t++;
  adamw_scalars s{float(c.beta1),
                  float(c.beta2),
                  float(c.eps),
                  float(1.0 - std::pow(c.beta1, double(m_t))),
                  float(1.0 - std::pow(c.beta2, double(m_t))),
                  float(lr),
                  0.0f};
  // One parallel region over chunks of every tensor (not one per tensor: a block has nine).
  const int64_t chunk = 1 << 14;
#pragma omp parallel
  for (const auto& t : tensors) {
    adamw_scalars ts = s;
    ts.wd = t.decay ? float(c.weight_decay) : 0.0f;
    const int64_t n = int64_t(t.size);
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < n; i += chunk)
      adamw_chunk(params + t.offset + i, grads + t.offset + i, m_m.get() + t.offset + i,
                  m_v.get() + t.offset + i, std::min(chunk, n - i), ts);
  }
}

} // namespace accelbench::training
