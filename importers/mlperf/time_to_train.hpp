#pragma once
// A run's time to train as MLCommons' result summarizer reads it from the log, and the bounds of a
// plausible one: the one home for both, used by the import (ingest_log.cpp) and by check-package
// (check_log.cpp), so a log check-package calls compliant is never stored INVALID for its time.
#include <string>
#include <utility>

#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

// The run_start and run_stop the score is timed between, as the result summarizer's
// _query_run_start_stop reads them: in log order, the first run_stop and the last run_start
// before it (a repeated run_start is only a warning). Either may be null.
std::pair<const mllog::event*, const mllog::event*> timed_span(const mllog::parsed_log& log);

// Bounds of a plausible time to train, in minutes: more than zero (run_stop after run_start) and
// less than a year. The longest published MLPerf Training runs take a few days; a year catches a
// mistyped or corrupted timestamp (a run_stop at 1e300 ms) without judging slow systems.
inline constexpr double k_max_train_minutes = 365.0 * 24 * 60;

// Why `minutes` is no time to train, or "" when it is one.
std::string implausible_duration(double minutes);

// Minutes from `start` to `stop` (time_ms is bounded by the parser, 0..year 9999, so the
// difference cannot overflow).
double span_minutes(const mllog::event& start, const mllog::event& stop);

} // namespace accelbench::mlperf
