#pragma once
// accelbench compare and accelbench history (nightly CI comparisons).
#include <string>
#include <vector>

#include "harness/cli/selector.hpp"
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
// What cmd_compare judges (also `accelbench serve`'s /api/v1/compare): the minimum effect from
// o.threshold, else each workload's ruleset; throws input_error when the sides share no config.
compare::set_comparison compare_selections(const selection& base, const selection& cand,
                                           const compare_cli_options& o);

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
// The series and change points of `history --format json` ("series" array) for runs already
// selected; `regression` (if given) is set when a change point is a regression. Shared with
// `accelbench serve` (/api/v1/history and the dashboard's charts).
json history_series(const std::vector<run>& runs, const history_cli_options& o,
                    bool* regression = nullptr);

} // namespace accelbench::cli
