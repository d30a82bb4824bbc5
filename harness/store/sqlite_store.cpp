#include "harness/store/sqlite_store.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/rows.hpp"
#include "harness/store/schema.hpp"
#include "harness/store/schema_ddl.hpp"
#include "harness/store/sql.hpp"

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
int64_t statement::changes() const {
  return sqlite3_stmt_readonly(m_stmt) ? 0 : sqlite3_changes64(m_db);
}

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

// The connection as the statements both stores share see it (sql.cpp).
class sqlite_runner : public sql_runner {
public:
  explicit sqlite_runner(sqlite3* db) : m_db(db) {}
  const dialect& sql() const override { return m_dialect; }
  int64_t run(const std::string& sql, const std::vector<value>& params,
              const std::function<void(const row_reader&)>& each) override {
    statement st(m_db, sql);
    for (size_t i = 0; i < params.size(); ++i)
      bind_value(st, (int)i + 1, params[i]);
    const statement_row row(st);
    while (st.step())
      if (each)
        each(row);
    return st.changes();
  }

private:
  static void bind_value(statement& st, int i, const value& v) {
    switch (v.is) {
    case value::type::integer:
      st.bind(i, v.integer);
      break;
    case value::type::real:
      st.bind(i, v.real);
      break;
    case value::type::text:
      st.bind(i, v.text);
      break;
    case value::type::null:
      st.bind_null(i);
      break;
    }
  }
  sqlite3* m_db;
  dialect m_dialect{dialect::kind::sqlite};
};

} // namespace

// ---------------------------------------------------------------------------------------------
// Migrations: the steps of schema_ddl.cpp, applied through SQLite.
namespace {
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

// The migration steps as SQLite runs them: user_version records the version.
class sqlite_migration : public migration_target {
public:
  explicit sqlite_migration(sqlite3* db) : m_db(db), m_runner(db) {}
  sql_runner& runner() override { return m_runner; }
  void exec(const std::string& sql) override { exec_in_migration(m_db, sql); }
  void set_version(int64_t v) override {
    exec_in_migration(m_db, fmt::format("PRAGMA user_version = {}", v));
  }
  void write_summaries(const std::vector<stored_summary>& runs) override {
    statement up(m_db, "UPDATE runs SET sample_count = ?2, median = ?3, log_median = ?4, "
                       "log_median_se = ?5, accelerator_model = ?6, job_id = ?7 WHERE id = ?1");
    for (const auto& r : runs) {
      up.bind(1, r.id).bind(2, r.summary.count);
      bind_real_or_null(up, 3, r.summary.median);
      bind_real_or_null(up, 4, r.summary.log_median);
      bind_real_or_null(up, 5, r.summary.log_median_se);
      up.bind(6, r.accelerator_model).bind(7, r.job_id);
      up.step();
      up.reset();
    }
  }

private:
  sqlite3* m_db;
  sqlite_runner m_runner;
};

// Steps from..to, inside the caller's transaction.
void migrate_steps(sqlite3* db, int64_t from, int64_t to) {
  sqlite_migration target(db);
  apply_migrations(target, from, to);
}

// What the schema of an open database is, read without changing anything.
schema_facts read_schema(sqlite3* db) {
  schema_facts s;
  s.version = pragma_int(db, "user_version");
  const int64_t application_id = pragma_int(db, "application_id");
  statement st(
      db,
      "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  while (st.step())
    s.objects.push_back(st.col_text(0));
  s.empty = s.objects.empty() && s.version == 0;
  if (application_id != 0 && application_id != k_application_id)
    s.foreign_owner = fmt::format("its application_id {:#x} belongs to another program",
                                  (uint32_t)application_id);
  const bool ours = application_id == k_application_id || s.has("runs");
  if (!ours && !s.objects.empty())
    s.not_ours = fmt::format("it holds {} and no accelbench runs table", name_list(s.objects));
  return s;
}

// The version and the objects are read in one read transaction: read by separate statements, a
// migration committed by another process in between showed tables at version 0 ("partial or
// foreign schema"), and a concurrent first run of a new database failed.
schema_facts inspect(sqlite3* db) {
  if (!sqlite3_get_autocommit(db))
    return read_schema(db); // inside the caller's transaction
  exec_in_migration(db, "BEGIN");
  try {
    schema_facts s = read_schema(db);
    exec_in_migration(db, "COMMIT");
    return s;
  } catch (...) {
    rollback(db);
    throw;
  }
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
    migrate_steps(db, v, target);
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
    schema_facts s = inspect(db); // again: another process may have created it meanwhile
    refuse_unless_ours(s, shown(path.string()));
    migrate_steps(db, s.version, k_schema_version);
    exec_in_migration(db, fmt::format("PRAGMA application_id = {}", k_application_id));
    exec_in_migration(db, "COMMIT");
  } catch (...) {
    rollback(db);
    throw;
  }
}

// PRAGMA journal_mode = WAL, waited for like any lock. The switch needs the file to itself, and
// SQLite answers SQLITE_BUSY at once, without its busy handler, when another process that is
// creating the same new database holds a write lock in the old journal mode (a deadlock it will
// not wait on). The mode is the file's: once one opener has switched it, the others' switch is a
// no-op. So a busy switch is tried again for as long as a lock is waited for (30 s).
void switch_to_wal(sqlite3* db) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(k_busy_timeout_ms);
  for (;;) {
    try {
      statement jm(db, "PRAGMA journal_mode = WAL");
      jm.step();
      return;
    } catch (const sqlite_failure& e) {
      if (e.primary_code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= until)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
    refuse_unless_ours(inspect(c.get()), shown(path.string())); // before the first change
    switch_to_wal(c.get());
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
  schema_facts s;
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
  refuse_unless_ours(s, shown(path.string()));
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

class sqlite_backend : public sql_backend {
public:
  explicit sqlite_backend(connection c) : m_db(std::move(c)), m_runner(m_db.get()) {}
  const char* kind() const override { return "sqlite"; }
  int schema_version() override { return (int)pragma_int(m_db.get(), "user_version"); }

  bool insert_run(run& r) override {
    return in_transaction([&] { return insert_run_nt(r); });
  }

  size_t insert_runs(std::vector<run>& rs) override {
    return in_transaction([&] {
      size_t n = 0;
      for (auto& r : rs)
        n += insert_run_nt(r);
      return n;
    });
  }

  // Run by run (a batch of one), so that `stop` is asked before each.
  table_counts delete_runs(const std::vector<int64_t>& ids,
                           const std::function<bool()>& stop) override {
    return in_transaction([&] {
      table_counts n = delete_in_batches(ids, 1, stop);
      stop_if_asked(stop);
      return n;
    });
  }

  void checkpoint() override {
    statement st(m_db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
    while (st.step()) {
    }
  }

protected:
  sql_runner& runner() override { return m_runner; }

private:
  // `work` in one write transaction: committed when it returns, rolled back when it throws.
  template <class F> std::invoke_result_t<F> in_transaction(F work) {
    m_db.exec("BEGIN IMMEDIATE");
    try {
      auto out = work();
      m_db.exec("COMMIT");
      return out;
    } catch (...) {
      rollback(m_db.get());
      throw;
    }
  }
  bool insert_run_nt(run& r); // inside an open transaction; false: the uuid is already stored
  connection m_db;
  sqlite_runner m_runner;
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
