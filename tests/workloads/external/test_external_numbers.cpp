// Numbers no comparison can use, from a user's program as the results protocol lets it report
// them: huge finite samples, rates that overflow, a metric named like accelbench's own. Each run
// is stored (VALID only when every figure is a finite number), a suite goes on past it, and every
// stored run exports and imports again unchanged.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/run_json.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
using accelbench::store::store;
using test_cli::metric_of;

namespace {

const std::string k_rules = "--rule warmup_iterations=0 --rule repetitions=3 --quiet";

// A shell script in the test's folder, made executable.
std::string script(const test_cli::temp_dir& d, const std::string& name, const std::string& body) {
  const fs::path p = d.path / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

// Programs reporting one protocol sample line (and more) per run.
const char* const k_huge = R"(echo '{"sample": {"seconds": 1e308}}' >&3
echo '{"sample": {"seconds": 1.7e308}}' >&3)";
const char* const k_overflowing_rate =
    R"(echo '{"sample": {"seconds": 1e-300, "flops": 1e308}}' >&3)";
const char* const k_own_tflops = R"(echo '{"sample": {"seconds": 0.01}}' >&3
echo '{"metric": {"name": "tflops", "value": 5, "unit": "TFLOP/s", "direction": "higher"}}' >&3)";
const char* const k_good = R"(echo '{"sample": {"seconds": 0.01, "flops": 1e9}}' >&3)";

json runs_of(const test_cli::result& r) {
  INFO(r.err);
  REQUIRE_FALSE(r.out.empty());
  return json::parse(r.out)["runs"];
}

int64_t stored(const std::string& db) {
  if (!fs::exists(db))
    return 0;
  return store::open(db, accelbench::store::access::read_only).count_runs();
}

bool has_reason(const json& run, const std::string& part) {
  for (const auto& why : run["invalid_reasons"])
    if (why.get<std::string>().find(part) != std::string::npos)
      return true;
  return false;
}

test_cli::result run_program(const test_cli::temp_dir& d, const std::string& name,
                             const std::string& body) {
  return test_cli::ab("run external --name " + name + " " + k_rules + " --json --db " + d.db() +
                      " -- " + script(d, name + ".sh", body));
}

// A suite of external programs, one entry per (name, program body), in this order.
fs::path suite_of(const test_cli::temp_dir& d,
                  const std::vector<std::pair<std::string, std::string>>& programs) {
  json entries = json::array();
  for (const auto& [name, body] : programs)
    entries.push_back({{"workload", "external"},
                       {"set", {{"name", name}}},
                       {"command", {script(d, name + ".sh", body)}}});
  const fs::path suite = d.path / "numbers.json";
  std::ofstream(suite) << json{
      {"schema_version", 1}, {"name", "numbers"}, {"rules", "external-v1"}, {"entries", entries}};
  return suite;
}

// Every stored run of a database as its JSON without the database's own id, by uuid.
std::map<std::string, json> runs_by_uuid(const std::string& db) {
  store s = store::open(db, accelbench::store::access::read_only);
  std::map<std::string, json> out;
  for (int64_t id : s.run_ids()) {
    json j = to_json(*s.get_run(id));
    j.erase("id");
    out[j["uuid"].get<std::string>()] = j;
  }
  return out;
}

void sql(const std::string& db, const std::string& statement) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(h);
  REQUIRE(rc == SQLITE_OK);
}

} // namespace

TEST_CASE("samples of 1e308 and 1.7e308 seconds are stored with a finite CV, not lost") {
  test_cli::temp_dir d;
  auto r = run_program(d, "huge", k_huge);
  INFO(r.err);
  CHECK(r.rc != 2); // the store refused the CV's NaN and the run was lost
  REQUIRE(r.rc <= 1);
  const json run = runs_of(r)[0];
  const json* cv = metric_of(run, "cv");
  REQUIRE(cv);
  REQUIRE((*cv)["value"].is_number());
  // Two program runs of two samples for repetitions=3: 1e308, 1.7e308 twice; mean 1.35e308,
  // each 0.35e308 from it, standard deviation 0.35e308 sqrt(4 / 3).
  REQUIRE(run["samples"].size() == 4);
  CHECK((*cv)["value"].get<double>() == Approx(0.35 * std::sqrt(4.0 / 3) / 1.35));
  CHECK(metric_of(run, "time")->at("value").get<double>() == Approx(1.35e308));
  CHECK(stored(d.db()) == 1);
}

TEST_CASE("a rate that overflows to inf TFLOP/s makes the run INVALID and is not stored") {
  test_cli::temp_dir d;
  auto r = run_program(d, "overflow", k_overflowing_rate);
  INFO(r.err);
  CHECK(r.rc == 1);
  const json run = runs_of(r)[0];
  CHECK(run["validity"] == "INVALID");
  CHECK(has_reason(run, "metric tflops is inf (not a finite number): not stored"));
  CHECK_FALSE(metric_of(run, "tflops"));
  CHECK(metric_of(run, "time"));
  CHECK(run["samples"].size() == 3); // the samples themselves are finite: kept
  CHECK(stored(d.db()) == 1);
}

TEST_CASE("a program's metric named tflops is refused though its samples carry no FLOPs") {
  test_cli::temp_dir d;
  auto r = run_program(d, "own", k_own_tflops);
  INFO(r.err);
  CHECK(r.rc == 1);
  const json run = runs_of(r)[0];
  CHECK(run["validity"] == "INVALID");
  CHECK(has_reason(run, "the program reports a metric 'tflops'"));
  CHECK_FALSE(metric_of(run, "tflops")); // never stored as if accelbench had measured it
  CHECK(metric_of(run, "time"));
}

TEST_CASE("a suite goes on past entries with impossible numbers, each stored with its verdict") {
  test_cli::temp_dir d;
  const fs::path suite = suite_of(d, {{"huge", k_huge},
                                      {"overflow", k_overflowing_rate},
                                      {"own", k_own_tflops},
                                      {"good", k_good}});
  auto r = test_cli::ab("run --suite " + suite.string() + " " + k_rules + " --json --db " + d.db());
  INFO(r.err);
  CHECK(r.rc == 1); // INVALID runs, not a lost command
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 4);
  CHECK(runs[1]["validity"] == "INVALID");
  CHECK(runs[2]["validity"] == "INVALID");
  CHECK(runs[3]["config"]["name"] == "good");
  CHECK(runs[3]["status"] == "ok");
  CHECK(metric_of(runs[3], "tflops")->at("value").get<double>() == Approx(0.1)); // 1e9 / 0.01 s
  CHECK(stored(d.db()) == 4);
}

TEST_CASE("a run the database refuses is reported and the suite goes on to the next entry") {
  test_cli::temp_dir d;
  store::open(d.db(), accelbench::store::access::read_write); // created as run would
  // A real refusal of the store, for one entry only (no run accelbench makes is refused now).
  sql(d.db(), "CREATE TRIGGER refuse_one BEFORE INSERT ON runs WHEN NEW.config LIKE '%refused%' "
              "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
  const fs::path suite = suite_of(d, {{"refused", k_good}, {"good", k_good}});
  auto r = test_cli::ab("run --suite " + suite.string() + " " + k_rules + " --json --db " + d.db());
  INFO(r.err);
  CHECK(r.rc == 1);
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["config"]["name"] == "good");
  CHECK(r.err.find("a run could not be stored: external/cpu/") != std::string::npos);
  CHECK(r.err.find("refused by the test") != std::string::npos);
  // The last line says why the command exits 1.
  CHECK(r.err.find("accelbench: exit 1: 1 run(s) could not be stored") != std::string::npos);
  CHECK(stored(d.db()) == 1);
}

TEST_CASE("every run stored with edge values exports and imports into a fresh database unchanged") {
  test_cli::temp_dir d;
  // Made by accelbench: huge finite samples, an INVALID run whose metric was dropped, a refused
  // metric, a failed run without samples, a good one with a CV of 0.
  for (const auto& [name, body] :
       std::vector<std::pair<std::string, std::string>>{{"huge", k_huge},
                                                        {"overflow", k_overflowing_rate},
                                                        {"own", k_own_tflops},
                                                        {"fails", "exit 3"},
                                                        {"good", k_good}})
    REQUIRE(run_program(d, name, body).rc <= 1);
  // Stored directly: the extremes of a finite metric, zero and negative figures, a run skipped
  // without samples.
  {
    store s = store::open(d.db(), accelbench::store::access::read_write);
    accelbench::run edge;
    edge.cfg = {"external", "cpu", {{"name", "edge"}, {"command", "[\"true\"]"}}};
    edge.system = "edge-host";
    edge.ruleset = "external-v1";
    edge.samples = {{0, 1e-300, 1, json::object()}, {1, 1.7e308, 1, json{{"flops", 0}}}};
    edge.add_metric("time", 1.7e308, "s", accelbench::direction::lower_is_better);
    edge.add_metric("zero", 0, "", accelbench::direction::lower_is_better);
    edge.add_metric("delta", -1.7e308, "", accelbench::direction::higher_is_better);
    edge.add_metric("tiny", 4.9e-324, "", accelbench::direction::higher_is_better);
    s.insert_run(edge);
    accelbench::run skipped = edge;
    skipped.uuid.clear();
    skipped.samples.clear();
    skipped.metrics.clear();
    skipped.mark_skipped("not on this machine");
    s.insert_run(skipped);
  }
  const auto before = runs_by_uuid(d.db());
  REQUIRE(before.size() == 7);
  const std::string doc = (d.path / "all.json").string();
  auto ex = test_cli::ab("export --db " + d.db() + " -o " + doc);
  INFO(ex.err);
  REQUIRE(ex.rc == 0);
  const std::string fresh = (d.path / "fresh.db").string();
  auto im = test_cli::ab("import " + doc + " --db " + fresh);
  INFO(im.err);
  REQUIRE(im.rc == 0); // a null where a number was refused the whole file
  const auto after = runs_by_uuid(fresh);
  REQUIRE(after.size() == before.size());
  for (const auto& [uuid, run] : before) {
    INFO(uuid);
    REQUIRE(after.count(uuid) == 1);
    CHECK(after.at(uuid) == run);
  }
}
