#pragma once
// The store: every run with its raw samples, metrics, tags and environment, and the systems they
// ran on. One interface (class store) over two implementations of the same logical schema:
//   - SQLite (sqlite_store.hpp), the embedded default for one machine: a file path;
//   - PostgreSQL (pg_store.hpp), the shared store of a fleet: a postgresql:// or postgres:// URI.
// Both keep the same guarantees: a recorded schema version with forward migrations when a write
// command opens the database, one transaction per run so a killed process leaves no half-written
// run, idempotent inserts by run uuid, read-only commands that never change the database, and
// refusals (exit 2, naming the database) of a foreign database or an unknown schema version.
// The schemas and these rules are documented in docs/store.md.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/error.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/model.hpp"
#include "harness/core/system.hpp"

namespace accelbench::store {

// The system of the result model lives in harness/core/system.hpp; the store's callers name it
// here as before.
using accelbench::system_from_json;
using accelbench::system_record;
using accelbench::to_json;

struct run_filter {
  std::vector<std::string> systems;   // any of
  std::vector<std::string> workloads; // any of; a trailing '*' matches a prefix
  std::vector<std::string> tags;      // all of
  std::vector<std::string>
      accelerators; // substring match on the system's accelerator model (any of)
  std::vector<int64_t> ids;
  std::vector<std::pair<std::string, std::string>> config; // config values that must match
  std::string source;                                      // measured | published | ""
  std::string since;                                       // ISO date; runs started at or after
  // ISO date or time; runs started before it (the selector's until=DAY passes the next day).
  std::string until;
  bool with_samples = true;
  bool with_log = false; // load run.mllog (can be large)
};

// A run as `history` reads it (store::history_rows), from the columns written once when it was
// stored (schema version 5): what its series is grouped by and the median of its samples. Nothing
// but its config is parsed, and no run is built: a year of nightly runs is read in a fraction of
// what reading them as runs takes.
struct history_row {
  int64_t id = 0;
  std::string system;
  std::string config_key; // config::key() of the stored config, as a run read back has it
  std::string ruleset, sample_unit, started_at;
  std::string job_id;      // extra.job_id, "" when the run has none
  std::string fingerprint; // the environment fingerprint
  bool valid = true;       // VALID
  direction dir = direction::lower_is_better;
  run_status status = run_status::ok;
  std::optional<double> median; // stats::median of its samples, bit for bit; none: no samples
};

// Rows per table: what a copy moved, what a test checks was (not) written.
struct table_counts {
  int64_t runs = 0, samples = 0, metrics = 0, tags = 0, systems = 0;
  int64_t total() const { return runs + samples + metrics + tags + systems; }
};

// A bearer token of `accelbench serve`: never the secret itself, only its salted hash.
struct token_record {
  int64_t id = 0;
  std::string name; // who or what it is for ("ci-h100-07")
  std::string role; // read | write | admin
  std::string salt; // hex
  std::string hash; // hex SHA-256 of salt || secret
  std::string created_at;
  std::string revoked_at; // "" while valid
};

constexpr int k_schema_version = 6;

// PRAGMA application_id of an accelbench SQLite database ("AcBn"), set by every write command.
// Databases written before it existed are recognised by their tables (see docs/store.md).
constexpr int32_t k_application_id = 0x4163426e;

// How a command uses the database.
enum class access {
  // show, export, compare, history, report, publish, package: the database must exist and be an
  // accelbench database; it is never created, migrated or written (an older SQLite schema is
  // upgraded in a private in-memory copy; PostgreSQL reads in read-only transactions).
  read_only,
  // run, import: the database (a file and its folder) is created when missing, migrated, and
  // proven writable before the command does any work.
  read_write,
};

// A change stopped on request (Ctrl-C during delete or gc): rolled back, nothing changed. Exit
// 130, as a shell reports a process that SIGINT ended.
class cancelled : public error {
public:
  using error::error;
  int exit_code() const override { return 130; }
};

// What one implementation does; class store forwards to it. Every method throws storage_error
// (exit 2) naming the database when the database fails or refuses.
class backend {
public:
  virtual ~backend() = default;
  virtual const char* kind() const = 0; // "sqlite" | "postgresql"
  virtual int schema_version() = 0;
  virtual bool insert_run(run& r) = 0;
  virtual size_t insert_runs(std::vector<run>& rs) = 0;
  virtual void upsert_system(const system_record& s) = 0;
  virtual std::optional<system_record> get_system(const std::string& name) = 0;
  virtual std::vector<system_record> systems() = 0;
  virtual std::vector<std::string> tags() = 0;
  virtual std::optional<run> get_run(int64_t id, bool with_samples, bool with_log) = 0;
  virtual std::vector<run> query(const run_filter& f) = 0;
  virtual std::vector<history_row> history_rows(const run_filter& f) = 0;
  virtual int64_t count_runs() = 0;
  virtual table_counts counts() = 0;
  virtual std::vector<int64_t> run_ids() = 0; // ascending
  virtual void checkpoint() {}                // SQLite: fold the write-ahead log into the file
  // Bearer tokens of `accelbench serve` (the api_tokens table, schema version 4).
  virtual int64_t insert_token(const token_record& t) = 0; // returns the new id
  virtual std::optional<token_record> get_token(int64_t id) = 0;
  virtual std::vector<token_record> tokens() = 0;
  virtual bool revoke_token(int64_t id, const std::string& revoked_at) = 0;
  virtual table_counts delete_runs(const std::vector<int64_t>& ids,
                                   const std::function<bool()>& stop) = 0;
};

// Whether `location` names a PostgreSQL database (postgresql:// or postgres://) rather than a file.
bool is_postgres_uri(const std::string& location);
// The version of the libpq this program runs with ("15.5"), for the environment's library list.
std::string libpq_version();

class store {
public:
  // Opens the database at `location`: a postgresql:// or postgres:// URI, else a file path.
  // Throws storage_error (exit 2) naming the database (a URI without its password), before
  // anything is changed, when it cannot be reached or opened, is not an accelbench database, has a
  // schema version this accelbench does not know, or (read_write) is not writable.
  static store open(const std::filesystem::path& location, access how = access::read_write);
  // An empty SQLite database in memory, for commands that read only files but share the store's
  // queries.
  static store in_memory();
  // Default location: $ACCELBENCH_DB, else accelbench.db in default_results_dir() (harness/core).
  static std::filesystem::path default_path();

  store(std::unique_ptr<backend> impl, std::filesystem::path shown)
      : m_impl(std::move(impl)), m_path(std::move(shown)) {}

  const char* kind() const { return m_impl->kind(); }
  int schema_version() { return m_impl->schema_version(); }
  // The database as messages name it: the file path, or the URI without its password.
  const std::filesystem::path& path() const { return m_path; }

  // Stores one run (with samples, metrics, tags) in one transaction and sets r.id. A run whose
  // uuid is already stored is not stored again: returns false and sets r.id to the stored id.
  bool insert_run(run& r) { return m_impl->insert_run(r); }
  // Many runs in one transaction (imports); each run as in insert_run. Returns runs inserted.
  size_t insert_runs(std::vector<run>& rs) { return m_impl->insert_runs(rs); }

  void upsert_system(const system_record& s) { m_impl->upsert_system(s); }
  std::optional<system_record> get_system(const std::string& name) {
    return m_impl->get_system(name);
  }
  std::vector<system_record> systems() { return m_impl->systems(); }
  std::vector<std::string> tags() { return m_impl->tags(); }

  // Runs as every reader sees them: a metric that is no measurement (the 0 % of peak versions
  // before extra.pct_of_peak_unknown stored for an unknown peak) is left out here, for both
  // stores, so that compare, export, show, the report and the server never average or chart it.
  std::optional<run> get_run(int64_t id, bool with_samples = true, bool with_log = true) {
    auto r = m_impl->get_run(id, with_samples, with_log);
    if (r)
      r->metrics.erase_if(unknown_figure);
    return r;
  }
  std::vector<run> query(const run_filter& f) {
    auto runs = m_impl->query(f);
    for (run& r : runs)
      r.metrics.erase_if(unknown_figure);
    return runs;
  }
  // The runs `f` selects as history reads them (f.with_samples and f.with_log play no part), in
  // the order query gives them: by start, then id.
  std::vector<history_row> history_rows(const run_filter& f) { return m_impl->history_rows(f); }
  int64_t count_runs() { return m_impl->count_runs(); }
  table_counts counts() { return m_impl->counts(); }
  std::vector<int64_t> run_ids() { return m_impl->run_ids(); }
  void checkpoint() { m_impl->checkpoint(); }

  // Bearer tokens of `accelbench serve`. The store keeps what it is given: hashing and checking
  // secrets is harness/app/server/tokens.cpp's job.
  int64_t insert_token(const token_record& t) { return m_impl->insert_token(t); } // the new id
  std::optional<token_record> get_token(int64_t id) { return m_impl->get_token(id); }
  std::vector<token_record> tokens() { return m_impl->tokens(); }
  // Sets revoked_at; false when there is no such token or it was already revoked.
  bool revoke_token(int64_t id, const std::string& revoked_at) {
    return m_impl->revoke_token(id, revoked_at);
  }

  // accelbench delete and gc: removes the runs with these ids (ids not stored are ignored) with
  // their samples, metrics and tags, and the systems they named that no run names any more, in one
  // transaction: all of it or nothing. Returns the rows removed from each table. `stop` (when
  // given) is asked as the work goes on (SQLite: before each run; PostgreSQL: before each batch of
  // runs) and last before the commit; once it says true the transaction is rolled back and
  // `cancelled` thrown: nothing was deleted.
  table_counts delete_runs(const std::vector<int64_t>& ids,
                           const std::function<bool()>& stop = {}) {
    return m_impl->delete_runs(ids, stop);
  }

private:
  std::unique_ptr<backend> m_impl;
  std::filesystem::path m_path;
};

// accelbench db copy: every system, then every run (with samples, metrics, tags, environment and
// log) of `from`, into `to`, `batch` runs per transaction, in the order of their ids. Runs whose
// uuid `to` already holds are skipped, so a rerun (or a copy interrupted and started again)
// stores nothing twice. `progress` is called after each batch with the runs seen so far.
struct copy_result {
  int64_t runs_seen = 0, runs_copied = 0, samples_copied = 0, systems = 0;
};
copy_result copy_store(store& from, store& to, size_t batch = 200,
                       const std::function<void(const copy_result&)>& progress = {});

} // namespace accelbench::store
