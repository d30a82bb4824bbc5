// The geometric mean of a comparison's speed-ups, per workload and over every pair, with its own
// CI and verdict by the pairs' rule (the report's family means use the same stats::geomean).
#include "harness/compare/compare_parts.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/stats.hpp"

namespace accelbench::compare {

namespace {

// The counter of each verdict, in the order of the enum.
constexpr size_t workload_summary::*k_verdict_counts[] = {
    &workload_summary::improved, &workload_summary::regressed, &workload_summary::unchanged,
    &workload_summary::inconclusive, &workload_summary::skipped};

void count_verdict(workload_summary& s, verdict v) {
  ++(s.*k_verdict_counts[static_cast<size_t>(v)]);
}

// The geomean's own test: the mean of the pairs' log speed-ups, with an SE that holds however the
// pairs' errors correlate (a job's state moves every config of it together): the SD of a mean is
// at most the mean of the SDs. Degrees of freedom: the smallest pair's. Judged by the pairs' rule
// at the smallest threshold among them.
struct geomean_inputs {
  std::vector<double> log_speedups, se, df, threshold;
  size_t untested = 0;
  direction dir = direction::higher_is_better;
};

void judge_geomean(workload_summary& s, const geomean_inputs& in, double alpha) {
  if (in.log_speedups.empty() || in.untested > 0) {
    s.geomean_reason = in.untested > 0 ? fmt::format("{} pair(s) have no test (one figure a side "
                                                     "or no samples): the geomean has no CI",
                                                     in.untested)
                                       : "no pair was tested";
    return;
  }
  sample_comparison c;
  c.n_baseline = c.n_candidate = in.log_speedups.size() * 3; // the pairs' own counts were judged
  const double d = stats::mean(in.log_speedups), se = stats::mean(in.se);
  const double df = *std::min_element(in.df.begin(), in.df.end());
  sample_options so;
  so.dir = direction::higher_is_better; // a speed-up: > 1 is better
  so.alpha = alpha;
  so.threshold_pct = *std::min_element(in.threshold.begin(), in.threshold.end());
  so.min_samples = 0;
  const double q = student_t_quantile(1 - alpha / 2, df);
  c.ratio = std::exp(d);
  c.ratio_ci_low = std::exp(d - q * se);
  c.ratio_ci_high = std::exp(d + q * se);
  c.has_ci = true;
  c.p_value = se > 0 ? two_sided_p(d / se, df) : (d == 0 ? 1.0 : 0.0);
  judge_comparison(c, so);
  s.geomean_has_ci = true;
  s.geomean_ci_low = c.ratio_ci_low;
  s.geomean_ci_high = c.ratio_ci_high;
  s.geomean_p = c.p_value;
  s.geomean_verdict = c.result;
  s.geomean_reason = c.reason + fmt::format(" (SE: the mean of the {} pairs' SEs, which bounds "
                                            "it however they correlate)",
                                            in.log_speedups.size());
}

void finish_summary(workload_summary& s, const std::vector<double>& speedups,
                    const geomean_inputs& in, double alpha) {
  s.pairs = speedups.size();
  s.geomean_speedup = speedups.empty() ? 0 : stats::geomean(speedups);
  judge_geomean(s, in, alpha);
}

void add_geomean_input(geomean_inputs& in, const sample_comparison& c) {
  if (c.result == verdict::skipped)
    return;
  if (!c.tested || !(c.log_se > 0) || !(c.speedup() > 0)) {
    ++in.untested;
    return;
  }
  in.log_speedups.push_back(std::log(c.speedup()));
  in.se.push_back(c.log_se);
  in.df.push_back(c.df > 0 ? c.df : 1e9);
  in.threshold.push_back(c.threshold_pct);
}

} // namespace

// Geometric mean of direction-aware speed-ups per workload and over every pair: ratios multiply,
// so the geomean is the only mean that treats a 2x speed-up and a 2x slow-down symmetrically
// (Fleming & Wallace).
void summarize(set_comparison& out) {
  std::map<std::string, std::vector<double>> speedups;
  std::vector<double> all;
  std::map<std::string, geomean_inputs> inputs;
  geomean_inputs all_inputs;
  std::map<std::string, workload_summary> sums;
  out.overall = {};
  out.overall.workload = "OVERALL_GEOMEAN";
  for (const auto& p : out.pairs) {
    auto& s = sums[p.workload];
    s.workload = p.workload;
    count_verdict(s, p.cmp.result);
    count_verdict(out.overall, p.cmp.result);
    add_geomean_input(inputs[p.workload], p.cmp);
    add_geomean_input(all_inputs, p.cmp);
    const double su = p.cmp.speedup();
    if (su > 0 && std::isfinite(su)) {
      speedups[p.workload].push_back(su);
      all.push_back(su);
    }
  }
  for (auto& [w, s] : sums) {
    finish_summary(s, speedups[w], inputs[w], out.alpha);
    out.workloads.push_back(s);
  }
  finish_summary(out.overall, all, all_inputs, out.alpha);
}

} // namespace accelbench::compare
