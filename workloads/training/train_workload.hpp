#pragma once
// Workload train.llama: Llama-style decoder training on the CPU or on CUDA, on one rank or data
// parallel across ranks, in two modes.
//   throughput     tokens/s over a fixed number of steps after warm-up (one sample per step)
//   time_to_train  MLPerf-style: N runs from scratch to a quality target, olympic-mean score
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/ruleset.hpp"
#include "harness/core/workload.hpp"
#include "workloads/training/data.hpp"
#include "workloads/training/llama.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training {

// Everything one train.llama run needs, resolved from the config and the effective ruleset.
struct train_settings {
  std::string mode; // throughput | time_to_train
  std::string key;  // the inputs' seed with the run's --seed (hash.hpp seed_of): the config
                    // without its batch-layout axes and backend (train_settings.cpp seed_key)
  model_config model;
  llama_options options;
  train_hparams hp;
  int64_t steps = 10;       // throughput: timed steps
  int64_t warmup_steps = 2; // throughput: untimed steps first
  int threads = 0;          // resolved (never 0)
  std::string data = "synthetic";
  markov_params markov; // synthetic data
  uint64_t eval_seed = 2;
  // time to train
  int64_t runs = 5, min_runs = 5;
  double margin_nats = 0.1;
  double fixed_target = 0; // > 0: the target for data without a known floor
  double max_init_s = 0;
  // data parallel (world size > 1)
  bool overlap = true;                        // all-reduce each gradient bucket during backward
  bool baseline = false;                      // also time the same config on rank 0 alone
  uint64_t bucket_bytes = 25ull << 20;        // gradient bucket size
  std::vector<std::string> closed_violations; // why the run is not closed-division compliant
  bool subset() const { return !options.with_head; }
};

// Throws input_error on inconsistent values (see train_workload::validate).
train_settings resolve_settings(const config& cfg, const ruleset* rules);

// Bytes the config allocates: model, gradients, AdamW state, activations, data buffers.
uint64_t estimate_bytes(const train_settings& s);

// The workload object (exposed for tests; the CLI uses register_training).
std::unique_ptr<workload> make_training_workload();
void register_training(registry& reg);

} // namespace accelbench::training
