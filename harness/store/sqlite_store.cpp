#include "harness/store/sqlite_store.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/rows.hpp"

namespace accelbench::store {

namespace fs = std::filesystem;
using namespace detail;

// ---------------------------------------------------------------------------------------------
// Failures. A problem with the file (not a database, corrupt, read-only, disk full) names the file
// and is bad input (exit 2); the result code travels with the message so that open() can tell
// "cannot create the write-ahead log" from "not a database" without reading messages.
namespace {
class sqlite_failure : public storage_error {
public:
  sqlite_failure(int code, const std::string& msg) : storage_error(msg), m_code(code) {}
  int primary_code() const { return m_code & 0xff; }

private:
  int m_code;
};

std::string shown(const std::string& path) { return printable(path); }

std::string file_of(sqlite3* db) {
  const char* f = db ? sqlite3_db_filename(db, "main") : nullptr;
  return f && *f ? f : ":memory:";
}

// SQLite's message, with the operating system's reason when there is one.
std::string reason(sqlite3* db, int rc) {
  std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int sys = db ? sqlite3_system_errno(db) : 0;
  if (sys != 0)
    why += fmt::format(" ({})", std::strerror(sys));
  return why;
}

// The user's view of a failure on the file `path`, or "" when the failure is not about the file.
std::string file_problem(sqlite3* db, int rc, const std::string& path) {
  switch (rc & 0xff) {
  case SQLITE_NOTADB:
    return fmt::format(
        "database '{}' is not a valid accelbench database: the file is not an SQLite database",
        shown(path));
  case SQLITE_CORRUPT:
    return fmt::format("database '{}' is not a valid accelbench database: the file is corrupt ({})",
                       shown(path), reason(db, rc));
  case SQLITE_READONLY:
    return fmt::format("database is read-only: {} ({})", shown(path), reason(db, rc));
  case SQLITE_CANTOPEN:
  case SQLITE_PERM:
    return fmt::format("cannot open database '{}': {}", shown(path), reason(db, rc));
  case SQLITE_FULL:
    return fmt::format("database '{}': the disk is full", shown(path));
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return fmt::format("database '{}' stayed locked by another process for 30 s: {}", shown(path),
                       reason(db, rc));
  case SQLITE_IOERR:
    return fmt::format("database '{}': I/O error: {}", shown(path), reason(db, rc));
  default:
    return {};
  }
}

[[noreturn]] void fail(sqlite3* db, int rc, const std::string& sql) {
  std::string msg = file_problem(db, rc, file_of(db));
  if (msg.empty())
    msg = fmt::format("database '{}': SQLite error: {} (in: {})", shown(file_of(db)),
                      reason(db, rc), sql.substr(0, 200));
  throw sqlite_failure(rc, msg);
}
} // namespace

// ---------------------------------------------------------------------------------------------
connection& connection::operator=(connection&& o) noexcept {
  if (this != &o) {
    if (m_db)
      sqlite3_close_v2(m_db);
    m_db = o.m_db;
    o.m_db = nullptr;
  }
  return *this;
}

connection::~connection() {
  if (m_db)
    sqlite3_close_v2(m_db);
}

void connection::exec(const std::string& sql) {
  int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK)
    fail(m_db, rc, sql);
}

statement::statement(sqlite3* db, const std::string& sql) : m_db(db), m_sql(sql) {
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr);
  if (rc != SQLITE_OK)
    fail(db, rc, sql);
}

statement::~statement() {
  if (m_stmt)
    sqlite3_finalize(m_stmt);
}

statement& statement::bind(int i, int64_t v) {
  sqlite3_bind_int64(m_stmt, i, v);
  return *this;
}
statement& statement::bind(int i, double v) {
  sqlite3_bind_double(m_stmt, i, v);
  return *this;
}
statement& statement::bind(int i, const std::string& v) {
  sqlite3_bind_text(m_stmt, i, v.data(), (int)v.size(), SQLITE_TRANSIENT);
  return *this;
}
statement& statement::bind_null(int i) {
  sqlite3_bind_null(m_stmt, i);
  return *this;
}

bool statement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  fail(m_db, rc, m_sql);
}

void statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

int64_t statement::col_int(int i) const { return sqlite3_column_int64(m_stmt, i); }
double statement::col_double(int i) const { return sqlite3_column_double(m_stmt, i); }
std::string statement::col_text(int i) const {
  auto p = sqlite3_column_text(m_stmt, i);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(m_stmt, i)) : "";
}
bool statement::col_is_null(int i) const { return sqlite3_column_type(m_stmt, i) == SQLITE_NULL; }

// ---------------------------------------------------------------------------------------------
// Migrations. Never edit a released step: add a new one.
namespace {
const char* k_migrations[] = {
    // 1: runs with raw samples, metrics and tags.
    R"sql(
CREATE TABLE runs (
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
);
CREATE TABLE samples (
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx        INTEGER NOT NULL,
  value      REAL NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 1,
  extra      TEXT,
  PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE metrics (
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name      TEXT NOT NULL,
  value     REAL NOT NULL,
  unit      TEXT NOT NULL DEFAULT '',
  direction TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag    TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
)sql",
    // 2: systems (accelerator model and counts, published descriptions) and the source of a run
    // (measured here, or published results brought in by import).
    R"sql(
CREATE TABLE systems (
  name                  TEXT PRIMARY KEY,
  accelerator_model     TEXT NOT NULL DEFAULT '',
  accelerators_per_node INTEGER NOT NULL DEFAULT 1,
  nodes                 INTEGER NOT NULL DEFAULT 1,
  source                TEXT NOT NULL DEFAULT 'measured',
  description           TEXT NOT NULL DEFAULT '{}'
);
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'measured';
INSERT OR IGNORE INTO systems (name, accelerator_model)
  SELECT system, COALESCE(json_extract(environment, '$.accelerator.model'), '') FROM runs GROUP BY system;
)sql",
    // 3: indexes for the queries reports, comparisons and history make.
    R"sql(
CREATE INDEX runs_by_workload ON runs (workload, config_key);
CREATE INDEX runs_by_system ON runs (system, started_at);
CREATE INDEX runs_by_time ON runs (started_at);
CREATE INDEX tags_by_tag ON tags (tag);
)sql",
    // 4: bearer tokens of `accelbench serve`: only a salted SHA-256 of each secret is kept.
    R"sql(
CREATE TABLE api_tokens (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  role       TEXT NOT NULL CHECK (role IN ('read', 'write', 'admin')),
  salt       TEXT NOT NULL,
  hash       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
)sql",
    // 5: what history and compare read, written once per run (and computed here for the runs
    // already stored, by backfill_summaries): sample count, median, log median and its standard
    // error, the accelerator model and the job, with indexes for history's selectors.
    R"sql(
ALTER TABLE runs ADD COLUMN sample_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN median REAL;
ALTER TABLE runs ADD COLUMN log_median REAL;
ALTER TABLE runs ADD COLUMN log_median_se REAL;
ALTER TABLE runs ADD COLUMN accelerator_model TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN job_id TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_workload_time ON runs (workload, started_at, id);
CREATE INDEX runs_by_accelerator ON runs (accelerator_model);
)sql",
};
static_assert(sizeof(k_migrations) / sizeof(k_migrations[0]) == k_schema_version);

// The tables and indexes each migration creates: how a database is recognised as ours (databases
// written before application_id was set have only these), and how a half-created or foreign
// schema is told from one that a migration can bring forward.
const std::vector<std::vector<std::string>> k_objects = {
    {"metrics", "runs", "samples", "tags"},
    {"systems"},
    {"runs_by_system", "runs_by_time", "runs_by_workload", "tags_by_tag"},
    {"api_tokens"},
    {"runs_by_accelerator", "runs_by_workload_time"},
};

int64_t pragma_int(sqlite3* db, const std::string& name) {
  statement st(db, "PRAGMA " + name);
  st.step();
  return st.col_int(0);
}

void exec_in_migration(sqlite3* db, const std::string& sql) {
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK)
    return;
  std::string msg = file_problem(db, rc, file_of(db));
  if (msg.empty())
    msg = fmt::format("database '{}': SQLite error during migration: {}", shown(file_of(db)),
                      reason(db, rc));
  throw sqlite_failure(rc, msg);
}

void rollback(sqlite3* db) { sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr); }

// Migration 5's data: the summary columns of the runs already stored, computed by the code that
// writes them for a new run (rows.cpp), so that an old run and a new one read alike.
void backfill_summaries(sqlite3* db) {
  std::map<int64_t, std::vector<double>> values;
  {
    statement st(db, "SELECT run_id, value FROM samples ORDER BY run_id, idx");
    while (st.step())
      values[st.col_int(0)].push_back(st.col_double(1));
  }
  std::vector<std::tuple<int64_t, std::string, std::string>> runs;
  {
    statement st(db, "SELECT id, environment, extra FROM runs");
    while (st.step())
      runs.emplace_back(st.col_int(0), st.col_text(1), st.col_text(2));
  }
  statement up(db, "UPDATE runs SET sample_count = ?2, median = ?3, log_median = ?4, "
                   "log_median_se = ?5, accelerator_model = ?6, job_id = ?7 WHERE id = ?1");
  auto real_or_null = [&](int i, const std::optional<double>& v) {
    if (v)
      up.bind(i, *v);
    else
      up.bind_null(i);
  };
  for (auto& [id, environment, extra] : runs) {
    auto found = values.find(id);
    const sample_summary sum =
        summarize_samples(found == values.end() ? std::vector<double>{} : std::move(found->second));
    up.bind(1, id).bind(2, sum.count);
    real_or_null(3, sum.median);
    real_or_null(4, sum.log_median);
    real_or_null(5, sum.log_median_se);
    up.bind(6, accelerator_of(parse_or(environment, json::object())));
    up.bind(7, job_of(parse_or(extra, json::object())));
    up.step();
    up.reset();
  }
}

// Steps from..to, inside the caller's transaction.
void apply_migrations(sqlite3* db, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) {
    exec_in_migration(db, k_migrations[i]);
    if (i + 1 == 5)
      backfill_summaries(db);
    exec_in_migration(db, fmt::format("PRAGMA user_version = {}", i + 1));
  }
}

// What the schema of an open database is, read without changing anything.
struct schema_state {
  int64_t version = 0;
  int64_t application_id = 0;
  std::vector<std::string> objects; // tables, indexes, views, triggers; not SQLite's own
  bool has(const std::string& name) const {
    return std::find(objects.begin(), objects.end(), name) != objects.end();
  }
  bool empty() const { return objects.empty() && version == 0; }
};

schema_state read_schema(sqlite3* db) {
  schema_state s;
  s.version = pragma_int(db, "user_version");
  s.application_id = pragma_int(db, "application_id");
  statement st(
      db,
      "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  while (st.step())
    s.objects.push_back(st.col_text(0));
  return s;
}

// The version and the objects are read in one read transaction: read by separate statements, a
// migration committed by another process in between showed tables at version 0 ("partial or
// foreign schema"), and a concurrent first run of a new database failed.
schema_state inspect(sqlite3* db) {
  if (!sqlite3_get_autocommit(db))
    return read_schema(db); // inside the caller's transaction
  exec_in_migration(db, "BEGIN");
  try {
    schema_state s = read_schema(db);
    exec_in_migration(db, "COMMIT");
    return s;
  } catch (...) {
    rollback(db);
    throw;
  }
}

std::string partial_or_foreign(const schema_state& s, const std::string& path,
                               const std::string& detail) {
  return fmt::format(
      "database '{}' has a partial or foreign schema ({}; schema version {}): not an accelbench "
      "database, left unchanged",
      shown(path), detail, s.version);
}

std::string object_list(const schema_state& s) {
  std::string out;
  for (size_t i = 0; i < s.objects.size() && i < 5; ++i)
    out += (i ? ", " : "") + shown(s.objects[i]);
  if (s.objects.size() > 5)
    out += fmt::format(" and {} more", s.objects.size() - 5);
  return out;
}

// Why the database cannot be used as an accelbench database, or "" when it can. An empty database
// (no tables, version 0) is usable: a write command creates the schema in it.
std::string schema_problem(const schema_state& s, const std::string& path) {
  if (s.application_id != 0 && s.application_id != k_application_id)
    return fmt::format(
        "database '{}' is not an accelbench database: its application_id {:#x} belongs to another "
        "program; left unchanged",
        shown(path), (uint32_t)s.application_id);
  if (s.empty())
    return {};
  bool ours = s.application_id == k_application_id || s.has("runs");
  if (!ours && !s.objects.empty())
    return partial_or_foreign(
        s, path, fmt::format("it holds {} and no accelbench runs table", object_list(s)));
  if (!known_version(s.version))
    return unsupported_version(s.version, shown(path));
  // Every object of the migrations up to its version, and none of the later ones (which a
  // migration would then fail to create).
  for (int64_t i = 0; i < k_schema_version; ++i)
    for (const auto& name : k_objects[i]) {
      bool wanted = i < s.version;
      if (wanted != s.has(name))
        return partial_or_foreign(
            s, path, fmt::format("'{}' {}", name, wanted ? "is missing" : "already exists"));
    }
  return {};
}

void refuse_unless_ours(const schema_state& s, const std::string& path) {
  if (auto why = schema_problem(s, path); !why.empty())
    throw storage_error(why);
}
} // namespace

void migrate(sqlite3* db, int target) {
  if (!known_version(target))
    throw storage_error(fmt::format("cannot migrate to schema version {}", target));
  // BEGIN IMMEDIATE: concurrent openers migrate one at a time; the loser sees the new version.
  exec_in_migration(db, "BEGIN IMMEDIATE");
  try {
    int64_t v = pragma_int(db, "user_version");
    if (!known_version(v))
      throw storage_error(unsupported_version(v, shown(file_of(db))));
    apply_migrations(db, v, target);
    exec_in_migration(db, "COMMIT");
  } catch (...) {
    rollback(db);
    throw;
  }
}

// ---------------------------------------------------------------------------------------------
// Opening. Nothing is written to a file until it is known to be an accelbench database (or an
// empty one a write command may fill); read-only commands never write at all.

namespace {
constexpr int k_busy_timeout_ms = 30000;

connection connect(const std::string& name, int flags, const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  connection c(raw);
  if (rc != SQLITE_OK) {
    std::string why = reason(raw, rc);
    throw sqlite_failure(
        rc, (flags & SQLITE_OPEN_CREATE)
                ? fmt::format("cannot create or open database '{}': {}", shown(path), why)
                : fmt::format("cannot open database '{}': {}", shown(path), why));
  }
  sqlite3_busy_timeout(raw, k_busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  return c;
}

// The file itself, before SQLite sees it: SQLite would treat a directory as unopenable, a device
// such as /dev/null as an empty database, and a 0-byte file as a new database.
void check_file(const fs::path& path, access how) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw storage_error(
        fmt::format("cannot access database '{}': {}", shown(path.string()), ec.message()));
  if (fs::is_directory(st))
    throw storage_error(
        fmt::format("database '{}' is a directory, not a database file", shown(path.string())));
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw storage_error(fmt::format(
        "database '{}' is not a regular file (a device, pipe or socket)", shown(path.string())));
  if (how == access::read_write)
    return;
  if (!fs::exists(st))
    throw storage_error(
        fmt::format("database '{}' does not exist (run a benchmark or import first, or pass --db)",
                    shown(path.string())));
  if (fs::file_size(path, ec) == 0 && !ec)
    throw storage_error(fmt::format("database '{}' is an empty file, not an accelbench database",
                                    shown(path.string())));
}

// A write command may name a database in a folder that does not exist yet (the default
// results/ folder of a fresh checkout, or --db new/folder/x.db): the folder is created.
void create_folder_of(const fs::path& path) {
  if (!path.has_parent_path())
    return;
  std::error_code ec;
  if (fs::exists(path.parent_path(), ec))
    return;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    throw storage_error(fmt::format("cannot create the folder of database '{}': {}",
                                    shown(path.string()), ec.message()));
}

std::string read_only_message(const fs::path& path, const std::string& why) {
  return fmt::format("database is read-only: {} ({}); nothing was run or stored",
                     shown(path.string()), why);
}

// Brings the schema forward and proves the file writable, in one transaction: the application_id
// is written even when it is already set, so a file whose journal or write-ahead log cannot be
// written fails here, before a command runs anything, and not at its first stored run.
void upgrade_for_writing(sqlite3* db, const fs::path& path) {
  exec_in_migration(db, "BEGIN IMMEDIATE");
  try {
    schema_state s = inspect(db); // again: another process may have created it meanwhile
    refuse_unless_ours(s, path.string());
    apply_migrations(db, s.version, k_schema_version);
    exec_in_migration(db, fmt::format("PRAGMA application_id = {}", k_application_id));
    exec_in_migration(db, "COMMIT");
  } catch (...) {
    rollback(db);
    throw;
  }
}

connection open_for_writing(const fs::path& path) {
  create_folder_of(path);
  connection c = connect(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
  // SQLite silently opens a write-protected file read-only.
  if (sqlite3_db_readonly(c.get(), "main") == 1)
    throw storage_error(read_only_message(path, "the file is write-protected"));
  try {
    c.exec("PRAGMA foreign_keys = ON");
    refuse_unless_ours(inspect(c.get()), path.string()); // before the first change to the file
    {
      statement jm(c.get(), "PRAGMA journal_mode = WAL");
      jm.step();
    }
    c.exec("PRAGMA synchronous = NORMAL");
    upgrade_for_writing(c.get(), path);
  } catch (const sqlite_failure& e) {
    // A writable file in a folder where the journal or write-ahead log cannot be created.
    if (e.primary_code() == SQLITE_CANTOPEN)
      throw storage_error(read_only_message(
          path, fmt::format("its journal or write-ahead log cannot be created in the folder '{}'",
                            shown(fs::absolute(path).parent_path().string()))));
    if (e.primary_code() == SQLITE_READONLY)
      throw storage_error(
          read_only_message(path, fmt::format("a write was refused: {}", e.what())));
    throw;
  }
  return c;
}

std::string file_uri(const fs::path& path, const std::string& query) {
  std::string out = "file:";
  for (unsigned char ch : fs::absolute(path).string()) {
    if (std::isalnum(ch) || std::strchr("/-._~", ch))
      out += (char)ch;
    else
      out += fmt::format("%{:02X}", ch);
  }
  return out + "?" + query;
}

// A WAL database in a folder this process cannot write: reading needs the -shm index file, which
// cannot be created there. Without a write-ahead log nobody can be writing it (a writer would have
// to create one in that folder too), so the file alone is the whole database and is read as an
// immutable file. With a log, its changes are not in the file, and reading the file alone would
// silently miss them.
connection open_in_read_only_folder(const fs::path& path) {
  fs::path wal = path.string() + "-wal";
  std::error_code ec;
  if (fs::exists(wal, ec) && fs::file_size(wal, ec) > 0)
    throw storage_error(fmt::format(
        "cannot read database '{}': its folder is read-only and its write-ahead log '{}' "
        "holds changes not yet in the file; ask its owner to run: sqlite3 '{}' "
        "'PRAGMA wal_checkpoint(TRUNCATE)'",
        shown(path.string()), shown(wal.string()), shown(path.string())));
  return connect(file_uri(path, "mode=ro&immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                 path.string());
}

// A private copy of an older database in memory, migrated there: read-only commands can read an
// older schema without upgrading the file.
connection upgraded_copy(sqlite3* src, const fs::path& path) {
  connection mem = connect(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
  sqlite3_backup* b = sqlite3_backup_init(mem.get(), "main", src, "main");
  if (!b)
    fail(mem.get(), sqlite3_errcode(mem.get()), "copy to memory");
  int rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE)
    fail(src, rc, "copy to memory");
  migrate(mem.get(), k_schema_version);
  return mem;
}

// Read-only commands open the file read-write but with query_only set, which refuses every
// change: a read-only connection could not remove the -wal and -shm files that reading a WAL
// database creates, and would leave them behind. SQLite itself falls back to a read-only
// connection for a write-protected file.
connection open_for_reading(const fs::path& path) {
  connection c = connect(path.string(), SQLITE_OPEN_READWRITE, path.string());
  c.exec("PRAGMA query_only = 1");
  schema_state s;
  try {
    s = inspect(c.get());
  } catch (const sqlite_failure& e) {
    // Without write access to the folder the -shm file can be neither created (CANTOPEN, the
    // immutable attribute) nor initialised (READONLY, plain permissions): read the file alone.
    if (e.primary_code() != SQLITE_CANTOPEN && e.primary_code() != SQLITE_READONLY)
      throw;
    c = open_in_read_only_folder(path);
    c.exec("PRAGMA query_only = 1");
    s = inspect(c.get());
  }
  refuse_unless_ours(s, path.string());
  if (s.objects.empty())
    throw storage_error(fmt::format("database '{}' holds no tables: not an accelbench database",
                                    shown(path.string())));
  if (s.version < k_schema_version)
    return upgraded_copy(c.get(), path);
  return c;
}
} // namespace
// ---------------------------------------------------------------------------------------------
// The store's operations on SQLite.
namespace {

class statement_row : public row_reader {
public:
  explicit statement_row(const statement& st) : m_st(st) {}
  std::string text(int i) const override { return m_st.col_text(i); }
  int64_t integer(int i) const override { return m_st.col_int(i); }
  double real(int i) const override { return m_st.col_double(i); }
  bool is_null(int i) const override { return m_st.col_is_null(i); }

private:
  const statement& m_st;
};

statement& bind_text_or_null(statement& st, int i, const std::optional<std::string>& v) {
  return v ? st.bind(i, *v) : st.bind_null(i);
}

statement& bind_real_or_null(statement& st, int i, const std::optional<double>& v) {
  return v ? st.bind(i, *v) : st.bind_null(i);
}

constexpr const char* k_token_columns = "id, name, role, salt, hash, created_at, revoked_at";

token_record token_from_row(const statement& st) {
  token_record t;
  t.id = st.col_int(0);
  t.name = st.col_text(1);
  t.role = st.col_text(2);
  t.salt = st.col_text(3);
  t.hash = st.col_text(4);
  t.created_at = st.col_text(5);
  t.revoked_at = st.col_is_null(6) ? "" : st.col_text(6);
  return t;
}

class sqlite_backend : public backend {
public:
  explicit sqlite_backend(connection c) : m_db(std::move(c)) {}
  const char* kind() const override { return "sqlite"; }
  int schema_version() override { return (int)pragma_int(m_db.get(), "user_version"); }

  bool insert_run(run& r) override {
    m_db.exec("BEGIN IMMEDIATE");
    bool inserted = false;
    try {
      inserted = insert_run_nt(r);
      m_db.exec("COMMIT");
    } catch (...) {
      rollback(m_db.get());
      throw;
    }
    return inserted;
  }

  // One run's rows, counted before the run goes (the foreign keys cascade), then the systems it
  // named that no run names any more.
  table_counts delete_runs_nt(const std::vector<int64_t>& ids, const std::function<bool()>& stop) {
    table_counts n;
    std::set<std::string> systems;
    for (int64_t id : ids) {
      if (stop && stop())
        throw cancelled("deletion cancelled: rolled back, nothing deleted");
      statement q(m_db.get(),
                  "SELECT system, (SELECT COUNT(*) FROM samples WHERE run_id = ?1), "
                  "(SELECT COUNT(*) FROM metrics WHERE run_id = ?1), "
                  "(SELECT COUNT(*) FROM tags WHERE run_id = ?1) FROM runs WHERE id = ?1");
      q.bind(1, id);
      if (!q.step())
        continue;
      systems.insert(q.col_text(0));
      n.samples += q.col_int(1);
      n.metrics += q.col_int(2);
      n.tags += q.col_int(3);
      statement d(m_db.get(), "DELETE FROM runs WHERE id = ?1");
      d.bind(1, id);
      d.step();
      n.runs += sqlite3_changes(m_db.get());
    }
    for (const auto& name : systems) {
      statement d(m_db.get(), "DELETE FROM systems WHERE name = ?1 AND NOT EXISTS "
                              "(SELECT 1 FROM runs WHERE system = ?1)");
      d.bind(1, name);
      d.step();
      n.systems += sqlite3_changes(m_db.get());
    }
    return n;
  }

  size_t insert_runs(std::vector<run>& rs) override {
    m_db.exec("BEGIN IMMEDIATE");
    size_t n = 0;
    try {
      for (auto& r : rs)
        n += insert_run_nt(r);
      m_db.exec("COMMIT");
    } catch (...) {
      rollback(m_db.get());
      throw;
    }
    return n;
  }

  void upsert_system(const system_record& s) override {
    statement st(m_db.get(), R"sql(
INSERT INTO systems (name, accelerator_model, accelerators_per_node, nodes, source, description)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (name) DO UPDATE SET accelerator_model = excluded.accelerator_model,
  accelerators_per_node = excluded.accelerators_per_node, nodes = excluded.nodes,
  source = excluded.source, description = excluded.description)sql");
    st.bind(1, s.name)
        .bind(2, s.accelerator_model)
        .bind(3, s.accelerators_per_node)
        .bind(4, s.nodes);
    st.bind(5, s.source).bind(6, dump_json(s.description));
    st.step();
  }

  std::optional<system_record> get_system(const std::string& name) override {
    statement st(m_db.get(),
                 fmt::format("SELECT {} FROM systems WHERE name = ?1", k_system_columns));
    st.bind(1, name);
    if (!st.step())
      return std::nullopt;
    return system_from_row(statement_row(st));
  }

  std::vector<system_record> systems() override {
    std::vector<system_record> out;
    statement st(m_db.get(), fmt::format("SELECT {} FROM systems ORDER BY name", k_system_columns));
    while (st.step())
      out.push_back(system_from_row(statement_row(st)));
    return out;
  }

  std::vector<std::string> tags() override {
    std::vector<std::string> out;
    statement st(m_db.get(), "SELECT DISTINCT tag FROM tags ORDER BY tag");
    while (st.step())
      out.push_back(st.col_text(0));
    return out;
  }

  int64_t count_runs() override { return count("SELECT COUNT(*) FROM runs"); }

  table_counts counts() override {
    return {count("SELECT COUNT(*) FROM runs"), count("SELECT COUNT(*) FROM samples"),
            count("SELECT COUNT(*) FROM metrics"), count("SELECT COUNT(*) FROM tags"),
            count("SELECT COUNT(*) FROM systems")};
  }

  std::vector<int64_t> run_ids() override {
    std::vector<int64_t> out;
    statement st(m_db.get(), "SELECT id FROM runs ORDER BY id");
    while (st.step())
      out.push_back(st.col_int(0));
    return out;
  }

  int64_t insert_token(const token_record& t) override {
    statement st(
        m_db.get(),
        "INSERT INTO api_tokens (name, role, salt, hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bind(1, t.name).bind(2, t.role).bind(3, t.salt).bind(4, t.hash).bind(5, t.created_at);
    st.step();
    return sqlite3_last_insert_rowid(m_db.get());
  }

  std::optional<token_record> get_token(int64_t id) override {
    statement st(m_db.get(),
                 fmt::format("SELECT {} FROM api_tokens WHERE id = ?1", k_token_columns));
    st.bind(1, id);
    if (!st.step())
      return std::nullopt;
    return token_from_row(st);
  }

  std::vector<token_record> tokens() override {
    statement st(m_db.get(), fmt::format("SELECT {} FROM api_tokens ORDER BY id", k_token_columns));
    std::vector<token_record> out;
    while (st.step())
      out.push_back(token_from_row(st));
    return out;
  }

  bool revoke_token(int64_t id, const std::string& revoked_at) override {
    statement st(m_db.get(),
                 "UPDATE api_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL");
    st.bind(1, id).bind(2, revoked_at);
    st.step();
    return sqlite3_changes(m_db.get()) == 1;
  }

  table_counts delete_runs(const std::vector<int64_t>& ids,
                           const std::function<bool()>& stop) override {
    m_db.exec("BEGIN IMMEDIATE");
    try {
      table_counts n = delete_runs_nt(ids, stop);
      if (stop && stop())
        throw cancelled("deletion cancelled: rolled back, nothing deleted");
      m_db.exec("COMMIT");
      return n;
    } catch (...) {
      rollback(m_db.get());
      throw;
    }
  }

  void checkpoint() override {
    statement st(m_db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
    while (st.step()) {
    }
  }

  std::optional<run> get_run(int64_t id, bool with_samples, bool with_log) override {
    statement st(m_db.get(), fmt::format("SELECT {} FROM runs r WHERE r.id = ?1", k_run_columns));
    st.bind(1, id);
    if (!st.step())
      return std::nullopt;
    std::vector<run> v{run_from_row(statement_row(st))};
    load_children(v, with_samples, with_log);
    return std::move(v[0]);
  }

  std::vector<run> query(const run_filter& f) override;

private:
  int64_t count(const char* sql) {
    statement st(m_db.get(), sql);
    st.step();
    return st.col_int(0);
  }
  bool insert_run_nt(run& r); // inside an open transaction; false: the uuid is already stored
  void load_children(std::vector<run>& runs, bool samples, bool log);
  connection m_db;
};

bool sqlite_backend::insert_run_nt(run& r) {
  assign_uuid(r);
  {
    statement find(m_db.get(), "SELECT id FROM runs WHERE uuid = ?1");
    find.bind(1, r.uuid);
    if (find.step()) {
      r.id = find.col_int(0);
      return false;
    }
  }
  run_row w = row_of(r);
  statement ins(m_db.get(), fmt::format(R"sql(
INSERT INTO runs ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
  ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29))sql",
                                        k_insert_columns));
  ins.bind(1, w.uuid).bind(2, w.workload).bind(3, w.backend).bind(4, w.config_key);
  ins.bind(5, w.config).bind(6, w.system).bind(7, w.ruleset);
  ins.bind(8, w.user_settings).bind(9, w.effective_settings).bind(10, w.environment);
  ins.bind(11, w.fingerprint).bind(12, w.status).bind(13, w.status_reason);
  ins.bind(14, w.valid).bind(15, w.invalid_reasons);
  ins.bind(16, w.started_at).bind(17, w.finished_at);
  ins.bind(18, w.harness_revision).bind(19, w.sample_unit).bind(20, w.sample_direction);
  ins.bind(21, w.extra);
  bind_text_or_null(ins, 22, w.mllog);
  ins.bind(23, w.source);
  ins.bind(24, w.summary.count);
  bind_real_or_null(ins, 25, w.summary.median);
  bind_real_or_null(ins, 26, w.summary.log_median);
  bind_real_or_null(ins, 27, w.summary.log_median_se);
  ins.bind(28, w.accelerator_model).bind(29, w.job_id);
  ins.step();
  mark_stored(r, w, sqlite3_last_insert_rowid(m_db.get()));

  statement s(
      m_db.get(),
      "INSERT INTO samples (run_id, idx, value, iterations, extra) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& smp : r.samples) {
    s.bind(1, r.id).bind(2, smp.index).bind(3, smp.value).bind(4, smp.iterations);
    bind_text_or_null(s, 5, sample_extra(smp));
    s.step();
    s.reset();
  }
  statement m(
      m_db.get(),
      "INSERT INTO metrics (run_id, name, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& mt : w.metrics) {
    m.bind(1, r.id).bind(2, mt.name).bind(3, mt.value).bind(4, mt.unit).bind(5, to_string(mt.dir));
    m.step();
    m.reset();
  }
  statement t(m_db.get(), "INSERT INTO tags (run_id, tag) VALUES (?1, ?2)");
  for (const auto& tag : w.tags) {
    t.bind(1, r.id).bind(2, tag);
    t.step();
    t.reset();
  }
  statement sys(m_db.get(), "INSERT OR IGNORE INTO systems (name, accelerator_model, "
                            "accelerators_per_node, source) VALUES (?1, ?2, ?3, ?4)");
  sys.bind(1, w.system)
      .bind(2, w.system_accelerator)
      .bind(3, w.system_count)
      .bind(4, w.system_source);
  sys.step();
  return true;
}

void sqlite_backend::load_children(std::vector<run>& runs, bool samples, bool log) {
  if (runs.empty())
    return;
  std::map<int64_t, run*> by_id;
  json ids = json::array();
  for (auto& r : runs) {
    by_id[r.id] = &r;
    ids.push_back(r.id);
  }
  // One pass over each child table for all requested runs. The ids travel as one JSON array
  // parameter, which keeps the statement size independent of the number of runs and, unlike a
  // temporary table, works on a read-only connection.
  const std::string wanted = "IN (SELECT value FROM json_each(?1))";
  const std::string id_list = ids.dump();
  {
    statement st(m_db.get(),
                 "SELECT run_id, name, value, unit, direction FROM metrics WHERE run_id " + wanted +
                     " ORDER BY run_id, name");
    st.bind(1, id_list);
    while (st.step())
      by_id[st.col_int(0)]->metrics.push_back({st.col_text(1), st.col_double(2), st.col_text(3),
                                               direction_from_string(st.col_text(4))});
  }
  {
    statement st(m_db.get(),
                 "SELECT run_id, tag FROM tags WHERE run_id " + wanted + " ORDER BY run_id, tag");
    st.bind(1, id_list);
    while (st.step())
      by_id[st.col_int(0)]->tags.push_back(st.col_text(1));
  }
  if (samples) {
    statement st(m_db.get(), samples_sql(wanted));
    st.bind(1, id_list);
    while (st.step())
      by_id[st.col_int(0)]->samples.push_back(sample_from_row(statement_row(st)));
  }
  if (log) {
    statement st(m_db.get(), "SELECT id, mllog FROM runs WHERE mllog IS NOT NULL AND id " + wanted);
    st.bind(1, id_list);
    while (st.step())
      by_id[st.col_int(0)]->mllog = st.col_text(1);
  }
}

std::vector<run> sqlite_backend::query(const run_filter& f) {
  const bool history = f.with_samples && f.median_samples_only;
  std::string sql =
      fmt::format("SELECT {} FROM runs r LEFT JOIN systems s ON s.name = r.system WHERE 1=1",
                  history ? k_history_columns : k_run_columns);
  std::vector<std::string> params;
  auto param = [&](std::string v) {
    params.push_back(std::move(v));
    return fmt::format("?{}", params.size());
  };
  if (!f.systems.empty()) {
    sql += " AND r.system IN (";
    for (size_t i = 0; i < f.systems.size(); ++i)
      sql += (i ? ", " : "") + param(f.systems[i]);
    sql += ")";
  }
  if (!f.workloads.empty()) {
    sql += " AND (";
    for (size_t i = 0; i < f.workloads.size(); ++i) {
      const auto& w = f.workloads[i];
      if (i)
        sql += " OR ";
      if (!w.empty() && w.back() == '*')
        sql += "r.workload LIKE " + param(w.substr(0, w.size() - 1) + "%");
      else
        sql += "r.workload = " + param(w);
    }
    sql += ")";
  }
  for (const auto& t : f.tags)
    sql += " AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = " + param(t) + ")";
  if (!f.accelerators.empty()) {
    sql += " AND (";
    for (size_t i = 0; i < f.accelerators.size(); ++i) {
      if (i)
        sql += " OR ";
      std::string p = param(fmt::format("%{}%", f.accelerators[i]));
      sql += fmt::format("s.accelerator_model LIKE {0} OR r.accelerator_model LIKE {0}", p);
    }
    sql += ")";
  }
  if (!f.ids.empty()) {
    json ids(f.ids);
    sql += " AND r.id IN (SELECT value FROM json_each(" + param(ids.dump()) + "))";
  }
  for (const auto& [k, v] : f.config) {
    // Config values are stored as JSON (numbers as numbers); compare as text.
    std::string pk = param("$." + k);
    sql += " AND CAST(json_extract(r.config, " + pk + ") AS TEXT) = " + param(v);
  }
  if (!f.source.empty())
    sql += " AND r.source = " + param(f.source);
  if (!f.since.empty())
    sql += " AND r.started_at >= " + param(f.since);
  sql += " ORDER BY r.started_at, r.id";
  statement st(m_db.get(), sql);
  for (size_t i = 0; i < params.size(); ++i)
    st.bind((int)i + 1, params[i]);
  std::vector<run> out;
  if (history) {
    config_cache configs;
    while (st.step())
      out.push_back(history_run_from_row(statement_row(st), configs));
    return out;
  }
  while (st.step())
    out.push_back(run_from_row(statement_row(st)));
  load_children(out, f.with_samples, f.with_log);
  return out;
}

} // namespace

std::unique_ptr<backend> open_sqlite(const fs::path& path, access how) {
  if (path == ":memory:")
    return open_sqlite_in_memory();
  check_file(path, how);
  return std::make_unique<sqlite_backend>(how == access::read_only ? open_for_reading(path)
                                                                   : open_for_writing(path));
}

std::unique_ptr<backend> open_sqlite_in_memory() {
  connection c = connect(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, ":memory:");
  migrate(c.get(), k_schema_version);
  return std::make_unique<sqlite_backend>(std::move(c));
}

} // namespace accelbench::store
