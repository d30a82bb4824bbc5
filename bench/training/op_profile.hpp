#pragma once
// Per-op CPU-time profile of one training step (bench_training --ops).
#include <cstdint>

#include "workloads/training/cpu/ops.hpp"
#include "workloads/training/llama.hpp"
#include "workloads/training/model_config.hpp"

namespace accelbench::bench {

// CPU time of this process (every thread), in seconds.
double cpu_seconds();

// Prints each op of one step of model `m` at batch x seq timed alone, reference and fused.
void print_op_profile(const training::model_config& m, int64_t batch, int64_t seq,
                      training::compute_dtype dt, int reps);

// Times whole optimizer steps of a model with the reference ops and with the fast ones,
// alternating, and prints CPU time, wall time, MFU in CPU time and the losses' difference.
void print_step_comparison(const training::model_config& m, const training::llama_options& o,
                           int steps);

} // namespace accelbench::bench
