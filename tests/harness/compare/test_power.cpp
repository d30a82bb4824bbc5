// The comparison designs of docs/statistics.md on planted data: an A/B paired by round, jobs on a
// side, the history as the between-job noise, the floor as a prior only, the empirical-Bayes
// weight, one figure a side, the detectable change and the geomean's own verdict.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/stats.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using namespace accelbench::compare;

namespace {

run make_run(const std::string& m, const std::vector<double>& values, const std::string& job) {
  run r;
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", m}};
  r.ruleset = "kernel-v1";
  r.extra["job_id"] = job;
  test_support::add_samples(r, values);
  return r;
}

std::vector<double> around(double log_loc, double sd, size_t n, stats::rng& g) {
  std::vector<double> v(n);
  for (auto& x : v)
    x = std::exp(log_loc + sd * g.normal());
  return v;
}

// An A/B of `configs` configs: each round drifts both sides by `drift` (shared), each side's run
// adds `own`; the candidate is `step` slower.
void ab_job(std::vector<run>& b, std::vector<run>& c, size_t configs, size_t rounds, double step,
            double drift, double own, uint64_t seed) {
  stats::rng g(seed);
  for (size_t k = 0; k < configs; ++k)
    for (size_t r = 1; r <= rounds; ++r) {
      const double d = drift * g.normal();
      run rb = make_run(std::to_string(k), around(d + own * g.normal(), 0.01, 5, g), "job");
      run rc = make_run(std::to_string(k),
                        around(d + std::log1p(step) + own * g.normal(), 0.01, 5, g), "job");
      rb.extra["ab"] = {{"id", "ab-1"}, {"round", (int64_t)r}, {"side", "baseline"}};
      rc.extra["ab"] = {{"id", "ab-1"}, {"round", (int64_t)r}, {"side", "candidate"}};
      b.push_back(rb);
      c.push_back(rc);
    }
}

} // namespace

TEST_CASE("A/B: both sides of one A/B are paired by round, so a shared drift cancels",
          "[compare]") {
  // Rounds drift by 8% (the machine warming, another job starting), far more than the 3% step;
  // unpaired, the drift is noise; paired, it cancels.
  std::vector<run> b, c;
  ab_job(b, c, 6, 10, 0.03, 0.08, 0.002, 7);
  set_options opt;
  opt.threshold_pct = 2;
  const auto paired = compare_sets(b, c, opt);
  REQUIRE(paired.pairs.size() == 6);
  for (const auto& p : paired.pairs) {
    CHECK(p.cmp.paired);
    CHECK(p.cmp.paired_rounds == 10);
    CHECK(p.cmp.method == "paired t on per-round log ratios");
    CHECK(p.cmp.result == verdict::regressed);
    CHECK(p.cmp.ratio == Approx(1.03).epsilon(0.01));
  }
  CHECK_THAT(paired.notes[0], Catch::Contains("paired round by round"));
  // The same runs without their A/B labels: a job of 10 rounds a side, the drift is noise.
  for (auto* side : {&b, &c})
    for (auto& r : *side)
      r.extra.erase("ab");
  const auto unpaired = compare_sets(b, c, opt);
  for (const auto& p : unpaired.pairs) {
    CHECK_FALSE(p.cmp.paired);
    CHECK(p.cmp.result != verdict::regressed);
    CHECK(p.cmp.detectable_pct > 3 * paired.pairs[0].cmp.detectable_pct);
  }
}

TEST_CASE("A/B: runs of two different A/Bs are not paired", "[compare]") {
  std::vector<run> b, c;
  ab_job(b, c, 1, 5, 0.0, 0.01, 0.01, 3);
  for (auto& r : c)
    r.extra["ab"]["id"] = "ab-2";
  const auto cmp = compare_sets(b, c);
  CHECK_FALSE(cmp.pairs[0].cmp.paired);
}

TEST_CASE("jobs: several jobs a side estimate the job-level noise, the floor only a prior",
          "[compare]") {
  // 10 earlier nights at 3% job-to-job noise against tonight's job: the spread of the nights is
  // the estimate; a 0% floor must not make the test blind to it, and it is stated.
  stats::rng g(11);
  std::vector<run> b, c;
  for (size_t night = 0; night < 10; ++night) {
    const double level = 0.03 * g.normal();
    for (int r = 0; r < 3; ++r)
      b.push_back(make_run("1", around(level + 0.005 * g.normal(), 0.01, 5, g),
                           "night" + std::to_string(night)));
  }
  for (int r = 0; r < 3; ++r)
    c.push_back(make_run("1", around(0.04 + 0.005 * g.normal(), 0.01, 5, g), "tonight"));
  set_options opt;
  opt.floor_pct = 0;
  const auto cmp = compare_sets(b, c, opt).pairs.at(0).cmp;
  CHECK(cmp.between_job_pct > 1.5); // learned from the nights, not the 0% floor
  CHECK_THAT(cmp.accounts_for, Catch::Contains("the sides' own 10 + 1 jobs"));
  // Tonight's 4% is within the nights' spread: not called a change.
  CHECK(cmp.result == verdict::inconclusive);
}

TEST_CASE("history: earlier jobs replace the floor as the between-job noise", "[compare]") {
  stats::rng g(5);
  std::vector<run> b, c;
  for (int r = 0; r < 5; ++r) {
    b.push_back(make_run("1", around(0.002 * g.normal(), 0.01, 5, g), "b"));
    c.push_back(make_run("1", around(0.10 + 0.002 * g.normal(), 0.01, 5, g), "c"));
  }
  set_options opt;
  opt.floor_pct = 8; // a floor far above this machine's real job noise
  const auto by_floor = compare_sets(b, c, opt).pairs.at(0).cmp;
  CHECK(by_floor.result == verdict::inconclusive);
  CHECK_THAT(by_floor.accounts_for, Catch::Contains("between jobs 8% a side (the ruleset's floor"));
  // 20 earlier jobs whose levels spread by about 1%: the floor fades to a prior of 2 jobs.
  job_history h;
  std::vector<double> levels;
  for (int j = 0; j < 20; ++j)
    levels.push_back(0.01 * g.normal());
  const double mean = stats::mean(levels);
  for (double x : levels)
    h.ss += (x - mean) * (x - mean);
  h.df = 19;
  h.jobs = 20;
  opt.history["gemm/cpu/M=1 [kernel-v1]"] = h;
  const auto by_history = compare_sets(b, c, opt).pairs.at(0).cmp;
  CHECK(by_history.result == verdict::regressed);
  CHECK(by_history.between_job_pct < by_floor.between_job_pct);
  CHECK_THAT(by_history.accounts_for, Catch::Contains("20 earlier job(s) in the store"));
}

TEST_CASE("variance_pool: the prior weight comes from how much the pairs disagree", "[compare]") {
  stats::rng g(9);
  // 50 pairs whose true variances are equal: their estimates disagree only by sampling, so the
  // weight is large (infinite when the spread is at or below what sampling explains).
  variance_pool same;
  for (int i = 0; i < 50; ++i) {
    double ss = 0;
    for (int k = 0; k < 4; ++k)
      ss += std::pow(0.02 * g.normal(), 2);
    same.add(ss, 4);
  }
  same.finish();
  CHECK(same.d0 > 20);
  // True variances spread over a factor of 100: the pairs keep mostly their own.
  variance_pool mixed;
  for (int i = 0; i < 50; ++i) {
    const double sd = 0.002 * std::pow(10.0, (i % 5) / 2.0);
    double ss = 0;
    for (int k = 0; k < 4; ++k)
      ss += std::pow(sd * g.normal(), 2);
    mixed.add(ss, 4);
  }
  mixed.finish();
  CHECK(mixed.d0 < 3);
  // The weight is never more than the other pairs' degrees of freedom.
  CHECK(same.prior_without(0.001, 4).second <= same.df - 4);
}

TEST_CASE("one figure a side has no CI and no test, even with other pairs' spread", "[compare]") {
  std::vector<run> b = {make_run("1", {100}, "p"), make_run("2", {1.0, 1.01, 0.99}, "p"),
                        make_run("2", {1.02, 1.0, 1.01}, "q")};
  std::vector<run> c = {make_run("1", {50}, "p2"), make_run("2", {1.0, 1.01, 0.99}, "p2"),
                        make_run("2", {1.0, 0.99, 1.01}, "q2")};
  const auto cmp = compare_sets(b, c);
  const auto& one = cmp.pairs.at(0).cmp;
  CHECK_FALSE(one.tested);
  CHECK_FALSE(one.has_ci);
  CHECK(one.result == verdict::inconclusive);
  CHECK(one.reason == "one figure per side: no CI, no test");
  CHECK(one.ratio == Approx(0.5));
  CHECK(cmp.pairs.at(1).cmp.tested);
  // The geomean over an untested pair has no CI.
  CHECK_FALSE(cmp.overall.geomean_has_ci);
}

TEST_CASE("detectable change: what a comparison could see shrinks with rounds", "[compare]") {
  CHECK(detectable_change(0, 10, 0.01, 0.05) == 0);
  // Never below the threshold plus the power margin; large SEs dominate.
  CHECK(detectable_change(0.001, 100, 0.01, 0.05) > 0.05);
  CHECK(detectable_change(0.04, 100, 0.01, 0.05) ==
        Approx(std::expm1((2.626 + 0.845) * 0.04)).epsilon(0.01));
  std::vector<run> b5, c5, b20, c20;
  ab_job(b5, c5, 3, 5, 0, 0.01, 0.01, 1);
  ab_job(b20, c20, 3, 20, 0, 0.01, 0.01, 1);
  set_options opt;
  opt.threshold_pct = 1;
  CHECK(compare_sets(b20, c20, opt).pairs[0].cmp.detectable_pct <
        compare_sets(b5, c5, opt).pairs[0].cmp.detectable_pct);
}

TEST_CASE("geomean: its own CI and verdict, no 'worse' without a test", "[compare]") {
  std::vector<run> b, c;
  ab_job(b, c, 5, 10, 0.10, 0.02, 0.003, 21);
  const auto slow = compare_sets(b, c);
  REQUIRE(slow.workloads.size() == 1);
  const auto& w = slow.workloads[0];
  CHECK(w.geomean_has_ci);
  CHECK(w.geomean_verdict == verdict::regressed);
  CHECK(w.geomean_ci_high < 1);
  CHECK(w.geomean_speedup == Approx(1 / 1.10).epsilon(0.02));
  std::vector<run> b2, c2;
  ab_job(b2, c2, 5, 3, 0.0, 0.02, 0.04, 22);
  const auto& same = compare_sets(b2, c2).overall;
  CHECK(same.geomean_has_ci);
  CHECK(same.geomean_verdict != verdict::regressed);
  CHECK(same.geomean_verdict != verdict::improved);
  CHECK(same.geomean_ci_low < 1);
  CHECK(same.geomean_ci_high > 1);
}
