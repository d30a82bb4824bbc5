#pragma once
// The headline metric of a run: the one figure a run is known by (the result column of `run` and
// `show`, the dashboard's result cell). One home, so that the command line and the server, which
// has no workload registry, name the same figure for the same run.

#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

// The workload's primary metric (`workload_spec::primary_metric`) when the caller knows it and the
// run has it; else the first of time_to_train_min, tflops, tokens_per_s, busbw, time that the run
// has; else its first metric with a unit; else its first metric; nullptr when it has none.
const metric* headline_metric(const run& r, const std::string& primary_metric = "");

} // namespace accelbench
