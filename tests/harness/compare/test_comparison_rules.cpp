// The rulesets a comparison needs (settings_from_rulesets, called by compare, report and
// the server on the runs of two selections): every measured run's ruleset must load, and the ids
// importers and the published results name have theirs in rulesets/. No silent defaults.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"

using namespace accelbench;

namespace {

run measured_run() {
  run r;
  r.id = 12;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.system = "box";
  r.ruleset = "kernel-v1";
  r.samples.push_back({0, 1.0, 1, json::object()});
  return r;
}

} // namespace

TEST_CASE("a comparison needs the ruleset of every measured run: no silent defaults", "[compare]") {
  const run ok = measured_run();
  auto settings_of = [](const std::vector<run>& runs) {
    return compare::settings_from_rulesets({&runs});
  };
  auto error_for = [&](const std::string& ruleset) {
    run r = ok;
    r.ruleset = ruleset;
    try {
      settings_of({r});
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_for("foo"), Catch::Contains("run 12 names ruleset 'foo', which this build "
                                               "does not have (comparisons need its comparison "
                                               "settings") &&
                                   Catch::Contains("unknown ruleset 'foo'"));
  // A stored run's ruleset is never read as a file.
  CHECK_THAT(error_for("../../workloads/gemm/rulesets/kernel-v1.json"),
             Catch::Contains("not a ruleset id"));
  CHECK_THAT(error_for(""), Catch::Contains("not a ruleset id"));
  // A skipped config (ruleset "none") brings nothing to judge.
  run skipped = ok;
  skipped.status = run_status::skipped;
  skipped.ruleset = "none";
  CHECK_NOTHROW(settings_of({skipped}));

  // What importers and the published results name, with their comparison block.
  for (const char* id : {"gbench-import", "published", "mlperf-training", "mlperf-training-v4.0",
                         "mlperf-training-v4.1", "mlperf-training-v5.0", "mlperf-training-v5.1"}) {
    INFO(id);
    run r = ok;
    r.ruleset = id;
    const auto s = settings_of({r});
    const ruleset rules = load_ruleset(id);
    CHECK(rules.section("comparison").is_object());
    CHECK(rules.min_effect_pct() == 5);
    CHECK(rules.alpha() == 0.01);
    CHECK(s.floor_by_ruleset.at(id) == (std::string(id) == "gbench-import" ? 2 : 0));
    CHECK(s.threshold_by_workload.at("gemm") == 5);
  }
}
