#include <catch2/catch.hpp>

#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "importers/mlperf/benchmarks.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;

TEST_CASE("benchmarks: targets and run counts of the v4.0-v5.1 table", "[mlperf][benchmarks]") {
  const auto& t = benchmark_table::builtin();
  const auto* lora = t.find("llama2_70b_lora");
  REQUIRE(lora);
  CHECK(lora->required_runs == 10);
  REQUIRE(lora->quality.targets.size() == 1);
  CHECK(lora->quality.targets[0].target == 0.925);
  CHECK(lora->quality.targets[0].dir == direction::lower_is_better);
  CHECK(lora->quality.targets[0].reached(0.925));
  CHECK_FALSE(lora->quality.targets[0].reached(0.9251));
  CHECK_FALSE(lora->quality.targets[0].reached(0.0)); // sanity limit: > 0

  const auto* l405 = t.find("llama31_405b");
  REQUIRE(l405);
  CHECK(l405->required_runs == 3);
  CHECK(l405->quality.targets[0].target == 5.6);
  CHECK(l405->quality.metric == "log perplexity");
  REQUIRE(t.find("llama31_8b"));
  CHECK(t.find("llama31_8b")->required_runs == 10);
  CHECK(t.find("llama31_8b")->quality.targets[0].target == 3.3);
  CHECK(t.find("unet3d")->required_runs == 40);
  CHECK(t.find("unet3d")->max_dropped == 4);
  CHECK(t.find("bert")->quality.targets[0].dir == direction::higher_is_better);
  CHECK(t.find("bert")->quality.targets[0].reached(0.72));
  CHECK_FALSE(t.find("bert")->quality.targets[0].reached(1.0));
  CHECK(t.find("stable_diffusion")->quality.targets.size() == 2);
  // Older folder names resolve to the renamed benchmark.
  CHECK(t.find("ssd") == t.find("retinanet"));
  CHECK(t.find("gnn") == t.find("rgat"));
  CHECK(t.find("no_such_benchmark") == nullptr);
  for (const char* b : {"llama2_70b_lora", "llama31_405b", "llama31_8b", "stable_diffusion", "gpt3",
                        "bert", "resnet", "retinanet", "unet3d", "dlrm_dcnv2", "rgat", "flux1"})
    CHECK(t.find(b) != nullptr);

  // lora_rank is fixed to 16 in the closed division.
  bool lora_rank_rule = false;
  for (const auto& r : lora->closed_rules)
    if (r.key == "lora_rank")
      lora_rank_rule = r.check["op"] == "eq" && r.check["value"] == 16;
  CHECK(lora_rank_rule);
}

TEST_CASE("benchmarks: rounds, status values and the init bound", "[mlperf][benchmarks]") {
  const auto& t = benchmark_table::builtin();
  REQUIRE(t.round_benchmarks("5.0"));
  CHECK(t.round_benchmarks("v5.0")->size() == 7);
  CHECK(t.round_benchmarks("9.9") == nullptr);
  CHECK(t.status_allowed("Available cloud", "5.0"));
  CHECK_FALSE(t.status_allowed("onprem", "5.0"));
  CHECK(t.status_allowed("onprem", "4.0")); // legacy spelling accepted before v4.1
  CHECK_FALSE(t.status_allowed("onprem", ""));
  CHECK_FALSE(t.status_allowed("whenever", "4.0"));
  CHECK(t.init_limit_min("closed") == 30);
  CHECK(t.init_limit_min("open") == 240);
}

TEST_CASE("benchmarks: round names", "[mlperf][benchmarks]") {
  CHECK(normalize_round("v5.0") == "5.0");
  CHECK(normalize_round("5.1.0") == "5.1");
  CHECK(normalize_round("none") == "");
  CHECK(round_from_path("/x/training_v4.0/NVIDIA") == "4.0");
  CHECK(round_from_path("/x/training_results_v5.1/Org/results") == "5.1");
  CHECK(round_from_path("/x/y/z") == "");
  // The first digits.digits anywhere; nothing that only looks like one.
  CHECK(normalize_round("abc12x3.4") == "3.4");
  CHECK(normalize_round("round 10.25.7") == "10.25");
  CHECK(normalize_round("1. 2") == "");
  CHECK(round_from_path("/x/training_v4.0x/NVIDIA") == "");
  CHECK(round_from_path("/x/training_v.1") == "");
  CHECK(round_from_path("/training_v3.1/a/training_results_v4.1/b") == "4.1"); // the last one
  CHECK(compare_rounds("4.1", "5.0") < 0);
  CHECK(compare_rounds("5.10", "5.9") > 0);
}

TEST_CASE("benchmarks: a malformed table is refused", "[mlperf][benchmarks]") {
  json doc = benchmark_table::builtin().doc();
  doc["benchmarks"]["bert"]["closed_rules"][0]["req"] = "SOMETIMES";
  CHECK_THROWS_AS(benchmark_table::from_json(doc), input_error);
  json doc2 = benchmark_table::builtin().doc();
  doc2["benchmarks"]["bert"].erase("required_runs");
  CHECK_THROWS_AS(benchmark_table::from_json(doc2), input_error);
}

TEST_CASE("benchmarks: the rounds the table knows, in order", "[mlperf][benchmarks]") {
  // check-package --round refuses any other value, naming these.
  CHECK(benchmark_table::builtin().rounds() ==
        std::vector<std::string>{"4.0", "4.1", "5.0", "5.1"});
}

TEST_CASE("benchmarks: every round the table knows has the ruleset its imports name",
          "[mlperf][benchmarks]") {
  // Imported runs name mlperf-training-v<round> (mlperf-training when the path names no round),
  // and a comparison of them needs that ruleset's comparison block (rulesets/): a round added to
  // the table needs its ruleset file too.
  std::vector<std::string> ids{"mlperf-training"};
  for (const auto& round : benchmark_table::builtin().rounds())
    ids.push_back("mlperf-training-v" + round);
  for (const auto& id : ids) {
    INFO(id);
    const ruleset r = load_ruleset(id);
    CHECK(r.id == id);
    CHECK(r.section("comparison").is_object());
    CHECK(r.between_run_noise_pct() == 0); // a published figure is one figure, not a sample
  }
}
