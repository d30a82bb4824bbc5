// Comparisons of raw samples and of result sets on planted data.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using namespace accelbench::compare;

namespace {

// n samples around `centre` with relative Gaussian noise `noise`, reproducible from `seed`.
std::vector<double> noisy(double centre, double noise, size_t n, uint64_t seed) {
  stats::rng g(seed);
  std::vector<double> v(n);
  for (auto& x : v)
    x = centre * (1 + noise * g.normal());
  return v;
}

json env_with(const std::string& cpu, const std::string& onednn) {
  return {{"cpu", {{"model", cpu}, {"logical_cores", 2}}},
          {"compiler", "GNU 12.2.0"},
          {"build_type", "Release"},
          {"libraries", {{"onednn", onednn}}}};
}

run make_run(const std::string& workload, const std::string& m, const std::vector<double>& values,
             const std::string& finished_at = "2026-01-01T00:00:00.000Z",
             const json& env = env_with("Xeon", "2.6.3")) {
  run r;
  r.cfg.workload = workload;
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", m}, {"dtype", "fp32"}};
  r.ruleset = "kernel-v1";
  r.environment = env;
  r.fingerprint = environment_fingerprint(env);
  r.finished_at = finished_at;
  test_support::add_samples(r, values);
  return r;
}

} // namespace

TEST_CASE("compare_samples: a 10% slowdown with low noise is regressed", "[compare]") {
  const auto base = noisy(1e-3, 0.01, 10, 1), cand = noisy(1.1e-3, 0.01, 10, 2);
  const auto c = compare_samples(base, cand);
  CHECK(c.result == verdict::regressed);
  CHECK(c.ratio == Approx(c.candidate_median / c.baseline_median));
  CHECK(c.ratio > 1.05);
  CHECK(c.ratio_ci_low > 1.05);
  CHECK(c.ratio_ci_low <= c.ratio);
  CHECK(c.ratio <= c.ratio_ci_high);
  CHECK(c.p_value < 0.01);
  // One run a side and no floor: the test says it sees only the noise within the runs.
  CHECK(c.method == "Welch t on log samples");
  CHECK_THAT(c.accounts_for, Catch::Contains("within runs only"));
  CHECK(c.speedup() == Approx(1 / c.ratio));
  CHECK(c.speedup() < 1);
}

TEST_CASE("compare_samples: an improvement is improved", "[compare]") {
  const auto c = compare_samples(noisy(1e-3, 0.01, 10, 3), noisy(0.9e-3, 0.01, 10, 4));
  CHECK(c.result == verdict::improved);
  CHECK(c.ratio_ci_high < 0.95);
  CHECK(c.speedup() > 1);
}

TEST_CASE("compare_samples: a 2% change inside noise is never called a change", "[compare]") {
  // Over 20 seeded pairs none may be called a regression or an improvement. With 3% noise and 10
  // samples the CI of the ratio is about +-4% wide, so it reaches beyond the 5% threshold and the
  // pair is inconclusive; with 1% noise the whole CI lies inside the threshold: unchanged.
  int unchanged_3 = 0, unchanged_1 = 0;
  for (uint64_t s = 0; s < 20; ++s) {
    const auto c3 =
        compare_samples(noisy(1e-3, 0.03, 10, 100 + s), noisy(1.02e-3, 0.03, 10, 200 + s));
    const auto c1 =
        compare_samples(noisy(1e-3, 0.01, 10, 100 + s), noisy(1.02e-3, 0.01, 10, 200 + s));
    for (const auto* c : {&c3, &c1}) {
      CHECK(c->result != verdict::regressed);
      CHECK(c->result != verdict::improved);
      if (c->result == verdict::unchanged)
        CHECK((c->ratio_ci_low > 0.95 && c->ratio_ci_high < 1.05));
    }
    unchanged_3 += c3.result == verdict::unchanged;
    unchanged_1 += c1.result == verdict::unchanged;
  }
  CHECK(unchanged_1 >= 18);
  CHECK(unchanged_3 < unchanged_1);
}

TEST_CASE("compare_samples: unchanged needs the whole CI inside the threshold", "[compare]") {
  // A point estimate of +2% with a CI of about -37% .. +40% is not evidence of "no change": the
  // candidate is bimodal (half its samples 35% faster, half 40% slower), so the test sees no shift.
  const std::vector<double> base = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00};
  const std::vector<double> cand = {0.62, 0.63, 0.64, 0.65, 0.66, 1.38, 1.39, 1.40, 1.41, 1.42};
  const auto c = compare_samples(base, cand);
  CHECK(c.p_value >= 0.01);
  // The ratio of the log medians: the candidate's median of logs is the mean of its two middle
  // logs, exp((log 0.66 + log 1.38) / 2) = 0.954.
  CHECK(c.ratio == Approx(std::sqrt(0.66 * 1.38) / 1.0).epsilon(0.001));
  CHECK((c.ratio_ci_low < 0.95 || c.ratio_ci_high > 1.05));
  CHECK(c.result == verdict::inconclusive);
}

TEST_CASE("compare_samples: three values a side can decide, two cannot", "[compare]") {
  // MLPerf fixes the number of runs (3 for some benchmarks): a 2x difference with 1% spread is a
  // change to anyone, and Welch's t on the logs says so where a rank test cannot (its smallest
  // two-sided p at 3 and 3 is 0.1).
  const auto c = compare_samples({1.0, 1.01, 0.99}, {2.0, 2.01, 1.99});
  CHECK(c.result == verdict::regressed);
  CHECK(c.ratio == Approx(2.0).epsilon(0.001));
  CHECK(c.p_value < 1e-4);
  const auto two = compare_samples({1.0, 1.01}, {2.0, 2.01});
  CHECK(two.result == verdict::inconclusive);
  CHECK(two.reason.find("at least 3") != std::string::npos);
  CHECK(two.ratio == Approx(2.0).epsilon(0.01)); // the numbers are still reported
}

TEST_CASE("compare_runs: runs with one value each (MLPerf) at 3, 5 and 10 a side", "[compare]") {
  // Three runs a side, one time each, 2% run-to-run spread, 2.2x apart: decided at every count.
  for (size_t n : {3, 5, 10}) {
    run_samples b, c;
    const auto tb = noisy(60.4, 0.02, n, 300 + n), tc = noisy(27.3, 0.02, n, 400 + n);
    for (size_t i = 0; i < n; ++i) {
      b.push_back({tb[i]});
      c.push_back({tc[i]});
    }
    const auto r = compare_runs(b, c);
    CHECK(r.result == verdict::improved);
    CHECK(r.method == "t on log run medians");
    CHECK(r.runs_baseline == n);
    CHECK(r.df == Approx(2.0 * (n - 1)));
    CHECK(r.ratio == Approx(27.3 / 60.4).epsilon(0.05));
  }
}

TEST_CASE("compare_runs: a shift between runs that the samples inside each run cannot see",
          "[compare]") {
  // Each run is tight (0.5% noise within), but runs land 4% apart from each other. A test on one
  // run a side calls an A/A pair changed; three runs a side and their spread make it
  // inconclusive.
  stats::rng g(7);
  auto side = [&](double centre) {
    run_samples s;
    for (int r = 0; r < 3; ++r)
      s.push_back(noisy(centre * std::exp(0.04 * g.normal()), 0.005, 5, g.below(1u << 30)));
    return s;
  };
  int changed_single = 0, changed_runs = 0;
  for (int i = 0; i < 40; ++i) {
    const run_samples b = side(1.0), c = side(1.0);
    const auto single = compare_samples(b[0], c[0]);
    const auto runs = compare_runs(b, c);
    changed_single += single.result == verdict::regressed || single.result == verdict::improved;
    changed_runs += runs.result == verdict::regressed || runs.result == verdict::improved;
    CHECK(runs.method == "t on log run medians");
    CHECK(runs.df == Approx(4));
  }
  CHECK(changed_single >= 8); // the within-run test is overconfident across runs (about 15)
  CHECK(changed_runs <= 1);
}

TEST_CASE("compare_runs: the floor widens a one-run comparison and is stated", "[compare]") {
  // One tight run a side, 6% apart: without a floor the samples decide; with the ruleset's 3%
  // between-run floor, 6% is within what two jobs differ by, and the output says so.
  const auto base = noisy(1.0, 0.003, 5, 81), cand = noisy(1.06, 0.003, 5, 82);
  CHECK(compare_samples(base, cand).result == verdict::regressed);
  sample_options floor;
  floor.floor_pct = 3;
  const auto c = compare_samples(base, cand, floor);
  CHECK(c.result == verdict::inconclusive);
  CHECK(c.between_run_pct == 0); // no rounds: nothing measured between runs
  CHECK_THAT(c.accounts_for, Catch::Contains("between jobs 3% a side"));
  // A 20% step is still called through the floor.
  CHECK(compare_samples(base, noisy(1.2, 0.003, 5, 83), floor).result == verdict::regressed);
}

TEST_CASE("compare_runs: rounds do not average away the floor between jobs", "[compare]") {
  // Two jobs of the quick suite right after a build: each job's 5 rounds agree within 1%, but the
  // second job sits 6% above the first in every config. Without a floor the rounds call it
  // regressed; the floor is a variance of the whole job, not divided by its rounds, so it is
  // inconclusive. A 20% step is still called.
  stats::rng g(11);
  auto job = [&](double level) {
    run_samples s;
    for (int r = 0; r < 5; ++r)
      s.push_back(noisy(level * std::exp(0.01 * g.normal()), 0.01, 5, g.below(1u << 30)));
    return s;
  };
  const run_samples first = job(1.0), second = job(1.06), slower = job(1.2);
  CHECK(compare_runs(first, second).result == verdict::regressed);
  sample_options floor;
  floor.floor_pct = 2;
  const auto aa = compare_runs(first, second, floor);
  CHECK(aa.result == verdict::inconclusive);
  CHECK_THAT(aa.accounts_for, Catch::Contains("variance between runs (5 + 5 runs") &&
                                  Catch::Contains("between jobs 2% a side"));
  CHECK(compare_runs(first, slower, floor).result == verdict::regressed);
}

TEST_CASE("compare_runs: a machine that moves 13% within a run is not assumed steady to 3% "
          "between jobs",
          "[compare]") {
  // The A/A false alarm seen in CI: OpenBLAS fp32 at 1024^3, two jobs seconds apart, each job's
  // rounds agreeing with each other, the second job 15% faster, samples inside a run spread by
  // 13% (CV 13.3%). The ruleset's 3% floor called it improved (p = 0.003). The runs' own spread
  // says the machine moves by that much within seconds: the floor rises to it, the pair is
  // inconclusive, and the output says why.
  stats::rng g(29);
  auto job = [&](double level, double spread) {
    run_samples s;
    for (int r = 0; r < 5; ++r)
      s.push_back(noisy(level * std::exp(0.005 * g.normal()), spread, 40, g.below(1u << 30)));
    return s;
  };
  sample_options floor;
  floor.floor_pct = 3;
  const run_samples noisy_first = job(1.0, 0.13), noisy_second = job(0.85, 0.13);
  const auto aa = compare_runs(noisy_first, noisy_second, floor);
  CHECK(aa.result == verdict::inconclusive);
  CHECK_THAT(aa.accounts_for, Catch::Contains("the runs' own spread within a run, wider than the "
                                              "ruleset's floor 3%"));
  // On a steady machine (1% within a run) the same 15% step is still called through the 3%
  // floor: the floor rises only with the noise the runs show.
  const run_samples quiet_first = job(1.0, 0.01), quiet_second = job(0.85, 0.01);
  const auto quiet = compare_runs(quiet_first, quiet_second, floor);
  CHECK(quiet.result == verdict::improved);
  CHECK_THAT(quiet.accounts_for, Catch::Contains("between jobs 3% a side (the ruleset's floor"));
  // A step far beyond the machine's own spread is called even on the noisy machine.
  CHECK(compare_runs(noisy_first, job(0.4, 0.13), floor).result == verdict::improved);
}

TEST_CASE("compare_samples: throughput direction is reversed", "[compare]") {
  sample_options hi;
  hi.dir = direction::higher_is_better;
  // 10% more throughput: improved for higher-is-better, regressed if read as a time.
  const auto base = noisy(100, 0.01, 10, 5), more = noisy(110, 0.01, 10, 6);
  CHECK(compare_samples(base, more, hi).result == verdict::improved);
  CHECK(compare_samples(base, more).result == verdict::regressed);
  const auto less = noisy(90, 0.01, 10, 7);
  CHECK(compare_samples(base, less, hi).result == verdict::regressed);
  CHECK(compare_samples(base, less, hi).speedup() < 1);
  CHECK(compare_samples(base, less).result == verdict::improved);
}

TEST_CASE("compare_samples: a significant shift whose CI straddles the threshold is inconclusive",
          "[compare]") {
  // Exactly a 5% shift of ten evenly spread points (+-1%): the two samples do not overlap, so p is
  // 2/C(20,10) ~ 1e-5, and the ratio of medians is exactly 1.05, so its CI must contain 1.05.
  std::vector<double> base, cand;
  for (int k = 0; k < 10; ++k) {
    base.push_back(1.0 + 0.002 * (k - 4.5));
    cand.push_back(1.05 * (1.0 + 0.002 * (k - 4.5)));
  }
  const auto c = compare_samples(base, cand);
  CHECK(c.ratio == Approx(1.05));
  CHECK(c.p_value < 0.01);
  CHECK(c.ratio_ci_low < 1.05);
  CHECK(c.ratio_ci_high > 1.05);
  CHECK(c.result == verdict::inconclusive);
  CHECK(c.reason.find("more samples needed") != std::string::npos);
}

TEST_CASE("compare_samples: a significant but small shift is unchanged", "[compare]") {
  // 2% shift with 0.2% noise: p is tiny, the whole CI sits inside (0.95, 1.05).
  const auto c = compare_samples(noisy(1.0, 0.002, 10, 10), noisy(1.02, 0.002, 10, 11));
  CHECK(c.p_value < 0.01);
  CHECK(c.result == verdict::unchanged);
  CHECK(c.reason.find("within") != std::string::npos);
  // The same data with a 1% threshold is a regression.
  sample_options tight;
  tight.threshold_pct = 1;
  CHECK(compare_samples(noisy(1.0, 0.002, 10, 10), noisy(1.02, 0.002, 10, 11), tight).result ==
        verdict::regressed);
}

TEST_CASE("compare_samples: degenerate inputs are inconclusive, not errors", "[compare]") {
  CHECK(compare_samples({}, {1, 2, 3, 4, 5}).result == verdict::inconclusive);
  CHECK(compare_samples({1, 2, 3, 4, NAN}, {1, 2, 3, 4, 5}).result == verdict::inconclusive);
  CHECK(compare_samples({0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}).result == verdict::inconclusive);
  CHECK(compare_samples({-1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}).result == verdict::inconclusive);
  sample_options none;
  none.ci_level = 1; // 0 means the test's own level, 1 - alpha
  CHECK_THROWS_AS(compare_samples({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, none), input_error);
}

TEST_CASE("compare_sets: the result does not depend on the thread count", "[compare]") {
  std::vector<run> base, cand;
  for (int i = 0; i < 300; ++i) {
    base.push_back(make_run("gemm", std::to_string(i), noisy(1e-3, 0.03, 10, 1000 + i)));
    cand.push_back(make_run("gemm", std::to_string(i),
                            noisy(i % 10 == 0 ? 1.1e-3 : 1e-3, 0.03, 10, 2000 + i)));
  }
  set_options one, four;
  one.threads = 1;
  four.threads = 4;
  const auto a = compare_sets(base, cand, one), b = compare_sets(base, cand, four);
  REQUIRE(a.pairs.size() == 300);
  REQUIRE(b.pairs.size() == 300);
  for (size_t i = 0; i < a.pairs.size(); ++i) {
    CHECK(a.pairs[i].name == b.pairs[i].name);
    CHECK(a.pairs[i].cmp.result == b.pairs[i].cmp.result);
    CHECK(a.pairs[i].cmp.ratio_ci_low == b.pairs[i].cmp.ratio_ci_low);
  }
  CHECK(a.count(verdict::regressed) > 0);

  for (const auto& p : a.pairs)
    CHECK(p.cmp.has_ci); // every verdict needs its CI
}

TEST_CASE("compare_sets: pairing, unpaired runs, pooling and latest", "[compare]") {
  std::vector<run> base = {
      make_run("gemm", "64", noisy(1e-3, 0.01, 10, 20)),
      make_run("gemm", "128", noisy(2e-3, 0.01, 10, 21)),
      make_run("gemm", "256", noisy(4e-3, 0.01, 10, 22)), // only in baseline
  };
  std::vector<run> cand = {
      make_run("gemm", "64", noisy(1.1e-3, 0.01, 5, 23), "2026-01-02T00:00:00.000Z"),
      make_run("gemm", "64", noisy(1.1e-3, 0.01, 5, 24), "2026-01-03T00:00:00.000Z"),
      make_run("gemm", "128", noisy(2e-3, 0.01, 10, 25)),
      make_run("gemm", "512", noisy(8e-3, 0.01, 10, 26)), // only in candidate
  };
  // A different ruleset is a different pair key.
  cand.push_back(make_run("gemm", "128", noisy(2e-3, 0.01, 10, 27)));
  cand.back().ruleset = "kernel-v2";

  const auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 2);
  CHECK(c.pairs[0].key == "gemm/cpu/M=128,dtype=fp32");
  CHECK(c.pairs[0].name == "gemm/cpu/M=128,dtype=fp32 [kernel-v1]");
  CHECK(c.pairs[1].key == "gemm/cpu/M=64,dtype=fp32");
  // Two candidate runs of 5 samples: the runs are the test's units (1 + 2 runs: one degree of
  // freedom for the noise between runs, too few to call a 10% step).
  CHECK(c.pairs[1].candidate_runs == 2);
  CHECK(c.pairs[1].cmp.n_candidate == 10);
  CHECK(c.pairs[1].cmp.runs_candidate == 2);
  CHECK(c.pairs[1].cmp.df == Approx(1));
  CHECK(c.pairs[1].cmp.result == verdict::inconclusive);
  CHECK(c.pairs[0].cmp.result == verdict::unchanged);
  REQUIRE(c.only_baseline.size() == 1);
  CHECK(c.only_baseline[0].key == "gemm/cpu/M=256,dtype=fp32");
  REQUIRE(c.only_candidate.size() == 2);
  CHECK(c.only_candidate[0].name == "gemm/cpu/M=128,dtype=fp32 [kernel-v2]");
  CHECK(c.only_candidate[1].key == "gemm/cpu/M=512,dtype=fp32");
  CHECK(exit_code_for(c, false) == exit_ok);

  // latest: only the 2026-01-03 run (5 samples) is used.
  set_options latest;
  latest.policy = pooling::latest;
  const auto l = compare_sets(base, cand, latest);
  CHECK(l.pairs[1].candidate_runs == 1);
  CHECK(l.pairs[1].cmp.n_candidate == 5);
}

TEST_CASE("compare_sets: environment differences are flagged with field names", "[compare]") {
  std::vector<run> base = {make_run("gemm", "64", noisy(1e-3, 0.01, 10, 30))};
  std::vector<run> cand = {make_run("gemm", "64", noisy(1e-3, 0.01, 10, 31),
                                    "2026-01-02T00:00:00.000Z", env_with("Xeon", "3.0"))};
  const auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 1);
  CHECK(c.pairs[0].environment_differs);
  CHECK(c.pairs[0].environment_differences == std::vector<std::string>{"libraries.onednn"});
  // Same environment: no flag.
  const auto same = compare_sets(base, base);
  CHECK_FALSE(same.pairs[0].environment_differs);
  // Pooling runs of different environments on one side is noted, never silent.
  cand.push_back(make_run("gemm", "64", noisy(1e-3, 0.01, 10, 32)));
  const auto mixed = compare_sets(base, cand);
  REQUIRE_FALSE(mixed.pairs[0].notes.empty());
  CHECK(mixed.pairs[0].notes[0].find("2 different environment fingerprints") != std::string::npos);
}

TEST_CASE("compare_sets: per-workload thresholds, failed runs, exit codes", "[compare]") {
  std::vector<run> base = {make_run("gemm", "64", noisy(1e-3, 0.01, 10, 40)),
                           make_run("attention", "64", noisy(1e-3, 0.01, 10, 41))};
  std::vector<run> cand = {make_run("gemm", "64", noisy(1.1e-3, 0.01, 10, 42)),
                           make_run("attention", "64", noisy(1e-3, 0.01, 10, 43))};
  set_options o;
  o.threshold_by_workload["gemm"] = 20; // a 10% slowdown is below gemm's 20% minimum effect
  auto c = compare_sets(base, cand, o);
  REQUIRE(c.pairs.size() == 2);
  const auto& gemm = c.pairs[1];
  CHECK(gemm.workload == "gemm");
  CHECK(gemm.cmp.threshold_pct == 20);
  CHECK(gemm.cmp.result == verdict::unchanged);
  CHECK(exit_code_for(c, true) == exit_ok);

  // The candidate's attention run failed where the baseline was VALID: a regression, without a
  // ratio, with the reason.
  cand[1].samples.clear();
  cand[1].mark_failed("out of memory");
  c = compare_sets(base, cand, o);
  CHECK(c.pairs[0].cmp.result == verdict::regressed);
  CHECK(c.pairs[0].cmp.speedup() == 0);
  CHECK(c.pairs[0].cmp.reason.find("out of memory") != std::string::npos);
  REQUIRE(c.pairs[0].notes.size() == 1);
  CHECK(c.pairs[0].notes[0].find("out of memory") != std::string::npos);
  CHECK(exit_code_for(c, false) == exit_failed);

  // The baseline failed instead: nothing to compare against, inconclusive.
  c = compare_sets(cand, base, o);
  CHECK(c.pairs[0].cmp.result == verdict::inconclusive);
  CHECK(exit_code_for(c, false) == exit_ok);
  CHECK(exit_code_for(c, true) == exit_inconclusive);
}

TEST_CASE("compare_sets: an INVALID candidate never enters a ratio, even when faster",
          "[compare]") {
  // A kernel that broke its correctness check and became 2x faster is a regression, not an
  // improvement.
  std::vector<run> base = {make_run("gemm", "64", noisy(1e-3, 0.01, 10, 60))};
  std::vector<run> cand = {make_run("gemm", "64", noisy(0.5e-3, 0.01, 10, 61))};
  cand[0].mark_invalid("correctness: max relative error 0.5 > tolerance 1e-4");
  auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 1);
  CHECK(c.pairs[0].cmp.result == verdict::regressed);
  CHECK(c.pairs[0].cmp.reason.find("INVALID") != std::string::npos);
  CHECK(c.pairs[0].cmp.reason.find("correctness") != std::string::npos);
  CHECK(c.workloads[0].pairs == 0); // no speed-up enters the geomean
  CHECK(exit_code_for(c, false) == exit_failed);
  // An INVALID run pooled with VALID ones is left out: the verdict comes from the VALID runs only.
  cand.push_back(make_run("gemm", "64", noisy(1e-3, 0.01, 10, 62)));
  c = compare_sets(base, cand);
  CHECK(c.pairs[0].candidate_runs == 1);
  CHECK(c.pairs[0].cmp.result != verdict::improved);
  CHECK(c.pairs[0].notes[0].find("left out") != std::string::npos);
}

TEST_CASE("compare_sets: how the verdicts account for noise is said once, not per pair",
          "[compare]") {
  std::vector<run> base, cand;
  for (int i = 0; i < 4; ++i) {
    base.push_back(make_run("gemm", std::to_string(64 << i), noisy(1e-3, 0.01, 6, 70 + i)));
    cand.push_back(make_run("gemm", std::to_string(64 << i), noisy(1e-3, 0.01, 6, 80 + i)));
  }
  auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 4);
  for (const auto& p : c.pairs)
    CHECK(p.notes.empty());
  REQUIRE(c.notes.size() == 1);
  CHECK_THAT(c.notes[0], Catch::Contains("no config has two runs on a side"));
  // Rounds: a second run of every config on each side; the between-run spread is pooled over
  // the pairs and the note says so, once.
  for (int i = 0; i < 4; ++i) {
    base.push_back(make_run("gemm", std::to_string(64 << i), noisy(1e-3, 0.01, 6, 90 + i)));
    cand.push_back(make_run("gemm", std::to_string(64 << i), noisy(1e-3, 0.01, 6, 95 + i)));
  }
  c = compare_sets(base, cand);
  REQUIRE(c.notes.size() == 1);
  CHECK_THAT(c.notes[0], Catch::Contains("pooled over 8 side(s) of 4 pair(s)"));
  for (const auto& p : c.pairs) {
    CHECK(p.cmp.df == Approx(2 + 6)); // own 1 + 1, the other pairs' 6
    CHECK_THAT(p.cmp.accounts_for, Catch::Contains("variance between runs"));
  }
}

TEST_CASE("compare_sets: a config skipped on both sides is skipped, not inconclusive",
          "[compare]") {
  std::vector<run> base = {make_run("gemm", "64", {})}, cand = {make_run("gemm", "64", {})};
  base[0].mark_skipped("OpenBLAS lacks sbgemm");
  cand[0].mark_skipped("OpenBLAS lacks sbgemm");
  const auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 1);
  CHECK(c.pairs[0].cmp.result == verdict::skipped);
  CHECK(c.count(verdict::skipped) == 1);
  CHECK(c.count(verdict::inconclusive) == 0);
  CHECK(c.overall.skipped == 1);
  CHECK(exit_code_for(c, true) == exit_ok);
}

TEST_CASE("compare_sets: geometric mean of direction-aware speed-ups per workload", "[compare]") {
  std::vector<run> base, cand;
  base.push_back(make_run("gemm", "64", noisy(1e-3, 0.01, 10, 50)));
  cand.push_back(make_run("gemm", "64", noisy(0.8e-3, 0.01, 10, 51))); // 1.25x faster
  base.push_back(make_run("gemm", "128", noisy(1e-3, 0.01, 10, 52)));
  cand.push_back(make_run("gemm", "128", noisy(1.25e-3, 0.01, 10, 53))); // 1.25x slower
  base.push_back(make_run("train", "64", noisy(100, 0.01, 10, 54)));     // throughput
  cand.push_back(make_run("train", "64", noisy(120, 0.01, 10, 55)));
  base.back().sample_dir = cand.back().sample_dir = direction::higher_is_better;
  base.back().sample_unit = cand.back().sample_unit = "tokens/s";

  const auto c = compare_sets(base, cand);
  REQUIRE(c.workloads.size() == 2);
  const auto& g = c.workloads[0];
  CHECK(g.workload == "gemm");
  CHECK(g.pairs == 2);
  // Exactly the geomean of the two speed-ups; and about 1 since they cancel.
  const double expect = std::sqrt(c.pairs[0].cmp.speedup() * c.pairs[1].cmp.speedup());
  CHECK(g.geomean_speedup == Approx(expect).epsilon(1e-12));
  CHECK(g.geomean_speedup == Approx(1.0).epsilon(0.03));
  CHECK(g.improved == 1);
  CHECK(g.regressed == 1);
  const auto& t = c.workloads[1];
  CHECK(t.workload == "train");
  CHECK(t.geomean_speedup == Approx(1.2).epsilon(0.03)); // higher is better: cand / base
  CHECK(t.improved == 1);
  // OVERALL_GEOMEAN (as compare.py): every pair's speed-up together, and every verdict counted.
  CHECK(c.overall.workload == "OVERALL_GEOMEAN");
  CHECK(c.overall.pairs == 3);
  const double all =
      std::cbrt(c.pairs[0].cmp.speedup() * c.pairs[1].cmp.speedup() * c.pairs[2].cmp.speedup());
  CHECK(c.overall.geomean_speedup == Approx(all).epsilon(1e-12));
  CHECK(c.overall.improved == 2);
  CHECK(c.overall.regressed == 1);
}

TEST_CASE("compare_sets: the candidate's metrics, wall time, start and host", "[compare]") {
  std::vector<run> base, cand;
  base.push_back(make_run("gemm", "64", noisy(1e-3, 0.01, 10, 60)));
  json env = env_with("Xeon", "2.6.3");
  env["hostname"] = "node-7";
  for (int i = 0; i < 3; ++i) {
    cand.push_back(make_run("gemm", "64", noisy(1e-3, 0.01, 10, 61 + i),
                            "2026-01-02T02:0" + std::to_string(i) + ":30.000Z", env));
    cand.back().started_at = "2026-01-02T02:0" + std::to_string(i) + ":00.500Z";
    cand.back().add_metric("tflops", 1.5 + 0.1 * i, "TFLOP/s", direction::higher_is_better);
  }
  cand[1].add_metric("tokens_per_s", NAN, "tokens/s", direction::higher_is_better); // not finite
  const auto c = compare_sets(base, cand);
  REQUIRE(c.pairs.size() == 1);
  const auto& p = c.pairs[0];
  REQUIRE(p.candidate_metrics.size() == 1); // a non-finite value is no measure
  const auto& m = p.candidate_metrics[0];
  CHECK(m.name == "tflops");
  CHECK(m.unit == "TFLOP/s");
  CHECK(m.median == Approx(1.6));
  CHECK(m.min == Approx(1.5));
  CHECK(m.max == Approx(1.7));
  CHECK(m.runs == 3);
  CHECK(p.candidate_wall_s == Approx(3 * 29.5));
  CHECK(p.candidate_started_at == "2026-01-02T02:00:00.500Z");
  CHECK(p.candidate_host == "node-7");
}

TEST_CASE("seconds_between reads ISO-8601 UTC times", "[compare]") {
  CHECK(seconds_between("2026-01-02T23:59:59.500Z", "2026-01-03T00:00:01.000Z") == Approx(1.5));
  CHECK(seconds_between("2026-01-02T10:00:00Z", "2026-01-02T09:00:00Z") == 0); // backwards
  CHECK(seconds_between("", "2026-01-02T09:00:00Z") == 0);
  CHECK(seconds_between("yesterday", "today") == 0);
}

TEST_CASE("compare_samples: a large but insignificant change with a straddling CI is inconclusive",
          "[compare]") {
  // Medians 1.00 and 1.20 (+20%, beyond the 5% threshold), but two of the five candidate samples
  // are as fast as the baseline: with 5 samples a side the U test cannot call it (p >= 0.01) and
  // the bootstrap CI of the ratio reaches from below 1.05 to well above it. Neither "unchanged"
  // nor "regressed" is supported by the data.
  const std::vector<double> base = {1.00, 1.01, 0.99, 1.00, 1.02};
  const std::vector<double> cand = {0.99, 1.20, 1.25, 1.30, 0.98};
  const auto c = compare_samples(base, cand);
  CHECK(c.p_value >= 0.01);
  CHECK(c.ratio > 1.05);
  CHECK(c.ratio_ci_low < 1.05);
  CHECK(c.ratio_ci_high > 1.05);
  CHECK(c.result == verdict::inconclusive);
  // The same spread around a median inside the threshold is not "unchanged" either: its CI still
  // reaches far beyond the threshold.
  const std::vector<double> near = {0.99, 1.02, 1.25, 1.30, 0.98};
  CHECK(compare_samples(base, near).result == verdict::inconclusive);
}

TEST_CASE("compare_sets: a change measured on a loaded machine is inconclusive, and says why",
          "[compare]") {
  std::vector<run> base = {make_run("gemm", "64", noisy(1e-3, 0.01, 10, 31)),
                           make_run("gemm", "128", noisy(2e-3, 0.01, 10, 32)),
                           make_run("gemm", "256", noisy(4e-3, 0.01, 10, 33))};
  std::vector<run> cand = {make_run("gemm", "64", noisy(1.2e-3, 0.01, 10, 34)),
                           make_run("gemm", "128", noisy(2.4e-3, 0.01, 10, 35)),
                           make_run("gemm", "256", noisy(4.8e-3, 0.01, 10, 36))};
  // M=64: the candidate ran loaded (judge_conditions' record); M=128: a run stored before the
  // "loaded" flag, 60% of the cores busy elsewhere; M=256: a quiet machine (10%).
  cand[0].extra["conditions"] = {
      {"other_processes_cpu_share", 0.8}, {"max_other_load", 0.25}, {"loaded", true}};
  cand[1].extra["conditions"] = {{"other_processes_cpu_share", 0.6}};
  cand[2].extra["conditions"] = {
      {"other_processes_cpu_share", 0.1}, {"max_other_load", 0.25}, {"loaded", false}};
  set_options opt;
  opt.candidate_label = "tag=after";
  const auto c = compare_sets(base, cand, opt);
  REQUIRE(c.pairs.size() == 3);
  const auto& m128 = c.pairs[0]; // sorted by key: M=128, M=256, M=64
  const auto& m256 = c.pairs[1];
  const auto& m64 = c.pairs[2];
  CHECK(m64.cmp.result == verdict::inconclusive);
  CHECK_THAT(m64.cmp.reason, Catch::Contains("would be regressed") &&
                                 Catch::Contains("tag=after ran while other processes used 80%"));
  CHECK(m128.cmp.result == verdict::inconclusive);
  CHECK_THAT(m128.cmp.reason, Catch::Contains("60%"));
  CHECK(m256.cmp.result == verdict::regressed); // the quiet one is judged as ever
  // Asked to trust the load, the statistics decide alone.
  opt.trust_loaded = true;
  const auto t = compare_sets(base, cand, opt);
  for (const auto& p : t.pairs)
    CHECK(p.cmp.result == verdict::regressed);
  // A ruleset that ignores the load records loaded = false: not discounted.
  cand[0].extra["conditions"]["loaded"] = false;
  opt.trust_loaded = false;
  CHECK(compare_sets(base, cand, opt).pairs[2].cmp.result == verdict::regressed);
}
