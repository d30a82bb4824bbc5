#include "harness/app/query/comparison.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "harness/app/query/ab_sides.hpp"
#include "harness/app/query/job_history.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/compare/changepoint.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::query {

namespace {
bool any_ab(const selection& s) {
  return std::any_of(s.runs.begin(), s.runs.end(),
                     [](const run& r) { return r.extra.is_object() && r.extra.contains("ab"); });
}
} // namespace

compare::set_comparison compare_selections(const selection& base_in, const selection& cand_in,
                                           const compare_options& o) {
  // The sides of one `accelbench ab` are paired by plan slot, whatever their configs say: aligned
  // in a copy, for every front end.
  selection base_ab, cand_ab;
  const bool ab = any_ab(base_in) && any_ab(cand_in);
  if (ab) {
    base_ab = base_in;
    cand_ab = cand_in;
    align_ab_sides(base_ab, cand_ab);
  }
  const selection& base = ab ? base_ab : base_in;
  const selection& cand = ab ? cand_ab : cand_in;
  compare::set_options opt;
  opt.alpha = o.alpha;
  opt.trust_loaded = o.trust_loaded;
  opt.baseline_label = o.baseline;
  opt.candidate_label = o.candidate;
  // The minimum effect and the between-run noise floor are part of the rules.
  compare::ruleset_settings rules = compare::settings_from_rulesets({&base.runs, &cand.runs});
  if (o.threshold >= 0)
    opt.threshold_pct = o.threshold;
  else
    opt.threshold_by_workload = std::move(rules.threshold_by_workload);
  opt.floor_by_ruleset = std::move(rules.floor_by_ruleset);
  if (o.history)
    opt.history = earlier_jobs(*o.history, base, cand);
  auto c = compare::compare_sets(base.runs, cand.runs, opt);
  if (c.pairs.empty())
    throw input_error(
        fmt::format("baseline '{}' ({} runs) and candidate '{}' ({} runs) have no config in common "
                    "(pairs need the same workload, config and ruleset)",
                    o.baseline, base.runs.size(), o.candidate, cand.runs.size()));
  return c;
}

namespace {
// One series per (system, config, ruleset): each night (each job: the rounds of one job are one
// point, the median of their medians) contributes one value.
struct history_line {
  const store::history_row* last = nullptr;    // the unit and direction are the latest run's
  std::vector<double> values;                  // each point's
  std::vector<const store::history_row*> runs; // the first run of each point
  std::vector<std::vector<double>> medians;    // each point's run medians
  std::map<std::string, size_t> point_of_job;  // job_id -> point
};

void add_run(history_line& s, const store::history_row& r) {
  s.last = &r;
  auto [at, fresh] = s.point_of_job.try_emplace(r.job_id, s.medians.size());
  if (r.job_id.empty() || fresh) {
    at->second = s.medians.size();
    s.medians.emplace_back();
    s.runs.push_back(&r);
  }
  s.medians[at->second].push_back(*r.median);
}

std::map<std::string, history_line> history_lines(const std::vector<store::history_row>& runs) {
  std::map<std::string, history_line> all;
  std::string id;
  for (const auto& r : runs) {
    if (r.status != run_status::ok || !r.median)
      continue;
    id.assign(r.system).append("|").append(r.config_key).append("|").append(r.ruleset);
    auto it = all.find(id);
    if (it == all.end())
      it = all.emplace(id, history_line{}).first;
    add_run(it->second, r);
  }
  for (auto& [id, s] : all)
    for (const auto& m : s.medians)
      s.values.push_back(stats::median(m));
  return all;
}

json change_points_json(const history_line& s, const std::vector<compare::change_point>& cps) {
  json out = json::array();
  for (const auto& cp : cps) {
    const store::history_row* at = s.runs[cp.index];
    out.push_back({{"index", cp.index},
                   {"run_id", at->id},
                   {"started_at", at->started_at},
                   {"mean_before", cp.mean_before},
                   {"mean_after", cp.mean_after},
                   {"magnitude", cp.magnitude},
                   {"p_value", cp.p_value},
                   {"regression", cp.regression}});
  }
  return out;
}

// Each point with the medians of the runs it is the median of (a job's rounds), so that a chart
// can draw the spread behind a point.
json points_json(const history_line& s) {
  json out = json::array();
  for (size_t i = 0; i < s.values.size(); ++i)
    out.push_back({{"run_id", s.runs[i]->id},
                   {"started_at", s.runs[i]->started_at},
                   {"value", s.values[i]},
                   {"run_medians", s.medians[i]}});
  return out;
}
} // namespace

store::history_row history_row_of(const run& r) {
  store::history_row h;
  h.id = r.id;
  h.system = r.system;
  h.config_key = r.cfg.key();
  h.ruleset = r.ruleset;
  h.sample_unit = r.sample_unit;
  h.started_at = r.started_at;
  h.job_id = job_of(r);
  h.dir = r.sample_dir;
  h.status = r.status;
  std::vector<double> v;
  for (const auto& smp : r.samples)
    v.push_back(smp.value);
  if (!v.empty())
    h.median = stats::median(std::move(v));
  return h;
}

json history_series(const std::vector<store::history_row>& runs, const history_options& o,
                    bool* regression) {
  const std::map<std::string, history_line> all = history_lines(runs);
  json out = json::array();
  bool any_regression = false;
  for (const auto& [id, s] : all) {
    compare::changepoint_options co;
    co.dir = s.last->dir;
    co.min_segment = o.min_segment;
    co.max_pvalue = o.max_pvalue;
    co.window = o.window;
    std::vector<compare::change_point> cps;
    if (s.values.size() >= 2 * o.min_segment)
      cps = compare::detect_change_points(s.values, co);
    for (const auto& cp : cps)
      any_regression |= cp.regression;
    out.push_back({{"system", s.runs.front()->system},
                   {"config_key", s.runs.front()->config_key},
                   {"ruleset", s.runs.front()->ruleset},
                   {"unit", s.last->sample_unit},
                   {"direction", to_string(s.last->dir)},
                   {"points", points_json(s)},
                   {"change_points", change_points_json(s, cps)}});
  }
  if (regression)
    *regression = any_regression;
  return out;
}

} // namespace accelbench::query
