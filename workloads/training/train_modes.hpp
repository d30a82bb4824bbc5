#pragma once
// What train.llama's two modes share (train_workload.cpp: throughput, and the workload;
// train_time_to_train.cpp: time to train): the training data, the data-parallel replica, the
// seed of a stream.
#include <cstdint>
#include <memory>

#include "harness/core/model.hpp"
#include "harness/core/workload.hpp"
#include "workloads/training/data.hpp"
#include "workloads/training/data_parallel.hpp"
#include "workloads/training/train_workload.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training {

// A seed derived from `a` for stream `b` (the training data's, run i of a time-to-train set).
uint64_t mix_seed(uint64_t a, uint64_t b);

// The training data: the synthetic Markov source (src) or the config's token shards.
source_factory train_source(const train_settings& s,
                            const std::shared_ptr<const markov_source>& src);

// This rank's data-parallel replica: the CPU model summing with MPI, or (on_cuda) the CUDA model
// on this rank's GPU summing with NCCL.
std::unique_ptr<dp_trainable> make_dp(const model_config& m, const llama_options& o,
                                      const dp_options& dp, bool on_cuda);
dp_options dp_settings(const train_settings& s);

// The time-to-train mode (train_time_to_train.cpp); on_cuda: on CUDA device 0 of each rank.
void run_time_to_train(const train_settings& s, run& out, run_context& ctx, bool on_cuda = false);

} // namespace accelbench::training
