#pragma once
// The store's schema, defined once (schema_ddl.cpp): each migration's tables, added columns,
// indexes and data as neutral data, written in a store's SQL through its dialect (sql.hpp). A new
// column is one edit there, and both stores create it. Internal to harness/store.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/store/sql.hpp"

namespace accelbench::store::detail {

// The SQL of migration `step` (1..k_schema_version) in dialect `d`: its statements, each ending
// with ";" ("" for a step that creates nothing). Never edit a released step: add a new one.
std::string migration_sql(const dialect& d, int64_t step);

// The names of the tables and indexes migration `step` creates, sorted: how a database is
// recognised as ours (SQLite databases written before application_id was set have only these),
// and how a half-created or foreign schema is told from one a migration can bring forward
// (schema.cpp).
std::vector<std::string> migration_objects(int64_t step);

// One run's summary columns (migration 5), computed for a run already stored.
struct stored_summary {
  int64_t id = 0;
  sample_summary summary;
  std::string accelerator_model, job_id;
};

// How a store runs the migration steps inside its transaction: the statements, the summary
// columns of migration 5 (each store writes them its own way), and the recorded version.
class migration_target {
public:
  virtual ~migration_target() = default;
  virtual sql_runner& runner() = 0;
  virtual void exec(const std::string& sql) = 0;
  virtual void write_summaries(const std::vector<stored_summary>& runs) = 0;
  virtual void set_version(int64_t version) = 0;
};

// Steps from..to, inside the caller's transaction: each step's SQL, migration 5's summaries of
// the runs already stored (computed by the code that writes them for a new run, rows.cpp, so that
// an old run and a new one read alike), migration 6's refresh_fingerprints, the new version.
void apply_migrations(migration_target& db, int64_t from, int64_t to);

} // namespace accelbench::store::detail
