#include "workloads/training/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace accelbench::training {

double lr_schedule::at(int64_t step) const {
  if (step < warmup_steps)
    return base_lr * double(step + 1) / double(warmup_steps);
  double progress = decay_steps > 0 ? double(step - warmup_steps) / double(decay_steps) : 1.0;
  progress = std::min(1.0, std::max(0.0, progress));
  return end_lr + (base_lr - end_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

} // namespace accelbench::training
