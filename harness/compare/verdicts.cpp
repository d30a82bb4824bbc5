// A pair's verdict: two sides' samples compared by the test of between_runs.hpp, and the rule
// that turns its ratio, CI and p-value into improved / regressed / unchanged / inconclusive.
#include "harness/compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "harness/core/conditions.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

std::string to_string(verdict v) {
  switch (v) {
  case verdict::improved:
    return "improved";
  case verdict::regressed:
    return "regressed";
  case verdict::unchanged:
    return "unchanged";
  case verdict::inconclusive:
    return "inconclusive";
  case verdict::skipped:
    return "skipped";
  }
  return "inconclusive";
}

double sample_comparison::speedup() const {
  if (!(ratio > 0) || !std::isfinite(ratio))
    return 0;
  return dir == direction::lower_is_better ? 1 / ratio : ratio;
}

namespace {

std::string printf_string(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

// "median +10.3% (95% CI +8.1% .. +12.0%), p = 0.0002"
std::string describe_shift(const sample_comparison& c, double level) {
  if (!c.has_ci)
    return printf_string("median %+.1f%%, ", (c.ratio - 1) * 100) +
           printf_string("p = %.2g", c.p_value);
  return printf_string("median %+.1f%% (", (c.ratio - 1) * 100) +
         printf_string("%.0f%% CI %+.1f%% .. %+.1f%%), ", level * 100, (c.ratio_ci_low - 1) * 100,
                       (c.ratio_ci_high - 1) * 100) +
         printf_string("p = %.2g", c.p_value);
}

bool all_positive(const run_samples& runs) {
  for (const auto& r : runs)
    for (double x : r)
      if (!(x > 0) || !std::isfinite(x))
        return false;
  return true;
}

std::vector<double> flatten(const run_samples& runs) {
  std::vector<double> v;
  for (const auto& r : runs)
    v.insert(v.end(), r.begin(), r.end());
  return v;
}

// The verdict of a pair whose samples and ratio CI are known. A change is called only when the
// data support it three ways: the t-test is significant, the ratio's CI excludes 1 on
// the same side, and the ratio of medians is beyond the minimum effect. "Unchanged" claims the
// opposite — that any change is smaller than the minimum effect — so it needs the whole CI inside
// (1 - t, 1 + t). Everything else is inconclusive. (Requiring the whole CI beyond the threshold
// for a change, as before, asks for 97.5% confidence that the effect exceeds the threshold: with
// 10 samples a side and 3% noise the CI's half-width is about 4%, so a real 10% step was missed
// in about one config in five.)
void judge(sample_comparison& c, const sample_options& opt) {
  const double t = opt.threshold_pct / 100;
  const double hi = 1 + t, lo = 1 - t;
  const bool lower_better = opt.dir == direction::lower_is_better;
  const bool significant = c.p_value < opt.alpha;
  const bool up = significant && c.ratio > hi && c.ratio_ci_low > 1;    // candidate larger
  const bool down = significant && c.ratio < lo && c.ratio_ci_high < 1; // candidate smaller
  const bool within = c.ratio_ci_low > lo && c.ratio_ci_high < hi;
  const std::string shift = describe_shift(c, opt.level());
  const std::string thr = printf_string("%g%%", opt.threshold_pct);
  if (up || down) {
    const bool worse = lower_better ? up : down;
    c.result = worse ? verdict::regressed : verdict::improved;
    c.reason = shift + ": " + (worse ? "worse" : "better") + " beyond the " + thr + " threshold";
  } else if (within) {
    c.result = verdict::unchanged;
    c.reason = shift + ": the whole CI lies within the " + thr + " threshold";
  } else {
    c.result = verdict::inconclusive;
    c.reason =
        shift +
        (significant ? ": significant, but " : printf_string(" >= alpha %g, and ", opt.alpha)) +
        "the CI reaches beyond the " + thr + " threshold: more samples needed";
  }
}

} // namespace

namespace {

// Nothing to test: one figure a side (published results, a single time to train) has no spread
// of its own, and a spread borrowed from other configs would test those configs, not this one.
bool one_figure_a_side(const sample_comparison& c) {
  return c.n_baseline == 1 && c.n_candidate == 1;
}

// The paired test when the options carry an A/B's rounds and the sides share two or more;
// otherwise the unpaired test of the sides' job levels.
location_test test_sides(const run_samples& baseline, const run_samples& candidate,
                         const sample_options& opt, const side_locations& lb,
                         const side_locations& lc) {
  if (!opt.baseline_rounds.empty() && !opt.candidate_rounds.empty()) {
    const paired_rounds pr =
        pair_by_round(baseline, opt.baseline_rounds, candidate, opt.candidate_rounds);
    if (!pr.d.empty())
      return test_paired(pr, opt.paired_pool ? *opt.paired_pool : variance_pool{}, opt.level());
  }
  noise_sources src;
  src.rounds = opt.pool;
  src.jobs = opt.job_pool;
  src.within = opt.within_pool;
  src.history = opt.history;
  src.floor_pct = opt.floor_pct;
  return test_locations(lb, lc, src, opt.level());
}

void set_extremes(sample_comparison& c, const std::vector<double>& fb,
                  const std::vector<double>& fc) {
  const auto [blo, bhi] = std::minmax_element(fb.begin(), fb.end());
  const auto [clo, chi] = std::minmax_element(fc.begin(), fc.end());
  c.baseline_min = *blo;
  c.baseline_max = *bhi;
  c.candidate_min = *clo;
  c.candidate_max = *chi;
}

void take_test(sample_comparison& c, const location_test& t, const sample_options& opt) {
  c.ratio = std::exp(t.d);
  c.ratio_ci_low = std::exp(t.ci_low);
  c.ratio_ci_high = std::exp(t.ci_high);
  c.has_ci = true;
  c.p_value = t.p_value;
  c.df = t.noise.df;
  c.log_se = t.se;
  c.between_run_pct = 100 * std::expm1(t.noise.tau);
  c.between_job_pct = 100 * std::expm1(t.noise.job_sd);
  c.paired = t.noise.paired;
  c.paired_rounds = t.noise.paired_rounds;
  c.method = t.noise.method;
  c.accounts_for = t.noise.accounts_for;
  c.detectable_pct = 100 * detectable_change(t.se, t.noise.df, opt.alpha, opt.threshold_pct / 100);
}

} // namespace

sample_comparison compare_runs(const run_samples& baseline, const run_samples& candidate,
                               const sample_options& opt) {
  if (!(opt.level() > 0 && opt.level() < 1))
    throw input_error("compare: the CI level must be in (0, 1) (got " +
                      std::to_string(opt.level()) + ")");
  sample_comparison c;
  c.dir = opt.dir;
  c.alpha = opt.alpha;
  c.threshold_pct = opt.threshold_pct;
  const std::vector<double> fb = flatten(baseline), fc = flatten(candidate);
  c.n_baseline = fb.size();
  c.n_candidate = fc.size();
  c.result = verdict::inconclusive;
  c.tested = false;
  if (fb.empty() || fc.empty()) {
    c.reason = fb.empty() ? "no baseline samples" : "no candidate samples";
    return c;
  }
  // Times and throughputs are positive: the test works on their logarithms.
  if (!all_positive(baseline) || !all_positive(candidate)) {
    c.reason = "a sample is not a positive finite number";
    return c;
  }
  set_extremes(c, fb, fc);
  const side_locations lb = locate(baseline, opt.baseline_jobs);
  const side_locations lc = locate(candidate, opt.candidate_jobs);
  c.runs_baseline = lb.locations.size();
  c.runs_candidate = lc.locations.size();
  c.baseline_median = std::exp(lb.mean);
  c.candidate_median = std::exp(lc.mean);
  if (one_figure_a_side(c)) {
    c.ratio = c.candidate_median / c.baseline_median;
    c.reason = untested_wording;
    return c;
  }
  c.tested = true;
  take_test(c, test_sides(baseline, candidate, opt, lb, lc), opt);
  judge_comparison(c, opt);
  return c;
}

sample_comparison compare_samples(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate, const sample_options& opt) {
  return compare_runs(run_samples{baseline}, run_samples{candidate}, opt);
}

void judge_comparison(sample_comparison& c, const sample_options& opt) {
  c.dir = opt.dir;
  c.alpha = opt.alpha;
  c.threshold_pct = opt.threshold_pct;
  c.result = verdict::inconclusive;
  // Too few samples to judge, whatever the numbers say.
  if (c.n_baseline < opt.min_samples || c.n_candidate < opt.min_samples) {
    c.reason = std::to_string(c.n_baseline) + " baseline and " + std::to_string(c.n_candidate) +
               " candidate samples; at least " + std::to_string(opt.min_samples) +
               " needed on each side";
    return;
  }
  if (!(c.ratio > 0) || !c.has_ci) {
    c.reason = "ratio of medians undefined (a median is not positive)";
    return;
  }
  judge(c, opt);
}

std::string load_reason(const std::vector<const run*>& runs, const std::string& label) {
  std::optional<double> worst;
  for (const run* r : runs)
    if (auto share = loaded_share(*r); share && (!worst || *share > *worst))
      worst = share;
  if (!worst)
    return "";
  return fmt::format("{} ran while other processes used {:.0f}% of the cores", label, 100 * *worst);
}

void discount_loaded(sample_comparison& c, const std::string& why) {
  if (why.empty() || (c.result != verdict::regressed && c.result != verdict::improved))
    return;
  c.reason = fmt::format("{} (would be {}), but {}: the load moves the times as much as a change "
                         "would (rerun on a quiet machine, or --trust-loaded)",
                         c.reason, to_string(c.result), why);
  c.result = verdict::inconclusive;
}

} // namespace accelbench::compare
