#pragma once
// AdamW on the CPU and global-norm gradient clipping, over the flat parameter and gradient buffers
// of the CPU model (llama_model.hpp); the hyperparameters and schedule are optimizer.hpp.
#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/training/llama.hpp"
#include "workloads/training/optimizer.hpp"

namespace accelbench::training {

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
