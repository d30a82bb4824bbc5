#pragma once
// Ingest of published MLPerf Training results in the layout submitters use:
//   <org>/systems/<system>.json
//   <org>/results/<system>/<benchmark>/result_<i>.txt   (+ optional scaling.json)
// Each result file becomes one accelbench::run (source "published"); problems become
// diagnostics naming file and line, and the rest of the folder is still ingested.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/mllog.hpp"
#include "harness/core/model.hpp"
#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/system_desc.hpp"

namespace accelbench::mlperf {

struct ingest_result {
  std::vector<system_description> systems;
  std::vector<run> runs;
  std::vector<mllog::diagnostic> diagnostics;
};

// What a result file is, from where it sits.
struct result_context {
  std::string org, system, benchmark, round; // round "5.0" or ""
  std::string relative_path;                 // "NVIDIA/results/<system>/<benchmark>/result_0.txt"
  const system_description* system_desc = nullptr;
  double scaling_factor = 1.0;
  bool has_scaling = false;
  // Why the system's description cannot be trusted ("" when it can): the runs are INVALID.
  std::string system_problem;
};

// Converts one log into a run; appends problems to `diags`. Never throws on bad log content.
run run_from_log(const std::string& text, const result_context& ctx,
                 std::vector<mllog::diagnostic>& diags,
                 const benchmark_table& table = benchmark_table::builtin());
// The same for a log already repaired (repair_text_lines) and parsed, for a caller that reads the
// log itself first (run external's judge): `log_text` is the repaired text.
run run_from_parsed_log(const mllog::parsed_log& log, const std::string& log_text,
                        const result_context& ctx, std::vector<mllog::diagnostic>& diags,
                        const benchmark_table& table = benchmark_table::builtin());
// The name diagnostics give a log: its path in the results tree, or "<log>".
inline std::string log_file_name(const result_context& ctx) {
  return ctx.relative_path.empty() ? "<log>" : ctx.relative_path;
}

// Ingests one organisation folder (<org>/systems, <org>/results). A file that cannot be read
// (too large, a folder where a file belongs, a FIFO or device), a symbolic link (never followed:
// importers/mlperf/folder.hpp), a description that is not JSON or nests too deep, and a name that
// is not UTF-8 are diagnostics; the rest is still ingested.
ingest_result ingest_org(const std::filesystem::path& org_dir,
                         const benchmark_table& table = benchmark_table::builtin());
// Ingests an organisation folder, a round folder holding organisations, or a folder holding
// rounds (searched three levels deep for folders with results/). Throws input_error when `dir`
// does not exist or holds no organisation folder.
// `on_org` (optional) is told before each organisation folder is read: its index, the number of
// organisation folders found and the folder's path relative to `dir` (for progress).
using org_progress = std::function<void(size_t index, size_t total, const std::string& org)>;
ingest_result ingest(const std::filesystem::path& dir,
                     const benchmark_table& table = benchmark_table::builtin(),
                     const org_progress& on_org = {});

// Name-based UUID (RFC 4122 version 5, SHA-1) of `name` in accelbench's namespace, so that the
// same (round, org, system, benchmark, file) always maps to the same run uuid.
std::string name_uuid(std::string_view name);
// "ms since the epoch" -> "2025-04-20T13:24:30.117Z".
std::string iso8601_from_ms(int64_t ms);

} // namespace accelbench::mlperf
