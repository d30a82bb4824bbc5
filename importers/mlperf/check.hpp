#pragma once
// Compliance checks for MLPerf Training logs and submission packages, mirroring what MLCommons'
// package checker verifies (mlperf_logging: compliance_checker common.yaml / closed_*.yaml,
// system_desc_checker, seed_checker, benchmark_meta result counts).
//   check_log.cpp      one log against the compliance checker's rules (mlp_compliance.py)
//   check_package.cpp  an organisation folder as package_checker.py walks it
//   rcp.cpp            the RCP checker over a benchmark folder's result files
//   seed_check.cpp     the seed checker over a benchmark folder's result files
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/mllog.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::mlperf {

// A JSON value as the checkers quote it in a message: dumped, cut to 60 characters.
std::string short_value(const json& v);

// Fields every system description must have (system_desc_checker.py, required_fields).
const std::vector<std::string>& required_system_fields();

// The compliance verdict for one log.
struct log_check {
  std::vector<diagnostic> errors;   // the file does not comply (each names file and line)
  std::vector<diagnostic> warnings; // tolerated: an EXACTLY_ONE key repeated with one value...
  quality_outcome quality;          // eval curve and whether the target was reached
  std::string stop_status;          // run_stop metadata status ("success", "aborted"; "" if none)
  bool known_benchmark = false;
  // run_stop with status "success" and (closed division, known benchmark) the quality target
  // reached: a run the result summarizer counts rather than drops.
  bool converged = false;
  // run_stop's status is not "success": not a compliance error (common.yaml asks only that a
  // status is logged), but the run has not converged. Olympic scoring drops it, the RCP check
  // counts it, and the import stores it INVALID with this reason. Empty when it converged.
  std::optional<diagnostic> not_converged;
  // Defects on which MLCommons' compliance checker stops with an exception and gives no verdict
  // (an eval value compared with a number that is not one, a division with no rules file): also
  // in `errors`; check-package makes them reasons of the package, never the run olympic scoring
  // drops, because the official checker cannot pass the package.
  std::vector<diagnostic> unprocessable;
  bool compliant() const { return errors.empty(); }
};

// Checks one parsed log. `benchmark` is the result folder's name (may be empty: taken from
// submission_benchmark); `division` "closed" | "open" (empty: from submission_division);
// `round` "5.0" (empty: rules restricted to some rounds are skipped).
log_check check_log(const parsed_log& log, const std::string& benchmark,
                    const std::string& division, const std::string& round,
                    const benchmark_table& table = benchmark_table::builtin());

// Problems with a system description as MLCommons' system_desc_checker sees them: a missing
// required field, a status outside the allowed list (from round 4.0). What it does not check
// (values that are lists or numbers, an odd division, empty names) goes to `warnings`.
std::vector<std::string>
check_system_description(const json& desc, const std::string& round,
                         const benchmark_table& table = benchmark_table::builtin(),
                         std::vector<std::string>* warnings = nullptr);

struct check_options {
  std::string round; // "5.0"; empty: from the path (training_v5.0) or round-neutral checks
  const benchmark_table* table = nullptr; // nullptr: the built-in table
  // MLCommons' --seed-checker-bypass: the seed checker runs nowhere (a warning says so); a
  // folder's package_checker_params may bypass it there (package_params.hpp).
  bool seed_checker_bypass = false;
  // MLCommons' --rcp-bypass: a failed RCP check found, interpolated or missing passes (a warning
  // says so); a folder's package_checker_params may bypass it there (package_params.hpp).
  bool rcp_bypass = false;
};

struct check_result {
  bool valid = false;
  std::vector<std::string> reasons;  // why INVALID (empty when VALID)
  std::vector<std::string> warnings; // tolerated problems (one non-compliant run, stray files)
  std::string round;                 // round the checks used ("" if unknown)
  size_t systems = 0;
  size_t result_files = 0;
  std::vector<rcp_verdict> rcp; // each closed-division benchmark folder the RCP stage looked at
  json to_json() const;         // {"valid", "verdict", "reasons", "warnings", ...}
};

// Checks an organisation folder DIR/ORG (systems/, results/, benchmarks/).
check_result check_package(const std::filesystem::path& org_dir, const check_options& opt = {});

} // namespace accelbench::mlperf
