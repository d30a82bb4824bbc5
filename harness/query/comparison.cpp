#include "harness/query/comparison.hpp"

#include <map>

#include <fmt/format.h>

#include "harness/compare/changepoint.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::query {

compare::set_comparison compare_selections(const selection& base, const selection& cand,
                                           const compare_options& o) {
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
  std::string system, key, ruleset, unit;
  direction dir = direction::lower_is_better;
  std::vector<double> values;
  std::vector<const run*> runs;               // the first run of each point
  std::vector<std::vector<double>> medians;   // each point's run medians
  std::map<std::string, size_t> point_of_job; // run.extra.job_id -> point
};

std::map<std::string, history_line> history_lines(const std::vector<run>& runs) {
  std::map<std::string, history_line> all;
  for (const auto& r : runs) {
    if (r.status != run_status::ok || r.samples.empty())
      continue;
    auto& s = all[r.system + "|" + r.cfg.key() + "|" + r.ruleset];
    s.system = r.system;
    s.key = r.cfg.key();
    s.ruleset = r.ruleset;
    s.unit = r.sample_unit;
    s.dir = r.sample_dir;
    std::vector<double> v;
    for (const auto& smp : r.samples)
      v.push_back(smp.value);
    const std::string job = r.extra.is_object() ? r.extra.value("job_id", "") : "";
    auto [at, fresh] = s.point_of_job.try_emplace(job, s.medians.size());
    if (job.empty() || fresh) {
      at->second = s.medians.size();
      s.medians.emplace_back();
      s.runs.push_back(&r);
    }
    s.medians[at->second].push_back(stats::median(v));
  }
  for (auto& [id, s] : all)
    for (const auto& m : s.medians)
      s.values.push_back(stats::median(m));
  return all;
}
} // namespace

json history_series(const std::vector<run>& runs, const history_options& o, bool* regression) {
  const std::map<std::string, history_line> all = history_lines(runs);
  json out = json::array();
  bool any_regression = false;
  for (const auto& [id, s] : all) {
    compare::changepoint_options co;
    co.dir = s.dir;
    co.min_segment = o.min_segment;
    co.max_pvalue = o.max_pvalue;
    co.window = o.window;
    std::vector<compare::change_point> cps;
    if (s.values.size() >= 2 * o.min_segment)
      cps = compare::detect_change_points(s.values, co);
    json jcps = json::array();
    for (const auto& cp : cps) {
      const run* at = s.runs[cp.index];
      any_regression |= cp.regression;
      jcps.push_back({{"index", cp.index},
                      {"run_id", at->id},
                      {"started_at", at->started_at},
                      {"mean_before", cp.mean_before},
                      {"mean_after", cp.mean_after},
                      {"magnitude", cp.magnitude},
                      {"p_value", cp.p_value},
                      {"regression", cp.regression}});
    }
    json points = json::array();
    for (size_t i = 0; i < s.values.size(); ++i)
      points.push_back({{"run_id", s.runs[i]->id},
                        {"started_at", s.runs[i]->started_at},
                        {"value", s.values[i]}});
    out.push_back({{"system", s.system},
                   {"config_key", s.key},
                   {"ruleset", s.ruleset},
                   {"unit", s.unit},
                   {"direction", to_string(s.dir)},
                   {"points", points},
                   {"change_points", jcps}});
  }
  if (regression)
    *regression = any_regression;
  return out;
}

} // namespace accelbench::query
