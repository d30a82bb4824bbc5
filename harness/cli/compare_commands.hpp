#pragma once
// accelbench compare and accelbench history (nightly CI comparisons).
#include <string>
#include <vector>

namespace accelbench::cli {

struct compare_cli_options {
  std::string baseline, candidate, format = "table", output, db;
  double threshold = -1;  // < 0: per workload from the ruleset (default 5%)
  double alpha = 0.01;
  bool strict = false;
  bool color = false;
};
int cmd_compare(const compare_cli_options& o);

struct history_cli_options {
  std::string workload, system, since, format = "table", db;
  std::vector<std::string> sets, tags;
  size_t min_segment = 5;
  double max_pvalue = 0.001;
  size_t window = 0;
  bool fail_on_regression = false;
};
int cmd_history(const history_cli_options& o);

} // namespace accelbench::cli
