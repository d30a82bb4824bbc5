#pragma once
// What both store implementations share: how a run becomes the values of its rows and how rows
// become a run again, the column lists, and the schema-version rules. One home for each, so that
// SQLite and PostgreSQL store and read exactly the same thing (db copy is lossless because of it).
// Internal to harness/store.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/store.hpp"

namespace accelbench::store::detail {

// One row of a result, whatever the library: columns by index, in the order of the SELECT.
class row_reader {
public:
  virtual ~row_reader() = default;
  virtual std::string text(int i) const = 0;
  virtual int64_t integer(int i) const = 0;
  virtual double real(int i) const = 0;
  virtual bool is_null(int i) const = 0;
};

// A row's columns read one after the other, in the order of the SELECT: a record is one braced
// list of its fields, which C++ evaluates left to right.
class column_cursor {
public:
  explicit column_cursor(const row_reader& row) : m_row(row) {}
  std::string text() { return m_row.text(m_i++); }
  int64_t integer() { return m_row.integer(m_i++); }
  std::string text_or_empty() { // NULL reads as ""
    const int i = m_i++;
    return m_row.is_null(i) ? std::string() : m_row.text(i);
  }

private:
  const row_reader& m_row;
  int m_i = 0;
};

// SELECT lists (table aliases r for runs) read by run_from_row and system_from_row.
extern const char* const k_run_columns;
extern const char* const k_system_columns;
run run_from_row(const row_reader& row);
// The SELECT list (alias r) of what `history` reads (store::history_rows), read by
// history_row_from_row: no settings, environment, extra, samples, metrics or tags. The config JSON
// is parsed and its key built once per distinct config (a year of nights repeats a few hundred).
extern const char* const k_history_columns;
class config_keys {
public:
  const std::string& key(const std::string& workload, const std::string& backend,
                         const std::string& config_text);

private:
  std::map<std::string, std::string> m_seen; // workload, backend and config text -> key
};
history_row history_row_from_row(const row_reader& row, config_keys& keys);
system_record system_from_row(const row_reader& row);
// A sample row: run_id, idx, value, iterations, extra.
sample sample_from_row(const row_reader& row);
// The statement reading the samples of the runs that `wanted` selects (the text after "run_id":
// "IN (...)" or "= ANY(...)"), in the columns sample_from_row reads, in index order.
std::string samples_sql(const std::string& wanted);

// The values of a new run's row (the runs table, in k_insert_columns order), of its system's
// row when the system is not stored yet, and its child rows, with what a stored run always has
// (harness revision and fingerprint from the environment when r has none). r.uuid must be set.
extern const char* const k_insert_columns; // 29 columns
// What history (and compare) read about a run's samples, written once when the run is stored
// (schema version 5, also computed for the runs of an older database by its migration): how many,
// their median (stats::median, bit for bit what a reader would compute), the median of their
// logarithms and its distribution-free standard error (stats::median_standard_error; NULL unless
// every value is positive and finite). NULL median: no samples, or a median that is not finite.
struct sample_summary {
  int64_t count = 0;
  std::optional<double> median, log_median, log_median_se;
};
sample_summary summarize_samples(std::vector<double> values);
// The run facts history selects and groups by, kept in columns so that no read parses the JSON:
// environment.accelerator.model and extra.job_id ("" when absent or not a string).
std::string accelerator_of(const json& environment);
std::string job_of(const json& extra);
struct run_row {
  std::string uuid, workload, backend, config_key, config, system, ruleset, user_settings,
      effective_settings, environment, fingerprint, status, status_reason;
  int64_t valid = 1;
  std::string invalid_reasons, started_at, finished_at, harness_revision, sample_unit,
      sample_direction, extra;
  std::optional<std::string> mllog;
  std::string source;
  sample_summary summary;
  std::string accelerator_model, job_id;
  // The run's system, inserted when missing (measured systems get their accelerator from the
  // environment; imported ones are upserted by the importer with the full description).
  std::string system_accelerator, system_source;
  int64_t system_count = 1;
  std::vector<metric> metrics;   // one per name, the last given wins
  std::vector<std::string> tags; // each once
};
void assign_uuid(run& r); // a fresh uuid when r has none
// Throws storage_error naming the run and the limit for a run over one of harness/core/limits.hpp
// (the store's last guard: nothing of the run is written).
run_row row_of(const run& r);
void mark_stored(run& r, const run_row& w,
                 int64_t id); // r as stored: its id, revision, fingerprint
std::optional<std::string> sample_extra(const sample& s); // NULL when empty

// Stored JSON text read back: anything malformed or of another type reads as `fallback`.
json parse_or(const std::string& s, json fallback);

bool known_version(int64_t v);
std::string unsupported_version(int64_t v, const std::string& shown_name);

} // namespace accelbench::store::detail
