// harness/app/query/job_history: the between-job noise of a comparison's configs, learned from the
// store's earlier jobs (same system, config, ruleset and fingerprint; before the candidate; VALID).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "harness/app/query/comparison.hpp"
#include "harness/app/query/job_history.hpp"
#include "harness/core/stats.hpp"
#include "harness/store/store.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;

namespace {

run job_run(const std::string& job, const std::string& started_at, double level,
            const std::string& fingerprint = "fp1") {
  run r = test_support::gemm_run(test_support::gemm_fp32("64", "64", "64"), "box");
  r.source = "measured";
  r.fingerprint = fingerprint;
  r.started_at = r.finished_at = started_at;
  r.extra["job_id"] = job;
  for (int i = 0; i < 5; ++i)
    r.samples.push_back({i, std::exp(level + 0.001 * (i - 2)), 1, json::object()});
  return r;
}

std::string at(int day) { return "2026-11-" + std::to_string(10 + day) + "T10:00:00.000Z"; }

} // namespace

TEST_CASE("job_history: earlier jobs of the same config and environment, before the candidate",
          "[query]") {
  auto db = store::store::in_memory();
  stats::rng g(3);
  // 8 earlier jobs of 2 rounds at about 1% job-to-job noise; one INVALID run far off, one job on
  // another fingerprint far off, and one job after the candidate far off: none of these count.
  std::vector<double> levels;
  for (int j = 0; j < 8; ++j) {
    const double level = 0.01 * g.normal();
    levels.push_back(level);
    for (int r = 0; r < 2; ++r) {
      run x = job_run("job" + std::to_string(j), at(j), level);
      db.insert_run(x);
    }
  }
  run invalid = job_run("job3", at(3), 2.0);
  invalid.mark_invalid("correctness check failed");
  db.insert_run(invalid);
  run other_env = job_run("other", at(4), 3.0, "fp2");
  db.insert_run(other_env);
  run later = job_run("later", at(15), 4.0);
  db.insert_run(later);
  run base = job_run("b", at(9), 0), cand = job_run("c", at(10), 0.1);
  base.tags = {"base"};
  cand.tags = {"cand"};
  db.insert_run(base);
  db.insert_run(cand);
  const auto b = query::select_runs(db, "tag=base"), c = query::select_runs(db, "tag=cand");
  const auto h = query::earlier_jobs(db, b, c);
  REQUIRE(h.size() == 1);
  const auto& jh = h.begin()->second;
  CHECK(h.begin()->first == "gemm/cpu/K=64,M=64,N=64,dtype=fp32 [kernel-v1]");
  // The 8 earlier jobs; the sides' own runs are not history.
  CHECK(jh.jobs == 8);
  CHECK(jh.df == Approx(7));
  const double mean = stats::mean(levels);
  double ss = 0;
  for (double x : levels)
    ss += (x - mean) * (x - mean);
  CHECK(jh.ss == Approx(ss).epsilon(1e-6));
  // compare uses it: the between-job noise is learned, not the ruleset's floor.
  query::compare_options o;
  o.baseline = "tag=base";
  o.candidate = "tag=cand";
  o.history = &db;
  const auto cmp = query::compare_selections(b, c, o);
  CHECK_THAT(cmp.pairs.at(0).cmp.accounts_for, Catch::Contains("8 earlier job(s) in the store"));
}

TEST_CASE("job_spread: short series keep every job, long ones drop outliers and old regimes",
          "[query]") {
  std::vector<std::vector<double>> five = {{0.0}, {0.01}, {0.011}, {0.012}, {0.5}};
  const auto h5 = query::job_spread(five);
  CHECK(h5.jobs == 5); // too few to judge outliers by a MAD
  CHECK(h5.left_out == 0);
  std::vector<std::vector<double>> series;
  stats::rng g(1);
  for (int j = 0; j < 12; ++j)
    series.push_back({0.3 + 0.01 * g.normal()}); // an old regime, 30% slower
  for (int j = 0; j < 12; ++j)
    series.push_back({0.01 * g.normal()});
  series[20] = {0.5}; // an outlier in the new regime
  const auto h = query::job_spread(series);
  CHECK(h.left_out >= 7); // the last 30 jobs: 6 of the old regime, and the outlier
  CHECK(h.jobs <= 17);
  CHECK(std::sqrt(h.ss / h.df) < 0.03); // the spread of the new regime alone
}
