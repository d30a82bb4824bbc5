#pragma once
// Synthetic MLPerf Training logs that pass the closed-division checks of a benchmark
// (llama2_70b_lora by default): fixtures for tests and for the ingest benchmark, and an example
// of the event sequence a training workload must log (init, run_start, blocks, evals, run_stop).
#include <cstdint>
#include <string>

namespace accelbench::mlperf {

struct synthetic_log_options {
  std::string benchmark = "llama2_70b_lora"; // llama2_70b_lora or llama31_405b
  std::string org = "accelbench";
  std::string platform = "1xCPU";
  std::string division = "closed";
  int64_t seed = 1;
  int64_t start_ms = 1'700'000'000'000; // first init_start
  double init_min = 5;                  // init_stop - init_start
  double train_min = 10;                // run_start to run_stop
  int evals = 4;
  bool converged = true;   // last eval reaches the target, status "success"
  std::string line_prefix; // e.g. "[1,0]<stdout>: " before every line
};

// The log text, one ":::MLLOG" line per event, newline-terminated.
std::string synthetic_training_log(const synthetic_log_options& o);

} // namespace accelbench::mlperf
