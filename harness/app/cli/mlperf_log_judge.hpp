#pragma once
// The MLPerf rules of importers/mlperf handed to the external workload's time-to-train mode
// (workloads/external/time_to_train.hpp), which sits in a layer below them.
#include "workloads/external/time_to_train.hpp"

namespace accelbench::cli {

// Judges one training run's MLPerf log as `accelbench import --format mlperf` judges a published
// result file (compliance, run_start to run_stop, status, seed), plus the benchmark's quality
// target and run counts from the MLPerf benchmark table.
external::log_verdict judge_mlperf_log(const std::string& log_text, const std::string& round);

// Judges a time-to-train set's logs as check-package judges a closed benchmark folder with
// MLCommons' RCP check (importers/mlperf/rcp.hpp), where one applies: logs that say the closed
// division, of a benchmark with reference data in round `round` (""; the newest round with data
// for it). Otherwise not checked, with the reason.
external::set_verdict judge_mlperf_set(const std::vector<std::string>& logs,
                                       const std::string& round, bool bypass);

// Both, for register_external.
external::mlperf_judges external_judges();

} // namespace accelbench::cli
