#pragma once
// AdamW's hyperparameters (Loshchilov & Hutter 2019, decoupled weight decay, PyTorch semantics) and
// the learning-rate schedule (linear warm-up, then cosine decay to an end rate): what the CPU
// optimizer (cpu/adamw.hpp) and the CUDA one (cuda/llama_cuda.hpp) share.
#include <cstdint>

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

} // namespace accelbench::training
