#pragma once
// `run external --set mode=time_to_train`: an MLPerf-style trainer of the user's own (a reference
// implementation's run_and_time.sh) run N times from scratch, each time with a distinct seed in
// MLPerf's SEED variable. Each run's MLPerf log (the ":::MLLOG" lines of its stdout) is judged
// with the MLPerf rules and kept verbatim; the set is scored by the olympic mean
// (harness/core/score.hpp). The run has the shape of train.llama's time to train (samples in
// minutes, extra.runs, extra.mllogs), so that `package` builds a submission folder from it.
//
// Once scored, the set is held to MLPerf's reference convergence points (MLCommons' RCP check)
// where a reference exists: a failure makes it INVALID, a pass faster than the reference mean
// scales the score by the norm factor, as the scaling.json MLCommons' package checker writes.
//
// The MLPerf rules live in importers/mlperf, a layer above the workloads: the front end hands
// them in as a log_judge and a set_judge when it registers the workload
// (harness/app/cli/register_all.cpp).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/workload.hpp"

namespace accelbench::external {

// What the MLPerf rules say of one training run's log.
struct log_verdict {
  run as_run;                          // the log as an MLPerf import makes it: status, compliance
                                       // (invalid_reasons), one sample in minutes (run_start to
                                       // run_stop), extra.converged/status/seed/eval_curve/...
  std::string benchmark;               // submission_benchmark ("" when not logged)
  bool known_benchmark = false;        // in MLPerf's benchmark table
  int required_runs = 0;               // the table's number of runs (0: unknown benchmark)
  int max_dropped = 1;                 // runs the olympic mean drops at each end
  std::optional<bool> quality_reached; // the table's quality target met (unset: no target known)
  json target;                         // the table's quality target (null when unknown)
};
// Judges one log (its text, as printed) under the rules of MLPerf round `round` ("" : the rules
// of every round).
using log_judge = std::function<log_verdict(const std::string& log_text, const std::string& round)>;

// What MLPerf's reference convergence points say of a whole set.
// clang-tidy 14 reads this struct's implicit moves as throwing (a json member): they are noexcept.
struct set_verdict {       // NOLINT(bugprone-exception-escape)
  bool checked = false;    // false: no reference applies to the set (`not_checked` says why)
  std::string not_checked; // e.g. "the logs' division is 'open': the RCP check is the closed's"
  bool pass = true;
  bool bypassed = false;  // failed, and passed by the bypass (MLCommons' --rcp-bypass)
  double norm_factor = 1; // reference mean / the set's mean when faster (else 1)
  std::string summary;    // "RCP Test Passed: RCP found (...)"
  json record;            // the verdict as extra.rcp stores it
};
// Judges the logs of a set (each run's, in order) against the reference of MLPerf round `round`
// ("": the newest round with reference data for the logs' benchmark); `bypass` lets the failures
// MLCommons' --rcp-bypass lets pass.
using set_judge = std::function<set_verdict(const std::vector<std::string>& logs,
                                            const std::string& round, bool bypass)>;

// The MLPerf rules the time-to-train mode needs, from the layer above.
struct mlperf_judges {
  log_judge log;
  set_judge set;
};

// The time-to-train settings of a ruleset (the "training" section of external-ttt-v1).
struct ttt_settings {
  std::string mode;  // "time_to_train" in a time-to-train ruleset
  int64_t runs = 0;  // 0: the benchmark's required number (5 for one MLPerf lacks)
  std::string round; // MLPerf round whose rules judge the logs ("": every round's)
  std::string seed_variable = "SEED";
  std::optional<double> target; // the ruleset's own target for eval_accuracy (null: none)
  direction target_dir = direction::higher_is_better;
  bool rcp_bypass = false; // a failed RCP check passes, with a warning (MLCommons' --rcp-bypass)
};
ttt_settings ttt_settings_of(const ruleset& rules);

// Runs the set and records it in `out` (failed, INVALID with reasons, or scored).
void run_time_to_train(const config& cfg, run& out, run_context& ctx, const mlperf_judges& judges);

} // namespace accelbench::external
