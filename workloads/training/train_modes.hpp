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

dp_options dp_settings(const train_settings& s);

class training_backend;
// The time-to-train mode (train_time_to_train.cpp), on backend b (on CUDA: device 0 of each rank).
void run_time_to_train(const train_settings& s, const training_backend& b, run& out,
                       run_context& ctx);

} // namespace accelbench::training
