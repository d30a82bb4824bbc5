#pragma once
// Time-to-train scoring, the one home of the rule: MLPerf's olympic mean, and the score of one
// (ruleset, system, benchmark) as the result model carries it. Used by workloads/training (its own
// time-to-train runs), importers/mlperf (ingested and packaged submissions) and reporters/report
// (which receives the scores as data and never scores itself).
#include <optional>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

// MLPerf's olympic mean, as MLCommons' result summarizer computes it
// (mlperf_logging/result_summarizer, _compute_olympic_average), with m = max_dropped runs dropped
// at each end:
// - a run that did not converge (or failed) has no time: it counts as the slowest run and is one
//   of the m dropped at the slow end;
// - more than m such runs make the score INVALID;
// - the converged times, sorted, are averaged over [m, c - (m - d)) (c converged, d not): with
//   fewer than 2m + 1 runs nothing is left to average and the score is INVALID.
struct olympic_result {
  double mean = 0; // 0 when invalid
  bool valid = false;
  std::string reason;       // why invalid
  std::vector<size_t> used; // indices into `times` of the runs averaged, fastest first
};
olympic_result olympic_mean(const std::vector<double>& times, const std::vector<bool>& converged,
                            int max_dropped = 1);

// The olympic mean of runs that all converged (a bootstrap resample): the rule above with d = 0.
// Returns 0 when fewer than 2m + 1 times are given.
double olympic_mean_of(std::vector<double> times, int max_dropped);

// The time-to-train score of one (ruleset, system, benchmark): computed by importers/mlperf from
// the runs, read by the report.
struct ttt_score {
  std::string benchmark;
  std::string system;
  std::string ruleset;
  double score_min = 0;        // olympic mean x scaling_factor (0 when invalid)
  double olympic_mean_min = 0; // before scaling
  double scaling_factor = 1.0;
  bool valid = false;
  std::vector<std::string> reasons;      // why invalid, or notices (a run dropped)
  std::vector<std::string> runs_used;    // uuids of the runs averaged
  std::vector<std::string> runs_dropped; // uuids of non-converged / failed runs
  int required_runs = 0;                 // 0 when the benchmark is unknown
  int runs = 0;
  int max_dropped = 1;            // runs the olympic mean drops at each end
  std::optional<double> energy_j; // from the submission's power logs, when it has them
  json to_json() const;           // the fields above but max_dropped and energy_j
};

} // namespace accelbench
