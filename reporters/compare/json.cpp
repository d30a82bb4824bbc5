// The comparison as JSON (schemas/compare.schema.json): the API's and scripts' form.
#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/compare/listing.hpp"

namespace accelbench::compare {

namespace {

json number_or_null(double v, bool defined) { return defined ? json(v) : json(nullptr); }

json summary_json(const workload_summary& s) {
  const bool ci = s.geomean_has_ci && s.geomean_speedup > 0;
  return {{"workload", s.workload},
          {"pairs", s.pairs},
          {"geomean_speedup", number_or_null(s.geomean_speedup, s.geomean_speedup > 0)},
          {"geomean_ci", ci ? json::array({s.geomean_ci_low, s.geomean_ci_high}) : json(nullptr)},
          {"geomean_p", number_or_null(s.geomean_p, ci)},
          {"geomean_verdict", ci ? json(to_string(s.geomean_verdict)) : json(nullptr)},
          {"geomean_reason", s.geomean_reason},
          {"regressed", s.regressed},
          {"inconclusive", s.inconclusive},
          {"improved", s.improved},
          {"unchanged", s.unchanged},
          {"skipped", s.skipped}};
}

json metrics_json(const std::vector<metric_summary>& ms) {
  json out = json::array();
  for (const auto& m : ms)
    out.push_back({{"name", m.name},
                   {"unit", m.unit},
                   {"direction", to_string(m.dir)},
                   {"median", m.median},
                   {"min", m.min},
                   {"max", m.max},
                   {"runs", m.runs}});
  return out;
}

json pair_json(const pair_result& p) {
  const auto& m = p.cmp;
  const bool def = ratio_defined(m);
  auto side = [](size_t n, double med, double lo, double hi, size_t runs) {
    return json{{"n", n}, {"median", med}, {"min", lo}, {"max", hi}, {"runs", runs}};
  };
  return {
      {"name", p.name},
      {"key", p.key},
      {"ruleset", p.ruleset},
      {"workload", p.workload},
      {"backend", p.backend},
      {"unit", p.unit},
      {"direction", to_string(m.dir)},
      {"threshold_pct", m.threshold_pct},
      {"baseline",
       side(m.n_baseline, m.baseline_median, m.baseline_min, m.baseline_max, p.baseline_runs)},
      {"candidate",
       side(m.n_candidate, m.candidate_median, m.candidate_min, m.candidate_max, p.candidate_runs)},
      {"ratio", number_or_null(m.ratio, def)},
      {"ratio_ci", def && m.has_ci && has_test(m) ? json::array({m.ratio_ci_low, m.ratio_ci_high})
                                                  : json(nullptr)},
      {"speedup", number_or_null(m.speedup(), def)},
      {"p_value", number_or_null(m.p_value, has_test(m))},
      {"tested", has_test(m)},
      {"paired", m.paired},
      {"detectable_pct", number_or_null(m.detectable_pct, has_test(m) && m.detectable_pct > 0)},
      {"test",
       {{"method", m.method},
        {"df", m.df},
        {"between_run_pct", m.between_run_pct},
        {"between_job_pct", m.between_job_pct},
        {"paired_rounds", m.paired_rounds},
        {"accounts_for", m.accounts_for}}},
      {"verdict", to_string(m.result)},
      {"reason", reason_text(m)},
      {"environment_differs", p.environment_differs},
      {"environment_differences", p.environment_differences},
      {"notes", p.notes},
      {"candidate_metrics", metrics_json(p.candidate_metrics)},
  };
}

json unpaired_json(const unpaired_run& u) {
  return {{"name", u.name},
          {"key", u.key},
          {"ruleset", u.ruleset},
          {"workload", u.workload},
          {"runs", u.runs}};
}

} // namespace

json to_json(const set_comparison& c) {
  json j;
  j["schema_version"] = compare_schema_version;
  j["kind"] = "accelbench.compare";
  j["baseline"] = c.baseline_label;
  j["candidate"] = c.candidate_label;
  j["alpha"] = c.alpha;
  j["summary"] = {{"pairs", c.pairs.size()},
                  {"regressed", c.count(verdict::regressed)},
                  {"inconclusive", c.count(verdict::inconclusive)},
                  {"improved", c.count(verdict::improved)},
                  {"unchanged", c.count(verdict::unchanged)},
                  {"skipped", c.count(verdict::skipped)},
                  {"only_baseline", c.only_baseline.size()},
                  {"only_candidate", c.only_candidate.size()}};
  json pairs = json::array();
  for (const pair_result* p : listed(c))
    pairs.push_back(pair_json(*p));
  j["pairs"] = std::move(pairs);
  json ob = json::array(), oc = json::array();
  for (const auto& u : c.only_baseline)
    ob.push_back(unpaired_json(u));
  for (const auto& u : c.only_candidate)
    oc.push_back(unpaired_json(u));
  j["only_baseline"] = std::move(ob);
  j["only_candidate"] = std::move(oc);
  json ws = json::array();
  for (const auto& s : c.workloads)
    ws.push_back(summary_json(s));
  j["workloads"] = std::move(ws);
  j["overall"] = summary_json(c.overall);
  j["only_changed"] = c.only_changed;
  j["not_shown"] = not_shown(c);
  j["notes"] = c.notes;
  return j;
}

std::string format_json(const set_comparison& c) { return dump_json(to_json(c), 2) + "\n"; }

} // namespace accelbench::compare
