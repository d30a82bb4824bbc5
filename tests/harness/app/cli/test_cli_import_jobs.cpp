// An `accelbench import` of Google Benchmark output or an MLPerf folder is a job: one new id per
// command, written to the runs it stores (extra.job_id), printed in its summary line and selected
// by job=ID; a run that brings a job id of its own (an export re-imported) keeps it; job=latest
// and job=previous stay the measured jobs.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"

using namespace test_cli;
using nlohmann::json;

namespace {

// A Google Benchmark file of one benchmark `name` with three repetitions.
std::string gbench_file(const temp_dir& t, const std::string& name) {
  json doc = {{"context",
               {{"date", "2026-12-02T10:00:00+00:00"},
                {"host_name", "gb-host"},
                {"executable", "./bm"},
                {"num_cpus", 2},
                {"library_build_type", "release"}}},
              {"benchmarks", json::array()}};
  for (int i = 0; i < 3; ++i)
    doc["benchmarks"].push_back({{"name", name},
                                 {"run_name", name},
                                 {"run_type", "iteration"},
                                 {"repetitions", 3},
                                 {"repetition_index", i},
                                 {"threads", 1},
                                 {"iterations", 100},
                                 {"real_time", 10.0 + i},
                                 {"cpu_time", 10.0 + i},
                                 {"time_unit", "us"}});
  const std::string path = (t.path / (name + ".json")).string();
  std::ofstream(path) << doc.dump(1);
  return path;
}

// The job id an import's summary line names ("... as job=ID ..."), "" when none.
std::string job_in(const std::string& summary) {
  std::smatch m;
  return std::regex_search(summary, m, std::regex("as job=([0-9a-f-]+)")) ? m[1].str() : "";
}

std::set<std::string> jobs_of(const json& doc) {
  std::set<std::string> out;
  for (const auto& r : doc["runs"])
    out.insert(r.value("extra", json::object()).value("job_id", ""));
  return out;
}

} // namespace

TEST_CASE("import: each command is one job that job=ID selects and a re-imported export keeps",
          "[cli][import]") {
  temp_dir t;
  const std::string db = t.db();
  const auto first = ab(fmt::format("import {} --db {}", gbench_file(t, "BM_a"), db));
  const auto second = ab(fmt::format("import {} --db {}", gbench_file(t, "BM_b"), db));
  REQUIRE(first.rc == 0);
  REQUIRE(second.rc == 0);
  const std::string a = job_in(first.out), b = job_in(second.out);
  REQUIRE_FALSE(a.empty());
  REQUIRE_FALSE(b.empty());
  CHECK(a != b);

  const auto only_a = json::parse(ab(fmt::format("export job={} --db {}", a, db)).out);
  REQUIRE(only_a["runs"].size() == 1);
  CHECK(only_a["runs"][0]["workload"] == "gbench.BM_a");
  CHECK(jobs_of(only_a) == std::set<std::string>{a});
  // The same file again stores nothing, so its summary names no job.
  const auto again = ab(fmt::format("import {} --db {}", gbench_file(t, "BM_a"), db));
  CHECK(again.rc == 0);
  CHECK(job_in(again.out).empty());

  // job=latest and job=previous mean the jobs of measured runs: imports are not among them.
  const auto latest = ab("export job=latest --db " + db);
  CHECK(latest.rc == 2);
  CHECK_THAT(latest.err, Catch::Contains("holds 0 job(s)"));

  // An export re-imported elsewhere keeps the job its runs had.
  const std::string exported = (t.path / "export.json").string();
  REQUIRE(ab(fmt::format("export --db {} -o {}", db, exported)).rc == 0);
  const std::string other = (t.path / "other.db").string();
  const auto reimport = ab(fmt::format("import {} --db {}", exported, other));
  REQUIRE(reimport.rc == 0);
  CHECK(job_in(reimport.out).empty()); // every run kept its own job
  const auto all = json::parse(ab("export --db " + other).out);
  CHECK(all["runs"].size() == 2);
  CHECK(jobs_of(all) == std::set<std::string>{a, b});
}

TEST_CASE("import: runs stored before imports had jobs still read and belong to none",
          "[cli][import]") {
  temp_dir t;
  const std::string db = t.db();
  {
    accelbench::run old; // as an import stored it before imports had jobs: no extra.job_id
    old.uuid = accelbench::new_uuid();
    old.cfg.workload = "gbench.BM_old";
    old.cfg.backend = "cpu";
    old.system = "gb-host";
    old.ruleset = "gbench-import";
    old.source = "imported";
    old.started_at = old.finished_at = "2026-12-01T10:00:00.000Z";
    old.samples.push_back({0, 1e-5, 100, json::object()});
    auto store = accelbench::store::store::open(db);
    store.insert_run(old);
  }
  const auto imported = ab(fmt::format("import {} --db {}", gbench_file(t, "BM_c"), db));
  REQUIRE(imported.rc == 0);
  const std::string job = job_in(imported.out);
  REQUIRE_FALSE(job.empty());
  const auto all = json::parse(ab("export --db " + db).out);
  CHECK(all["runs"].size() == 2);
  CHECK(jobs_of(all) == std::set<std::string>{"", job});
  const auto of_job = json::parse(ab(fmt::format("export job={} --db {}", job, db)).out);
  REQUIRE(of_job["runs"].size() == 1);
  CHECK(of_job["runs"][0]["workload"] == "gbench.BM_c");

  // Our export format gives no job to runs that bring none: a document may hold many nights.
  const auto published = ab(
      fmt::format("import {}/results/published/kernels.json --db {}", ACCELBENCH_SOURCE_DIR, db));
  REQUIRE(published.rc == 0);
  CHECK(job_in(published.out).empty());
  CHECK(jobs_of(json::parse(ab("export source=published --db " + db).out)) ==
        std::set<std::string>{""});
}
