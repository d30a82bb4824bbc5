#pragma once
// What both store implementations share: how a run becomes the values of its rows and how rows
// become a run again, the column lists, and the schema-version rules. One home for each, so that
// SQLite and PostgreSQL store and read exactly the same thing (db copy is lossless because of it).
// Internal to harness/store.
#include <cstdint>
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

// SELECT lists (table aliases r for runs) read by run_from_row and system_from_row.
extern const char* const k_run_columns;
extern const char* const k_system_columns;
run run_from_row(const row_reader& row);
system_record system_from_row(const row_reader& row);
// A sample row: run_id, idx, value, iterations, extra.
sample sample_from_row(const row_reader& row);
// The statement reading the samples of the runs that `wanted` selects (the text after "run_id":
// "IN (...)" or "= ANY(...)"), in the columns sample_from_row reads: all of them in index order, or
// with `middle_only` the one or two in the middle of each run's sorted values, chosen by the
// database (what a median needs; window functions, SQLite >= 3.25 and PostgreSQL alike).
std::string samples_sql(const std::string& wanted, bool middle_only);

// The values of a new run's row (the runs table, in k_insert_columns order), of its system's
// row when the system is not stored yet, and its child rows, with what a stored run always has
// (harness revision and fingerprint from the environment when r has none). r.uuid must be set.
extern const char* const k_insert_columns; // 23 columns
struct run_row {
  std::string uuid, workload, backend, config_key, config, system, ruleset, user_settings,
      effective_settings, environment, fingerprint, status, status_reason;
  int64_t valid = 1;
  std::string invalid_reasons, started_at, finished_at, harness_revision, sample_unit,
      sample_direction, extra;
  std::optional<std::string> mllog;
  std::string source;
  // The run's system, inserted when missing (measured systems get their accelerator from the
  // environment; imported ones are upserted by the importer with the full description).
  std::string system_accelerator, system_source;
  int64_t system_count = 1;
  std::vector<metric> metrics;   // one per name, the last given wins
  std::vector<std::string> tags; // each once
};
void assign_uuid(run& r); // a fresh uuid when r has none
run_row row_of(const run& r);
void mark_stored(run& r, const run_row& w,
                 int64_t id); // r as stored: its id, revision, fingerprint
std::optional<std::string> sample_extra(const sample& s); // NULL when empty

// Stored JSON text read back: anything malformed or of another type reads as `fallback`.
json parse_or(const std::string& s, json fallback);

bool known_version(int64_t v);
std::string unsupported_version(int64_t v, const std::string& shown_name);

} // namespace accelbench::store::detail
