#pragma once
// MLPerf Training scoring exactly as MLCommons' result summarizer computes it
// (mlperf_logging/result_summarizer/result_summarizer.py, _compute_strong_score_standalone):
// per run, minutes from the first run_start to the first run_stop; runs that fail (no
// run_stop, non-compliant, not converged) are dropped; with d dropped runs and m =
// max_dropped (4 for unet3d, else 1) the sorted times are averaged over [m, n - (m - d)),
// i.e. a dropped run counts as the slowest; more than m dropped runs make the result invalid
// (harness/core/score.hpp, olympic_mean: the one implementation of that rule).
// The mean is multiplied by scaling_factor from scaling.json when present (else by the RCP norm
// factor the import recorded, when above 1); a folder whose RCP check failed (extra.rcp, the
// import's verdict) is INVALID with the verdict as the reason.
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/score.hpp"
#include "importers/mlperf/benchmarks.hpp"

namespace accelbench::mlperf {

// The score of one (ruleset, system, benchmark): the result model's time-to-train score.
using score_result = ttt_score;

// Scores the runs of one (system, benchmark, ruleset). Runs of mixed systems or benchmarks are
// refused as invalid with a reason. A run counts when status ok, valid, extra.converged (true
// when absent) and it has a sample in minutes.
score_result score(const std::vector<run>& runs,
                   const benchmark_table& table = benchmark_table::builtin());

// Groups by (ruleset, system, benchmark) and scores each group, in a stable order.
std::vector<score_result> score_groups(const std::vector<run>& runs,
                                       const benchmark_table& table = benchmark_table::builtin());

// The benchmark of a run: cfg.values["benchmark"], else the workload name after "mlperf.", else
// the submission_benchmark of its MLPerf log (measured train.llama runs), else the workload.
std::string run_benchmark(const run& r);

} // namespace accelbench::mlperf
