#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/core/error.hpp"
#include "harness/store/sqlite_store.hpp"
#include "tests/harness/store/store_fixture.hpp"
#include "tests/support/skip.hpp"

using namespace accelbench;
using accelbench::testing::make_run;
namespace fs = std::filesystem;

namespace {
struct temp_db {
  fs::path dir;
  fs::path path;
  temp_db() {
    dir = fs::temp_directory_path() /
          ("accelbench-store-" + std::to_string(getpid()) + "-" + new_uuid().substr(0, 8));
    fs::create_directories(dir);
    path = dir / "t.db";
  }
  ~temp_db() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The names in a folder, to check that nothing was created or left behind (-wal, -shm, journals).
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs SQL on a database directly, as another program (or the sqlite3 shell) would.
void raw_exec(const fs::path& p, const std::string& sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(p.c_str(), &raw) == SQLITE_OK);
  store::connection c(raw);
  c.exec(sql);
}

// An accelbench database with one run, closed, in rollback-journal mode so that any change a
// failed open makes (such as switching it to WAL) shows in its bytes.
void make_db(const fs::path& p, int runs = 1) {
  {
    auto db = store::store::open(p);
    for (int i = 0; i < runs; ++i) {
      run r = make_run("boxA", 3);
      db.insert_run(r);
    }
  }
  raw_exec(p, "PRAGMA journal_mode = DELETE");
}

// Makes a file or folder unwritable even for root, with the immutable attribute (chattr +i); for
// other users, permissions do. Undone on destruction. `ok` is false when neither works here (root
// on a file system without the attribute, or without CAP_LINUX_IMMUTABLE).
struct write_protect {
  fs::path path;
  bool immutable = false, chmodded = false, ok = false;
  fs::perms before{};
  explicit write_protect(fs::path p) : path(std::move(p)) {
    set_immutable(true);
    if (!immutable && geteuid() != 0) {
      before = fs::status(path).permissions();
      fs::permissions(path,
                      fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove);
      chmodded = true;
    }
    ok = (immutable || chmodded) && !writable();
  }
  ~write_protect() {
    if (immutable)
      set_immutable(false);
    if (chmodded)
      fs::permissions(path, before);
  }
  void set_immutable(bool on) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    if (fd < 0)
      return;
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
      flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
      if (ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0)
        immutable = on;
    }
    ::close(fd);
  }
  // Whether this process can still change it (creating a file in a folder, opening a file for
  // writing).
  bool writable() const {
    if (fs::is_directory(path)) {
      fs::path probe = path / ".probe";
      int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT, 0600);
      if (fd < 0)
        return false;
      ::close(fd);
      ::unlink(probe.c_str());
      return true;
    }
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0)
      return false;
    ::close(fd);
    return true;
  }
};
} // namespace

namespace accelbench::testing {
namespace {
// A database file in a temporary folder of its own; the snapshot is the file's bytes and the
// folder's listing (a refused open may not switch it to WAL or leave -wal and -shm files).
class sqlite_db : public db_under_test {
public:
  const char* kind() const override { return "sqlite"; }
  std::string location() const override { return m_t.path.string(); }
  std::string shown() const override { return m_t.path.string(); }
  void create_empty() override { raw_exec(m_t.path, "PRAGMA user_version = 0"); }
  void exec(const std::string& sql) override { raw_exec(m_t.path, sql); }
  std::string value(const std::string& sql) override {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(m_t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    store::statement st(raw, sql);
    return st.step() ? st.col_text(0) : "";
  }
  void build_version(int v) override {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(m_t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    store::migrate(raw, v);
  }
  void set_version(int64_t v) override {
    raw_exec(m_t.path, "PRAGMA journal_mode = DELETE; PRAGMA user_version = " + std::to_string(v));
  }
  std::string snapshot() override {
    std::string out = fs::exists(m_t.path) ? slurp(m_t.path) : "<none>";
    for (const auto& name : listing(m_t.dir))
      out += "\n" + name;
    return out;
  }

private:
  temp_db m_t;
};
} // namespace

std::unique_ptr<db_under_test> fresh_db(std::string&) { return std::make_unique<sqlite_db>(); }
} // namespace accelbench::testing

// The schema as SQLite keeps it: each table's and index's CREATE text as written when it was
// created, and as ALTER TABLE extended it. The databases earlier accelbench versions wrote hold
// this text; the schema's one definition (harness/store/schema_ddl.cpp) writes it byte for byte,
// so that a new database and one migrated from any version cannot be told apart.
TEST_CASE(
    "a new or migrated SQLite database holds the schema text earlier versions wrote, byte for "
    "byte",
    "[store]") {
  const std::string expected = R"schema(table api_tokens: CREATE TABLE api_tokens (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  role       TEXT NOT NULL CHECK (role IN ('read', 'write', 'admin')),
  salt       TEXT NOT NULL,
  hash       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
)
table metrics: CREATE TABLE metrics (
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name      TEXT NOT NULL,
  value     REAL NOT NULL,
  unit      TEXT NOT NULL DEFAULT '',
  direction TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID
table runs: CREATE TABLE runs (
  id                 INTEGER PRIMARY KEY,
  uuid               TEXT NOT NULL UNIQUE,
  workload           TEXT NOT NULL,
  backend            TEXT NOT NULL,
  config_key         TEXT NOT NULL,
  config             TEXT NOT NULL,
  system             TEXT NOT NULL,
  ruleset            TEXT NOT NULL,
  user_settings      TEXT NOT NULL DEFAULT '{}',
  effective_settings TEXT NOT NULL DEFAULT '{}',
  environment        TEXT NOT NULL DEFAULT '{}',
  fingerprint        TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
  status_reason      TEXT NOT NULL DEFAULT '',
  valid              INTEGER NOT NULL CHECK (valid IN (0, 1)),
  invalid_reasons    TEXT NOT NULL DEFAULT '[]',
  started_at         TEXT NOT NULL,
  finished_at        TEXT NOT NULL,
  harness_revision   TEXT NOT NULL DEFAULT '',
  sample_unit        TEXT NOT NULL DEFAULT 's',
  sample_direction   TEXT NOT NULL DEFAULT 'lower',
  extra              TEXT NOT NULL DEFAULT '{}',
  mllog              TEXT
, source TEXT NOT NULL DEFAULT 'measured', sample_count INTEGER NOT NULL DEFAULT 0, median REAL, log_median REAL, log_median_se REAL, accelerator_model TEXT NOT NULL DEFAULT '', job_id TEXT NOT NULL DEFAULT '')
index runs_by_accelerator: CREATE INDEX runs_by_accelerator ON runs (accelerator_model)
index runs_by_system: CREATE INDEX runs_by_system ON runs (system, started_at)
index runs_by_time: CREATE INDEX runs_by_time ON runs (started_at)
index runs_by_workload: CREATE INDEX runs_by_workload ON runs (workload, config_key)
index runs_by_workload_time: CREATE INDEX runs_by_workload_time ON runs (workload, started_at, id)
table samples: CREATE TABLE samples (
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx        INTEGER NOT NULL,
  value      REAL NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 1,
  extra      TEXT,
  PRIMARY KEY (run_id, idx)
) WITHOUT ROWID
table systems: CREATE TABLE systems (
  name                  TEXT PRIMARY KEY,
  accelerator_model     TEXT NOT NULL DEFAULT '',
  accelerators_per_node INTEGER NOT NULL DEFAULT 1,
  nodes                 INTEGER NOT NULL DEFAULT 1,
  source                TEXT NOT NULL DEFAULT 'measured',
  description           TEXT NOT NULL DEFAULT '{}'
)
table tags: CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag    TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID
index tags_by_tag: CREATE INDEX tags_by_tag ON tags (tag))schema";
  for (int from : {0, 1, 3, 4}) {
    CAPTURE(from);
    temp_db t;
    if (from > 0) {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
      store::connection c(raw);
      store::migrate(raw, from);
    }
    store::store::open(t.path);
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    store::statement st(raw, "SELECT group_concat(type || ' ' || name || ': ' || sql, char(10)) "
                             "FROM (SELECT * FROM sqlite_master WHERE sql IS NOT NULL ORDER BY "
                             "name)");
    REQUIRE(st.step());
    CHECK(st.col_text(0) == expected);
  }
}

TEST_CASE("corrupt and unwritable databases are refused with a clear message", "[store]") {
  temp_db t;
  std::ofstream(t.path)
      << "this is not a database, just text that is long enough to look like a header......";
  CHECK_THROWS_WITH(store::store::open(t.path),
                    Catch::Contains("not a valid accelbench database") &&
                        Catch::Contains(t.path.string()));
  // A path below a regular file cannot be created, even by root.
  fs::path under_file = t.path / "x.db";
  CHECK_THROWS_AS(store::store::open(under_file), storage_error);
  CHECK_THROWS_WITH(store::store::open(t.dir / "missing.db", store::access::read_only),
                    Catch::Contains("does not exist"));
}

TEST_CASE("schema versions this accelbench does not know are refused without touching the file",
          "[store]") {
  // -1 used to index the migrations out of bounds and run arbitrary memory as SQL.
  for (int64_t v :
       {int64_t{-1}, int64_t{INT_MIN}, int64_t{store::k_schema_version + 1}, int64_t{99}}) {
    CAPTURE(v);
    temp_db t;
    make_db(t.path);
    raw_exec(t.path, "PRAGMA user_version = " + std::to_string(v));
    std::string bytes = slurp(t.path);
    auto files = listing(t.dir);
    for (auto how : {store::access::read_write, store::access::read_only}) {
      CHECK_THROWS_AS(store::store::open(t.path, how), storage_error);
      CHECK_THROWS_WITH(store::store::open(t.path, how),
                        Catch::Contains("unsupported schema version " + std::to_string(v)) &&
                            Catch::Contains(t.path.string()));
    }
    if (v > store::k_schema_version)
      CHECK_THROWS_WITH(store::store::open(t.path), Catch::Contains("newer accelbench"));
    CHECK(slurp(t.path) == bytes);
    CHECK(listing(t.dir) == files);
    // The migration entry point refuses it too, instead of indexing its steps with it.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    CHECK_THROWS_WITH(store::migrate(raw, store::k_schema_version),
                      Catch::Contains("unsupported schema version"));
  }
}

TEST_CASE("an SQLite database of another program is refused by its tables or its application_id",
          "[store]") {
  temp_db t;
  raw_exec(t.path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes "
                   "(body) VALUES ('mine')");
  std::string bytes = slurp(t.path);
  auto files = listing(t.dir);
  for (auto how : {store::access::read_only, store::access::read_write})
    CHECK_THROWS_WITH(store::store::open(t.path, how),
                      Catch::Contains("not an accelbench database") && Catch::Contains("notes") &&
                          Catch::Contains(t.path.string()));
  CHECK(slurp(t.path) == bytes); // no accelbench tables added, not switched to WAL
  CHECK(listing(t.dir) == files);
  // Another program's application_id, even with tables that look like ours.
  temp_db u;
  make_db(u.path);
  raw_exec(u.path, "PRAGMA application_id = 1234");
  bytes = slurp(u.path);
  CHECK_THROWS_WITH(store::store::open(u.path),
                    Catch::Contains("not an accelbench database") && Catch::Contains("0x4d2"));
  CHECK(slurp(u.path) == bytes);
}

TEST_CASE("read-only opens never change the file and refuse writes", "[store]") {
  temp_db t;
  make_db(t.path, 2);
  raw_exec(t.path, "PRAGMA journal_mode = WAL"); // as accelbench leaves it
  std::string bytes = slurp(t.path);
  auto files = listing(t.dir);
  {
    auto db = store::store::open(t.path, store::access::read_only);
    store::run_filter f;
    auto runs = db.query(f);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].samples.size() == 3);
    CHECK(runs[0].tags == std::vector<std::string>{"nightly", "t1"});
    CHECK(runs[0].find_metric("tflops"));
    run r = make_run("boxB", 1);
    CHECK_THROWS_AS(db.insert_run(r), storage_error);
  }
  CHECK(slurp(t.path) == bytes);
  CHECK(listing(t.dir) == files); // no -wal or -shm left behind
  // A 0-byte file is not turned into a database by a read.
  fs::path empty = t.dir / "empty.json";
  std::ofstream(empty).close();
  CHECK_THROWS_WITH(store::store::open(empty, store::access::read_only),
                    Catch::Contains("empty file") && Catch::Contains("not an accelbench database"));
  CHECK(fs::file_size(empty) == 0);
  // An empty SQLite database (no tables) is not ours to read either.
  fs::path blank = t.dir / "blank.db";
  raw_exec(blank, "PRAGMA user_version = 0");
  CHECK_THROWS_WITH(store::store::open(blank, store::access::read_only),
                    Catch::Contains("not an accelbench database"));
}

TEST_CASE("an older schema is read by read-only commands without upgrading the file", "[store]") {
  temp_db t;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
    store::connection c(raw);
    store::migrate(raw, 1);
    c.exec(
        R"(INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, status, valid,
              started_at, finished_at) VALUES ('00000000-0000-4000-8000-000000000002', 'gemm', 'cpu', 'gemm/cpu/M=8',
              '{"M":8}', 'old-box', 'kernel-v1', 'ok', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z'))");
  }
  std::string bytes = slurp(t.path);
  {
    auto db = store::store::open(t.path, store::access::read_only);
    CHECK(db.schema_version() == store::k_schema_version); // of the private copy
    CHECK(db.count_runs() == 1);
    CHECK(db.get_system("old-box"));
  }
  CHECK(slurp(t.path) == bytes);
  // A write command upgrades it, and marks it as ours.
  CHECK(store::store::open(t.path).schema_version() == store::k_schema_version);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
  store::connection c(raw);
  store::statement id(raw, "PRAGMA application_id");
  id.step();
  CHECK(id.col_int(0) == store::k_application_id);
}

TEST_CASE("files that are not databases are refused by name and left unchanged", "[store]") {
  temp_db t;
  for (auto how : {store::access::read_only, store::access::read_write}) {
    CHECK_THROWS_WITH(store::store::open(t.dir, how),
                      Catch::Contains("is a directory") && Catch::Contains(t.dir.string()));
    CHECK_THROWS_WITH(store::store::open("/dev/null", how),
                      Catch::Contains("not a regular file") && Catch::Contains("/dev/null"));
  }
  auto check_refused = [&](const fs::path& p, const std::string& word) {
    std::string bytes = slurp(p);
    auto files = listing(t.dir);
    for (auto how : {store::access::read_only, store::access::read_write})
      CHECK_THROWS_WITH(store::store::open(p, how),
                        Catch::Contains(word) && Catch::Contains(p.string()));
    CHECK(slurp(p) == bytes);
    CHECK(listing(t.dir) == files);
  };
  fs::path json_file = t.dir / "results.json";
  std::ofstream(json_file) << R"({"schema_version": 1, "runs": []})"
                           << "\n";
  check_refused(json_file, "not a valid accelbench database");
  fs::path noise = t.dir / "noise.db";
  {
    std::ofstream out(noise, std::ios::binary);
    uint32_t x = 12345;
    for (int i = 0; i < 8192; ++i) {
      x = x * 1664525u + 1013904223u;
      out.put((char)(x >> 24));
    }
  }
  check_refused(noise, "not a valid accelbench database");
  // A real database cut short, as a failed copy leaves it.
  fs::path cut = t.dir / "cut.db";
  make_db(cut, 40);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  check_refused(cut, "not a valid accelbench database");
  // A missing file: read-only commands say so; write commands create it and its folder.
  CHECK_THROWS_WITH(store::store::open(t.dir / "no" / "such.db", store::access::read_only),
                    Catch::Contains("does not exist") && Catch::Contains("such.db"));
  CHECK_FALSE(fs::exists(t.dir / "no"));
  CHECK(store::store::open(t.dir / "new" / "made.db").count_runs() == 0);
}

TEST_CASE("a write-protected database is refused when it is opened for writing", "[store]") {
  temp_db t;
  make_db(t.path);
  std::string bytes = slurp(t.path);
  write_protect lock(t.path);
  if (!lock.ok)
    ACCELBENCH_SKIP("cannot write-protect a file here (root without the immutable attribute on "
                    "this file system)");
  CHECK_THROWS_WITH(store::store::open(t.path),
                    Catch::Contains("database is read-only") && Catch::Contains(t.path.string()));
  // Still readable.
  CHECK(store::store::open(t.path, store::access::read_only).count_runs() == 1);
  CHECK(slurp(t.path) == bytes);
}

TEST_CASE("a database in a read-only folder can be read but not written", "[store]") {
  temp_db t;
  make_db(t.path, 2);
  raw_exec(t.path,
           "PRAGMA journal_mode = WAL"); // WAL needs its -shm file, which cannot be created there
  std::string bytes = slurp(t.path);
  auto files = listing(t.dir);
  write_protect lock(t.dir);
  if (!lock.ok)
    ACCELBENCH_SKIP("cannot write-protect a folder here (root without the immutable attribute on "
                    "this file system)");
  {
    auto db = store::store::open(t.path, store::access::read_only);
    CHECK(db.count_runs() == 2);
    store::run_filter f;
    CHECK(db.query(f).at(1).samples.size() == 3);
  }
  CHECK_THROWS_WITH(store::store::open(t.path),
                    Catch::Contains("database is read-only") && Catch::Contains(t.path.string()));
  CHECK(slurp(t.path) == bytes);
  CHECK(listing(t.dir) == files);
}

TEST_CASE("a database in a read-only folder whose write-ahead log holds changes is refused, not "
          "read without them",
          "[store]") {
  temp_db t;
  fs::path copy = t.dir / "copy";
  fs::create_directories(copy);
  {
    auto db = store::store::open(t.path);
    run r = make_run("boxA", 3);
    db.insert_run(r);
    // While the writer is open, the run is in the -wal file only: copy the pair as a backup would.
    REQUIRE(fs::file_size(t.path.string() + "-wal") > 0);
    fs::copy_file(t.path, copy / "t.db");
    fs::copy_file(t.path.string() + "-wal", copy / "t.db-wal");
  }
  write_protect lock(copy);
  if (!lock.ok)
    ACCELBENCH_SKIP("cannot write-protect a folder here (root without the immutable attribute on "
                    "this file system)");
  CHECK_THROWS_WITH(store::store::open(copy / "t.db", store::access::read_only),
                    Catch::Contains("write-ahead log") && Catch::Contains("wal_checkpoint"));
}
