#pragma once
// train.llama's throughput measurement on one GPU without a host wait inside the timed steps:
// every step is queued on the model's stream (llama_cuda::forward_async, backward, step_async),
// its phases timed by CUDA events recorded between them, its loss and gradient norm kept on the
// device; the host waits once after the warm-up and once after the last timed step, then reads
// the events and the step log. The tokens of every step are split on the host into page-locked
// memory held until the end, so an asynchronous copy never waits either.
// Plain C++ header: no CUDA type.
#include <cstdint>

#include "workloads/training/cuda/llama_cuda.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training::cuda {

struct cuda_throughput {
  throughput_result result;
  // llama_cuda::host_waits counted from the first timed step's start to the last one's end (the
  // wait that ends the timed window excluded): 0 is the rule.
  int64_t host_waits_in_timed_steps = 0;
  double window_s = 0; // host wall clock of the timed window, to its closing wait
};

// Steps and their breakdown as measure_throughput (trainer.hpp): a step's total_s is the time
// between its start event and the next step's; forward_s, backward_s and optimizer_s the times
// between the events around each phase; data_s the host's time taking the batch.
cuda_throughput measure_throughput_cuda(llama_cuda& m, const train_hparams& hp,
                                        const source_factory& data, uint64_t seed,
                                        int64_t warmup_steps, int64_t steps);

} // namespace accelbench::training::cuda
