// Power and calibration of compare's verdicts, not a pass/fail test: seeded configs of S samples a
// side with lognormal noise (sigma 3% by default), a planted step of 0 (identical distributions),
// 5, 10 and 20% in the candidate's times. For each step, the share of configs called regressed,
// improved, unchanged and inconclusive by the current rule, beside the rule used before (a change
// needed the whole CI beyond the threshold; "unchanged" was any non-significant pair whose ratio of
// medians lay inside the threshold), computed from the same p-values and CIs.
// Aims: at a 10% step >= 95% regressed; on identical distributions <= 1% false alarms.
// Usage: accelbench_bench_compare_calibration [--configs N] [--samples S] [--noise SIGMA]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/stats.hpp"

using namespace accelbench;
using compare::verdict;

namespace {

std::vector<double> lognormal(stats::rng& g, double centre, double sigma, size_t n) {
  std::vector<double> v(n);
  for (auto& x : v)
    x = centre * std::exp(sigma * g.normal());
  return v;
}

// The rule before: significant and the whole CI beyond the threshold for a change; otherwise
// unchanged unless the point estimate is beyond the threshold with a straddling CI.
verdict previous_rule(const compare::sample_comparison& c, double t) {
  const double hi = 1 + t, lo = 1 - t;
  const bool straddles = (c.ratio_ci_low <= hi && c.ratio_ci_high >= hi) ||
                         (c.ratio_ci_low <= lo && c.ratio_ci_high >= lo);
  if (!(c.p_value < c.alpha)) {
    const bool point_beyond = c.ratio > hi || c.ratio < lo;
    return straddles && point_beyond ? verdict::inconclusive : verdict::unchanged;
  }
  if (c.ratio_ci_low > hi)
    return verdict::regressed;
  if (c.ratio_ci_high < lo)
    return verdict::improved;
  return straddles ? verdict::inconclusive : verdict::unchanged;
}

struct tally {
  size_t n[4] = {0, 0, 0, 0};
  void add(verdict v) { ++n[static_cast<int>(v)]; }
  double pct(verdict v, size_t total) const {
    return 100.0 * (double)n[static_cast<int>(v)] / (double)total;
  }
};

void print_row(const char* rule, double step, const tally& t, size_t configs) {
  std::printf("%-8s step %+5.1f%%: regressed %6.2f%%  improved %5.2f%%  unchanged %6.2f%%  "
              "inconclusive %6.2f%%\n",
              rule, 100 * step, t.pct(verdict::regressed, configs),
              t.pct(verdict::improved, configs), t.pct(verdict::unchanged, configs),
              t.pct(verdict::inconclusive, configs));
}

} // namespace

int main(int argc, char** argv) {
  size_t configs = 2000, samples = 10;
  double noise = 0.03;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--configs")
      configs = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--samples")
      samples = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--noise")
      noise = std::strtod(argv[i + 1], nullptr);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::printf("%zu configs per step, %zu samples a side, lognormal noise sigma %.1f%%, alpha 0.01, "
              "threshold 5%%\n",
              configs, samples, 100 * noise);
  compare::sample_options opt;
  for (double step : {0.0, 0.05, 0.10, 0.20}) {
    stats::rng g(1234 + (uint64_t)(step * 1000));
    tally now, before;
    for (size_t i = 0; i < configs; ++i) {
      opt.seed = 42 + i;
      const auto c = compare::compare_samples(lognormal(g, 1e-3, noise, samples),
                                              lognormal(g, 1e-3 * (1 + step), noise, samples), opt);
      now.add(c.result);
      before.add(previous_rule(c, opt.threshold_pct / 100));
    }
    print_row("before", step, before, configs);
    print_row("now", step, now, configs);
  }
  return 0;
}
