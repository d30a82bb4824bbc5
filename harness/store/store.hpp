#pragma once
// The SQLite store: every run with its raw samples, metrics, tags and environment.
// Schema version in PRAGMA user_version, forward migrations when a write command opens it, WAL
// with a busy timeout so several `accelbench run` processes can write one database at once,
// foreign keys on, and one transaction per run so a killed process leaves no half-written run.
// Read-only commands never change the file. The schema and these rules are documented in
// docs/store.md for users of the sqlite3 shell.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "harness/core/model.hpp"

namespace accelbench::store {

// Move-only owner of a sqlite3 connection.
class connection {
public:
  connection() = default;
  explicit connection(sqlite3* db) : m_db(db) {}
  connection(connection&& o) noexcept : m_db(o.m_db) { o.m_db = nullptr; }
  connection& operator=(connection&& o) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();
  sqlite3* get() const { return m_db; }
  void exec(const std::string& sql);  // throws storage_error with the SQL text
private:
  sqlite3* m_db = nullptr;
};

// Move-only owner of a prepared statement.
class statement {
public:
  statement(sqlite3* db, const std::string& sql);
  statement(statement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt), m_sql(std::move(o.m_sql)) { o.m_stmt = nullptr; }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();
  statement& bind(int i, int64_t v);
  statement& bind(int i, double v);
  statement& bind(int i, const std::string& v);
  statement& bind_null(int i);
  bool step();   // true: a row is available; false: done. Throws storage_error.
  void reset();  // reset and clear bindings for reuse
  int64_t col_int(int i) const;
  double col_double(int i) const;
  std::string col_text(int i) const;
  bool col_is_null(int i) const;
private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_sql;
};

struct system_record {
  std::string name;
  std::string accelerator_model;
  int64_t accelerators_per_node = 1;
  int64_t nodes = 1;
  std::string source = "measured";  // measured | published
  json description = json::object(); // e.g. the MLPerf system JSON
  int64_t total_accelerators() const { return accelerators_per_node * nodes; }
};

// The JSON form of a system (results documents, "systems" array).
json to_json(const system_record& s);
system_record system_from_json(const json& j);

struct run_filter {
  std::vector<std::string> systems;       // any of
  std::vector<std::string> workloads;     // any of; a trailing '*' matches a prefix
  std::vector<std::string> tags;          // all of
  std::vector<std::string> accelerators;  // substring match on the system's accelerator model (any of)
  std::vector<int64_t> ids;
  std::vector<std::pair<std::string, std::string>> config;  // config values that must match
  std::string source;                     // measured | published | ""
  std::string since;                      // ISO date; runs started at or after
  bool with_samples = true;
  bool with_log = false;                  // load run.mllog (can be large)
};

// A bearer token of `accelbench serve`: never the secret itself, only its salted hash.
struct token_record {
  int64_t id = 0;
  std::string name;        // who or what it is for ("ci-h100-07")
  std::string role;        // read | write | admin
  std::string salt;        // hex
  std::string hash;        // hex SHA-256 of salt || secret
  std::string created_at;
  std::string revoked_at;  // "" while valid
};

constexpr int k_schema_version = 4;

// PRAGMA application_id of an accelbench database ("AcBn"), set by every write command. Databases
// written before it existed are recognised by their tables (see docs/store.md).
constexpr int32_t k_application_id = 0x4163426e;

// How a command uses the database.
enum class access {
  // show, export, compare, history, report, publish, package: the file must exist and be an
  // accelbench database; it is never created, migrated or written (an older schema is upgraded
  // in a private in-memory copy).
  read_only,
  // run, import: the file (and its folder) is created when missing, migrated, and proven
  // writable before the command does any work.
  read_write,
};

class store {
public:
  // Opens the database at `path`. Throws storage_error (exit 2) naming the file, before anything
  // is changed, when it is not a regular file, not an SQLite database, corrupt, not an accelbench
  // database, of a schema version this accelbench does not know, or (read_write) not writable.
  static store open(const std::filesystem::path& path, access how = access::read_write);
  // An empty database in memory, for commands that read only files but share the store's queries.
  static store in_memory();
  // Default location: $ACCELBENCH_DB, else <data root>/results/accelbench.db.
  static std::filesystem::path default_path();

  int schema_version();
  const std::filesystem::path& path() const { return m_path; }
  sqlite3* raw() const { return m_db.get(); }

  // Stores one run (with samples, metrics, tags) in one transaction and sets r.id. A run whose
  // uuid is already stored is not stored again: returns false and sets r.id to the stored id.
  bool insert_run(run& r);
  // Many runs in one transaction (imports); each run as in insert_run. Returns runs inserted.
  size_t insert_runs(std::vector<run>& rs);

  void upsert_system(const system_record& s);
  std::optional<system_record> get_system(const std::string& name);
  std::vector<system_record> systems();
  std::vector<std::string> tags();

  std::optional<run> get_run(int64_t id, bool with_samples = true, bool with_log = true);
  std::vector<run> query(const run_filter& f);
  int64_t count_runs();

  // Bearer tokens of `accelbench serve` (schema version 4; harness/store/tokens.cpp). The store
  // keeps what it is given: hashing and checking secrets is harness/server/tokens.cpp's job.
  int64_t insert_token(const token_record& t);  // returns the new id
  std::optional<token_record> get_token(int64_t id);
  std::vector<token_record> tokens();
  // Sets revoked_at; false when there is no such token or it was already revoked.
  bool revoke_token(int64_t id, const std::string& revoked_at);

private:
  explicit store(connection c, std::filesystem::path p) : m_db(std::move(c)), m_path(std::move(p)) {}
  void insert_run_nt(run& r, bool& inserted);  // inside an open transaction
  void load_children(std::vector<run>& runs, bool samples, bool log);
  connection m_db;
  std::filesystem::path m_path;
};

// Migrations: step i brings user_version from i-1 to i. Exposed for tests that build an older
// database and check that opening it migrates forward without losing data. Throws storage_error
// "unsupported schema version N" when the database's version is not one of ours.
void migrate(sqlite3* db, int target_version);

} // namespace accelbench::store
