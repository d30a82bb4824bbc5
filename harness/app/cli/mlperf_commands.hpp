#pragma once
// accelbench import --format mlperf, package, check-package, and MLPerf scores for show/export.
#include <string>
#include <vector>

#include "harness/app/cli/commands.hpp"
#include "harness/core/model.hpp"
#include "harness/store/store.hpp"

namespace accelbench::mlperf {
struct system_description;
}

namespace accelbench::cli {

// The store's record of one imported MLPerf system: source "published", the description kept.
store::system_record published_system_record(const mlperf::system_description& s);

int cmd_import_mlperf(const std::string& db_path, const std::string& dir, bool quiet,
                      const import_labels& labels = {});

struct package_cli_options {
  std::string org, system, division, out, status, system_json, db;
  std::vector<std::string> benchmarks;
  bool force = false;
  std::string command_line;
};
int cmd_package(const package_cli_options& o);
// seed_checker_bypass: MLCommons' --seed-checker-bypass (the seed checker runs nowhere);
// rcp_bypass: its --rcp-bypass (a failed RCP check found, interpolated or missing passes).
int cmd_check_package(const std::string& dir, const std::string& round, bool as_json,
                      bool seed_checker_bypass = false, bool rcp_bypass = false);

// Scores (olympic mean x scaling) per ruleset, system and benchmark for the MLPerf runs among
// `runs` (empty array when there are none, or when the MLPerf module is not built).
json mlperf_scores(const std::vector<run>& runs);

} // namespace accelbench::cli
