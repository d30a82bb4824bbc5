// The schema of both stores, once. Each migration step lists what it creates as data; the
// dialect writes the types (sql.cpp). Text that is sorted or compared (names, tags, timestamps)
// is ordered_text: PostgreSQL's "C" collation, as SQLite compares bytes, so that both stores order
// and match alike. JSON stays text: jsonb would reorder keys and reformat numbers, and db copy
// must give back the bytes it was given. SQLite keeps each CREATE TABLE's text as written: the
// layout below (names padded to one column) is the one databases already hold.
#include "harness/store/schema_ddl.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"

namespace accelbench::store::detail {

namespace {

struct column_def {
  const char* name;
  sql_type type;
  const char* rest; // constraints and default after the type ("" for none)
};

struct table_def {
  const char* name;
  std::vector<column_def> columns;
  const char* primary_key; // a composite key "(run_id, idx)", or nullptr
};

struct added_column {
  const char* table;
  column_def column;
};

struct index_def {
  const char* name;
  const char* table;
  const char* columns; // "(workload, config_key)"
};

struct migration_def {
  std::vector<table_def> tables;
  std::vector<added_column> columns;
  const char* sqlite_data;     // a data statement run after the columns ("" for none)
  const char* postgresql_data; // the same in PostgreSQL's SQL
  std::vector<index_def> indexes;
};

using T = sql_type;
const char* const k_run_ref = "NOT NULL REFERENCES runs(id) ON DELETE CASCADE";

// The migration steps, one per schema version. Never edit a released step: add a new one.
const migration_def k_steps[] = {
    // 1: runs with raw samples, metrics and tags.
    {{{"runs",
       {{"id", T::key, ""},
        {"uuid", T::ordered_text, "NOT NULL UNIQUE"},
        {"workload", T::ordered_text, "NOT NULL"},
        {"backend", T::ordered_text, "NOT NULL"},
        {"config_key", T::ordered_text, "NOT NULL"},
        {"config", T::text, "NOT NULL"},
        {"system", T::ordered_text, "NOT NULL"},
        {"ruleset", T::text, "NOT NULL"},
        {"user_settings", T::text, "NOT NULL DEFAULT '{}'"},
        {"effective_settings", T::text, "NOT NULL DEFAULT '{}'"},
        {"environment", T::text, "NOT NULL DEFAULT '{}'"},
        {"fingerprint", T::text, "NOT NULL DEFAULT ''"},
        {"status", T::text, "NOT NULL CHECK (status IN ('ok', 'failed', 'skipped'))"},
        {"status_reason", T::text, "NOT NULL DEFAULT ''"},
        {"valid", T::flag, "NOT NULL CHECK (valid IN (0, 1))"},
        {"invalid_reasons", T::text, "NOT NULL DEFAULT '[]'"},
        {"started_at", T::ordered_text, "NOT NULL"},
        {"finished_at", T::ordered_text, "NOT NULL"},
        {"harness_revision", T::text, "NOT NULL DEFAULT ''"},
        {"sample_unit", T::text, "NOT NULL DEFAULT 's'"},
        {"sample_direction", T::text, "NOT NULL DEFAULT 'lower'"},
        {"extra", T::text, "NOT NULL DEFAULT '{}'"},
        {"mllog", T::text, ""}},
       nullptr},
      {"samples",
       {{"run_id", T::integer, k_run_ref},
        {"idx", T::integer, "NOT NULL"},
        {"value", T::real, "NOT NULL"},
        {"iterations", T::integer, "NOT NULL DEFAULT 1"},
        {"extra", T::text, ""}},
       "(run_id, idx)"},
      {"metrics",
       {{"run_id", T::integer, k_run_ref},
        {"name", T::ordered_text, "NOT NULL"},
        {"value", T::real, "NOT NULL"},
        {"unit", T::text, "NOT NULL DEFAULT ''"},
        {"direction", T::text, "NOT NULL CHECK (direction IN ('higher', 'lower'))"}},
       "(run_id, name)"},
      {"tags",
       {{"run_id", T::integer, k_run_ref}, {"tag", T::ordered_text, "NOT NULL"}},
       "(run_id, tag)"}},
     {},
     "",
     "",
     {}},
    // 2: systems (accelerator model and counts, published descriptions) and the source of a
    // run (measured here, or published results brought in by import).
    {{{"systems",
       {{"name", T::ordered_text, "PRIMARY KEY"},
        {"accelerator_model", T::text, "NOT NULL DEFAULT ''"},
        {"accelerators_per_node", T::integer, "NOT NULL DEFAULT 1"},
        {"nodes", T::integer, "NOT NULL DEFAULT 1"},
        {"source", T::text, "NOT NULL DEFAULT 'measured'"},
        {"description", T::text, "NOT NULL DEFAULT '{}'"}},
       nullptr}},
     {{"runs", {"source", T::text, "NOT NULL DEFAULT 'measured'"}}},
     "INSERT OR IGNORE INTO systems (name, accelerator_model)\n"
     "  SELECT system, COALESCE(json_extract(environment, '$.accelerator.model'), '') FROM runs "
     "GROUP BY system;\n",
     "INSERT INTO systems (name, accelerator_model)\n"
     "  SELECT system, COALESCE(MIN(environment::jsonb #>> '{accelerator,model}'), '') FROM runs "
     "GROUP BY system\n"
     "  ON CONFLICT DO NOTHING;\n",
     {}},
    // 3: indexes for the queries reports, comparisons and history make.
    {{},
     {},
     "",
     "",
     {{"runs_by_workload", "runs", "(workload, config_key)"},
      {"runs_by_system", "runs", "(system, started_at)"},
      {"runs_by_time", "runs", "(started_at)"},
      {"tags_by_tag", "tags", "(tag)"}}},
    // 4: bearer tokens of `accelbench serve`: only a salted SHA-256 of each secret is kept.
    {{{"api_tokens",
       {{"id", T::key, ""},
        {"name", T::text, "NOT NULL"},
        {"role", T::text, "NOT NULL CHECK (role IN ('read', 'write', 'admin'))"},
        {"salt", T::text, "NOT NULL"},
        {"hash", T::text, "NOT NULL"},
        {"created_at", T::text, "NOT NULL"},
        {"revoked_at", T::text, ""}},
       nullptr}},
     {},
     "",
     "",
     {}},
    // 5: what history and compare read, written once per run (and computed for the runs
    // already stored by apply_migrations): sample count, median, log median and its standard
    // error, the accelerator model and the job, with indexes for history's selectors.
    {{},
     {{"runs", {"sample_count", T::integer, "NOT NULL DEFAULT 0"}},
      {"runs", {"median", T::real, ""}},
      {"runs", {"log_median", T::real, ""}},
      {"runs", {"log_median_se", T::real, ""}},
      {"runs", {"accelerator_model", T::ordered_text, "NOT NULL DEFAULT ''"}},
      {"runs", {"job_id", T::ordered_text, "NOT NULL DEFAULT ''"}}},
     "",
     "",
     {{"runs_by_workload_time", "runs", "(workload, started_at, id)"},
      {"runs_by_accelerator", "runs", "(accelerator_model)"}}},
    // 6: environment fingerprints from the FNV-1a specification's offset basis (fingerprint
    // version 2): nothing created; apply_migrations runs refresh_fingerprints.
    {{}, {}, "", "", {}},
};
static_assert(std::size(k_steps) == k_schema_version, "one migration step per schema version");

// Migration `step` (from 1).
const migration_def& step_def(int64_t step) {
  if (step < 1 || step > k_schema_version)
    throw storage_error(fmt::format("no schema migration step {}", step));
  return k_steps[step - 1];
}

// "name TYPE rest", the name padded to `width` (at least one space after it).
std::string column_sql(const dialect& d, const column_def& c, size_t width) {
  std::string out =
      fmt::format("{:<{}}{}", c.name, std::max(width, std::strlen(c.name) + 1), d.type(c.type));
  if (*c.rest)
    out += std::string(" ") + c.rest;
  return out;
}

std::string create_table(const dialect& d, const table_def& t) {
  size_t width = 0;
  for (const auto& c : t.columns)
    width = std::max(width, std::strlen(c.name) + 1);
  std::vector<std::string> lines;
  lines.reserve(t.columns.size() + 1);
  for (const auto& c : t.columns)
    lines.push_back("  " + column_sql(d, c, width));
  if (t.primary_key)
    lines.push_back(fmt::format("  PRIMARY KEY {}", t.primary_key));
  return fmt::format("CREATE TABLE {} (\n{}\n){};\n", t.name, fmt::join(lines, ",\n"),
                     t.primary_key ? d.keyed_table_suffix() : "");
}

// Migration 5's data: the summary columns of every run already stored.
std::vector<stored_summary> stored_summaries(sql_runner& db) {
  std::map<int64_t, std::vector<double>> values;
  db.run("SELECT run_id, value FROM samples ORDER BY run_id, idx", {},
         [&](const row_reader& row) { values[row.integer(0)].push_back(row.real(1)); });
  std::vector<stored_summary> out;
  db.run("SELECT id, environment, extra FROM runs ORDER BY id", {}, [&](const row_reader& row) {
    stored_summary s;
    s.id = row.integer(0);
    auto found = values.find(s.id);
    s.summary =
        summarize_samples(found == values.end() ? std::vector<double>{} : std::move(found->second));
    s.accelerator_model = accelerator_of(parse_or(row.text(1), json::object()));
    s.job_id = job_of(parse_or(row.text(2), json::object()));
    out.push_back(std::move(s));
  });
  return out;
}

} // namespace

std::string migration_sql(const dialect& d, int64_t step) {
  const migration_def& m = step_def(step);
  std::string out;
  for (const auto& t : m.tables)
    out += create_table(d, t);
  for (const auto& a : m.columns)
    out += fmt::format("ALTER TABLE {} ADD COLUMN {};\n", a.table, column_sql(d, a.column, 0));
  out += d.either(m.sqlite_data, m.postgresql_data);
  for (const auto& i : m.indexes)
    out += fmt::format("CREATE INDEX {} ON {} {};\n", i.name, i.table, i.columns);
  return out;
}

std::vector<std::string> migration_objects(int64_t step) {
  const migration_def& m = step_def(step);
  std::vector<std::string> names;
  names.reserve(m.tables.size() + m.indexes.size());
  for (const auto& t : m.tables)
    names.emplace_back(t.name);
  for (const auto& i : m.indexes)
    names.emplace_back(i.name);
  std::sort(names.begin(), names.end());
  return names;
}

void apply_migrations(migration_target& db, int64_t from, int64_t to) {
  for (int64_t step = from + 1; step <= to; ++step) {
    if (std::string sql = migration_sql(db.runner().sql(), step); !sql.empty())
      db.exec(sql);
    if (step == 5)
      db.write_summaries(stored_summaries(db.runner()));
    if (step == 6)
      refresh_fingerprints(db.runner());
    db.set_version(step);
  }
}

} // namespace accelbench::store::detail
