#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/error.hpp"
#include "harness/store/store.hpp"

using namespace accelbench;
namespace fs = std::filesystem;

namespace {
struct temp_db {
  fs::path dir;
  fs::path path;
  temp_db() {
    dir = fs::temp_directory_path() / ("accelbench-store-" + std::to_string(getpid()) + "-" + new_uuid().substr(0, 8));
    fs::create_directories(dir);
    path = dir / "t.db";
  }
  ~temp_db() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

run make_run(const std::string& system, int nsamples, double base = 1.0) {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", "64"}, {"dtype", "fp32"}};
  r.system = system;
  r.ruleset = "kernel-v1";
  r.environment = {{"cpu", {{"model", "test cpu"}}}, {"accelerator", {{"model", "CPU: test"}, {"count", 1}}}};
  for (int i = 0; i < nsamples; ++i) r.samples.push_back({i, base + 0.001 * i, 4, json::object()});
  r.add_metric("tflops", 1.25, "TFLOP/s", direction::higher_is_better);
  r.tags = {"nightly", "t1"};
  r.started_at = now_iso8601();
  r.finished_at = now_iso8601();
  return r;
}
} // namespace

TEST_CASE("a run round-trips through the store with samples, metrics and tags", "[store]") {
  temp_db t;
  auto db = store::store::open(t.path);
  CHECK(db.schema_version() == store::k_schema_version);
  run r = make_run("boxA", 10);
  r.mark_invalid("correctness: off by one");
  r.extra["implementation"] = "test";
  REQUIRE(db.insert_run(r));
  REQUIRE(r.id > 0);
  auto back = db.get_run(r.id);
  REQUIRE(back);
  CHECK(back->uuid == r.uuid);
  CHECK(back->cfg.key() == r.cfg.key());
  CHECK(back->samples.size() == 10);
  CHECK(back->samples[3].value == Approx(1.003));
  CHECK(back->samples[3].iterations == 4);
  CHECK(back->find_metric("tflops")->value == 1.25);
  CHECK(back->tags == std::vector<std::string>{"nightly", "t1"});
  CHECK_FALSE(back->valid);
  CHECK(back->invalid_reasons[0] == "correctness: off by one");
  CHECK(back->extra["implementation"] == "test");
  CHECK_FALSE(back->fingerprint.empty());
  // The same uuid is not stored twice (imports are idempotent).
  run again = r;
  CHECK_FALSE(db.insert_run(again));
  CHECK(again.id == r.id);
  CHECK(db.count_runs() == 1);
}

TEST_CASE("queries filter by system, workload, tag, config and accelerator", "[store]") {
  temp_db t;
  auto db = store::store::open(t.path);
  run a = make_run("boxA", 3), b = make_run("boxB", 3);
  b.cfg.workload = "attention";
  b.tags = {"other"};
  db.insert_run(a);
  db.insert_run(b);
  store::run_filter f;
  f.systems = {"boxA"};
  CHECK(db.query(f).size() == 1);
  f = {};
  f.workloads = {"att*"};
  CHECK(db.query(f).size() == 1);
  f = {};
  f.tags = {"nightly"};
  CHECK(db.query(f).at(0).system == "boxA");
  f = {};
  f.config = {{"M", "64"}};
  CHECK(db.query(f).size() == 2);
  f.config = {{"M", "65"}};
  CHECK(db.query(f).empty());
  f = {};
  f.accelerators = {"test"};
  CHECK(db.query(f).size() == 2);
  CHECK(db.tags() == std::vector<std::string>{"nightly", "other", "t1"});
  CHECK(db.systems().size() == 2);
}

TEST_CASE("a failed insert leaves no half-written run", "[store]") {
  temp_db t;
  auto db = store::store::open(t.path);
  run r = make_run("boxA", 3);
  r.samples[2].index = 1;  // duplicate sample index: the samples insert fails mid-run
  CHECK_THROWS_AS(db.insert_run(r), storage_error);
  CHECK(db.count_runs() == 0);
  sqlite3* raw = db.raw();
  store::statement st(raw, "SELECT COUNT(*) FROM samples");
  st.step();
  CHECK(st.col_int(0) == 0);
}

TEST_CASE("an older database migrates forward without losing runs", "[store]") {
  temp_db t;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    store::migrate(raw, 1);  // a version-1 database, as the first release wrote it
    c.exec(R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status, valid,
              started_at, finished_at, environment)
              VALUES ('00000000-0000-4000-8000-000000000001', 'gemm', 'cpu', 'gemm/cpu/M=8', '{"M":8}', 'old-box',
              'kernel-v1', 'ok', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z',
              '{"accelerator":{"model":"CPU: old"}}'))");
    c.exec("INSERT INTO samples (run_id, idx, value) VALUES (1, 0, 0.5)");
    store::statement v(raw, "PRAGMA user_version");
    v.step();
    REQUIRE(v.col_int(0) == 1);
  }
  auto db = store::store::open(t.path);
  CHECK(db.schema_version() == store::k_schema_version);
  auto r = db.get_run(1);
  REQUIRE(r);
  CHECK(r->system == "old-box");
  CHECK(r->source == "measured");  // column added by migration 2 with its default
  CHECK(r->samples.size() == 1);
  auto sys = db.get_system("old-box");
  REQUIRE(sys);
  CHECK(sys->accelerator_model == "CPU: old");  // migration 2 backfilled systems
}

TEST_CASE("several processes writing one database all succeed", "[store]") {
  temp_db t;
  store::store::open(t.path);  // create
  const int procs = 4, per = 25;
  std::vector<pid_t> kids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        auto db = store::store::open(t.path);
        for (int i = 0; i < per; ++i) {
          run r = make_run("proc" + std::to_string(p), 50);
          db.insert_run(r);
        }
      } catch (...) {
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
  auto db = store::store::open(t.path);
  CHECK(db.count_runs() == procs * per);
}

TEST_CASE("corrupt and unwritable databases are refused with a clear message", "[store]") {
  temp_db t;
  std::ofstream(t.path) << "this is not a database, just text that is long enough to look like a header......";
  CHECK_THROWS_WITH(store::store::open(t.path), Catch::Contains("not a valid accelbench database") && Catch::Contains(t.path.string()));
  // A path below a regular file cannot be created, even by root.
  fs::path under_file = t.path / "x.db";
  CHECK_THROWS_AS(store::store::open(under_file), storage_error);
  CHECK_THROWS_WITH(store::store::open(t.dir / "missing.db", false), Catch::Contains("does not exist"));
}
