#pragma once
// The `external` workload: a user's own program run under the ruleset (docs/external.md).
//
//   config     name (the user's label), command (the argv as a JSON array, {K} placeholders
//              kept), and any other KEY=VALUE the program reads; the key holds the command, so
//              two programs are never one config
//   warm-up    measurement.warmup_iterations untimed runs of the program
//   samples    runs of the program until measurement.repetitions samples are in: each run adds
//              the samples it reports on the results protocol, or its wall time when it reports
//              none (hyperfine); all samples together bounded by measurement.max_time_s
//   failures   judge() of outcome.hpp: a failed or INVALID run of the program ends the run with
//              its reason and the tail of its stderr
//   mode       time_to_train: the program is an MLPerf-style trainer, run to its quality target a
//              number of times (time_to_train.hpp, ruleset external-ttt-v1)
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/external/time_to_train.hpp"

namespace accelbench::external {

// The config value of `command`: the argv as a JSON array of strings.
std::string command_value(const std::vector<std::string>& argv);

// The argv of a `command` value; throws input_error naming the value when it is not a non-empty
// JSON array of strings.
std::vector<std::string> command_argv(const std::string& value);

// `judges` (the MLPerf rules, from a layer above) judge the logs and the set of
// mode=time_to_train; without a log judge that mode fails with the reason.
void register_external(registry& reg, mlperf_judges judges = {});

} // namespace accelbench::external
