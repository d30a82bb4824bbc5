#pragma once
// The check of a submission package, mirroring MLCommons' package checker (package_checker.py:
// system_desc_checker, each log through check_log.hpp, seed_checker, the RCP checker,
// benchmark_meta result counts).
//   check_package.cpp  an organisation folder as package_checker.py walks it
//   rcp.cpp            the RCP checker over a benchmark folder's result files
//   seed_check.cpp     the seed checker over a benchmark folder's result files
#include <filesystem>
#include <string>
#include <vector>

#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::mlperf {

// Fields every system description must have (system_desc_checker.py, required_fields).
const std::vector<std::string>& required_system_fields();

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
