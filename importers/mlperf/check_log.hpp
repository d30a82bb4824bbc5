#pragma once
// The compliance check of one MLPerf Training log, mirroring MLCommons' compliance checker
// (mlperf_logging: compliance_checker mlp_compliance.py with common.yaml / closed_*.yaml).
// check_package.hpp runs it over each result file of a submission package.
#include <optional>
#include <string>
#include <vector>

#include "harness/core/mllog.hpp"
#include "importers/mlperf/benchmarks.hpp"

namespace accelbench::mlperf {

// The compliance verdict for one log.
struct log_check {
  std::vector<mllog::diagnostic> errors; // the file does not comply (each names file and line)
  std::vector<mllog::diagnostic>
      warnings;            // tolerated: an EXACTLY_ONE key repeated with one value...
  quality_outcome quality; // eval curve and whether the target was reached
  std::string stop_status; // run_stop metadata status ("success", "aborted"; "" if none)
  bool known_benchmark = false;
  // run_stop with status "success" and (closed division, known benchmark) the quality target
  // reached: a run the result summarizer counts rather than drops.
  bool converged = false;
  // run_stop's status is not "success": not a compliance error (common.yaml asks only that a
  // status is logged), but the run has not converged. Olympic scoring drops it, the RCP check
  // counts it, and the import stores it INVALID with this reason. Empty when it converged.
  std::optional<mllog::diagnostic> not_converged;
  // Defects on which MLCommons' compliance checker stops with an exception and gives no verdict
  // (an eval value compared with a number that is not one, a division with no rules file): also
  // in `errors`; check-package makes them reasons of the package, never the run olympic scoring
  // drops, because the official checker cannot pass the package.
  std::vector<mllog::diagnostic> unprocessable;
  bool compliant() const { return errors.empty(); }
};

// Checks one parsed log. `benchmark` is the result folder's name (may be empty: taken from
// submission_benchmark); `division` "closed" | "open" (empty: from submission_division);
// `round` "5.0" (empty: rules restricted to some rounds are skipped).
log_check check_log(const mllog::parsed_log& log, const std::string& benchmark,
                    const std::string& division, const std::string& round,
                    const benchmark_table& table = benchmark_table::builtin());

} // namespace accelbench::mlperf
