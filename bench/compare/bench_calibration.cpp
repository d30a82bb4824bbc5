// Power and calibration of compare's verdicts, not a pass/fail test.
//
// 1. Jobs with noise between runs as well as within them. A seeded "job" is a comparison of K
//    configs (the quick suite has 7), each measured in R rounds a side of S samples. A sample is
//    lognormal around its run's location (within-run sigma); each run's location moves by the
//    between-run sigma; each side of a config also moves as a whole by the job sigma (what one
//    job's own rounds cannot see: the next job starts in another state). A step of 0 (identical
//    distributions), 5, 10 and 20% is planted in every candidate. Each job goes through
//    compare_sets, as `accelbench compare` runs it, with the ruleset's floor. Beside it, the test
//    used before (one run a side, its samples pooled, Mann-Whitney U and a bootstrap CI of the
//    ratio of medians) on the first round of the same data.
// 2. MLPerf's run counts: one value per run (time to train), 3, 5 and 10 runs a side,
//    run-to-run sigma, steps 0 and 10%.
// Aims: at a 10% step >= 95% regressed; on identical distributions <= 1% false alarms.
// Usage: accelbench_bench_compare_calibration [--jobs N] [--configs K] [--rounds R] [--samples S]
//          [--within SIGMA] [--between SIGMA] [--job SIGMA] [--floor PCT] [--mlperf-sigma SIGMA]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/compare/mann_whitney.hpp"
#include "harness/core/stats.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using compare::verdict;

namespace {

struct settings {
  size_t jobs = 300, configs = 7, rounds = 5, samples = 5;
  double within = 0.03, between = 0.02, job = 0.0, floor_pct = 2.0, mlperf_sigma = 0.03;
};

struct tally {
  size_t n[5] = {0, 0, 0, 0, 0};
  size_t total = 0;
  void add(verdict v) {
    ++n[static_cast<int>(v)];
    ++total;
  }
  double pct(verdict v) const {
    return total ? 100.0 * (double)n[static_cast<int>(v)] / (double)total : 0;
  }
};

void print_row(const char* rule, double step, const tally& t) {
  std::printf("  %-34s step %+5.1f%%: regressed %6.2f%%  improved %5.2f%%  unchanged %6.2f%%  "
              "inconclusive %6.2f%%\n",
              rule, 100 * step, t.pct(verdict::regressed), t.pct(verdict::improved),
              t.pct(verdict::unchanged), t.pct(verdict::inconclusive));
}

run make_run(size_t config, const std::vector<double>& values) {
  run r;
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", std::to_string(config)}};
  r.ruleset = "calibration";
  test_support::add_samples(r, values);
  return r;
}

// One side of one config: R runs of S samples around centre, moved as a whole by the job sigma.
std::vector<std::vector<double>> side(stats::rng& g, const settings& s, double centre) {
  const double job_shift = s.job * g.normal();
  std::vector<std::vector<double>> runs(s.rounds);
  for (auto& r : runs) {
    const double loc = centre * std::exp(job_shift + s.between * g.normal());
    r.resize(s.samples);
    for (auto& x : r)
      x = loc * std::exp(s.within * g.normal());
  }
  return runs;
}

// The test used before rounds existed: one run a side, Mann-Whitney U on its samples, a bootstrap
// CI of the ratio of medians, the same three-way rule.
verdict previous_test(const std::vector<double>& b, const std::vector<double>& c, uint64_t seed) {
  const double p = compare::mann_whitney_u(c, b).p_value;
  const double ratio = stats::median(c) / stats::median(b);
  const auto [lo, hi] = stats::bootstrap_ratio_ci(b, c, 0.95, 2000, seed);
  if (p < 0.01 && ratio > 1.05 && lo > 1)
    return verdict::regressed;
  if (p < 0.01 && ratio < 0.95 && hi < 1)
    return verdict::improved;
  if (lo > 0.95 && hi < 1.05)
    return verdict::unchanged;
  return verdict::inconclusive;
}

void jobs_section(const settings& s) {
  std::printf("1. Jobs: %zu jobs of %zu configs, %zu rounds a side of %zu samples; lognormal "
              "sigma within runs %.1f%%, between runs %.1f%%, between jobs %.1f%%; floor %.1f%%; "
              "alpha 0.01, threshold 5%%\n",
              s.jobs, s.configs, s.rounds, s.samples, 100 * s.within, 100 * s.between, 100 * s.job,
              s.floor_pct);
  compare::set_options opt;
  opt.floor_pct = s.floor_pct;
  opt.threads = 1;
  for (double step : {0.0, 0.05, 0.10, 0.20}) {
    stats::rng g(1234 + (uint64_t)(step * 1000));
    tally now, before;
    for (size_t j = 0; j < s.jobs; ++j) {
      std::vector<run> base, cand;
      for (size_t k = 0; k < s.configs; ++k) {
        const auto b = side(g, s, 1e-3), c = side(g, s, 1e-3 * (1 + step));
        for (const auto& r : b)
          base.push_back(make_run(k, r));
        for (const auto& r : c)
          cand.push_back(make_run(k, r));
        before.add(previous_test(b[0], c[0], 42 + k));
      }
      for (const auto& p : compare::compare_sets(base, cand, opt).pairs)
        now.add(p.cmp.result);
    }
    const std::string label = "now (" + std::to_string(s.rounds) + " rounds a side)";
    print_row("before (1 run a side, within-run)", step, before);
    print_row(label.c_str(), step, now);
  }
}

void mlperf_section(const settings& s) {
  std::printf("2. MLPerf run counts: one value per run, lognormal run-to-run sigma %.1f%%, %zu "
              "comparisons each, no floor\n",
              100 * s.mlperf_sigma, s.jobs * s.configs);
  for (size_t n : {3, 5, 10}) {
    // Mann-Whitney's smallest attainable two-sided p at n and n: 2 / C(2n, n).
    double comb = 1;
    for (size_t i = 1; i <= n; ++i)
      comb = comb * (double)(n + i) / (double)i;
    std::printf("  %zu runs a side (Mann-Whitney's smallest two-sided p would be %.3g):\n", n,
                2 / comb);
    for (double step : {0.0, 0.10}) {
      stats::rng g(99 + n + (uint64_t)(step * 1000));
      tally t;
      for (size_t i = 0; i < s.jobs * s.configs; ++i) {
        compare::run_samples b(n), c(n);
        for (auto& r : b)
          r = {60 * std::exp(s.mlperf_sigma * g.normal())};
        for (auto& r : c)
          r = {60 * (1 + step) * std::exp(s.mlperf_sigma * g.normal())};
        t.add(compare::compare_runs(b, c).result);
      }
      print_row("t on log run times", step, t);
    }
  }
}

bool parse(int argc, char** argv, settings& s) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--jobs")
      s.jobs = std::strtoul(v, nullptr, 10);
    else if (a == "--configs")
      s.configs = std::strtoul(v, nullptr, 10);
    else if (a == "--rounds")
      s.rounds = std::strtoul(v, nullptr, 10);
    else if (a == "--samples")
      s.samples = std::strtoul(v, nullptr, 10);
    else if (a == "--within")
      s.within = std::strtod(v, nullptr);
    else if (a == "--between")
      s.between = std::strtod(v, nullptr);
    else if (a == "--job")
      s.job = std::strtod(v, nullptr);
    else if (a == "--floor")
      s.floor_pct = std::strtod(v, nullptr);
    else if (a == "--mlperf-sigma")
      s.mlperf_sigma = std::strtod(v, nullptr);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  return s.rounds >= 1 && s.samples >= 1 && s.configs >= 1;
}

} // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse(argc, argv, s))
    return 2;
  jobs_section(s);
  mlperf_section(s);
  return 0;
}
