// The store's behaviour, whatever the implementation: compiled into test_store (SQLite) and
// test_store_pg (PostgreSQL), each with its own fresh_db() (store_fixture.hpp).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/headline_metric.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/harness/store/store_fixture.hpp"
#include "tests/support/skip.hpp"

using namespace accelbench;
using accelbench::testing::db_under_test;

namespace accelbench::testing {
run make_run(const std::string& system, int nsamples, double base) {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", "64"}, {"dtype", "fp32"}};
  r.system = system;
  r.ruleset = "kernel-v1";
  r.environment = {{"cpu", {{"model", "test cpu"}}},
                   {"accelerator", {{"model", "CPU: test"}, {"count", 1}}}};
  for (int i = 0; i < nsamples; ++i)
    r.samples.push_back({i, base + 0.001 * i, 4, json::object()});
  r.add_metric("tflops", 1.25, "TFLOP/s", direction::higher_is_better);
  r.tags = {"nightly", "t1"};
  r.started_at = now_iso8601();
  r.finished_at = now_iso8601();
  return r;
}
} // namespace accelbench::testing

namespace {
using accelbench::testing::make_run;

// An accelbench database holding `runs` runs of boxA, closed.
void fill(db_under_test& t, int runs) {
  auto db = store::store::open(t.location());
  for (int i = 0; i < runs; ++i) {
    run r = make_run("boxA", 3);
    db.insert_run(r);
  }
}
} // namespace

TEST_CASE("a run round-trips through the store with samples, metrics and tags", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  CHECK(std::string(db.kind()) == t->kind());
  CHECK(db.schema_version() == store::k_schema_version);
  run r = make_run("boxA", 10);
  r.mark_invalid("correctness: off by one");
  r.extra["implementation"] = "test";
  r.samples[1].extra = {{"note", "quote \" backslash \\ brace { comma , ünï"}};
  r.samples[2].value = 1e-300;
  r.samples[3].value = 1.0 / 3.0;
  r.add_metric("tflops", 2.5, "TFLOP/s", direction::higher_is_better); // the last value wins
  r.add_metric("a \"quoted\" metric", -0.1, "", direction::lower_is_better);
  r.tags.push_back("nightly"); // stored once
  r.tags.push_back("with,comma \"and\" {braces}");
  r.mllog = ":::MLLOG {\"key\": \"run_start\"}\n";
  REQUIRE(db.insert_run(r));
  REQUIRE(r.id > 0);
  auto back = db.get_run(r.id);
  REQUIRE(back);
  CHECK(back->uuid == r.uuid);
  CHECK(back->cfg.key() == r.cfg.key());
  REQUIRE(back->samples.size() == 10);
  CHECK(back->samples[3].value == 1.0 / 3.0); // bit for bit
  CHECK(back->samples[2].value == 1e-300);
  CHECK(back->samples[3].iterations == 4);
  CHECK(back->samples[1].extra == r.samples[1].extra);
  CHECK(back->samples[0].extra.empty());
  CHECK(back->find_metric("tflops")->value == 2.5);
  CHECK(back->metrics.size() == 2);
  CHECK(back->find_metric("a \"quoted\" metric")->value == -0.1);
  CHECK(back->tags == std::vector<std::string>{"nightly", "t1", "with,comma \"and\" {braces}"});
  CHECK_FALSE(back->valid);
  CHECK(back->invalid_reasons[0] == "correctness: off by one");
  CHECK(back->extra["implementation"] == "test");
  CHECK_FALSE(back->fingerprint.empty());
  CHECK(back->environment == r.environment);
  CHECK(back->mllog == r.mllog);
  CHECK(db.get_run(r.id, false, false)->mllog.empty());
  CHECK_FALSE(db.get_run(r.id + 1000));
  // The same uuid is not stored twice (imports are idempotent).
  run again = r;
  again.id = 0;
  CHECK_FALSE(db.insert_run(again));
  CHECK(again.id == r.id);
  std::vector<run> batch = {r, make_run("boxA", 2)};
  CHECK(db.insert_runs(batch) == 1);
  CHECK(batch[0].id == r.id);
  CHECK(db.count_runs() == 2);
  store::table_counts c = db.counts();
  CHECK(c.runs == 2);
  CHECK(c.samples == 12);
  CHECK(c.metrics == 3);
  CHECK(c.tags == 5);
  CHECK(c.systems == 1);
  CHECK(db.run_ids() == std::vector<int64_t>{r.id, batch[1].id});
}

// Why the headline (harness/core/headline_metric.hpp) never takes a stored run's first metric
// blindly: the store reads metrics back by name, so an external program's time, cv, items_per_s
// come back with the bare cv first.
TEST_CASE("a stored run's metrics come back by name, and its headline is still its figure",
          "[store][headline]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run r = make_run("boxA", 3);
  r.cfg.workload = "external";
  r.metrics.clear();
  r.add_metric("time", 0.002, "s", direction::lower_is_better);
  r.add_metric("cv", 0.01, "", direction::lower_is_better);
  r.add_metric("items_per_s", 500, "items/s", direction::higher_is_better);
  REQUIRE(db.insert_run(r));
  auto back = db.get_run(r.id);
  REQUIRE(back);
  REQUIRE(back->metrics.size() == 3);
  CHECK(back->metrics.front().name == "cv");
  REQUIRE(headline_metric(*back) != nullptr);
  CHECK(headline_metric(*back)->name == "time");
  CHECK(headline_metric(*back, "items_per_s")->name == "items_per_s");
  back->metrics.erase_if([](const metric& m) { return m.name == "time"; });
  CHECK(headline_metric(*back)->name == "items_per_s"); // the first with a unit, not cv
}

TEST_CASE("queries filter by system, workload, tag, config and accelerator", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run a = make_run("boxA", 3), b = make_run("boxB", 3);
  b.cfg.workload = "attention";
  b.tags = {"other"};
  a.started_at = "2026-01-02T00:00:00Z";
  b.started_at = "2026-01-01T00:00:00Z";
  db.insert_run(a);
  db.insert_run(b);
  store::run_filter f;
  CHECK(db.query(f).at(0).system == "boxB"); // by start time
  f.systems = {"boxA"};
  CHECK(db.query(f).size() == 1);
  f = {};
  f.workloads = {"att*"};
  CHECK(db.query(f).size() == 1);
  f.workloads = {"ATT*"}; // prefixes ignore ASCII case in both stores
  CHECK(db.query(f).size() == 1);
  f.workloads = {"gemm", "attention"};
  CHECK(db.query(f).size() == 2);
  f = {};
  f.tags = {"nightly"};
  CHECK(db.query(f).at(0).system == "boxA");
  f.tags = {"nightly", "other"};
  CHECK(db.query(f).empty());
  f = {};
  f.config = {{"M", "64"}};
  CHECK(db.query(f).size() == 2);
  f.config = {{"M", "65"}};
  CHECK(db.query(f).empty());
  f.config = {{"dtype", "fp32"}};
  CHECK(db.query(f).size() == 2);
  f = {};
  f.accelerators = {"test"};
  CHECK(db.query(f).size() == 2);
  f.accelerators = {"h100"};
  CHECK(db.query(f).empty());
  f = {};
  f.ids = {b.id};
  CHECK(db.query(f).at(0).uuid == b.uuid);
  f = {};
  f.since = "2026-01-02";
  CHECK(db.query(f).size() == 1);
  f = {};
  f.source = "published";
  CHECK(db.query(f).empty());
  // SQL-looking text is data.
  f = {};
  f.systems = {"boxA'; DROP TABLE runs; --"};
  CHECK(db.query(f).empty());
  f.systems = {};
  f.config = {{"M') OR 1=1 --", "x"}};
  CHECK(db.query(f).empty());
  CHECK(db.count_runs() == 2);
  f = {};
  f.with_samples = false;
  CHECK(db.query(f).at(0).samples.empty());
  CHECK(db.tags() == std::vector<std::string>{"nightly", "other", "t1"});
  CHECK(db.systems().size() == 2);
  store::system_record sys{"boxB", "NVIDIA H100", 8, 2, "published", {{"k", "v"}}};
  db.upsert_system(sys);
  auto got = db.get_system("boxB");
  REQUIRE(got);
  CHECK(got->total_accelerators() == 16);
  CHECK(got->description == json{{"k", "v"}});
  CHECK_FALSE(db.get_system("nope"));
}

TEST_CASE("a failed insert leaves no half-written run", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run r = make_run("boxA", 3);
  r.samples[2].index = 1; // duplicate sample index: the samples insert fails mid-run
  CHECK_THROWS_AS(db.insert_run(r), storage_error);
  CHECK(db.counts().total() == 0);
  // The store is usable afterwards, and a batch with one bad run stores none of it.
  run ok = make_run("boxA", 3);
  CHECK(db.insert_run(ok));
  std::vector<run> batch = {make_run("boxB", 2), r};
  CHECK_THROWS_AS(db.insert_runs(batch), storage_error);
  CHECK(db.count_runs() == 1);
  CHECK(db.counts().samples == 3);
}

TEST_CASE("an older database migrates forward without losing runs", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  t->build_version(1); // a version-1 database, as the first release wrote it
  t->exec(
      R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status, valid,
             started_at, finished_at, environment)
             VALUES ('00000000-0000-4000-8000-000000000001', 'gemm', 'cpu', 'gemm/cpu/M=8', '{"M":8}', 'old-box',
             'kernel-v1', 'ok', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z',
             '{"accelerator":{"model":"CPU: old"}}'))");
  t->exec("INSERT INTO samples (run_id, idx, value) VALUES (1, 0, 0.5)");
  auto db = store::store::open(t->location());
  CHECK(db.schema_version() == store::k_schema_version);
  auto r = db.get_run(1);
  REQUIRE(r);
  CHECK(r->system == "old-box");
  CHECK(r->source == "measured"); // column added by migration 2 with its default
  CHECK(r->samples.size() == 1);
  auto sys = db.get_system("old-box");
  REQUIRE(sys);
  CHECK(sys->accelerator_model == "CPU: old"); // migration 2 backfilled systems
}

TEST_CASE("several processes creating and writing one database all succeed", "[store][timing]") {
  ACCELBENCH_FRESH_DB(t);
  // Nothing created first: the processes race to create the schema too.
  const int procs = 4, per = 25;
  std::vector<pid_t> kids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        auto db = store::store::open(t->location());
        for (int i = 0; i < per; ++i) {
          run r = make_run("proc" + std::to_string(p), 50);
          db.insert_run(r);
        }
      } catch (const std::exception& e) {
        fprintf(stderr, "child %d: %s\n", p, e.what());
        code = 1;
      }
      _exit(code);
    }
    kids.push_back(pid);
  }
  int failures = 0;
  for (pid_t k : kids) {
    int status = 0;
    waitpid(k, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHECK(failures == 0);
  auto db = store::store::open(t->location());
  CHECK(db.count_runs() == procs * per);
  CHECK(db.counts().samples == procs * per * 50);
  CHECK(db.schema_version() == store::k_schema_version);
}

TEST_CASE(
    "schema versions this accelbench does not know are refused and the database left unchanged",
    "[store]") {
  for (int64_t v :
       {int64_t{-1}, int64_t{INT_MIN}, int64_t{store::k_schema_version + 1}, int64_t{99}}) {
    CAPTURE(v);
    ACCELBENCH_FRESH_DB(t);
    fill(*t, 1);
    t->set_version(v);
    std::string before = t->snapshot();
    for (auto how : {store::access::read_write, store::access::read_only})
      CHECK_THROWS_WITH(store::store::open(t->location(), how),
                        Catch::Contains("unsupported schema version " + std::to_string(v)) &&
                            Catch::Contains(t->shown()));
    if (v > store::k_schema_version)
      CHECK_THROWS_WITH(store::store::open(t->location()), Catch::Contains("newer accelbench"));
    CHECK(t->snapshot() == before);
  }
}

TEST_CASE("a database of another program is refused by every command and left unchanged",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  t->exec("CREATE TABLE notes (id INTEGER, body TEXT); INSERT INTO notes (id, body) VALUES (1, "
          "'mine')");
  std::string before = t->snapshot();
  for (auto how : {store::access::read_only, store::access::read_write})
    CHECK_THROWS_WITH(store::store::open(t->location(), how),
                      Catch::Contains("not an accelbench database") && Catch::Contains("notes") &&
                          Catch::Contains(t->shown()));
  CHECK(t->snapshot() == before);
}

TEST_CASE("a half-created schema is named as such and left unchanged", "[store]") {
  struct half {
    const char* what;
    const char* sql;
  };
  for (const auto& h :
       {half{"systems table at version 0", "CREATE TABLE systems (name TEXT PRIMARY KEY)"},
        half{"runs table at version 0", "CREATE TABLE runs (id INTEGER PRIMARY KEY)"},
        half{"version 2 without systems", ""}}) {
    CAPTURE(h.what);
    ACCELBENCH_FRESH_DB(t);
    if (*h.sql) {
      t->exec(h.sql);
    } else {
      fill(*t, 1);
      t->exec("DROP TABLE systems");
      t->set_version(2);
    }
    std::string before = t->snapshot();
    for (auto how : {store::access::read_write, store::access::read_only})
      CHECK_THROWS_WITH(store::store::open(t->location(), how),
                        (Catch::Contains("partial or foreign schema") ||
                         Catch::Contains("not an accelbench database")) &&
                            Catch::Contains(t->shown()) && !Catch::Contains("already exists (in"));
    CHECK(t->snapshot() == before);
  }
  // Version 1 with a table a later migration creates: the migration would fail half-way.
  ACCELBENCH_FRESH_DB(t);
  t->build_version(1);
  t->exec("CREATE TABLE systems (name TEXT)");
  CHECK_THROWS_WITH(store::store::open(t->location()),
                    Catch::Contains("partial or foreign schema") &&
                        Catch::Contains("'systems' already exists"));
}

TEST_CASE("read-only opens refuse every write and change nothing", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  fill(*t, 2);
  std::string before = t->snapshot();
  {
    auto db = store::store::open(t->location(), store::access::read_only);
    auto runs = db.query(store::run_filter{});
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].samples.size() == 3);
    CHECK(runs[0].tags == std::vector<std::string>{"nightly", "t1"});
    CHECK(runs[0].find_metric("tflops"));
    run r = make_run("boxB", 1);
    CHECK_THROWS_WITH(db.insert_run(r),
                      Catch::Contains("read-only") && Catch::Contains(t->shown()));
    store::system_record boxc;
    boxc.name = "boxC";
    CHECK_THROWS_AS(db.upsert_system(boxc), storage_error);
    CHECK(db.count_runs() == 2); // still usable after a refused write
  }
  CHECK(t->snapshot() == before);
  // An empty database (no tables) is not ours to read, and is not given tables by a read.
  ACCELBENCH_FRESH_DB(blank);
  blank->create_empty();
  std::string empty_before = blank->snapshot();
  CHECK_THROWS_WITH(store::store::open(blank->location(), store::access::read_only),
                    Catch::Contains("not an accelbench database") &&
                        Catch::Contains(blank->shown()));
  CHECK(blank->snapshot() == empty_before);
}

TEST_CASE("an older schema is read-only-opened without upgrading it, and upgraded by a write",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  t->build_version(1);
  t->exec(
      R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status, valid,
             started_at, finished_at) VALUES ('00000000-0000-4000-8000-000000000002', 'gemm', 'cpu', 'gemm/cpu/M=8',
             '{"M":8}', 'old-box', 'kernel-v1', 'ok', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z'))");
  std::string before = t->snapshot();
  if (std::string(t->kind()) == "sqlite") {
    // SQLite reads it through a private upgraded copy in memory.
    auto db = store::store::open(t->location(), store::access::read_only);
    CHECK(db.schema_version() == store::k_schema_version);
    CHECK(db.count_runs() == 1);
    CHECK(db.get_system("old-box"));
  } else {
    // A shared server cannot be copied: the read is refused with what to do.
    CHECK_THROWS_WITH(store::store::open(t->location(), store::access::read_only),
                      Catch::Contains("schema version 1") && Catch::Contains("write command"));
  }
  CHECK(t->snapshot() == before);
  CHECK(store::store::open(t->location()).schema_version() == store::k_schema_version);
  CHECK(store::store::open(t->location(), store::access::read_only).count_runs() == 1);
}

TEST_CASE("stored text that is not valid JSON reads as empty instead of failing", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  run r = make_run("boxA", 2);
  {
    auto db = store::store::open(t->location());
    db.insert_run(r);
  }
  t->exec("UPDATE runs SET environment = '" + std::string(100000, '[') +
          "', invalid_reasons = '[1, \"why\", {\"a\": 2}]', "
          "config = '[1]' WHERE id = " +
          std::to_string(r.id));
  auto db = store::store::open(t->location(), store::access::read_only);
  auto back = db.get_run(r.id);
  REQUIRE(back);
  CHECK(back->environment == json::object());
  CHECK(back->invalid_reasons.size() == 3);
  CHECK(back->invalid_reasons[1] == "why");
  CHECK(back->cfg.values.empty());
}

TEST_CASE("db copy moves every run and system, and a rerun stores nothing twice", "[store]") {
  ACCELBENCH_FRESH_DB(src);
  ACCELBENCH_FRESH_DB(dst);
  std::vector<std::string> uuids;
  {
    auto db = store::store::open(src->location());
    db.upsert_system({"boxA", "NVIDIA H100 80GB", 8, 4, "published", {{"division", "closed"}}});
    for (int i = 0; i < 7; ++i) {
      run r = make_run(i % 2 ? "boxA" : "boxB", 5 + i);
      r.started_at = "2026-01-01T00:00:00Z"; // ties: the copy keeps their order
      r.mllog = i == 3 ? ":::MLLOG {}\n" : "";
      db.insert_run(r);
      uuids.push_back(r.uuid);
    }
  }
  auto from = store::store::open(src->location(), store::access::read_only);
  auto to = store::store::open(dst->location());
  store::copy_result res = store::copy_store(from, to, 3);
  CHECK(res.runs_seen == 7);
  CHECK(res.runs_copied == 7);
  CHECK(res.systems == 2);
  CHECK(res.samples_copied == 5 + 6 + 7 + 8 + 9 + 10 + 11);
  std::vector<run> a = from.query({}), b = to.query({});
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(b[i].uuid == uuids[i]);
    a[i].id = b[i].id = 0;
    CHECK(dump_json(to_json(a[i])) == dump_json(to_json(b[i])));
  }
  CHECK(to.get_run(to.run_ids()[3])->mllog == ":::MLLOG {}\n");
  CHECK(to.get_system("boxA")->nodes == 4);
  store::table_counts before = to.counts();
  res = store::copy_store(from, to, 2);
  CHECK(res.runs_seen == 7);
  CHECK(res.runs_copied == 0);
  CHECK(res.samples_copied == 0);
  CHECK(to.counts().total() == before.total());
}

TEST_CASE("tokens of the server: stored as given, listed, revoked once", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  store::token_record a;
  a.name = "ci-h100-07";
  a.role = "write";
  a.salt = "00ff";
  a.hash = std::string(64, 'a');
  a.created_at = "2026-12-03T10:00:00.000Z";
  store::token_record b = a;
  b.name = "dashboard";
  b.role = "read";
  const int64_t ia = db.insert_token(a), ib = db.insert_token(b);
  CHECK(ia != ib);
  auto got = db.get_token(ib);
  REQUIRE(got);
  CHECK(got->name == "dashboard");
  CHECK(got->role == "read");
  CHECK(got->hash == a.hash);
  CHECK(got->revoked_at.empty());
  CHECK_FALSE(db.get_token(ib + 100));
  CHECK(db.tokens().size() == 2);
  CHECK(db.revoke_token(ia, "2026-12-03T11:00:00.000Z"));
  CHECK_FALSE(db.revoke_token(ia, "2026-12-03T12:00:00.000Z")); // already revoked
  CHECK_FALSE(db.revoke_token(ib + 100, "2026-12-03T12:00:00.000Z"));
  CHECK(db.get_token(ia)->revoked_at == "2026-12-03T11:00:00.000Z");
  // A role outside read, write and admin is refused by the table itself.
  store::token_record bad = a;
  bad.role = "root";
  CHECK_THROWS_AS(db.insert_token(bad), storage_error);
  CHECK(db.tokens().size() == 2);
}

TEST_CASE("history's read gives every run's median exactly, from the column written at insert",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  // Odd and even counts, one sample, ties, values stored out of order, negative and tiny values.
  const std::vector<std::vector<double>> values = {{3.5},
                                                   {2.0, 1.0},
                                                   {5.0, 1.0, 3.0},
                                                   {4.0, 4.0, 1.0, 9.0},
                                                   {0.1, 0.2, 0.30000000000000004, 0.1},
                                                   {-1e-300, 2.5e-308, -3.0, 1e300},
                                                   {}};
  std::vector<run> runs;
  std::mt19937_64 g(5);
  for (size_t i = 0; i < values.size(); ++i) {
    run r = accelbench::testing::make_run("boxM", 0, 0);
    r.cfg.values["M"] = std::to_string(i);
    for (size_t k = 0; k < values[i].size(); ++k)
      r.samples.push_back({(int)k, values[i][k], 1, json::object()});
    runs.push_back(r);
  }
  runs[1].extra["job_id"] = "job-7"; // history takes a job's rounds as one point
  for (int i = 0; i < 20; ++i) {     // and a few longer random ones
    run r = accelbench::testing::make_run("boxM", 11 + i, 0);
    std::normal_distribution<double> d(1e-3, 1e-4);
    for (auto& s : r.samples)
      s.value = d(g);
    runs.push_back(r);
  }
  db.insert_runs(runs);
  auto full = db.query({});
  auto rows = db.history_rows({});
  REQUIRE(full.size() == runs.size());
  REQUIRE(rows.size() == full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    CAPTURE(i);
    // What history_series reads of a run is what the full read gives.
    CHECK(rows[i].id == full[i].id);
    CHECK(rows[i].config_key == full[i].cfg.key());
    CHECK(rows[i].system == full[i].system);
    CHECK(rows[i].ruleset == full[i].ruleset);
    CHECK(rows[i].status == full[i].status);
    CHECK(rows[i].started_at == full[i].started_at);
    CHECK(rows[i].sample_unit == full[i].sample_unit);
    CHECK(rows[i].dir == full[i].sample_dir);
    CHECK(rows[i].job_id == full[i].extra.value("job_id", ""));
    REQUIRE(rows[i].median.has_value() == !full[i].samples.empty());
    if (full[i].samples.empty())
      continue;
    std::vector<double> a;
    for (const auto& s : full[i].samples)
      a.push_back(s.value);
    CHECK(*rows[i].median == stats::median(a)); // bit for bit
  }
}

TEST_CASE("each run's sample summary is written once, when the run is stored", "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  const std::vector<std::vector<double>> values = {
      {3.0, 1.0, 2.0, 10.0, 4.0, 2.5, 7.0, 1.5, 2.25, 9.0, 3.25}, {4.0, 2.0}, {1.0, -2.0, 3.0}, {}};
  std::vector<run> runs;
  for (const auto& v : values) {
    run r = accelbench::testing::make_run("boxS", 0);
    for (size_t k = 0; k < v.size(); ++k)
      r.samples.push_back({(int)k, v[k], 1, json::object()});
    runs.push_back(r);
  }
  runs[0].extra["job_id"] = "job-1";
  runs[1].environment["accelerator"]["model"] = "NVIDIA H200";
  db.insert_runs(runs);
  auto column = [&](const run& r, const char* name) {
    return t->value(fmt::format("SELECT {} FROM runs WHERE uuid = '{}'", name, r.uuid));
  };
  for (size_t i = 0; i < values.size(); ++i) {
    CAPTURE(i);
    const auto& v = values[i];
    CHECK(column(runs[i], "sample_count") == std::to_string(v.size()));
    if (v.empty()) {
      CHECK(column(runs[i], "median").empty()); // NULL
      continue;
    }
    CHECK(std::stod(column(runs[i], "median")) == Approx(stats::median(v)).epsilon(1e-14));
    const bool positive = std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
    if (!positive) {
      CHECK(column(runs[i], "log_median").empty()); // a log of a value <= 0 is no number
      CHECK(column(runs[i], "log_median_se").empty());
      continue;
    }
    std::vector<double> logs;
    for (double x : v)
      logs.push_back(std::log(x));
    CHECK(std::stod(column(runs[i], "log_median")) == Approx(stats::median(logs)).epsilon(1e-14));
    const double se = stats::median_standard_error(logs);
    CHECK(se > 0);
    CHECK(std::stod(column(runs[i], "log_median_se")) == Approx(se).epsilon(1e-14));
  }
  CHECK(column(runs[0], "job_id") == "job-1");
  CHECK(column(runs[1], "job_id").empty());
  CHECK(column(runs[0], "accelerator_model") == "CPU: test");
  CHECK(column(runs[1], "accelerator_model") == "NVIDIA H200");
  // The accelerator selector reads the column: the run's own model, not only its system's.
  store::run_filter f;
  f.accelerators = {"h200"};
  auto found = db.query(f);
  REQUIRE(found.size() == 1);
  CHECK(found[0].uuid == runs[1].uuid);
}

TEST_CASE("a version-4 database migrates to the summary columns with every run's values",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  t->build_version(4); // the schema as the release before the summary columns wrote it
  t->exec(
      R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status, valid,
             started_at, finished_at, environment, extra) VALUES
         ('00000000-0000-4000-8000-000000000041', 'gemm', 'cpu', 'gemm/cpu/M=8', '{"M":8}', 'old-box',
          'kernel-v1', 'ok', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z',
          '{"accelerator":{"model":"NVIDIA B200"}}', '{"job_id":"j-1","job_round":1}'),
         ('00000000-0000-4000-8000-000000000042', 'gemm', 'cpu', 'gemm/cpu/M=8', '{"M":8}', 'old-box',
          'kernel-v1', 'ok', 1, '2026-01-02T00:00:00Z', '2026-01-02T00:00:01Z', 'not json', '{}'),
         ('00000000-0000-4000-8000-000000000043', 'gemm', 'cpu', 'gemm/cpu/M=8', '{"M":8}', 'old-box',
          'kernel-v1', 'failed', 1, '2026-01-03T00:00:00Z', '2026-01-03T00:00:01Z', '{}', '{}'))");
  t->exec("INSERT INTO samples (run_id, idx, value) VALUES (1, 0, 0.5), (1, 1, 0.25), (1, 2, 2.0), "
          "(1, 3, 0.75), (2, 0, 3.0), (2, 1, -1.0)");
  auto db = store::store::open(t->location());
  CHECK(db.schema_version() == store::k_schema_version);
  auto full = db.query({});
  auto hist = db.history_rows({});
  REQUIRE(full.size() == 3);
  REQUIRE(hist.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    std::vector<double> v;
    for (const auto& s : full[i].samples)
      v.push_back(s.value);
    REQUIRE(hist[i].median.has_value() == !v.empty());
    if (!v.empty())
      CHECK(*hist[i].median == stats::median(v)); // bit for bit
    CHECK(t->value(fmt::format("SELECT sample_count FROM runs WHERE id = {}", full[i].id)) ==
          std::to_string(v.size()));
  }
  CHECK(hist[0].job_id == "j-1");
  CHECK(hist[1].job_id.empty());
  CHECK(t->value("SELECT log_median FROM runs WHERE id = 2").empty()); // a value <= 0
  CHECK(std::stod(t->value("SELECT log_median FROM runs WHERE id = 1")) ==
        Approx((std::log(0.5) + std::log(0.75)) / 2).epsilon(1e-14));
  CHECK(t->value("SELECT accelerator_model FROM runs WHERE id = 1") == "NVIDIA B200");
  CHECK(t->value("SELECT accelerator_model FROM runs WHERE id = 2").empty()); // malformed
  store::run_filter b200;
  b200.accelerators = {"B200"};
  CHECK(db.query(b200).size() == 1);
  // Runs stored after the migration get the same columns from the insert.
  run fresh = accelbench::testing::make_run("old-box", 4);
  REQUIRE(db.insert_run(fresh));
  CHECK(t->value(fmt::format("SELECT sample_count FROM runs WHERE id = {}", fresh.id)) == "4");
}

TEST_CASE("a version-5 database's fingerprints become version 2 and compare with new runs",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  t->build_version(5); // the schema as the release before fingerprint version 2 wrote it
  const run now = accelbench::testing::make_run("old-box", 2);
  const std::string env = dump_json(now.environment);
  const std::string v1 = legacy_environment_fingerprint(now.environment);
  // Run 1 as that release stored it (version 1 of its environment's fingerprint); run 2 with a
  // fingerprint that is not its environment's (kept as stored); run 3 without one.
  for (const auto& [n, fingerprint] :
       std::vector<std::pair<int, std::string>>{{1, v1}, {2, "0123456789abcdef"}, {3, ""}})
    t->exec(fmt::format(
        R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status,
             valid, started_at, finished_at, environment, fingerprint) VALUES
           ('00000000-0000-4000-8000-00000000005{}', 'gemm', 'cpu', 'gemm/cpu/M=8', '{{"M":8}}',
            'old-box', 'kernel-v1', 'ok', 1, '2026-01-0{}T00:00:00Z', '2026-01-0{}T00:00:01Z',
            '{}', '{}'))",
        n, n, n, env, fingerprint));
  auto db = store::store::open(t->location());
  CHECK(db.schema_version() == store::k_schema_version);
  auto old = db.query({});
  REQUIRE(old.size() == 3);
  run fresh = now;
  REQUIRE(db.insert_run(fresh));
  CHECK(fresh.fingerprint == environment_fingerprint(now.environment));
  CHECK(fresh.fingerprint != v1);
  CHECK(old[0].fingerprint == fresh.fingerprint); // the old run of this machine still compares
  CHECK(old[1].fingerprint == "0123456789abcdef");
  CHECK(old[2].fingerprint.empty());
  // A run from a document of the older release, imported now, is stored as the migration stores.
  run imported = now;
  imported.uuid = new_uuid();
  imported.fingerprint = v1;
  REQUIRE(db.insert_run(imported));
  CHECK(db.get_run(imported.id)->fingerprint == fresh.fingerprint);
}

TEST_CASE("delete_runs removes runs with their rows and the systems no run names any more",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run a1 = make_run("boxA", 4), a2 = make_run("boxA", 5), b = make_run("boxB", 6);
  a2.tags = {"keep"};
  for (run* r : {&a1, &a2, &b})
    REQUIRE(db.insert_run(*r));
  db.upsert_system({"boxA", "CPU: test", 1, 1, "measured", json::object()});
  db.upsert_system({"boxB", "CPU: test", 1, 1, "measured", json::object()});
  db.upsert_system({"lonely", "CPU: test", 1, 1, "published", json::object()});
  const auto before = db.counts();

  // boxB loses its only run, so the system goes; boxA keeps a run; ids not stored are ignored.
  store::table_counts n = db.delete_runs({b.id, a1.id, 999999});
  CHECK(n.runs == 2);
  CHECK(n.samples == 4 + 6);
  CHECK(n.metrics == 2);
  CHECK(n.tags == 4);
  CHECK(n.systems == 1);
  const auto after = db.counts();
  CHECK(after.runs == before.runs - 2);
  CHECK(after.samples == before.samples - 10);
  CHECK(after.metrics == before.metrics - 2);
  CHECK(after.tags == before.tags - 4);
  CHECK(after.systems == before.systems - 1);
  CHECK_FALSE(db.get_run(a1.id));
  CHECK_FALSE(db.get_system("boxB"));
  CHECK(db.get_system("lonely")); // no run of it was deleted: not this command's to remove
  auto kept = db.get_run(a2.id);
  REQUIRE(kept);
  CHECK(kept->samples.size() == 5);
  CHECK(db.tags() == std::vector<std::string>{"keep"});

  CHECK(db.delete_runs({}).total() == 0);
  CHECK(db.delete_runs({a1.id}).total() == 0); // already gone
}

TEST_CASE("delete_runs stopped on request rolls back: nothing deleted, cancelled thrown",
          "[store]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  std::vector<int64_t> ids;
  auto fill = [&] {
    ids.clear();
    for (int i = 0; i < 1200; ++i) { // more than two PostgreSQL batches
      run r = make_run(i % 2 ? "boxA" : "boxB", 2);
      REQUIRE(db.insert_run(r));
      ids.push_back(r.id);
    }
  };
  // How often a whole deletion asks whether to stop; then the runs are stored again.
  fill();
  int questions = 0;
  db.delete_runs(ids, [&] {
    ++questions;
    return false;
  });
  REQUIRE(db.count_runs() == 0);
  REQUIRE(questions >= 2);
  fill();
  const auto before = db.counts();
  // Stopped at the first question, part way (some runs already deleted in the transaction), and
  // at the last question, right before the commit.
  for (int allowed : {0, 1, questions - 1}) {
    CAPTURE(allowed, questions);
    int asked = 0;
    CHECK_THROWS_AS(db.delete_runs(ids, [&] { return ++asked > allowed; }), store::cancelled);
    CHECK(asked == allowed + 1);
    const auto after = db.counts();
    CHECK(after.runs == before.runs);
    CHECK(after.samples == before.samples);
    CHECK(after.metrics == before.metrics);
    CHECK(after.tags == before.tags);
    CHECK(after.systems == before.systems);
  }
  CHECK(store::cancelled("x").exit_code() == 130);
}

TEST_CASE("the store refuses a run over a limit whole, naming it, and stores one at the limits",
          "[store][limits]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run over = make_run("boxA", 3);
  over.samples.resize(limits::k_max_samples + 1);
  CHECK_THROWS_WITH(db.insert_run(over), Catch::Contains("run " + over.uuid +
                                                         " is not stored: 100001 samples, more "
                                                         "than the 100000 a run may hold"));
  CHECK(db.counts().total() == 0);
  // A batch with one run over a limit stores none of it.
  run tagged = make_run("boxA", 3);
  tagged.tags.emplace_back(limits::k_max_tag_bytes + 1, 't');
  std::vector<run> batch = {make_run("boxB", 2), tagged};
  CHECK_THROWS_WITH(db.insert_runs(batch), Catch::Contains("longer than the 256 a tag may be"));
  CHECK(db.counts().total() == 0);

  run at = make_run("boxA", 0);
  at.samples.reserve(limits::k_max_samples);
  for (size_t i = 0; i < limits::k_max_samples; ++i)
    at.samples.push_back({(int64_t)i, 1e-3 * (1 + (double)(i % 7)), 1, json::object()});
  at.metrics.clear();
  for (size_t i = 0; i < limits::k_max_metrics; ++i)
    at.add_metric("m" + std::to_string(i), (double)i, "", direction::higher_is_better);
  at.tags.clear();
  for (size_t i = 0; i < limits::k_max_tags; ++i)
    at.tags.push_back("t" + std::to_string(i));
  REQUIRE(db.insert_run(at));
  const auto back = db.get_run(at.id);
  REQUIRE(back);
  CHECK(back->samples.size() == limits::k_max_samples);
  CHECK(back->samples.back().index == (int64_t)limits::k_max_samples - 1);
  CHECK(back->metrics.size() == limits::k_max_metrics);
  CHECK(back->find_metric("m9999")->value == 9999);
  CHECK(back->tags.size() == limits::k_max_tags);
}

TEST_CASE("a metric name given twice keeps its last value and a tag given twice is stored once, "
          "for thousands of them",
          "[store][limits]") {
  ACCELBENCH_FRESH_DB(t);
  auto db = store::store::open(t->location());
  run r = make_run("boxA", 2);
  r.metrics.clear();
  r.tags.clear();
  for (int i = 0; i < 3000; ++i) {
    r.metrics.push_back({"m" + std::to_string(i), 1.0, "", direction::higher_is_better});
    r.tags.push_back("t" + std::to_string(i % 1500)); // each tag twice
  }
  for (int i = 0; i < 3000; i += 2) // every other name again, with the value that is to win
    r.metrics.push_back({"m" + std::to_string(i), 2.0 + i, "x", direction::lower_is_better});
  REQUIRE(db.insert_run(r));
  const auto back = db.get_run(r.id);
  REQUIRE(back);
  REQUIRE(back->metrics.size() == 3000);
  for (int i = 0; i < 3000; ++i) {
    const metric* m = back->find_metric("m" + std::to_string(i));
    REQUIRE(m);
    CHECK(m->value == (i % 2 == 0 ? 2.0 + i : 1.0));
  }
  CHECK(back->tags.size() == 1500);
  CHECK(db.counts().tags == 1500);
}
