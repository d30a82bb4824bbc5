#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"

using namespace accelbench;
namespace fs = std::filesystem;

namespace {
fs::path write_tmp(const std::string& name, const std::string& text) {
  fs::path p =
      fs::temp_directory_path() / ("accelbench-test-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p;
}
std::string error_of(const std::string& what) {
  try {
    load_ruleset(what);
  } catch (const input_error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("built-in rulesets load and resolve their settings", "[ruleset]") {
  auto r = load_ruleset("kernel-v1");
  CHECK(r.id == "kernel-v1");
  auto m = r.measurement();
  CHECK(m.repetitions == 10);
  CHECK(m.cache == cache_policy::hot);
  CHECK(m.min_time_s == Approx(0.05));
  CHECK(r.tolerance("fp32") == Approx(1e-4));
  CHECK(r.tolerance("bf16") == Approx(2e-2));
  CHECK_THROWS_AS(r.tolerance("int3"), input_error);
  CHECK(r.min_effect_pct() == 5);
  CHECK_FALSE(list_rulesets().empty());
}

TEST_CASE("malformed and schema-invalid rulesets are refused with the file and the problem",
          "[ruleset]") {
  auto bad_json = write_tmp("bad.json", "{ \"schema_version\": 1, ");
  CHECK_THAT(error_of(bad_json.string()),
             Catch::Contains("not valid JSON") && Catch::Contains(bad_json.string()));
  auto bad_schema = write_tmp("bad2.json", R"({"schema_version": 1, "id": "x", "version": "1",
    "applies_to": ["kernel"], "measurement": {"repetitions": 0}})");
  CHECK_THAT(error_of(bad_schema.string()),
             Catch::Contains("/measurement/repetitions") && Catch::Contains("minimum"));
  auto unknown = write_tmp("bad3.json", R"({"schema_version": 1, "id": "x", "version": "1",
    "applies_to": ["kernel"], "measurement": {"cache": "lukewarm"}})");
  CHECK_THAT(error_of(unknown.string()), Catch::Contains("lukewarm"));
  CHECK_THAT(error_of("no-such-ruleset"), Catch::Contains("unknown ruleset 'no-such-ruleset'"));
  CHECK_THAT(error_of("/nonexistent/r.json"), Catch::Contains("cannot read"));
  fs::remove(bad_json);
  fs::remove(bad_schema);
  fs::remove(unknown);
}

TEST_CASE("overrides are applied, recorded, validated and limited to overridable keys",
          "[ruleset]") {
  auto base = load_ruleset("kernel-v1");
  json user;
  auto eff = apply_overrides(base, {{"repetitions", "5"}, {"measurement.cache", "cold"}}, user);
  CHECK(eff.measurement().repetitions == 5);
  CHECK(eff.measurement().cache == cache_policy::cold);
  CHECK(user["measurement.repetitions"] == 5);
  CHECK(user["measurement.cache"] == "cold");
  CHECK(base.measurement().repetitions == 10); // the base is untouched
  CHECK_THROWS_AS(apply_overrides(base, {{"repetitions", "0"}}, user), input_error);
  CHECK_THROWS_WITH(apply_overrides(base, {{"comparison.alpha", "0.5"}}, user),
                    Catch::Contains("does not allow overriding 'comparison.alpha'"));
}

TEST_CASE("a setting that holds text takes an override as written, even one that reads as a number",
          "[ruleset]") {
  // training.round=5.0 was parsed as the number 5.0, and the schema refused it ("expected
  // string"): the round had to be quoted twice on the command line.
  auto base = load_ruleset("external-ttt-v1");
  REQUIRE(base.doc.at("training").at("round").is_string());
  json user;
  auto eff = apply_overrides(base, {{"training.round", "5.0"}, {"training.runs", "10"}}, user);
  CHECK(eff.doc.at("training").at("round") == "5.0");
  CHECK(user["training.round"] == "5.0");
  CHECK(eff.doc.at("training").at("runs") == 10); // a number setting still takes a number
}

TEST_CASE("a mistyped override is blamed on the override, with the nearest setting", "[ruleset]") {
  auto base = load_ruleset("kernel-v1");
  json user;
  CHECK_THROWS_WITH(
      apply_overrides(base, {{"repetitons", "3"}}, user),
      Catch::StartsWith(
          "--rule repetitons=3: ruleset kernel-v1 has no setting 'measurement.repetitons'; "
          "did you mean 'repetitions'?"));
  CHECK_THROWS_WITH(apply_overrides(base, {{"measurment.cache", "cold"}}, user),
                    Catch::Contains("has no setting 'measurment'; did you mean 'measurement'?"));
  // Far from every name: no suggestion, the list of settings instead.
  CHECK_THROWS_WITH(apply_overrides(base, {{"zzzzzz", "1"}}, user),
                    !Catch::Contains("did you mean") &&
                        Catch::Contains("repetitions, rounds, warmup_iterations"));
  // A section the schema leaves open takes any name (then the ruleset decides what is overridable).
  auto train = load_ruleset("train-v1");
  CHECK_NOTHROW(apply_overrides(train, {{"training.hyperparameters.base_lr", "0.001"}}, user));
}
