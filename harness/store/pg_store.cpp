#include "harness/store/pg_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/rows.hpp"

namespace accelbench::store {

using namespace detail;

std::string libpq_version() {
  const int v = PQlibVersion(); // 150005 since PostgreSQL 10: major * 10000 + minor
  return v >= 100000 ? fmt::format("{}.{}", v / 10000, v % 10000)
                     : fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

std::string redact_uri(const std::string& uri) {
  std::string out = uri;
  // The query string first (its offsets are after the authority's).
  if (size_t q = out.find('?'); q != std::string::npos) {
    std::string kept;
    size_t at = q + 1;
    while (at <= out.size()) {
      size_t amp = out.find('&', at);
      if (amp == std::string::npos)
        amp = out.size();
      std::string item = out.substr(at, amp - at);
      if (!item.empty() && item.rfind("password=", 0) != 0)
        kept += (kept.empty() ? "" : "&") + item;
      at = amp + 1;
    }
    out = out.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  }
  size_t scheme = out.find("://");
  if (scheme == std::string::npos)
    return printable(out);
  size_t auth = scheme + 3;
  size_t auth_end = out.find_first_of("/?", auth);
  if (auth_end == std::string::npos)
    auth_end = out.size();
  size_t at = out.rfind('@', auth_end);
  if (at != std::string::npos && at >= auth) {
    size_t colon = out.find(':', auth);
    if (colon != std::string::npos && colon < at)
      out.erase(colon, at - colon);
  }
  return printable(out);
}

namespace {

// libpq's messages span lines ("...failed: Connection refused\n\tIs the server running...").
std::string one_line(const char* msg) {
  std::string out;
  bool space = false;
  for (const char* p = msg ? msg : ""; *p; ++p) {
    if (*p == '\n' || *p == '\r' || *p == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty())
      out += ' ';
    space = false;
    out += *p;
  }
  return printable(out);
}

using param = std::optional<std::string>; // nullopt: SQL NULL

std::string real_text(double v) { return fmt::format("{}", v); }

// A PostgreSQL array literal of text elements ({"a","b\"c",NULL}): how many rows travel as one
// parameter (unnest) instead of one round trip per row.
std::string array_literal(const std::vector<param>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ',';
    if (!items[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char ch : *items[i]) {
      if (ch == '"' || ch == '\\')
        out += '\\';
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

// Move-only owner of a result.
class result : public row_reader {
public:
  explicit result(PGresult* r) : m_r(r) {}
  result(result&& o) noexcept : m_r(o.m_r), m_row(o.m_row) { o.m_r = nullptr; }
  result(const result&) = delete;
  result& operator=(const result&) = delete;
  ~result() override {
    if (m_r)
      PQclear(m_r);
  }
  int rows() const { return PQntuples(m_r); }
  PGresult* release() {
    PGresult* r = m_r;
    m_r = nullptr;
    return r;
  }
  const result& at(int row) {
    m_row = row;
    return *this;
  }
  std::string text(int i) const override {
    return std::string(PQgetvalue(m_r, m_row, i), (size_t)PQgetlength(m_r, m_row, i));
  }
  int64_t integer(int i) const override {
    return std::strtoll(PQgetvalue(m_r, m_row, i), nullptr, 10);
  }
  double real(int i) const override { return std::strtod(PQgetvalue(m_r, m_row, i), nullptr); }
  bool is_null(int i) const override { return PQgetisnull(m_r, m_row, i) != 0; }

private:
  PGresult* m_r;
  int m_row = 0;
};

void ignore_notice(void*, const char*) {}

// Move-only owner of a connection; every statement is checked and a failure names the database.
class pg_connection {
public:
  pg_connection(PGconn* c, std::string shown) : m_c(c), m_shown(std::move(shown)) {}
  pg_connection(const pg_connection&) = delete;
  pg_connection& operator=(const pg_connection&) = delete;
  ~pg_connection() {
    if (m_c)
      PQfinish(m_c);
  }
  const std::string& shown() const { return m_shown; }

  // Statements with parameters are prepared once per connection and reused.
  result exec(const std::string& sql, const std::vector<param>& params = {}) {
    if (params.empty())
      return check(PQexec(m_c, sql.c_str()), sql);
    auto values = values_of(params);
    return check(PQexecPrepared(m_c, prepared(sql, params.size()).c_str(), (int)params.size(),
                                values.data(), nullptr, nullptr, 0),
                 sql);
  }

  // `sql` once per parameter list, all sent before any answer is read (libpq's pipeline mode): one
  // round trip for them all instead of one each. Inside the caller's transaction; the results come
  // back in order, and the first failure throws as exec's would.
  std::vector<result> exec_pipelined(const std::string& sql,
                                     const std::vector<std::vector<param>>& lists) {
    if (lists.empty())
      return {};
    const std::string name = prepared(sql, lists.front().size());
    if (PQenterPipelineMode(m_c) != 1)
      throw lost("cannot enter pipeline mode");
    for (const auto& params : lists) {
      auto values = values_of(params);
      if (PQsendQueryPrepared(m_c, name.c_str(), (int)params.size(), values.data(), nullptr,
                              nullptr, 0) != 1)
        break; // the connection failed: the results below say so
    }
    PQpipelineSync(m_c);
    // Every query's result (each followed by a null), then the sync's; only then are they checked,
    // so that a failure leaves the connection out of pipeline mode and usable for the rollback.
    std::vector<PGresult*> raw;
    for (size_t i = 0; i < lists.size(); ++i) {
      raw.push_back(PQgetResult(m_c));
      while (PGresult* more = PQgetResult(m_c))
        PQclear(more);
    }
    PQclear(PQgetResult(m_c)); // PGRES_PIPELINE_SYNC
    PQexitPipelineMode(m_c);
    std::vector<result> owned;
    owned.reserve(raw.size());
    for (PGresult* r : raw)
      owned.emplace_back(r);
    std::vector<result> out;
    out.reserve(owned.size());
    for (auto& o : owned)
      out.push_back(check(o.release(), sql));
    return out;
  }

  void rollback() {
    if (PQtransactionStatus(m_c) != PQTRANS_IDLE)
      PQclear(PQexec(m_c, "ROLLBACK"));
  }

private:
  static std::vector<const char*> values_of(const std::vector<param>& params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params)
      values.push_back(p ? p->c_str() : nullptr);
    return values;
  }
  const std::string& prepared(const std::string& sql, size_t nparams) {
    auto it = m_prepared.find(sql);
    if (it == m_prepared.end()) {
      std::string name = fmt::format("accelbench_{}", m_prepared.size());
      check(PQprepare(m_c, name.c_str(), sql.c_str(), (int)nparams, nullptr), sql);
      it = m_prepared.emplace(sql, name).first;
    }
    return it->second;
  }
  storage_error lost(const std::string& what) const {
    return storage_error(
        fmt::format("database '{}': {}: {}", m_shown, what, one_line(PQerrorMessage(m_c))));
  }
  result check(PGresult* r, const std::string& sql) {
    result res(r);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
      return res;
    if (PQstatus(m_c) != CONNECTION_OK)
      throw storage_error(fmt::format("database '{}': the connection to the server was lost: {}",
                                      m_shown, one_line(PQerrorMessage(m_c))));
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    std::string why = one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(m_c));
    if (state && std::string(state) == "25006")
      throw storage_error(fmt::format("database is read-only: {} ({})", m_shown, why));
    throw storage_error(fmt::format("database '{}': PostgreSQL error: {} (in: {})", m_shown, why,
                                    one_line(sql.substr(0, 200).c_str())));
  }
  PGconn* m_c;
  std::string m_shown;
  std::map<std::string, std::string> m_prepared;
};

// ---------------------------------------------------------------------------------------------
// Migrations: the same steps as SQLite's (sqlite_store.cpp), in PostgreSQL's types. Text that
// is sorted or compared (names, tags, timestamps) uses the "C" collation, as SQLite compares
// bytes, so that both stores order and match alike. JSON stays text: jsonb would reorder keys
// and reformat numbers, and db copy must give back the bytes it was given.
const char* k_pg_migrations[] = {
    // 1: runs with raw samples, metrics and tags.
    R"sql(
CREATE TABLE runs (
  id                 BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  uuid               TEXT COLLATE "C" NOT NULL UNIQUE,
  workload           TEXT COLLATE "C" NOT NULL,
  backend            TEXT COLLATE "C" NOT NULL,
  config_key         TEXT COLLATE "C" NOT NULL,
  config             TEXT NOT NULL,
  system             TEXT COLLATE "C" NOT NULL,
  ruleset            TEXT NOT NULL,
  user_settings      TEXT NOT NULL DEFAULT '{}',
  effective_settings TEXT NOT NULL DEFAULT '{}',
  environment        TEXT NOT NULL DEFAULT '{}',
  fingerprint        TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
  status_reason      TEXT NOT NULL DEFAULT '',
  valid              INTEGER NOT NULL CHECK (valid IN (0, 1)),
  invalid_reasons    TEXT NOT NULL DEFAULT '[]',
  started_at         TEXT COLLATE "C" NOT NULL,
  finished_at        TEXT COLLATE "C" NOT NULL,
  harness_revision   TEXT NOT NULL DEFAULT '',
  sample_unit        TEXT NOT NULL DEFAULT 's',
  sample_direction   TEXT NOT NULL DEFAULT 'lower',
  extra              TEXT NOT NULL DEFAULT '{}',
  mllog              TEXT
);
CREATE TABLE samples (
  run_id     BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx        BIGINT NOT NULL,
  value      DOUBLE PRECISION NOT NULL,
  iterations BIGINT NOT NULL DEFAULT 1,
  extra      TEXT,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE metrics (
  run_id    BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name      TEXT COLLATE "C" NOT NULL,
  value     DOUBLE PRECISION NOT NULL,
  unit      TEXT NOT NULL DEFAULT '',
  direction TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
  PRIMARY KEY (run_id, name)
);
CREATE TABLE tags (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, tag)
);
)sql",
    // 2: systems and the source of a run.
    R"sql(
CREATE TABLE systems (
  name                  TEXT COLLATE "C" PRIMARY KEY,
  accelerator_model     TEXT NOT NULL DEFAULT '',
  accelerators_per_node BIGINT NOT NULL DEFAULT 1,
  nodes                 BIGINT NOT NULL DEFAULT 1,
  source                TEXT NOT NULL DEFAULT 'measured',
  description           TEXT NOT NULL DEFAULT '{}'
);
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'measured';
INSERT INTO systems (name, accelerator_model)
  SELECT system, COALESCE(MIN(environment::jsonb #>> '{accelerator,model}'), '') FROM runs GROUP BY system
  ON CONFLICT DO NOTHING;
)sql",
    // 3: indexes for the queries reports, comparisons and history make.
    R"sql(
CREATE INDEX runs_by_workload ON runs (workload, config_key);
CREATE INDEX runs_by_system ON runs (system, started_at);
CREATE INDEX runs_by_time ON runs (started_at);
CREATE INDEX tags_by_tag ON tags (tag);
)sql",
    // 4: bearer tokens of `accelbench serve`: only a salted SHA-256 of each secret is kept.
    R"sql(
CREATE TABLE api_tokens (
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name       TEXT NOT NULL,
  role       TEXT NOT NULL CHECK (role IN ('read', 'write', 'admin')),
  salt       TEXT NOT NULL,
  hash       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
)sql",
    // 5: what history and compare read, written once per run (backfill_summaries computes them for
    // the runs already stored), with indexes for history's selectors.
    R"sql(
ALTER TABLE runs ADD COLUMN sample_count BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN median DOUBLE PRECISION, ADD COLUMN log_median DOUBLE PRECISION,
  ADD COLUMN log_median_se DOUBLE PRECISION,
  ADD COLUMN accelerator_model TEXT COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN job_id TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX runs_by_workload_time ON runs (workload, started_at, id);
CREATE INDEX runs_by_accelerator ON runs (accelerator_model);
)sql",
};
static_assert(sizeof(k_pg_migrations) / sizeof(k_pg_migrations[0]) == k_schema_version);

// The recorded version: one row, with the application that owns the schema.
constexpr const char* k_version_table = "accelbench_schema";
constexpr const char* k_application = "accelbench";

// The tables and indexes each migration creates (as sqlite_store.cpp's k_objects).
const std::vector<std::vector<std::string>> k_pg_objects = {
    {"metrics", "runs", "samples", "tags"},
    {"systems"},
    {"runs_by_system", "runs_by_time", "runs_by_workload", "tags_by_tag"},
    {"api_tokens"},
    {"runs_by_accelerator", "runs_by_workload_time"},
};

struct pg_schema {
  std::vector<std::string> tables, objects; // tables (and views); tables and indexes
  bool has_version_table = false;
  int64_t version = 0;
  int64_t version_rows = 0;
  std::string application;
  bool has(const std::string& n) const {
    return std::find(objects.begin(), objects.end(), n) != objects.end();
  }
  bool empty() const { return tables.empty(); }
};

pg_schema inspect(pg_connection& c) {
  pg_schema s;
  result r =
      c.exec("SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = "
             "c.relnamespace "
             "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'i') "
             "ORDER BY c.relname COLLATE \"C\"");
  for (int i = 0; i < r.rows(); ++i) {
    r.at(i);
    std::string name = r.text(0);
    s.objects.push_back(name);
    if (r.text(1) != "i")
      s.tables.push_back(name);
  }
  s.has_version_table = s.has(k_version_table);
  if (s.has_version_table) {
    result v = c.exec(fmt::format("SELECT version, application FROM {}", k_version_table));
    s.version_rows = v.rows();
    if (v.rows() == 1) {
      v.at(0);
      s.version = v.integer(0);
      s.application = v.text(1);
    }
  }
  return s;
}

std::string table_list(const pg_schema& s) {
  std::string out;
  for (size_t i = 0; i < s.tables.size() && i < 5; ++i)
    out += (i ? ", " : "") + printable(s.tables[i]);
  if (s.tables.size() > 5)
    out += fmt::format(" and {} more", s.tables.size() - 5);
  return out;
}

std::string partial_or_foreign(const pg_schema& s, const std::string& shown,
                               const std::string& detail) {
  return fmt::format(
      "database '{}' has a partial or foreign schema ({}; schema version {}): not an accelbench "
      "database, left unchanged",
      shown, detail, s.version);
}

// Why the database cannot be used as an accelbench database, or "" when it can (an empty one
// can: a write command creates the schema in it).
std::string schema_problem(const pg_schema& s, const std::string& shown) {
  if (s.empty())
    return {};
  if (!s.has_version_table)
    return partial_or_foreign(
        s, shown, fmt::format("it holds {} and no {} table", table_list(s), k_version_table));
  if (s.version_rows != 1)
    return partial_or_foreign(
        s, shown,
        fmt::format("its {} table holds {} rows instead of one", k_version_table, s.version_rows));
  if (s.application != k_application)
    return fmt::format("database '{}' is not an accelbench database: its {} table names the "
                       "application '{}'; left unchanged",
                       shown, k_version_table, printable(s.application));
  if (!known_version(s.version))
    return unsupported_version(s.version, shown);
  for (int64_t i = 0; i < k_schema_version; ++i)
    for (const auto& name : k_pg_objects[i]) {
      bool wanted = i < s.version;
      if (wanted != s.has(name))
        return partial_or_foreign(
            s, shown, fmt::format("'{}' {}", name, wanted ? "is missing" : "already exists"));
    }
  return {};
}

void refuse_unless_ours(const pg_schema& s, const std::string& shown) {
  if (auto why = schema_problem(s, shown); !why.empty())
    throw storage_error(why);
}

std::unique_ptr<pg_connection> connect(const std::string& uri) {
  const std::string shown = redact_uri(uri);
  // Defaults first: what the URI itself says wins (expand_dbname expands it in place).
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "accelbench", uri.c_str(), nullptr};
  PGconn* raw = PQconnectdbParams(keys, values, 1);
  if (!raw)
    throw storage_error(fmt::format("cannot connect to database '{}': out of memory", shown));
  auto c = std::make_unique<pg_connection>(raw, shown);
  if (PQstatus(raw) != CONNECTION_OK)
    throw storage_error(
        fmt::format("cannot connect to database '{}': {}", shown, one_line(PQerrorMessage(raw))));
  PQsetNoticeProcessor(raw, ignore_notice, nullptr);
  if (PQserverVersion(raw) < 100000)
    throw storage_error(
        fmt::format("database '{}': PostgreSQL {} is too old (accelbench needs 10 or newer)", shown,
                    PQparameterStatus(raw, "server_version")));
  // Doubles as text with every digit (they read back bit for bit); UTF-8 text both ways.
  c->exec("SET extra_float_digits = 3");
  c->exec("SET client_encoding = 'UTF8'");
  return c;
}

param optional_real(const std::optional<double>& v) {
  return v ? param(real_text(*v)) : std::nullopt;
}

// Migration 5's data: the summary columns of the runs already stored, computed by the code that
// writes them for a new run (rows.cpp), k_backfill_batch runs per UPDATE.
void backfill_summaries(pg_connection& c) {
  constexpr size_t k_backfill_batch = 5000;
  std::map<int64_t, std::vector<double>> values;
  {
    result r = c.exec("SELECT run_id, value FROM samples ORDER BY run_id, idx");
    for (int i = 0; i < r.rows(); ++i)
      values[r.at(i).integer(0)].push_back(r.real(1));
  }
  result runs = c.exec("SELECT id, environment, extra FROM runs ORDER BY id");
  for (int first = 0; first < runs.rows(); first += (int)k_backfill_batch) {
    std::vector<param> id, count, median, log_median, se, accel, job;
    for (int i = first; i < std::min(runs.rows(), first + (int)k_backfill_batch); ++i) {
      runs.at(i);
      auto found = values.find(runs.integer(0));
      const sample_summary sum = summarize_samples(
          found == values.end() ? std::vector<double>{} : std::move(found->second));
      id.emplace_back(std::to_string(runs.integer(0)));
      count.emplace_back(std::to_string(sum.count));
      median.emplace_back(optional_real(sum.median));
      log_median.emplace_back(optional_real(sum.log_median));
      se.emplace_back(optional_real(sum.log_median_se));
      accel.emplace_back(accelerator_of(parse_or(runs.text(1), json::object())));
      job.emplace_back(job_of(parse_or(runs.text(2), json::object())));
    }
    c.exec("UPDATE runs SET sample_count = u.n, median = u.m, log_median = u.lm, "
           "log_median_se = u.se, accelerator_model = u.acc, job_id = u.job FROM "
           "unnest($1::bigint[], $2::bigint[], $3::float8[], $4::float8[], $5::float8[], "
           "$6::text[], $7::text[]) AS u(id, n, m, lm, se, acc, job) WHERE runs.id = u.id",
           {array_literal(id), array_literal(count), array_literal(median),
            array_literal(log_median), array_literal(se), array_literal(accel),
            array_literal(job)});
  }
}

// Creates or brings the schema forward, and proves the database writable, in one transaction
// under an advisory lock: concurrent openers migrate one at a time, the later ones find it done.
void upgrade_for_writing(pg_connection& c, int target) {
  c.exec("BEGIN");
  try {
    c.exec("SELECT pg_advisory_xact_lock($1::bigint)", {std::to_string(k_application_id)});
    pg_schema s = inspect(c); // again: another process may have created it meanwhile
    refuse_unless_ours(s, c.shown());
    if (!s.has_version_table) {
      c.exec(fmt::format("CREATE TABLE {} (version INTEGER NOT NULL, application TEXT NOT NULL)",
                         k_version_table));
      c.exec(fmt::format("INSERT INTO {} (version, application) VALUES ($1::integer, $2)",
                         k_version_table),
             {std::string("0"), std::string(k_application)});
    }
    for (int64_t i = s.version; i < target; ++i) {
      c.exec(k_pg_migrations[i]);
      if (i + 1 == 5)
        backfill_summaries(c);
      c.exec(fmt::format("UPDATE {} SET version = $1::integer", k_version_table),
             {std::to_string(i + 1)});
    }
    // Written even when current: a read-only role or a standby fails here, before any work.
    c.exec(fmt::format("UPDATE {} SET version = version", k_version_table));
    c.exec("COMMIT");
  } catch (...) {
    c.rollback();
    throw;
  }
}

void prepare_for_reading(pg_connection& c) {
  c.exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
  pg_schema s = inspect(c);
  refuse_unless_ours(s, c.shown());
  if (s.empty())
    throw storage_error(
        fmt::format("database '{}' holds no tables: not an accelbench database", c.shown()));
  if (s.version < k_schema_version)
    throw storage_error(fmt::format(
        "database '{}' has schema version {} and this accelbench reads version {}: open "
        "it once with a write command (import, run, db copy --to) to upgrade it",
        c.shown(), s.version, k_schema_version));
}

std::string id_array(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0)
      out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

class pg_backend : public backend {
public:
  explicit pg_backend(std::unique_ptr<pg_connection> c) : m_c(std::move(c)) {}
  const char* kind() const override { return "postgresql"; }

  int schema_version() override {
    result r = m_c->exec(fmt::format("SELECT version FROM {}", k_version_table));
    return r.rows() == 1 ? (int)r.at(0).integer(0) : 0;
  }

  // One statement, so one transaction of its own: all of the run or nothing.
  bool insert_run(run& r) override { return insert_run_nt(r); }

  // One transaction; the runs' statements travel k_pipeline at a time in one round trip each.
  size_t insert_runs(std::vector<run>& rs) override {
    m_c->exec("BEGIN");
    size_t n = 0;
    try {
      for (size_t first = 0; first < rs.size(); first += k_pipeline)
        n += insert_pipelined(rs, first, std::min(rs.size(), first + k_pipeline));
      m_c->exec("COMMIT");
    } catch (...) {
      m_c->rollback();
      throw;
    }
    return n;
  }

  void upsert_system(const system_record& s) override {
    m_c->exec(R"sql(
INSERT INTO systems (name, accelerator_model, accelerators_per_node, nodes, source, description)
VALUES ($1, $2, $3::bigint, $4::bigint, $5, $6)
ON CONFLICT (name) DO UPDATE SET accelerator_model = excluded.accelerator_model,
  accelerators_per_node = excluded.accelerators_per_node, nodes = excluded.nodes,
  source = excluded.source, description = excluded.description)sql",
              {s.name, s.accelerator_model, std::to_string(s.accelerators_per_node),
               std::to_string(s.nodes), s.source, dump_json(s.description)});
  }

  std::optional<system_record> get_system(const std::string& name) override {
    result r =
        m_c->exec(fmt::format("SELECT {} FROM systems WHERE name = $1", k_system_columns), {name});
    if (r.rows() == 0)
      return std::nullopt;
    return system_from_row(r.at(0));
  }

  std::vector<system_record> systems() override {
    result r = m_c->exec(fmt::format("SELECT {} FROM systems ORDER BY name", k_system_columns));
    std::vector<system_record> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(system_from_row(r.at(i)));
    return out;
  }

  std::vector<std::string> tags() override {
    result r = m_c->exec("SELECT DISTINCT tag FROM tags ORDER BY tag");
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(r.at(i).text(0));
    return out;
  }

  int64_t count_runs() override { return m_c->exec("SELECT COUNT(*) FROM runs").at(0).integer(0); }

  table_counts counts() override {
    result r = m_c->exec("SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM samples), "
                         "(SELECT COUNT(*) FROM metrics), "
                         "(SELECT COUNT(*) FROM tags), (SELECT COUNT(*) FROM systems)");
    r.at(0);
    return {r.integer(0), r.integer(1), r.integer(2), r.integer(3), r.integer(4)};
  }

  int64_t insert_token(const token_record& t) override {
    result r = m_c->exec("INSERT INTO api_tokens (name, role, salt, hash, created_at) VALUES ($1, "
                         "$2, $3, $4, $5) RETURNING id",
                         {t.name, t.role, t.salt, t.hash, t.created_at});
    return r.at(0).integer(0);
  }

  std::optional<token_record> get_token(int64_t id) override {
    result r = m_c->exec("SELECT id, name, role, salt, hash, created_at, revoked_at FROM "
                         "api_tokens WHERE id = $1::bigint",
                         {std::to_string(id)});
    if (r.rows() == 0)
      return std::nullopt;
    return token_from(r.at(0));
  }

  std::vector<token_record> tokens() override {
    result r = m_c->exec(
        "SELECT id, name, role, salt, hash, created_at, revoked_at FROM api_tokens ORDER BY id");
    std::vector<token_record> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(token_from(r.at(i)));
    return out;
  }

  bool revoke_token(int64_t id, const std::string& revoked_at) override {
    result r = m_c->exec("UPDATE api_tokens SET revoked_at = $2 WHERE id = $1::bigint AND "
                         "revoked_at IS NULL RETURNING id",
                         {std::to_string(id), revoked_at});
    return r.rows() == 1;
  }

  // One statement per table, in one transaction: the rows of the runs are counted before the
  // runs go (the foreign keys cascade), then the systems they named that no run names any more.
  // One batch of delete_runs: the rows of `ids` counted, then deleted; the systems they named
  // go into `named`.
  void delete_batch(const std::vector<int64_t>& ids, table_counts& n,
                    std::set<std::string>& named) {
    const std::string arr = id_array(ids);
    result c = m_c->exec("SELECT (SELECT COUNT(*) FROM samples WHERE run_id = ANY($1::bigint[])), "
                         "(SELECT COUNT(*) FROM metrics WHERE run_id = ANY($1::bigint[])), "
                         "(SELECT COUNT(*) FROM tags WHERE run_id = ANY($1::bigint[]))",
                         {arr});
    c.at(0);
    n.samples += c.integer(0);
    n.metrics += c.integer(1);
    n.tags += c.integer(2);
    result runs =
        m_c->exec("DELETE FROM runs WHERE id = ANY($1::bigint[]) RETURNING system", {arr});
    n.runs += runs.rows();
    for (int i = 0; i < runs.rows(); ++i)
      named.insert(runs.at(i).text(0));
  }

  // In batches of k_delete_batch runs, so that `stop` is asked every fraction of a second rather
  // than once after a statement that deletes everything.
  table_counts delete_runs(const std::vector<int64_t>& ids,
                           const std::function<bool()>& stop) override {
    constexpr size_t k_delete_batch = 500;
    auto stopped = [&] {
      if (stop && stop())
        throw cancelled("deletion cancelled: rolled back, nothing deleted");
    };
    m_c->exec("BEGIN");
    try {
      table_counts n;
      std::set<std::string> named;
      for (size_t i = 0; i < ids.size(); i += k_delete_batch) {
        stopped();
        delete_batch({ids.begin() + (std::ptrdiff_t)i,
                      ids.begin() + (std::ptrdiff_t)std::min(ids.size(), i + k_delete_batch)},
                     n, named);
      }
      for (const auto& name : named)
        n.systems += m_c->exec("DELETE FROM systems WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM "
                               "runs WHERE system = $1) RETURNING name",
                               {name})
                         .rows();
      stopped();
      m_c->exec("COMMIT");
      return n;
    } catch (...) {
      m_c->rollback();
      throw;
    }
  }

  std::vector<int64_t> run_ids() override {
    result r = m_c->exec("SELECT id FROM runs ORDER BY id");
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(r.at(i).integer(0));
    return out;
  }

  std::optional<run> get_run(int64_t id, bool with_samples, bool with_log) override {
    result r =
        m_c->exec(fmt::format("SELECT {} FROM runs r WHERE r.id = $1::bigint", k_run_columns),
                  {std::to_string(id)});
    if (r.rows() == 0)
      return std::nullopt;
    std::vector<run> v{run_from_row(r.at(0))};
    load_children(v, with_samples, with_log);
    return std::move(v[0]);
  }

  std::vector<run> query(const run_filter& f) override;

private:
  static token_record token_from(const result& r) {
    token_record t;
    t.id = r.integer(0);
    t.name = r.text(1);
    t.role = r.text(2);
    t.salt = r.text(3);
    t.hash = r.text(4);
    t.created_at = r.text(5);
    t.revoked_at = r.is_null(6) ? "" : r.text(6);
    return t;
  }
  bool insert_run_nt(run& r);
  bool finish_insert(run& r, const run_row& w, result& ins);
  size_t insert_pipelined(std::vector<run>& rs, size_t first, size_t last);
  // Statements per pipeline: their answers (an id each) stay far below the socket buffers, so
  // sending them all before reading cannot block both sides.
  static constexpr size_t k_pipeline = 100;
  void load_children(std::vector<run>& runs, bool samples, bool log);
  std::unique_ptr<pg_connection> m_c;
};

// One statement per run (one round trip, and atomic by itself): the run's row, and, from the id
// it returns, its samples, metrics and tags as unnest'ed array parameters and its system when
// missing. ON CONFLICT: a run whose uuid is stored (by an earlier import or a concurrent writer)
// inserts nothing, and its stored id is looked up.
const std::string& insert_run_sql() {
  static const std::string sql = fmt::format(R"sql(
WITH ins AS (
  INSERT INTO runs ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::integer, $15, $16,
    $17, $18, $19, $20, $21, $22, $23, $36::bigint, $37::float8, $38::float8, $39::float8, $40, $41)
  ON CONFLICT (uuid) DO NOTHING RETURNING id),
smp AS (
  INSERT INTO samples (run_id, idx, value, iterations, extra)
  SELECT ins.id, u.idx, u.value, u.iterations, u.extra
  FROM ins, unnest($24::bigint[], $25::float8[], $26::bigint[], $27::text[]) AS u(idx, value, iterations, extra)),
met AS (
  INSERT INTO metrics (run_id, name, value, unit, direction)
  SELECT ins.id, u.name, u.value, u.unit, u.direction
  FROM ins, unnest($28::text[], $29::float8[], $30::text[], $31::text[]) AS u(name, value, unit, direction)),
tag AS (
  INSERT INTO tags (run_id, tag) SELECT ins.id, u.tag FROM ins, unnest($32::text[]) AS u(tag)),
sys AS (
  INSERT INTO systems (name, accelerator_model, accelerators_per_node, source)
  SELECT $6, $33, $34::bigint, $35 FROM ins ON CONFLICT (name) DO NOTHING)
SELECT id FROM ins)sql",
                                             k_insert_columns);
  return sql;
}

std::vector<param> insert_params(const run& r, const run_row& w) {
  std::vector<param> idx, value, iterations, extra;
  for (const auto& s : r.samples) {
    idx.emplace_back(std::to_string(s.index));
    value.emplace_back(real_text(s.value));
    iterations.emplace_back(std::to_string(s.iterations));
    extra.emplace_back(sample_extra(s));
  }
  std::vector<param> mname, mvalue, munit, mdir;
  for (const auto& m : w.metrics) {
    mname.emplace_back(m.name);
    mvalue.emplace_back(real_text(m.value));
    munit.emplace_back(m.unit);
    mdir.emplace_back(std::string(to_string(m.dir)));
  }
  std::vector<param> tags(w.tags.begin(), w.tags.end());
  return {w.uuid,
          w.workload,
          w.backend,
          w.config_key,
          w.config,
          w.system,
          w.ruleset,
          w.user_settings,
          w.effective_settings,
          w.environment,
          w.fingerprint,
          w.status,
          w.status_reason,
          std::to_string(w.valid),
          w.invalid_reasons,
          w.started_at,
          w.finished_at,
          w.harness_revision,
          w.sample_unit,
          w.sample_direction,
          w.extra,
          w.mllog,
          w.source,
          array_literal(idx),
          array_literal(value),
          array_literal(iterations),
          array_literal(extra),
          array_literal(mname),
          array_literal(mvalue),
          array_literal(munit),
          array_literal(mdir),
          array_literal(tags),
          w.system_accelerator,
          std::to_string(w.system_count),
          w.system_source,
          std::to_string(w.summary.count),
          optional_real(w.summary.median),
          optional_real(w.summary.log_median),
          optional_real(w.summary.log_median_se),
          w.accelerator_model,
          w.job_id};
}

bool pg_backend::insert_run_nt(run& r) {
  assign_uuid(r);
  run_row w = row_of(r);
  result ins = m_c->exec(insert_run_sql(), insert_params(r, w));
  return finish_insert(r, w, ins);
}

// The id the statement returned, or (a run already stored: nothing inserted) the stored one's.
bool pg_backend::finish_insert(run& r, const run_row& w, result& ins) {
  if (ins.rows() == 0) {
    r.id = m_c->exec("SELECT id FROM runs WHERE uuid = $1", {r.uuid}).at(0).integer(0);
    return false;
  }
  mark_stored(r, w, ins.at(0).integer(0));
  return true;
}

size_t pg_backend::insert_pipelined(std::vector<run>& rs, size_t first, size_t last) {
  std::vector<run_row> rows;
  std::vector<std::vector<param>> lists;
  for (size_t i = first; i < last; ++i) {
    assign_uuid(rs[i]);
    rows.push_back(row_of(rs[i]));
    lists.push_back(insert_params(rs[i], rows.back()));
  }
  auto results = m_c->exec_pipelined(insert_run_sql(), lists);
  size_t n = 0;
  for (size_t i = first; i < last; ++i)
    n += finish_insert(rs[i], rows[i - first], results[i - first]);
  return n;
}

void pg_backend::load_children(std::vector<run>& runs, bool samples, bool log) {
  if (runs.empty())
    return;
  std::map<int64_t, run*> by_id;
  std::vector<int64_t> ids;
  for (auto& r : runs) {
    by_id[r.id] = &r;
    ids.push_back(r.id);
  }
  const std::vector<param> wanted = {id_array(ids)};
  {
    result r = m_c->exec(
        "SELECT run_id, name, value, unit, direction FROM metrics WHERE run_id = ANY($1::bigint[]) "
        "ORDER BY run_id, name",
        wanted);
    for (int i = 0; i < r.rows(); ++i) {
      r.at(i);
      by_id[r.integer(0)]->metrics.push_back(
          {r.text(1), r.real(2), r.text(3), direction_from_string(r.text(4))});
    }
  }
  {
    result r = m_c->exec(
        "SELECT run_id, tag FROM tags WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, tag",
        wanted);
    for (int i = 0; i < r.rows(); ++i) {
      r.at(i);
      by_id[r.integer(0)]->tags.push_back(r.text(1));
    }
  }
  if (samples) {
    result r = m_c->exec(samples_sql("= ANY($1::bigint[])"), wanted);
    for (int i = 0; i < r.rows(); ++i) {
      r.at(i);
      by_id[r.integer(0)]->samples.push_back(sample_from_row(r));
    }
  }
  if (log) {
    result r = m_c->exec(
        "SELECT id, mllog FROM runs WHERE mllog IS NOT NULL AND id = ANY($1::bigint[])", wanted);
    for (int i = 0; i < r.rows(); ++i) {
      r.at(i);
      by_id[r.integer(0)]->mllog = r.text(1);
    }
  }
}

std::vector<run> pg_backend::query(const run_filter& f) {
  const bool history = f.with_samples && f.median_samples_only;
  std::string sql =
      fmt::format("SELECT {} FROM runs r LEFT JOIN systems s ON s.name = r.system WHERE TRUE",
                  history ? k_history_columns : k_run_columns);
  std::vector<param> params;
  auto arg = [&](std::string v) {
    params.emplace_back(std::move(v));
    return fmt::format("${}", params.size());
  };
  if (!f.systems.empty()) {
    sql += " AND r.system IN (";
    for (size_t i = 0; i < f.systems.size(); ++i)
      sql += (i ? ", " : "") + arg(f.systems[i]);
    sql += ")";
  }
  // LIKE in SQLite ignores ASCII case; ILIKE does the same here.
  if (!f.workloads.empty()) {
    sql += " AND (";
    for (size_t i = 0; i < f.workloads.size(); ++i) {
      const auto& w = f.workloads[i];
      if (i)
        sql += " OR ";
      if (!w.empty() && w.back() == '*')
        sql += "r.workload ILIKE " + arg(w.substr(0, w.size() - 1) + "%");
      else
        sql += "r.workload = " + arg(w);
    }
    sql += ")";
  }
  for (const auto& t : f.tags)
    sql += " AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = " + arg(t) + ")";
  if (!f.accelerators.empty()) {
    sql += " AND (";
    for (size_t i = 0; i < f.accelerators.size(); ++i) {
      if (i)
        sql += " OR ";
      std::string p = arg(fmt::format("%{}%", f.accelerators[i]));
      sql += fmt::format("s.accelerator_model ILIKE {0} OR r.accelerator_model ILIKE {0}", p);
    }
    sql += ")";
  }
  if (!f.ids.empty())
    sql += " AND r.id = ANY(" + arg(id_array(f.ids)) + "::bigint[])";
  for (const auto& [k, v] : f.config) {
    // Config values are stored as JSON (numbers as numbers); compare as text.
    std::string pk = arg(k);
    sql += " AND (r.config::jsonb ->> " + pk + ") = " + arg(v);
  }
  if (!f.source.empty())
    sql += " AND r.source = " + arg(f.source);
  if (!f.since.empty())
    sql += " AND r.started_at >= " + arg(f.since);
  sql += " ORDER BY r.started_at, r.id";
  result r = m_c->exec(sql, params);
  std::vector<run> out;
  out.reserve((size_t)r.rows());
  if (history) {
    config_cache configs;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(history_run_from_row(r.at(i), configs));
    return out;
  }
  for (int i = 0; i < r.rows(); ++i)
    out.push_back(run_from_row(r.at(i)));
  load_children(out, f.with_samples, f.with_log);
  return out;
}

} // namespace

std::unique_ptr<backend> open_postgres(const std::string& uri, access how) {
  auto c = connect(uri);
  if (how == access::read_only)
    prepare_for_reading(*c);
  else
    upgrade_for_writing(*c, k_schema_version);
  return std::make_unique<pg_backend>(std::move(c));
}

void migrate_postgres(const std::string& uri, int target) {
  if (!known_version(target))
    throw storage_error(fmt::format("cannot migrate to schema version {}", target));
  auto c = connect(uri);
  upgrade_for_writing(*c, target);
}

} // namespace accelbench::store
