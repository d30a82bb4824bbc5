#pragma once
// Writes MLPerf-Training-layout submission packages from accelbench runs that carry an MLPerf
// log (run.mllog), as MLCommons' package checker expects them:
//   DIR/ORG/systems/SYSTEM.json
//   DIR/ORG/results/SYSTEM/BENCH/result_<i>.txt                (exactly the required count)
//   DIR/ORG/benchmarks/BENCH/implementations/<impl>/README.md  (how to reproduce)
// The package is built in a temporary folder beside its final place (in DIR, or beside the first
// folder of DIR that does not exist yet) and renamed into place at the end, so a failure never
// leaves a half-written package nor an output folder it created.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::mlperf {

struct package_options {
  std::filesystem::path out_dir;     // DIR (created when missing)
  std::string org;                   // ORG folder name and default "submitter"
  std::string system;                // SYSTEM: file stem and results folder name
  std::string division;              // "closed" | "open"; empty: from the logs (else closed)
  std::string status;                // one of the four MLCommons values; empty: from the user
                                     // system JSON, else "Available on-premise"
  std::filesystem::path system_json; // optional: fields that cannot be detected (a JSON object)
  std::string implementation = "accelbench"; // benchmarks/BENCH/implementations/<impl>
  std::string command_line;                  // how the runs were produced (README)
  bool force = false;                        // replace an existing system/benchmark in the package
};

struct package_result {
  std::filesystem::path org_dir;
  std::filesystem::path system_file;
  std::filesystem::path readme;
  std::vector<std::filesystem::path> result_files;
  std::string benchmark;
  std::vector<std::string> runs_used; // uuids, in result_<i> order
  json system_description;
  // The RCP check of a closed package whose round has RCP data (rcp.hpp); it passed, else the
  // package was refused. A norm factor > 1 scales the score, as MLCommons' scaling.json would.
  std::optional<rcp_verdict> rcp;
  // The MLPerf Training round of the runs' ruleset ("5.0"), "" for another ruleset: the round
  // check-package needs, since the package's path does not name it.
  std::string round;
};

// Refuses (input_error) a path component that is empty, ".", "..", or has '/', '\\' or a control
// character, naming `what` and the value.
void check_path_name(const std::string& what, const std::string& name);

// The MLCommons system description for a run environment (harness/core/environment.hpp:
// cpu.model, cpu.logical_cores, memory.total_bytes, os, compiler, libraries, accelerator...),
// overlaid with `user` (a JSON object of fields), every value a string.
json system_description_from(const json& environment, const json& user, const package_options& opt);

// Writes the package. Refuses with input_error: fewer runs with an MLPerf log than the
// benchmark requires, runs of different benchmarks, an unknown benchmark, a bad name, a status
// outside the allowed values, an existing SYSTEM/BENCH in DIR/ORG without `force`, and closed
// runs of an MLPerf Training round with RCP data (ruleset mlperf-training-vX.Y) that fail
// MLCommons' RCP check (the message gives the verdict and its numbers): check-package would
// reject such a package, and MLCommons' bypass is for the submission committee to review, not
// for a tool to write.
// With more runs than required, the first ones by start time are used (MLPerf rules: N
// consecutive runs, never a hand-picked subset).
package_result write_package(const std::vector<run>& runs, const package_options& opt,
                             const benchmark_table& table = benchmark_table::builtin());

// Several benchmarks (one group of runs each) into one package, all or nothing: every group is
// validated first, and the package appears only when every part was written. Also refuses
// (input_error): a division that differs from the submission_division the logs declare (our
// own check-package would reject the package), an output folder that is a file, and a
// file-system failure (with the system's reason).
std::vector<package_result>
write_packages(const std::vector<std::vector<run>>& groups, const package_options& opt,
               const benchmark_table& table = benchmark_table::builtin());

} // namespace accelbench::mlperf
