#pragma once
// What compare and history judge, for every front end: the command line (`accelbench compare`,
// `accelbench history`) and the server (/api/v1/compare, /api/v1/history, the dashboard).
#include <cstddef>
#include <string>
#include <vector>

#include "harness/app/query/selector.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/model.hpp"

namespace accelbench::query {

struct compare_options {
  std::string baseline, candidate; // the selectors, as labels
  double threshold = -1;           // < 0: per workload from the ruleset (default 5%)
  double alpha = 0.01;
  bool trust_loaded = false; // judge pairs measured on a loaded machine like any other
  // The store the sides came from: each config's earlier jobs there give the noise between jobs
  // (harness/app/query/job_history.hpp); nullptr: no history (files, or none wanted).
  store::store* history = nullptr;
};
// The comparison of two selections: the minimum effect from o.threshold, else each workload's
// ruleset; throws input_error when the sides share no config.
compare::set_comparison compare_selections(const selection& base, const selection& cand,
                                           const compare_options& o);

struct history_options {
  size_t min_segment = 5;
  double max_pvalue = 0.001;
  size_t window = 0;
};
// The series and change points of `history --format json` ("series" array) for runs already
// selected, as store::history_rows reads them; `regression` (if given) is set when a change point
// is a regression.
json history_series(const std::vector<store::history_row>& runs, const history_options& o,
                    bool* regression = nullptr);
// A run read whole as history reads it: its median computed from its samples.
store::history_row history_row_of(const run& r);

} // namespace accelbench::query
