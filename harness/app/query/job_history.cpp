#include "harness/app/query/job_history.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "harness/compare/changepoint.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::query {

namespace {

constexpr double k_outlier_sd = 3.5;
// A MAD of fewer levels is too unstable to judge outliers by: with 5 jobs, three close together
// make the other two "outliers" often enough to halve the spread (false alarms 2% instead of 1%
// at 5 earlier jobs, bench/compare/bench_power.cpp).
constexpr size_t k_outlier_min_jobs = 10;

std::string pair_name(const std::string& key, const std::string& ruleset) {
  return key + " [" + ruleset + "]";
}

// What identifies a config's series: the system, config, ruleset and environment.
struct series_id {
  std::string system, name, fingerprint;
  bool operator<(const series_id& o) const {
    return std::tie(system, name, fingerprint) < std::tie(o.system, o.name, o.fingerprint);
  }
};

// The candidate's series and where they start: its latest run's system and fingerprint per pair.
struct wanted {
  std::map<series_id, std::string> name_of; // -> pair name
  std::set<std::string> systems, workloads;
  std::set<int64_t> side_ids;
  std::string before; // the candidate's first start
};

wanted wanted_series(const selection& base, const selection& cand) {
  wanted w;
  std::map<std::string, const run*> latest;
  for (const auto& r : cand.runs) {
    const std::string name = pair_name(r.cfg.key(), r.ruleset);
    auto& at = latest[name];
    if (!at || at->started_at < r.started_at)
      at = &r;
    if (!r.started_at.empty() && (w.before.empty() || r.started_at < w.before))
      w.before = r.started_at;
  }
  for (const auto& [name, r] : latest) {
    w.name_of[{r->system, name, r->fingerprint}] = name;
    w.systems.insert(r->system);
    w.workloads.insert(r->cfg.workload);
  }
  for (const auto* side : {&base.runs, &cand.runs})
    for (const auto& r : *side)
      w.side_ids.insert(r.id);
  return w;
}

bool usable(const store::history_row& h, const wanted& w) {
  return h.status == run_status::ok && h.valid && h.median && *h.median > 0 &&
         std::isfinite(*h.median) && !h.job_id.empty() && h.started_at < w.before &&
         !w.side_ids.count(h.id);
}

// Per pair name: each earlier job's log medians, jobs in order of their first run.
std::map<std::string, std::vector<std::vector<double>>> series_of(store::store& db,
                                                                  const wanted& w) {
  store::run_filter f;
  f.systems.assign(w.systems.begin(), w.systems.end());
  f.workloads.assign(w.workloads.begin(), w.workloads.end());
  f.with_samples = false;
  std::map<std::string, std::vector<std::vector<double>>> out;
  std::map<std::pair<std::string, std::string>, size_t> job_index; // (pair, job) -> index
  for (const auto& h : db.history_rows(f)) {                       // by start time
    if (!usable(h, w))
      continue;
    const auto it = w.name_of.find({h.system, pair_name(h.config_key, h.ruleset), h.fingerprint});
    if (it == w.name_of.end())
      continue;
    auto& jobs = out[it->second];
    const auto [at, fresh] = job_index.try_emplace({it->second, h.job_id}, jobs.size());
    if (fresh)
      jobs.emplace_back();
    jobs[at->second].push_back(std::log(*h.median));
  }
  return out;
}

// The levels after the last change point, when the series is long enough to find one.
std::vector<double> after_last_change(std::vector<double> levels, size_t& left_out) {
  compare::changepoint_options co;
  if (levels.size() < 2 * co.min_segment)
    return levels;
  const auto cps = compare::detect_change_points(levels, co);
  if (cps.empty())
    return levels;
  left_out += cps.back().index;
  return {levels.begin() + static_cast<std::ptrdiff_t>(cps.back().index), levels.end()};
}

std::vector<double> without_outliers(const std::vector<double>& levels, size_t& left_out) {
  if (levels.size() < k_outlier_min_jobs)
    return levels;
  const double m = stats::median(levels);
  std::vector<double> dev;
  dev.reserve(levels.size());
  for (double x : levels)
    dev.push_back(std::fabs(x - m));
  const double sd = 1.4826 * stats::median(dev);
  if (!(sd > 0))
    return levels;
  std::vector<double> kept;
  for (double x : levels)
    if (std::fabs(x - m) <= k_outlier_sd * sd)
      kept.push_back(x);
  left_out += levels.size() - kept.size();
  return kept;
}

} // namespace

compare::job_history job_spread(const std::vector<std::vector<double>>& job_log_medians) {
  compare::job_history h;
  std::vector<double> levels;
  const size_t first =
      job_log_medians.size() > k_history_jobs ? job_log_medians.size() - k_history_jobs : 0;
  levels.reserve(job_log_medians.size() - first);
  for (size_t i = first; i < job_log_medians.size(); ++i)
    levels.push_back(stats::mean(job_log_medians[i]));
  levels = without_outliers(after_last_change(std::move(levels), h.left_out), h.left_out);
  h.jobs = levels.size();
  if (levels.size() < 2)
    return h;
  const double mean = stats::mean(levels);
  for (double x : levels)
    h.ss += (x - mean) * (x - mean);
  h.df = static_cast<double>(levels.size() - 1);
  return h;
}

std::map<std::string, compare::job_history> earlier_jobs(store::store& db, const selection& base,
                                                         const selection& cand) {
  const wanted w = wanted_series(base, cand);
  std::map<std::string, compare::job_history> out;
  if (w.name_of.empty() || w.before.empty())
    return out;
  for (const auto& [name, jobs] : series_of(db, w))
    if (auto h = job_spread(jobs); h.jobs > 0)
      out[name] = h;
  return out;
}

} // namespace accelbench::query
