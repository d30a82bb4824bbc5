#include <catch2/catch.hpp>

#include <map>

#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/score.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;

TEST_CASE("score: the four published systems score as MLCommons published", "[mlperf][score]") {
  ingest_result res = ingest(mlperf_test::shared_data());
  std::map<std::string, double> official = {{"eos_ngc24.04_nemo", 28.1628},
                                            {"nyx_n1_ngc25.04_nemo", 11.2749},
                                            {"eos-dfw_n64_ngc25.01_nemo", 269.1216},
                                            {"tyche_ngpu512_ngc25.04_nemo", 121.7573}};
  auto scores = score_groups(res.runs);
  REQUIRE(scores.size() == 4);
  for (const auto& s : scores) {
    INFO(s.system << " " << s.benchmark);
    REQUIRE(official.count(s.system));
    CHECK(s.valid);
    CHECK(s.reasons.empty());
    CHECK(std::abs(s.score_min - official[s.system]) < 0.001);
    CHECK(s.scaling_factor > 1.0);
    CHECK(static_cast<int>(s.runs_used.size()) == s.required_runs - 2);
  }
}

namespace {

run timed_run(const std::string& id, double minutes, bool converged = true) {
  run r;
  r.uuid = id;
  r.cfg.workload = "mlperf.llama31_405b";
  r.cfg.values["benchmark"] = "llama31_405b";
  r.system = "sys";
  r.sample_unit = "min";
  sample s;
  s.value = minutes;
  r.samples.push_back(s);
  r.extra["converged"] = converged;
  r.extra["scaling_factor"] = 2.0;
  return r;
}

} // namespace

TEST_CASE("score: olympic mean with the dropped runs counted as slowest", "[mlperf][score]") {
  // 3 runs: drop the fastest and the slowest, keep the middle one.
  auto s = score({timed_run("a", 10), timed_run("b", 30), timed_run("c", 20)});
  CHECK(s.valid);
  CHECK(s.olympic_mean_min == Approx(20));
  CHECK(s.score_min == Approx(40)); // x scaling_factor
  REQUIRE(s.runs_used.size() == 1);
  CHECK(s.runs_used[0] == "c");

  // One non-converged run counts as the slowest: drop it and the fastest.
  s = score({timed_run("a", 10), timed_run("b", 1, false), timed_run("c", 20)});
  CHECK(s.valid);
  CHECK(s.olympic_mean_min == Approx(20));
  CHECK(s.runs_dropped == std::vector<std::string>{"b"});

  // A failed run (no run_stop) is dropped the same way.
  run failed = timed_run("f", 0);
  failed.samples.clear();
  failed.mark_failed("log has no run_stop");
  s = score({timed_run("a", 10), failed, timed_run("c", 20)});
  CHECK(s.valid);
  CHECK(s.olympic_mean_min == Approx(20));

  // Two non-converged runs make the result invalid.
  s = score({timed_run("a", 10), timed_run("b", 1, false), timed_run("c", 20, false)});
  CHECK_FALSE(s.valid);
  CHECK_FALSE(s.reasons.empty());

  // The wrong number of runs is computed but invalid.
  s = score({timed_run("a", 10), timed_run("b", 30), timed_run("c", 20), timed_run("d", 25)});
  CHECK_FALSE(s.valid);
  CHECK(s.olympic_mean_min == Approx(22.5));

  // Mixed systems are refused.
  run other = timed_run("o", 5);
  other.system = "elsewhere";
  s = score({timed_run("a", 10), timed_run("b", 30), other});
  CHECK_FALSE(s.valid);
}

TEST_CASE("score: run_benchmark reads measured runs' MLPerf logs", "[mlperf][score]") {
  run r;
  r.cfg.workload = "train.llama";
  CHECK(run_benchmark(r) == "train.llama");
  r.mllog =
      "noise\n:::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", "
      "\"key\": \"submission_benchmark\", \"value\": \"llama31_8b\", \"metadata\": {}}\nmore\n";
  CHECK(run_benchmark(r) == "llama31_8b");
  r.cfg.values["benchmark"] = "llama2_70b_lora";
  CHECK(run_benchmark(r) == "llama2_70b_lora");
  run m;
  m.cfg.workload = "mlperf.rgat";
  CHECK(run_benchmark(m) == "rgat");
}
