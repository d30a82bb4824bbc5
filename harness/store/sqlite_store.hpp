#pragma once
// The SQLite implementation of the store: one file per database, the embedded default.
// Schema version in PRAGMA user_version, forward migrations when a write command opens it, WAL
// with a busy timeout so several `accelbench run` processes can write one database at once,
// foreign keys on, and one transaction per run so a killed process leaves no half-written run.
// Read-only commands never change the file. Also the low-level wrappers (connection, statement)
// that tests use to build databases as another program (or the sqlite3 shell) would.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <sqlite3.h>

#include "harness/store/store.hpp"

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
  void exec(const std::string& sql); // throws storage_error with the SQL text
private:
  sqlite3* m_db = nullptr;
};

// Move-only owner of a prepared statement.
class statement {
public:
  statement(sqlite3* db, const std::string& sql);
  statement(statement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt), m_sql(std::move(o.m_sql)) {
    o.m_stmt = nullptr;
  }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();
  statement& bind(int i, int64_t v);
  statement& bind(int i, double v);
  statement& bind(int i, const std::string& v);
  statement& bind_null(int i);
  bool step();  // true: a row is available; false: done. Throws storage_error.
  void reset(); // reset and clear bindings for reuse
  int64_t col_int(int i) const;
  double col_double(int i) const;
  std::string col_text(int i) const;
  bool col_is_null(int i) const;
  int64_t changes() const; // rows the statement changed (0 for one that only reads)

private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_sql;
};

// The SQLite database at `path` (see store::open for the refusals), and an empty one in memory.
std::unique_ptr<backend> open_sqlite(const std::filesystem::path& path, access how);
std::unique_ptr<backend> open_sqlite_in_memory();

// Migrations: step i brings user_version from i-1 to i. Exposed for tests that build an older
// database and check that opening it migrates forward without losing data. Throws storage_error
// "unsupported schema version N" when the database's version is not one of ours.
void migrate(sqlite3* db, int target_version);

} // namespace accelbench::store
