// harness/app/query selectors: until= (a date keeps its whole day) and family= (the accelerator
// families of results/devices.json, by the token rule of accelerator=).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/store/store.hpp"

using namespace accelbench;

namespace {

std::string error_of(const std::string& sel) {
  try {
    query::parse_selector(sel);
  } catch (const input_error& e) {
    return e.what();
  }
  return "no error";
}

run gemm_run(const std::string& system, const std::string& started_at) {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "fp32"}};
  r.system = system;
  r.ruleset = "kernel-v1";
  r.source = "measured";
  r.started_at = r.finished_at = started_at;
  for (int i = 0; i < 3; ++i)
    r.samples.push_back({i, 1.0 + 0.01 * i, 1, json::object()});
  return r;
}

// One run per system, each system named for its accelerator model.
store::store fleet(const std::vector<std::string>& models) {
  auto db = store::store::in_memory();
  for (const auto& m : models) {
    store::system_record s;
    s.name = m;
    s.accelerator_model = m;
    db.upsert_system(s);
    run r = gemm_run(m, "2026-12-02T10:00:00.000Z");
    db.insert_run(r);
  }
  return db;
}

std::vector<std::string> systems_of(store::store& db, const std::string& sel) {
  std::vector<std::string> out;
  for (const auto& r : query::select_runs(db, sel).runs)
    out.push_back(r.system);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("until= bounds start times at the precision it is written in", "[query][selector]") {
  CHECK(query::parse_selector("until=2026-12-02").until == "2026-12-03");
  CHECK(query::parse_selector("until=2026-12-31").until == "2027-01-01");
  CHECK(query::parse_selector("until=2028-02-28").until == "2028-02-29");
  CHECK(query::parse_selector("until=2026-12-02T10:59").until == "2026-12-02T11:00");
  CHECK(query::parse_selector("until=2026-12-31T23:59:59Z").until == "2027-01-01T00:00:00");
  CHECK(query::parse_selector("until=2026-12-02T10:00:05").until == "2026-12-02T10:00:06");
  CHECK_THAT(error_of("until=banana"), Catch::Contains("until 'banana' is not a date"));
  CHECK_THAT(error_of("until=2026-02-30"), Catch::Contains("2026-02-30"));
  CHECK_THAT(error_of("until=2026-12-02T10:00:00.5"),
             Catch::Contains("fraction of a second") && Catch::Contains("10:00:00.5"));
  CHECK_THAT(error_of("untill=2026-12-02"),
             Catch::Contains("until=") && Catch::Contains("family=") && Catch::Contains("untill"));
}

TEST_CASE("since=D&until=D selects day D whole, until=THH:MM its minute", "[query][selector]") {
  auto db = store::store::in_memory();
  for (const char* at :
       {"2026-12-01T23:59:59.999Z", "2026-12-02T00:00:00.000Z", "2026-12-02T10:00:30.000Z",
        "2026-12-02T10:01:00.000Z", "2026-12-02T23:59:59.999Z", "2026-12-03T00:00:00.000Z"}) {
    run r = gemm_run("box", at);
    db.insert_run(r);
  }
  auto starts = [&](const std::string& sel) {
    std::vector<std::string> out;
    for (const auto& r : query::select_runs(db, sel).runs)
      out.push_back(r.started_at.substr(0, 19));
    return out;
  };
  CHECK(starts("since=2026-12-02&until=2026-12-02") ==
        std::vector<std::string>{"2026-12-02T00:00:00", "2026-12-02T10:00:30",
                                 "2026-12-02T10:01:00", "2026-12-02T23:59:59"});
  CHECK(starts("until=2026-12-02T10:00") == std::vector<std::string>{"2026-12-01T23:59:59",
                                                                     "2026-12-02T00:00:00",
                                                                     "2026-12-02T10:00:30"});
  CHECK(starts("until=2026-12-01").size() == 1);
  CHECK_THROWS_AS(query::select_runs(db, "until=2026-11-30"), input_error); // matches nothing
}

TEST_CASE("family= selects the models of a catalogue family by accelerator='s token rule",
          "[query][selector]") {
  auto db = fleet({"NVIDIA B200-SXM-180GB", "NVIDIA Blackwell GPU (GB200)", "NVIDIA GB300",
                   "NVIDIA H100-SXM5-80GB", "NVIDIA H200", "NVIDIA GH200 480GB",
                   "NVIDIA A100-SXM4-80GB", "CPU: Intel Xeon"});
  CHECK(systems_of(db, "family=Blackwell") ==
        std::vector<std::string>{"NVIDIA B200-SXM-180GB", "NVIDIA Blackwell GPU (GB200)",
                                 "NVIDIA GB300"});
  CHECK(systems_of(db, "family=hopper") == // case-insensitive
        std::vector<std::string>{"NVIDIA GH200 480GB", "NVIDIA H100-SXM5-80GB", "NVIDIA H200"});
  // '&' holds for family= and accelerator= together; accelerator=B200 is not GB200.
  CHECK(systems_of(db, "family=Blackwell&accelerator=B200") ==
        std::vector<std::string>{"NVIDIA B200-SXM-180GB"});
  CHECK_THROWS_AS(query::select_runs(db, "family=Hopper&accelerator=B200"), input_error);
  // Several families are alternatives, as several accelerator= terms are.
  CHECK(systems_of(db, "family=Hopper&family=Blackwell").size() == 6);
  CHECK_THAT(error_of("family=Ampere"), Catch::Contains("unknown accelerator family 'Ampere'") &&
                                            Catch::Contains("known: Blackwell, Hopper"));
  CHECK_THAT(error_of("family="), Catch::Contains("family has no value"));
}
