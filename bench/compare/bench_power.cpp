// Power and false alarms of compare's verdicts in each design of a comparison, on synthetic
// configs with job-level offsets (not a pass/fail test; the aims and the model:
// docs/statistics.md).
//
// The generator. A config's sample is lognormal around its run's location:
//   log sample = log centre + J (the job's level, sd --job) + B (the round's, sd --round)
//                + e (within the run, sd --within)
// Every run has --samples samples; a job has --rounds runs (rounds). Designs:
//   jobs      one job a side (the default job against the previous one), with H earlier jobs of
//             the config in the store (H = 0, 5, 20) feeding the history, the floor a prior
//   nightly   N earlier nightly jobs (5, 10) pooled as the baseline against tonight's job
//   ab        one A/B job (`accelbench ab`): both sides share J and each round's drift B; each
//             side's run adds its own noise (sd --pair) on top of the samples
//   import    one Google Benchmark import a side: 10 samples, no rounds, no job noise
// For each, a step of 0 (identical), 2, 5 and 10% is planted in every candidate, and the verdicts
// of compare_sets (as `accelbench compare` judges) are counted: false alarms (regressed or improved
// at step 0, with the one-sided 95% Clopper-Pearson upper bound) and detection (regressed). Beside
// them, the oracle: the same estimator judged by the same rule with the true SE (a z-test that
// knows the noise), the most a test of these data can find.
// Usage: accelbench_bench_compare_power [--configs N] [--within S] [--round S] [--job S]
//          [--pair S] [--samples N] [--rounds N] [--ab-rounds N] [--seed N] [--only DESIGN]
//          [--per-job N: configs compared together, 10]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "harness/app/query/job_history.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/stats.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using compare::verdict;

namespace {

struct settings {
  size_t configs = 10000; // per design and step
  size_t per_job = 10;    // configs compared together (one compare_sets call)
  double within = 0.03, round = 0.015, job = 0.03, pair = 0.01;
  size_t samples = 5, rounds = 5, ab_rounds = 10;
  uint64_t seed = 2026;
  std::string only;
};

// One config's noise model, and a run drawn from it.
struct model {
  const settings& s;
  stats::rng& g;
  std::vector<double> run(double log_loc, size_t n) const {
    std::vector<double> v(n);
    for (auto& x : v)
      x = std::exp(log_loc + s.within * g.normal());
    return v;
  }
  // A job: R runs around centre + J.
  std::vector<std::vector<double>> job(double log_centre, size_t rounds) const {
    const double j = s.job * g.normal();
    std::vector<std::vector<double>> runs;
    for (size_t r = 0; r < rounds; ++r)
      runs.push_back(run(log_centre + j + s.round * g.normal(), s.samples));
    return runs;
  }
};

run make_run(size_t config, const std::vector<double>& values, const std::string& job,
             const std::string& ruleset) {
  run r;
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", std::to_string(config)}};
  r.ruleset = ruleset;
  r.extra["job_id"] = job;
  test_support::add_samples(r, values);
  return r;
}

struct counts {
  size_t n = 0, regressed = 0, improved = 0, oracle_regressed = 0, oracle_improved = 0;
  std::vector<double> detectable;
};

// One-sided 95% Clopper-Pearson upper bound of a binomial proportion k / n.
double upper_bound(size_t k, size_t n) {
  if (k >= n)
    return 1;
  const auto cdf = [&](double p) { // P(X <= k)
    double total = 0;
    for (size_t i = 0; i <= k; ++i)
      total += std::exp(std::lgamma((double)n + 1) - std::lgamma((double)i + 1) -
                        std::lgamma((double)(n - i) + 1) + (double)i * std::log(p) +
                        (double)(n - i) * std::log1p(-p));
    return total;
  };
  double lo = (double)k / (double)n, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (cdf(mid) > 0.05 ? lo : hi) = mid;
  }
  return hi;
}

// The oracle: z on the same estimate with the true SE, by compare's rule (significant, beyond the
// threshold).
void oracle(counts& c, double d, double se, double threshold_pct) {
  const double z = 2.5758293035489; // two-sided alpha 0.01
  const double t = threshold_pct / 100;
  c.oracle_regressed += d / se > z && std::exp(d) > 1 + t;
  c.oracle_improved += d / se < -z && std::exp(d) < 1 - t;
}

void judge_all(counts& c, const std::vector<run>& b, const std::vector<run>& cand,
               compare::set_options opt) {
  opt.threads = 1;
  for (const auto& p : compare::compare_sets(b, cand, opt).pairs) {
    ++c.n;
    c.regressed += p.cmp.result == verdict::regressed;
    c.improved += p.cmp.result == verdict::improved;
    if (p.cmp.detectable_pct > 0)
      c.detectable.push_back(p.cmp.detectable_pct);
  }
}

// The variance of the median of n lognormal samples' logs (asymptotic: pi / 2 sigma^2 / n).
double median_var(const settings& s, size_t n) {
  return std::numbers::pi / 2 * s.within * s.within / (double)n;
}

void print(const char* design, double step, double threshold, const counts& c) {
  const double n = (double)c.n;
  std::vector<double> det = c.detectable;
  const double sees = det.empty() ? 0 : stats::median(det);
  if (step == 0)
    std::printf("  %-34s step  0%%: called changed %5.2f%% (%zu/%zu, 95%% upper bound %.2f%%; "
                "oracle %.2f%%), regressed %5.2f%% (upper bound %.2f%%); sees >= %.1f%%\n",
                design, 100.0 * (double)(c.regressed + c.improved) / n, c.regressed + c.improved,
                c.n, 100 * upper_bound(c.regressed + c.improved, c.n),
                100.0 * (double)(c.oracle_regressed + c.oracle_improved) / n,
                100.0 * (double)c.regressed / n, 100 * upper_bound(c.regressed, c.n), sees);
  else
    std::printf("  %-34s step %2.0f%% (threshold %g%%): found %6.2f%%, oracle %6.2f%%; "
                "median 'sees >=' %.1f%%\n",
                design, 100 * step, threshold, 100.0 * (double)c.regressed / n,
                100.0 * (double)c.oracle_regressed / n, sees);
}

// The true variance of one job's level: its offset plus what its rounds leave.
double level_variance(const settings& s) {
  return s.job * s.job + (s.round * s.round + median_var(s, s.samples)) / (double)s.rounds;
}

// One job of config k stored on a side under `job`; returns its level (mean log median).
double add_job(std::vector<run>& side, const model& m, size_t k, double log_centre,
               const std::string& job) {
  double level = 0;
  for (const auto& r : m.job(log_centre, m.s.rounds)) {
    side.push_back(make_run(k, r, job, "cal"));
    level += std::log(stats::median(r)) / (double)m.s.rounds;
  }
  return level;
}

// A design's configs, `per_job` at a time: `config(m, c, k, b, cand, opt)` stores config k's runs
// on both sides of its batch and tells the oracle; then the batch is judged as one compare_sets
// call under `opt` (fresh for each batch).
template <class F>
counts in_batches(const settings& s, uint64_t seed, const compare::set_options& opt, F&& config) {
  stats::rng g(seed);
  model m{s, g};
  counts c;
  for (size_t done = 0; done < s.configs; done += s.per_job) {
    std::vector<run> b, cand;
    compare::set_options batch_opt = opt;
    for (size_t k = 0; k < s.per_job; ++k)
      config(m, c, k, b, cand, batch_opt);
    judge_all(c, b, cand, batch_opt);
  }
  return c;
}

// One job a side, with `history` earlier jobs of each config.
counts jobs_design(const settings& s, double step, size_t history, double floor_pct,
                   double threshold, uint64_t seed) {
  const double v_level = level_variance(s);
  compare::set_options opt;
  opt.floor_pct = floor_pct;
  opt.threshold_pct = threshold;
  return in_batches(s, seed, opt,
                    [&](const model& m, counts& c, size_t k, std::vector<run>& b,
                        std::vector<run>& cand, compare::set_options& batch_opt) {
                      std::vector<std::vector<double>> hist;
                      hist.reserve(history);
                      for (size_t h = 0; h < history; ++h) {
                        std::vector<double> logs;
                        logs.reserve(s.rounds);
                        for (const auto& r : m.job(0, s.rounds))
                          logs.push_back(std::log(stats::median(r)));
                        hist.push_back(logs);
                      }
                      const std::string name = "gemm/cpu/M=" + std::to_string(k) + " [cal]";
                      if (history > 0)
                        batch_opt.history[name] = query::job_spread(hist);
                      const double lb = add_job(b, m, k, 0, "b");
                      const double lc = add_job(cand, m, k, std::log1p(step), "c");
                      oracle(c, lc - lb, std::sqrt(2 * v_level), threshold);
                    });
}

// N earlier nightly jobs as the baseline, tonight's job as the candidate.
counts nightly_design(const settings& s, double step, size_t nights, double floor_pct,
                      uint64_t seed) {
  const double v_level = level_variance(s);
  compare::set_options opt;
  opt.floor_pct = floor_pct;
  return in_batches(s, seed, opt,
                    [&](const model& m, counts& c, size_t k, std::vector<run>& b,
                        std::vector<run>& cand, compare::set_options&) {
                      double lb = 0;
                      for (size_t night = 0; night < nights; ++night)
                        lb += add_job(b, m, k, 0, "night" + std::to_string(night)) / (double)nights;
                      const double lc = add_job(cand, m, k, std::log1p(step), "tonight");
                      oracle(c, lc - lb, std::sqrt(v_level * (1 + 1.0 / (double)nights)), 5);
                    });
}

// One A/B job: the sides share the job's level and each round's drift, in a random order.
counts ab_design(const settings& s, double step, double threshold, uint64_t seed) {
  const double v_diff = 2 * (s.pair * s.pair + median_var(s, s.samples));
  compare::set_options opt;
  opt.floor_pct = 3;
  opt.threshold_pct = threshold;
  return in_batches(
      s, seed, opt,
      [&](const model& m, counts& c, size_t k, std::vector<run>& b, std::vector<run>& cand,
          compare::set_options&) {
        const double j = s.job * m.g.normal();
        double dsum = 0;
        for (size_t r = 0; r < s.ab_rounds; ++r) {
          const double drift = j + s.round * m.g.normal();
          const auto rb = m.run(drift + s.pair * m.g.normal(), s.samples);
          const auto rc = m.run(drift + std::log1p(step) + s.pair * m.g.normal(), s.samples);
          dsum += std::log(stats::median(rc)) - std::log(stats::median(rb));
          for (auto [side, values, out] :
               {std::tuple{"baseline", &rb, &b}, std::tuple{"candidate", &rc, &cand}}) {
            run x = make_run(k, *values, "ab-job", "cal");
            x.extra["ab"] = {{"id", "ab1"}, {"round", (int64_t)r + 1}, {"side", side}};
            out->push_back(std::move(x));
          }
        }
        oracle(c, dsum / (double)s.ab_rounds, std::sqrt(v_diff / (double)s.ab_rounds), threshold);
      });
}

// One Google Benchmark import a side: 10 samples, no job noise.
counts import_design(const settings& s, double step, uint64_t seed) {
  compare::set_options opt;
  opt.floor_pct = 0;
  return in_batches(s, seed, opt,
                    [&](const model& m, counts& c, size_t k, std::vector<run>& b,
                        std::vector<run>& cand, compare::set_options&) {
                      const auto rb = m.run(0, 10), rc = m.run(std::log1p(step), 10);
                      b.push_back(make_run(k, rb, "import-b", "cal"));
                      cand.push_back(make_run(k, rc, "import-c", "cal"));
                      oracle(c, std::log(stats::median(rc)) - std::log(stats::median(rb)),
                             std::sqrt(2 * median_var(s, 10)), 5);
                    });
}

bool wanted(const settings& s, const char* design) { return s.only.empty() || s.only == design; }

void run_designs(const settings& s) {
  const std::vector<double> steps = {0, 0.02, 0.05, 0.10};
  uint64_t seed = s.seed;
  if (wanted(s, "jobs")) {
    std::printf("jobs: one job a side, %zu rounds of %zu samples; sd within %.1f%%, between rounds "
                "%.1f%%, between jobs %.1f%%\n",
                s.rounds, s.samples, 100 * s.within, 100 * s.round, 100 * s.job);
    for (double floor : {3.0, 2.0})
      for (size_t h : {0, 5, 20})
        for (double step : steps) {
          char label[64];
          std::snprintf(label, sizeof label, "floor %g%%, %zu earlier jobs", floor, h);
          print(label, step, 5, jobs_design(s, step, h, floor, 5, ++seed));
        }
  }
  if (wanted(s, "nightly")) {
    std::printf("nightly: N earlier jobs pooled as the baseline (floor 2%%), %zu rounds\n",
                s.rounds);
    for (size_t nights : {5, 10})
      for (double step : steps) {
        char label[64];
        std::snprintf(label, sizeof label, "%zu nights vs 1", nights);
        print(label, step, 5, nightly_design(s, step, nights, 2, ++seed));
      }
  }
  if (wanted(s, "ab")) {
    std::printf("ab: one A/B job, %zu paired rounds; each side's run adds sd %.1f%%\n", s.ab_rounds,
                100 * s.pair);
    for (double threshold : {5.0, 2.0})
      for (double step : steps) {
        char label[64];
        std::snprintf(label, sizeof label, "A/B, threshold %g%%", threshold);
        print(label, step, threshold, ab_design(s, step, threshold, ++seed));
      }
  }
  if (wanted(s, "import")) {
    std::printf("import: one import a side, 10 samples, sd %.1f%%, no job noise, no floor\n",
                100 * s.within);
    for (double step : steps)
      print("import vs import", step, 5, import_design(s, step, ++seed));
  }
}

bool parse(int argc, char** argv, settings& s) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--configs")
      s.configs = std::strtoul(v, nullptr, 10);
    else if (a == "--within")
      s.within = std::strtod(v, nullptr);
    else if (a == "--round")
      s.round = std::strtod(v, nullptr);
    else if (a == "--job")
      s.job = std::strtod(v, nullptr);
    else if (a == "--pair")
      s.pair = std::strtod(v, nullptr);
    else if (a == "--samples")
      s.samples = std::strtoul(v, nullptr, 10);
    else if (a == "--rounds")
      s.rounds = std::strtoul(v, nullptr, 10);
    else if (a == "--ab-rounds")
      s.ab_rounds = std::strtoul(v, nullptr, 10);
    else if (a == "--seed")
      s.seed = std::strtoull(v, nullptr, 10);
    else if (a == "--per-job")
      s.per_job = std::strtoul(v, nullptr, 10);
    else if (a == "--only")
      s.only = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  return s.rounds >= 1 && s.samples >= 1 && s.ab_rounds >= 2 && s.configs >= s.per_job;
}

} // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse(argc, argv, s))
    return 2;
  run_designs(s);
  return 0;
}
