#include "harness/store/pg_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/rows.hpp"
#include "harness/store/schema.hpp"
#include "harness/store/schema_ddl.hpp"
#include "harness/store/sql.hpp"

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
  // The rows an INSERT, UPDATE or DELETE changed.
  int64_t changed() const { return std::strtoll(PQcmdTuples(m_r), nullptr, 10); }

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
// Migrations: the steps of schema_ddl.cpp, applied through PostgreSQL.
// The recorded version: one row, with the application that owns the schema.
constexpr const char* k_version_table = "accelbench_schema";
constexpr const char* k_application = "accelbench";

// What inspect reads: the neutral facts the schema check decides on, and whether the version
// table exists yet.
struct pg_schema {
  schema_facts facts;
  bool has_version_table = false;
};

pg_schema inspect(pg_connection& c) {
  pg_schema s;
  std::vector<std::string> tables; // and views
  result r =
      c.exec("SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = "
             "c.relnamespace "
             "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'i') "
             "ORDER BY c.relname COLLATE \"C\"");
  for (int i = 0; i < r.rows(); ++i) {
    r.at(i);
    s.facts.objects.push_back(r.text(0));
    if (r.text(1) != "i")
      tables.push_back(r.text(0));
  }
  s.facts.empty = tables.empty();
  s.has_version_table = s.facts.has(k_version_table);
  if (!s.has_version_table) {
    s.facts.not_ours =
        fmt::format("it holds {} and no {} table", name_list(tables), k_version_table);
    return s;
  }
  result v = c.exec(fmt::format("SELECT version, application FROM {}", k_version_table));
  if (v.rows() != 1) {
    s.facts.not_ours =
        fmt::format("its {} table holds {} rows instead of one", k_version_table, v.rows());
    return s;
  }
  s.facts.version = v.at(0).integer(0);
  if (v.text(1) != k_application)
    s.facts.foreign_owner = fmt::format("its {} table names the application '{}'", k_version_table,
                                        printable(v.text(1)));
  return s;
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

// The connection as the statements both stores share see it (sql.cpp).
class pg_runner : public sql_runner {
public:
  explicit pg_runner(pg_connection& c) : m_c(c) {}
  const dialect& sql() const override { return m_dialect; }
  int64_t run(const std::string& sql, const std::vector<value>& params,
              const std::function<void(const row_reader&)>& each) override {
    std::vector<param> texts;
    texts.reserve(params.size());
    for (const auto& v : params)
      texts.push_back(text_of(v));
    result r = m_c.exec(sql, texts);
    if (each)
      for (int i = 0; i < r.rows(); ++i)
        each(r.at(i));
    return r.changed();
  }

private:
  static param text_of(const value& v) {
    switch (v.is) {
    case value::type::integer:
      return std::to_string(v.integer);
    case value::type::real:
      return real_text(v.real);
    case value::type::text:
      return v.text;
    case value::type::null:
      break;
    }
    return std::nullopt;
  }
  pg_connection& m_c;
  dialect m_dialect{dialect::kind::postgresql};
};

// The migration steps as PostgreSQL runs them: the version table records the version, and the
// summary columns of migration 5 travel k_backfill_batch runs per UPDATE.
class pg_migration : public migration_target {
public:
  explicit pg_migration(pg_connection& c) : m_c(c), m_runner(c) {}
  sql_runner& runner() override { return m_runner; }
  void exec(const std::string& sql) override { m_c.exec(sql); }
  void set_version(int64_t v) override {
    m_c.exec(fmt::format("UPDATE {} SET version = $1::integer", k_version_table),
             {std::to_string(v)});
  }
  void write_summaries(const std::vector<stored_summary>& runs) override {
    constexpr size_t k_backfill_batch = 5000;
    for (size_t first = 0; first < runs.size(); first += k_backfill_batch) {
      std::vector<param> id, count, median, log_median, se, accel, job;
      for (size_t i = first; i < std::min(runs.size(), first + k_backfill_batch); ++i) {
        const stored_summary& r = runs[i];
        id.emplace_back(std::to_string(r.id));
        count.emplace_back(std::to_string(r.summary.count));
        median.emplace_back(optional_real(r.summary.median));
        log_median.emplace_back(optional_real(r.summary.log_median));
        se.emplace_back(optional_real(r.summary.log_median_se));
        accel.emplace_back(r.accelerator_model);
        job.emplace_back(r.job_id);
      }
      m_c.exec("UPDATE runs SET sample_count = u.n, median = u.m, log_median = u.lm, "
               "log_median_se = u.se, accelerator_model = u.acc, job_id = u.job FROM "
               "unnest($1::bigint[], $2::bigint[], $3::float8[], $4::float8[], $5::float8[], "
               "$6::text[], $7::text[]) AS u(id, n, m, lm, se, acc, job) WHERE runs.id = u.id",
               {array_literal(id), array_literal(count), array_literal(median),
                array_literal(log_median), array_literal(se), array_literal(accel),
                array_literal(job)});
    }
  }

private:
  pg_connection& m_c;
  pg_runner m_runner;
};

// Creates or brings the schema forward, and proves the database writable, in one transaction
// under an advisory lock: concurrent openers migrate one at a time, the later ones find it done.
void upgrade_for_writing(pg_connection& c, int target) {
  c.exec("BEGIN");
  try {
    c.exec("SELECT pg_advisory_xact_lock($1::bigint)", {std::to_string(k_application_id)});
    pg_schema s = inspect(c); // again: another process may have created it meanwhile
    refuse_unless_ours(s.facts, c.shown());
    if (!s.has_version_table) {
      c.exec(fmt::format("CREATE TABLE {} (version INTEGER NOT NULL, application TEXT NOT NULL)",
                         k_version_table));
      c.exec(fmt::format("INSERT INTO {} (version, application) VALUES ($1::integer, $2)",
                         k_version_table),
             {std::string("0"), std::string(k_application)});
    }
    pg_migration steps(c);
    apply_migrations(steps, s.facts.version, target);
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
  const schema_facts s = inspect(c).facts;
  refuse_unless_ours(s, c.shown());
  if (s.empty)
    throw storage_error(
        fmt::format("database '{}' holds no tables: not an accelbench database", c.shown()));
  if (s.version < k_schema_version)
    throw storage_error(fmt::format(
        "database '{}' has schema version {} and this accelbench reads version {}: open "
        "it once with a write command (import, run, db copy --to) to upgrade it",
        c.shown(), s.version, k_schema_version));
}

class pg_backend : public sql_backend {
public:
  explicit pg_backend(std::unique_ptr<pg_connection> c) : m_c(std::move(c)), m_runner(*m_c) {}
  const char* kind() const override { return "postgresql"; }

  int schema_version() override {
    result r = m_c->exec(fmt::format("SELECT version FROM {}", k_version_table));
    return r.rows() == 1 ? (int)r.at(0).integer(0) : 0;
  }

  // One statement, so one transaction of its own: all of the run or nothing.
  bool insert_run(run& r) override { return insert_run_nt(r); }

  // One transaction; the runs' statements travel k_pipeline at a time in one round trip each.
  size_t insert_runs(std::vector<run>& rs) override {
    return in_transaction([&] {
      size_t n = 0;
      for (size_t first = 0; first < rs.size(); first += k_pipeline)
        n += insert_pipelined(rs, first, std::min(rs.size(), first + k_pipeline));
      return n;
    });
  }

  // In batches of k_delete_batch runs, so that `stop` is asked every fraction of a second rather
  // than once after a statement that deletes everything.
  table_counts delete_runs(const std::vector<int64_t>& ids,
                           const std::function<bool()>& stop) override {
    constexpr size_t k_delete_batch = 500;
    return in_transaction([&] {
      table_counts n = delete_in_batches(ids, k_delete_batch, stop);
      stop_if_asked(stop);
      return n;
    });
  }

protected:
  sql_runner& runner() override { return m_runner; }

private:
  // `work` in one transaction: committed when it returns, rolled back when it throws.
  template <class F> std::invoke_result_t<F> in_transaction(F work) {
    m_c->exec("BEGIN");
    try {
      auto out = work();
      m_c->exec("COMMIT");
      return out;
    } catch (...) {
      m_c->rollback();
      throw;
    }
  }
  bool insert_run_nt(run& r);
  bool finish_insert(run& r, const run_row& w, result& ins);
  size_t insert_pipelined(std::vector<run>& rs, size_t first, size_t last);
  // Statements per pipeline: their answers (an id each) stay far below the socket buffers, so
  // sending them all before reading cannot block both sides.
  static constexpr size_t k_pipeline = 100;
  std::unique_ptr<pg_connection> m_c;
  pg_runner m_runner;
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
