// A plugin whose FLOP count is finite but so large that its TFLOP/s are not (1e308 per iteration):
// the run is stored INVALID without the figures, the sweep goes on to the next config, and the
// database exports and imports whole. (A NaN count fails before measuring: the plugin workload's
// rule, test_plugin_hostile.cpp.)
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/run_json.hpp"

using nlohmann::json;
using test_cli::ab;
using test_cli::metric_of;

namespace {

const std::string k_plugin = ACCELBENCH_FLOPS_PLUGIN;

// Whether every metric and sample of a run's JSON is a number (one that is not finite is written
// null).
bool every_value_a_number(const json& run) {
  for (const auto& m : run["metrics"])
    if (!m["value"].is_number())
      return false;
  for (const auto& s : run["samples"])
    if (!s["value"].is_number())
      return false;
  return true;
}

} // namespace

TEST_CASE("a plugin's FLOPs that overflow TFLOP/s make an INVALID run, stored, and the sweep goes "
          "on",
          "[timing]") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + k_plugin + " test.flops --sweep flops=nan,1e308,1e6 --json" +
              test_support::k_fast_rules + " --db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1); // a failed and an INVALID run; a NaN figure made the store refuse one: exit 2
  REQUIRE_FALSE(r.out.empty());
  const json runs = json::parse(r.out)["runs"];
  REQUIRE(runs.size() == 3);
  CHECK(runs[0]["status"] == "failed");
  const json& huge = runs[1];
  INFO(huge.dump());
  CHECK(huge["status"] == "ok");
  CHECK(huge["validity"] == "INVALID");
  CHECK(huge["invalid_reasons"].dump().find("metric tflops is ") != std::string::npos);
  CHECK(huge["invalid_reasons"].dump().find("(not a finite number): not stored") !=
        std::string::npos);
  CHECK_FALSE(metric_of(huge, "tflops"));
  CHECK(metric_of(huge, "time"));
  CHECK(every_value_a_number(huge));
  CHECK(metric_of(runs[2], "tflops"));
  CHECK(runs[2]["invalid_reasons"].dump().find("not stored") == std::string::npos);
  // Exported and imported again: no null where the document needs a number or an object.
  const std::string doc = (t.path / "all.json").string();
  auto ex = ab("export --db " + t.db() + " -o " + doc);
  INFO(ex.err);
  REQUIRE(ex.rc == 0);
  auto im = ab("import " + doc + " --db " + (t.path / "fresh.db").string());
  INFO(im.err);
  CHECK(im.rc == 0);
  CHECK(im.out.find("imported 3 run(s)") != std::string::npos);
}
