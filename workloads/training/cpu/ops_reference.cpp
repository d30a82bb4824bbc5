// The reference (unfused, plain-loop) versions of the element-wise layers whose fast versions in
// ops.cpp change the order of sums or the exp: kept so that the tests can hold the fast ones to a
// stated bound and the benchmark can time both side by side (llama_options::reference_ops).
#include <cmath>

#include "workloads/training/cpu/ops.hpp"

namespace accelbench::training::reference {

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t bt,
                     int64_t c, float eps) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++) {
    const float* x = inp + i * c;
    float ss = 0;
    for (int64_t j = 0; j < c; j++)
      ss += x[j] * x[j];
    float r = 1.0f / std::sqrt(ss / float(c) + eps);
    rstd[i] = r;
    float* o = out + i * c;
    for (int64_t j = 0; j < c; j++)
      o[j] = x[j] * r * weight[j];
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t bt, int64_t c) {
  // y_j = x_j r w_j, r = (mean(x^2)+eps)^-1/2  =>  dx_j = r w_j dy_j - x_j r^3/C sum_k(w_k dy_k
  // x_k)
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bt; i++) {
    const float* x = inp + i * c;
    const float* dy = dout + i * c;
    float r = rstd[i];
    float dot = 0;
    for (int64_t j = 0; j < c; j++)
      dot += weight[j] * dy[j] * x[j];
    float coef = dot * r * r * r / float(c);
    float* dx = dinp + i * c;
    for (int64_t j = 0; j < c; j++)
      dx[j] += r * weight[j] * dy[j] - coef * x[j];
  }
  // dweight: parallel over channels, serial over rows, so the order is fixed (deterministic).
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < c; j++) {
    float s = 0;
    for (int64_t i = 0; i < bt; i++)
      s += dout[i * c + j] * inp[i * c + j] * rstd[i];
    dweight[j] += s;
  }
}

void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float x = h1[i];
    out[i] = x / (1.0f + std::exp(-x)) * h3[i];
  }
}

void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float x = h1[i];
    float s = 1.0f / (1.0f + std::exp(-x));
    float silu = x * s;
    dh3[i] = dout[i] * silu;
    dh1[i] = dout[i] * h3[i] * s * (1.0f + x * (1.0f - s));
  }
}

} // namespace accelbench::training::reference
