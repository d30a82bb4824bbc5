#include "harness/store/store.hpp"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench::store {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
connection& connection::operator=(connection&& o) noexcept {
  if (this != &o) {
    if (m_db) sqlite3_close_v2(m_db);
    m_db = o.m_db;
    o.m_db = nullptr;
  }
  return *this;
}

connection::~connection() {
  if (m_db) sqlite3_close_v2(m_db);
}

void connection::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(m_db);
    sqlite3_free(err);
    throw storage_error(fmt::format("SQLite error: {} (in: {})", msg, sql.substr(0, 200)));
  }
}

statement::statement(sqlite3* db, const std::string& sql) : m_db(db), m_sql(sql) {
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr) != SQLITE_OK)
    throw storage_error(fmt::format("SQLite error: {} (in: {})", sqlite3_errmsg(db), sql.substr(0, 200)));
}

statement::~statement() {
  if (m_stmt) sqlite3_finalize(m_stmt);
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
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw storage_error(fmt::format("SQLite error: {} (in: {})", sqlite3_errmsg(m_db), m_sql.substr(0, 200)));
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
};
static_assert(sizeof(k_migrations) / sizeof(k_migrations[0]) == k_schema_version);

int read_user_version(sqlite3* db) {
  statement st(db, "PRAGMA user_version");
  st.step();
  return (int)st.col_int(0);
}
} // namespace

void migrate(sqlite3* db, int target) {
  auto exec = [db](const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db);
      sqlite3_free(err);
      throw storage_error(fmt::format("SQLite error during migration: {}", msg));
    }
  };
  // BEGIN IMMEDIATE: concurrent openers migrate one at a time; the loser sees the new version.
  exec("BEGIN IMMEDIATE");
  try {
    int v = read_user_version(db);
    if (v > k_schema_version) {
      exec("ROLLBACK");
      throw storage_error(fmt::format(
          "database schema version {} is newer than this accelbench ({}); upgrade accelbench", v,
          k_schema_version));
    }
    for (int i = v; i < target; ++i) {
      exec(k_migrations[i]);
      exec(fmt::format("PRAGMA user_version = {}", i + 1));
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// ---------------------------------------------------------------------------------------------
fs::path store::default_path() {
  if (const char* p = std::getenv("ACCELBENCH_DB"); p && *p) return fs::path(p);
  return data_root() / "results" / "accelbench.db";
}

store store::open(const fs::path& path, bool create) {
  std::error_code ec;
  if (!create && !fs::exists(path, ec))
    throw storage_error(fmt::format("database '{}' does not exist (run a benchmark or import first, or pass --db)", path.string()));
  if (create && path.has_parent_path() && !fs::exists(path.parent_path(), ec)) {
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throw storage_error(fmt::format("cannot create the directory of database '{}': {}",
                                      path.string(), ec.message()));
  }
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  connection c(raw);
  if (rc != SQLITE_OK)
    throw storage_error(fmt::format("cannot open database '{}': {}", path.string(),
                                    raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  sqlite3_busy_timeout(raw, 30000);
  sqlite3_extended_result_codes(raw, 1);
  try {
    // A corrupt file or one that is not a database fails on its first read.
    c.exec("PRAGMA foreign_keys = ON");
    {
      statement jm(raw, "PRAGMA journal_mode = WAL");
      jm.step();
    }
    c.exec("PRAGMA synchronous = NORMAL");
    migrate(raw, k_schema_version);
  } catch (const storage_error& e) {
    std::string what = e.what();
    if (what.find("not a database") != std::string::npos || what.find("malformed") != std::string::npos)
      throw storage_error(fmt::format("database '{}' is not a valid accelbench database (file is not a database or is corrupt)", path.string()));
    if (what.find("readonly") != std::string::npos || what.find("read-only") != std::string::npos ||
        what.find("unable to open") != std::string::npos)
      throw storage_error(fmt::format("database '{}' is not writable: {}", path.string(), what));
    throw storage_error(fmt::format("database '{}': {}", path.string(), what));
  }
  return store(std::move(c), path);
}

int store::schema_version() { return read_user_version(m_db.get()); }

namespace {
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
json parse_or(const std::string& s, json fallback) {
  if (s.empty()) return fallback;
  try {
    return json::parse(s);
  } catch (...) {
    return fallback;
  }
}
} // namespace

void store::insert_run_nt(run& r, bool& inserted) {
  if (r.uuid.empty()) r.uuid = new_uuid();
  {
    statement find(m_db.get(), "SELECT id FROM runs WHERE uuid = ?1");
    find.bind(1, r.uuid);
    if (find.step()) {
      r.id = find.col_int(0);
      inserted = false;
      return;
    }
  }
  if (r.harness_revision.empty() && r.environment.contains("harness"))
    r.harness_revision = r.environment["harness"].value("git_revision", "");
  if (r.fingerprint.empty() && !r.environment.empty()) r.fingerprint = environment_fingerprint(r.environment);
  statement ins(m_db.get(), R"sql(
INSERT INTO runs (uuid, workload, backend, config_key, config, system, ruleset, user_settings,
  effective_settings, environment, fingerprint, status, status_reason, valid, invalid_reasons,
  started_at, finished_at, harness_revision, sample_unit, sample_direction, extra, mllog, source)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
  ?21, ?22, ?23))sql");
  ins.bind(1, r.uuid).bind(2, r.cfg.workload).bind(3, r.cfg.backend).bind(4, r.cfg.key());
  ins.bind(5, dump(r.cfg.to_json())).bind(6, r.system).bind(7, r.ruleset);
  ins.bind(8, dump(r.user_settings)).bind(9, dump(r.effective_settings)).bind(10, dump(r.environment));
  ins.bind(11, r.fingerprint).bind(12, to_string(r.status)).bind(13, r.status_reason);
  ins.bind(14, (int64_t)(r.valid ? 1 : 0)).bind(15, dump(json(r.invalid_reasons)));
  ins.bind(16, r.started_at.empty() ? now_iso8601() : r.started_at);
  ins.bind(17, r.finished_at.empty() ? now_iso8601() : r.finished_at);
  ins.bind(18, r.harness_revision).bind(19, r.sample_unit).bind(20, to_string(r.sample_dir));
  ins.bind(21, dump(r.extra));
  if (r.mllog.empty())
    ins.bind_null(22);
  else
    ins.bind(22, r.mllog);
  ins.bind(23, r.source);
  ins.step();
  r.id = sqlite3_last_insert_rowid(m_db.get());

  statement s(m_db.get(), "INSERT INTO samples (run_id, idx, value, iterations, extra) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& smp : r.samples) {
    s.bind(1, r.id).bind(2, smp.index).bind(3, smp.value).bind(4, smp.iterations);
    if (smp.extra.empty())
      s.bind_null(5);
    else
      s.bind(5, dump(smp.extra));
    s.step();
    s.reset();
  }
  statement m(m_db.get(), "INSERT OR REPLACE INTO metrics (run_id, name, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& mt : r.metrics) {
    m.bind(1, r.id).bind(2, mt.name).bind(3, mt.value).bind(4, mt.unit).bind(5, to_string(mt.dir));
    m.step();
    m.reset();
  }
  statement t(m_db.get(), "INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?1, ?2)");
  for (const auto& tag : r.tags) {
    t.bind(1, r.id).bind(2, tag);
    t.step();
    t.reset();
  }
  // A run's system exists in the systems table (measured systems get their accelerator from the
  // environment; imported ones are upserted by the importer with the full description).
  statement sys(m_db.get(), "INSERT OR IGNORE INTO systems (name, accelerator_model, accelerators_per_node, source) VALUES (?1, ?2, ?3, ?4)");
  std::string accel = r.environment.contains("accelerator") ? r.environment["accelerator"].value("model", "") : "";
  int64_t count = r.environment.contains("accelerator") ? r.environment["accelerator"].value("count", int64_t{1}) : 1;
  sys.bind(1, r.system).bind(2, accel).bind(3, count).bind(4, r.source == "published" ? std::string("published") : std::string("measured"));
  sys.step();
  inserted = true;
}

bool store::insert_run(run& r) {
  m_db.exec("BEGIN IMMEDIATE");
  bool inserted = false;
  try {
    insert_run_nt(r, inserted);
    m_db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return inserted;
}

size_t store::insert_runs(std::vector<run>& rs) {
  m_db.exec("BEGIN IMMEDIATE");
  size_t n = 0;
  try {
    for (auto& r : rs) {
      bool inserted = false;
      insert_run_nt(r, inserted);
      n += inserted;
    }
    m_db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return n;
}

void store::upsert_system(const system_record& s) {
  statement st(m_db.get(), R"sql(
INSERT INTO systems (name, accelerator_model, accelerators_per_node, nodes, source, description)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (name) DO UPDATE SET accelerator_model = excluded.accelerator_model,
  accelerators_per_node = excluded.accelerators_per_node, nodes = excluded.nodes,
  source = excluded.source, description = excluded.description)sql");
  st.bind(1, s.name).bind(2, s.accelerator_model).bind(3, s.accelerators_per_node).bind(4, s.nodes);
  st.bind(5, s.source).bind(6, dump(s.description));
  st.step();
}

namespace {
system_record system_from_row(const statement& st) {
  system_record s;
  s.name = st.col_text(0);
  s.accelerator_model = st.col_text(1);
  s.accelerators_per_node = st.col_int(2);
  s.nodes = st.col_int(3);
  s.source = st.col_text(4);
  s.description = parse_or(st.col_text(5), json::object());
  return s;
}
} // namespace

json to_json(const system_record& s) {
  return {{"name", s.name}, {"accelerator_model", s.accelerator_model},
          {"accelerators_per_node", s.accelerators_per_node}, {"nodes", s.nodes},
          {"source", s.source}, {"description", s.description}};
}

system_record system_from_json(const json& j) {
  system_record rec;
  rec.name = j.value("name", "");
  rec.accelerator_model = j.value("accelerator_model", "");
  rec.accelerators_per_node = j.value("accelerators_per_node", int64_t{1});
  rec.nodes = j.value("nodes", int64_t{1});
  rec.source = j.value("source", "measured");
  rec.description = j.value("description", json::object());
  return rec;
}

std::optional<system_record> store::get_system(const std::string& name) {
  statement st(m_db.get(), "SELECT name, accelerator_model, accelerators_per_node, nodes, source, description FROM systems WHERE name = ?1");
  st.bind(1, name);
  if (!st.step()) return std::nullopt;
  return system_from_row(st);
}

std::vector<system_record> store::systems() {
  std::vector<system_record> out;
  statement st(m_db.get(), "SELECT name, accelerator_model, accelerators_per_node, nodes, source, description FROM systems ORDER BY name");
  while (st.step()) out.push_back(system_from_row(st));
  return out;
}

std::vector<std::string> store::tags() {
  std::vector<std::string> out;
  statement st(m_db.get(), "SELECT DISTINCT tag FROM tags ORDER BY tag");
  while (st.step()) out.push_back(st.col_text(0));
  return out;
}

int64_t store::count_runs() {
  statement st(m_db.get(), "SELECT COUNT(*) FROM runs");
  st.step();
  return st.col_int(0);
}

namespace {
const char* k_run_columns =
    "r.id, r.uuid, r.workload, r.backend, r.config, r.system, r.ruleset, r.user_settings, "
    "r.effective_settings, r.environment, r.fingerprint, r.status, r.status_reason, r.valid, "
    "r.invalid_reasons, r.started_at, r.finished_at, r.harness_revision, r.sample_unit, "
    "r.sample_direction, r.extra, r.source";

run run_from_row(const statement& st) {
  run r;
  r.id = st.col_int(0);
  r.uuid = st.col_text(1);
  r.cfg.workload = st.col_text(2);
  r.cfg.backend = st.col_text(3);
  json cfg = parse_or(st.col_text(4), json::object());
  for (const auto& [k, v] : cfg.items())
    r.cfg.values[k] = v.is_string() ? v.get<std::string>() : v.dump();
  r.system = st.col_text(5);
  r.ruleset = st.col_text(6);
  r.user_settings = parse_or(st.col_text(7), json::object());
  r.effective_settings = parse_or(st.col_text(8), json::object());
  r.environment = parse_or(st.col_text(9), json::object());
  r.fingerprint = st.col_text(10);
  r.status = run_status_from_string(st.col_text(11));
  r.status_reason = st.col_text(12);
  r.valid = st.col_int(13) != 0;
  r.invalid_reasons = parse_or(st.col_text(14), json::array()).get<std::vector<std::string>>();
  r.started_at = st.col_text(15);
  r.finished_at = st.col_text(16);
  r.harness_revision = st.col_text(17);
  r.sample_unit = st.col_text(18);
  r.sample_dir = direction_from_string(st.col_text(19));
  r.extra = parse_or(st.col_text(20), json::object());
  r.source = st.col_text(21);
  return r;
}
} // namespace

void store::load_children(std::vector<run>& runs, bool samples, bool log) {
  if (runs.empty()) return;
  std::map<int64_t, run*> by_id;
  for (auto& r : runs) by_id[r.id] = &r;
  // One pass over each child table for all requested runs (a temp table of ids keeps the
  // statement size independent of the number of runs).
  m_db.exec("CREATE TEMP TABLE IF NOT EXISTS want (id INTEGER PRIMARY KEY)");
  m_db.exec("DELETE FROM temp.want");
  {
    statement ins(m_db.get(), "INSERT OR IGNORE INTO temp.want (id) VALUES (?1)");
    for (auto& r : runs) {
      ins.bind(1, r.id);
      ins.step();
      ins.reset();
    }
  }
  {
    statement st(m_db.get(), "SELECT m.run_id, m.name, m.value, m.unit, m.direction FROM metrics m JOIN temp.want w ON w.id = m.run_id");
    while (st.step())
      by_id[st.col_int(0)]->metrics.push_back(
          {st.col_text(1), st.col_double(2), st.col_text(3), direction_from_string(st.col_text(4))});
  }
  {
    statement st(m_db.get(), "SELECT t.run_id, t.tag FROM tags t JOIN temp.want w ON w.id = t.run_id ORDER BY t.run_id, t.tag");
    while (st.step()) by_id[st.col_int(0)]->tags.push_back(st.col_text(1));
  }
  if (samples) {
    statement st(m_db.get(), "SELECT s.run_id, s.idx, s.value, s.iterations, s.extra FROM samples s JOIN temp.want w ON w.id = s.run_id ORDER BY s.run_id, s.idx");
    while (st.step()) {
      sample smp;
      smp.index = st.col_int(1);
      smp.value = st.col_double(2);
      smp.iterations = st.col_int(3);
      if (!st.col_is_null(4)) smp.extra = parse_or(st.col_text(4), json::object());
      by_id[st.col_int(0)]->samples.push_back(std::move(smp));
    }
  }
  if (log) {
    statement st(m_db.get(), "SELECT r.id, r.mllog FROM runs r JOIN temp.want w ON w.id = r.id WHERE r.mllog IS NOT NULL");
    while (st.step()) by_id[st.col_int(0)]->mllog = st.col_text(1);
  }
  m_db.exec("DELETE FROM temp.want");
}

std::optional<run> store::get_run(int64_t id, bool with_samples, bool with_log) {
  statement st(m_db.get(), fmt::format("SELECT {} FROM runs r WHERE r.id = ?1", k_run_columns));
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  std::vector<run> v{run_from_row(st)};
  load_children(v, with_samples, with_log);
  return std::move(v[0]);
}

std::vector<run> store::query(const run_filter& f) {
  std::string sql = fmt::format("SELECT {} FROM runs r LEFT JOIN systems s ON s.name = r.system WHERE 1=1", k_run_columns);
  std::vector<std::string> params;
  auto param = [&](std::string v) {
    params.push_back(std::move(v));
    return fmt::format("?{}", params.size());
  };
  if (!f.systems.empty()) {
    sql += " AND r.system IN (";
    for (size_t i = 0; i < f.systems.size(); ++i) sql += (i ? ", " : "") + param(f.systems[i]);
    sql += ")";
  }
  if (!f.workloads.empty()) {
    sql += " AND (";
    for (size_t i = 0; i < f.workloads.size(); ++i) {
      const auto& w = f.workloads[i];
      if (i) sql += " OR ";
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
      if (i) sql += " OR ";
      std::string p = param("%" + f.accelerators[i] + "%");
      sql += "s.accelerator_model LIKE " + p + " OR json_extract(r.environment, '$.accelerator.model') LIKE " + p;
    }
    sql += ")";
  }
  if (!f.ids.empty()) {
    sql += " AND r.id IN (";
    for (size_t i = 0; i < f.ids.size(); ++i) sql += (i ? ", " : "") + std::to_string(f.ids[i]);
    sql += ")";
  }
  for (const auto& [k, v] : f.config) {
    // Config values are stored as JSON (numbers as numbers); compare as text.
    std::string pk = param("$." + k);
    sql += " AND CAST(json_extract(r.config, " + pk + ") AS TEXT) = " + param(v);
  }
  if (!f.source.empty()) sql += " AND r.source = " + param(f.source);
  if (!f.since.empty()) sql += " AND r.started_at >= " + param(f.since);
  sql += " ORDER BY r.started_at, r.id";
  statement st(m_db.get(), sql);
  for (size_t i = 0; i < params.size(); ++i) st.bind((int)i + 1, params[i]);
  std::vector<run> out;
  while (st.step()) out.push_back(run_from_row(st));
  load_children(out, f.with_samples, f.with_log);
  return out;
}

} // namespace accelbench::store
