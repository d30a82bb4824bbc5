#pragma once
// accelbench compare and accelbench history (nightly CI comparisons).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/compare/compare.hpp"
#include "harness/core/model.hpp"

namespace accelbench::cli {

struct compare_cli_options {
  std::string baseline, candidate, format = "table", output, db;
  std::string metric;    // "" or "time": the samples; else cpu_time or a user counter
  double threshold = -1; // < 0: per workload from the ruleset (default 5%)
  double alpha = 0.01;
  bool strict = false;
  bool color = false;
  bool only_changed = false; // list only regressed and improved configs
  bool trust_loaded = false; // judge pairs measured on a loaded machine like any other
};
int cmd_compare(const compare_cli_options& o);
// cmd_compare's two halves, for `ab`, which checks before it measures and compares after: the
// options (format, alpha, threshold, the output path), then the comparison of the two selectors
// written in o.format (the counts on stderr), returning compare's exit code.
void check_compare_options(const compare_cli_options& o);
int print_comparison(const compare_cli_options& o);
// How the comparison is judged and written: --format, --metric, -o, --threshold, --alpha,
// --strict, --color, --trust-loaded, --only-changed (compare and ab).
void add_comparison_options(CLI::App* cmd, compare_cli_options& o);

struct history_cli_options {
  std::string workload, system, since, format = "table", db;
  std::string html; // also write the series as a self-contained HTML page
  std::vector<std::string> sets, tags;
  size_t min_segment = 5;
  double max_pvalue = 0.001;
  size_t window = 0;
  bool fail_on_regression = false;
};
int cmd_history(const history_cli_options& o);

} // namespace accelbench::cli
