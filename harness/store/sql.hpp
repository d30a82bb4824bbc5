#pragma once
// The SQL both stores run, written once (sql.cpp, tokens.cpp) over a connection as the shared
// statements see it (sql_runner), with the few places where SQLite's and PostgreSQL's SQL differ
// named in one small dialect, which also writes the schema's one definition (schema_ddl.cpp).
// Each backend keeps only its connection, transactions, how it records the schema version, and
// how it inserts runs (PostgreSQL: one statement per run, in pipelines).
// Internal to harness/store.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/store/rows.hpp"

namespace accelbench::store::detail {

// A statement's parameter: NULL, an integer, a real or text.
struct value {
  enum class type { null, integer, real, text };
  value() = default;
  value(int64_t v) : is(type::integer), integer(v) {} // NOLINT(google-explicit-constructor)
  value(double v) : is(type::real), real(v) {}        // NOLINT(google-explicit-constructor)
  value(std::string v)
      : is(type::text), text(std::move(v)) {}       // NOLINT(google-explicit-constructor)
  value(const char* v) : is(type::text), text(v) {} // NOLINT(google-explicit-constructor)
  type is = type::null;
  int64_t integer = 0;
  double real = 0;
  std::string text;
};

// A column's type as the schema defines it (schema_ddl.cpp), written in each dialect's types.
enum class sql_type {
  key,          // the table's own integer id: INTEGER PRIMARY KEY | BIGINT identity
  integer,      // 64-bit: INTEGER | BIGINT
  flag,         // 0 or 1: INTEGER in both
  real,         // REAL | DOUBLE PRECISION
  text,         // TEXT
  ordered_text, // text sorted or compared: PostgreSQL's "C" collation, as SQLite compares bytes
};

// Where the two dialects differ.
class dialect {
public:
  enum class kind { sqlite, postgresql };
  explicit dialect(kind k) : m_kind(k) {}
  // Parameter n (from 1): "?1" | "$1".
  std::string param(int n) const;
  // Parameter n holding an integer: "?1" | "$1::bigint" (libpq sends parameters as text).
  std::string integer(int n) const;
  // LIKE that ignores ASCII case: SQLite's LIKE does; PostgreSQL's ILIKE.
  const char* like() const;
  // The text of a top-level field of the JSON text in `column`, the field named by parameter n
  // (numbers as their JSON text), and the value of that parameter for the field `key`.
  std::string json_field(const std::string& column, int n) const;
  value json_key(const std::string& key) const;
  // After a column: whether it is in the id set of parameter n, and that parameter's value. One
  // parameter whatever the number of ids: SQLite reads a JSON array (works on a read-only
  // connection, unlike a temporary table), PostgreSQL an array literal.
  std::string in_ids(int n) const;
  value id_set(const std::vector<int64_t>& ids) const;
  // The schema (schema_ddl.cpp): a column type, what follows a table whose key is a composite
  // primary key (" WITHOUT ROWID": SQLite stores such a table once, by its key), and the
  // dialect's own form of a statement written differently throughout (a migration's data).
  const char* type(sql_type t) const;
  const char* keyed_table_suffix() const;
  const char* either(const char* sqlite, const char* postgresql) const;

private:
  kind m_kind;
};

// A connection as the shared statements see it.
class sql_runner {
public:
  virtual ~sql_runner() = default;
  virtual const dialect& sql() const = 0;
  // Runs one statement with its parameters; `each` sees every row it returns. Returns the number
  // of rows an INSERT, UPDATE or DELETE changed (0 for a query).
  virtual int64_t run(const std::string& sql, const std::vector<value>& params = {},
                      const std::function<void(const row_reader&)>& each = {}) = 0;
};

// A table read whole (ordered by its key) or by its key: its name, SELECT list and key column.
struct keyed_table {
  const char* name;
  const char* columns;
  const char* key;
};
// "SELECT columns FROM name WHERE key = <parameter 1>", the parameter typed as `key` is.
std::string select_by_key(const dialect& d, const keyed_table& t, const value& key);
// "SELECT columns FROM name ORDER BY key".
std::string select_all(const keyed_table& t);

// Every row `sql` returns, each read by `from_row`.
template <class R>
std::vector<R> all_rows(sql_runner& db, const std::string& sql, const std::vector<value>& params,
                        R (*from_row)(const row_reader&)) {
  std::vector<R> out;
  db.run(sql, params, [&](const row_reader& row) { out.push_back(from_row(row)); });
  return out;
}

// The last row `sql` returns (a lookup by key returns one), read by `from_row`; nullopt for none.
template <class R>
std::optional<R> last_row(sql_runner& db, const std::string& sql, const std::vector<value>& params,
                          R (*from_row)(const row_reader&)) {
  std::optional<R> out;
  db.run(sql, params, [&](const row_reader& row) { out = from_row(row); });
  return out;
}

// The store operations whose SQL both backends share. A backend gives its connection (runner)
// and adds what is its own: inserting runs, transactions, schema version, checkpoint.
class sql_backend : public backend {
public:
  void upsert_system(const system_record& s) override;
  std::optional<system_record> get_system(const std::string& name) override;
  std::vector<system_record> systems() override;
  std::vector<std::string> tags() override;
  std::optional<run> get_run(int64_t id, bool with_samples, bool with_log) override;
  std::vector<run> query(const run_filter& f) override;
  std::vector<history_row> history_rows(const run_filter& f) override;
  int64_t count_runs() override;
  table_counts counts() override;
  std::vector<int64_t> run_ids() override;
  // tokens.cpp
  int64_t insert_token(const token_record& t) override;
  std::optional<token_record> get_token(int64_t id) override;
  std::vector<token_record> tokens() override;
  bool revoke_token(int64_t id, const std::string& revoked_at) override;

protected:
  virtual sql_runner& runner() = 0;
  // Inside the caller's transaction: the runs `ids`, `batch` at a time, each batch's rows counted
  // and then deleted (the foreign keys cascade), `stop` asked before each batch; then the systems
  // they named that no run names any more.
  table_counts delete_in_batches(const std::vector<int64_t>& ids, size_t batch,
                                 const std::function<bool()>& stop);

private:
  void load_children(std::vector<run>& runs, bool samples, bool log);
  void delete_batch(const std::vector<int64_t>& ids, table_counts& n, std::set<std::string>& named);
};

// Migration 6's data, inside the caller's transaction: every stored fingerprint that is the
// version-1 fingerprint of its run's environment becomes version 2 (current_fingerprint, the
// function imports use too), so that old and new runs of one machine compare as equal.
void refresh_fingerprints(sql_runner& db);

// Throws `cancelled` when `stop` (if given) says so.
void stop_if_asked(const std::function<bool()>& stop);

} // namespace accelbench::store::detail
