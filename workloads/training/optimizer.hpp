#pragma once
// AdamW (Loshchilov & Hutter 2019, decoupled weight decay, PyTorch semantics), the learning-rate
// schedule (linear warm-up, then cosine decay to an end rate) and global-norm gradient clipping.
#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/training/llama.hpp"

namespace accelbench::training {

struct adamw_config {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

// lr(step), step counted from 0: (step+1)/warmup * base during warm-up, then
// end + (base - end) * (1 + cos(pi * min(1, (step - warmup) / decay))) / 2.
struct lr_schedule {
  double base_lr = 1e-3, end_lr = 1e-4;
  int64_t warmup_steps = 0, decay_steps = 1;
  double at(int64_t step) const;
};

// Sum of squares of n values in a fixed order of fixed-size chunks: the same bits for any
// thread count (an OpenMP reduction's combination order is unspecified).
double sum_of_squares(const float* x, size_t n);

// Scales grads so their global L2 norm is at most max_norm (max_norm <= 0: no clipping).
// Returns the norm before clipping (Pascanu et al. 2013; torch.nn.utils.clip_grad_norm_).
double clip_grad_norm(float* grads, size_t n, double max_norm);

class adamw {
public:
  explicit adamw(size_t n);
  // One update of every parameter; weight decay only on tensors marked decay.
  void step(float* params, const float* grads, const std::vector<param_tensor>& tensors, double lr,
            const adamw_config& c);
  int64_t steps() const { return m_t; }
  const float* m() const { return m_m.get(); }
  const float* v() const { return m_v.get(); }

private:
  int64_t m_t = 0;
  std::unique_ptr<float[]> m_m, m_v;
};

} // namespace accelbench::training
