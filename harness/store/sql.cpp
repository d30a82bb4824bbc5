#include "harness/store/sql.hpp"

#include <map>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::store::detail {

// ---------------------------------------------------------------------------------------------
// The dialect.
std::string dialect::param(int n) const {
  return m_kind == kind::sqlite ? fmt::format("?{}", n) : fmt::format("${}", n);
}

std::string dialect::integer(int n) const {
  return m_kind == kind::sqlite ? fmt::format("?{}", n) : fmt::format("${}::bigint", n);
}

const char* dialect::like() const { return m_kind == kind::sqlite ? "LIKE" : "ILIKE"; }

std::string dialect::json_field(const std::string& column, int n) const {
  return m_kind == kind::sqlite ? fmt::format("CAST(json_extract({}, ?{}) AS TEXT)", column, n)
                                : fmt::format("({}::jsonb ->> ${})", column, n);
}

value dialect::json_key(const std::string& key) const {
  return m_kind == kind::sqlite ? "$." + key : key;
}

std::string dialect::in_ids(int n) const {
  return m_kind == kind::sqlite ? fmt::format("IN (SELECT value FROM json_each(?{}))", n)
                                : fmt::format("= ANY(${}::bigint[])", n);
}

value dialect::id_set(const std::vector<int64_t>& ids) const {
  if (m_kind == kind::sqlite)
    return json(ids).dump();
  return fmt::format("{{{}}}", fmt::join(ids, ","));
}

void refresh_fingerprints(sql_runner& db) {
  std::vector<std::pair<int64_t, std::string>> changed;
  db.run("SELECT id, environment, fingerprint FROM runs ORDER BY id", {},
         [&](const row_reader& row) {
           const std::string stored = row.text(2);
           std::string now = current_fingerprint(parse_or(row.text(1), json::object()), stored);
           if (now != stored)
             changed.emplace_back(row.integer(0), std::move(now));
         });
  const dialect& d = db.sql();
  const std::string sql =
      fmt::format("UPDATE runs SET fingerprint = {} WHERE id = {}", d.param(2), d.integer(1));
  for (auto& [id, fingerprint] : changed)
    db.run(sql, {id, fingerprint});
}

void stop_if_asked(const std::function<bool()>& stop) {
  if (stop && stop())
    throw cancelled("deletion cancelled: rolled back, nothing deleted");
}

// ---------------------------------------------------------------------------------------------
// Systems, tags, counts, ids.
void sql_backend::upsert_system(const system_record& s) {
  const dialect& d = runner().sql();
  runner().run(fmt::format(R"sql(
INSERT INTO systems (name, accelerator_model, accelerators_per_node, nodes, source, description)
VALUES ({}, {}, {}, {}, {}, {})
ON CONFLICT (name) DO UPDATE SET accelerator_model = excluded.accelerator_model,
  accelerators_per_node = excluded.accelerators_per_node, nodes = excluded.nodes,
  source = excluded.source, description = excluded.description)sql",
                           d.param(1), d.param(2), d.integer(3), d.integer(4), d.param(5),
                           d.param(6)),
               {s.name, s.accelerator_model, s.accelerators_per_node, s.nodes, s.source,
                dump_json(s.description)});
}

std::optional<system_record> sql_backend::get_system(const std::string& name) {
  std::optional<system_record> out;
  runner().run(fmt::format("SELECT {} FROM systems WHERE name = {}", k_system_columns,
                           runner().sql().param(1)),
               {name}, [&](const row_reader& row) { out = system_from_row(row); });
  return out;
}

std::vector<system_record> sql_backend::systems() {
  std::vector<system_record> out;
  runner().run(fmt::format("SELECT {} FROM systems ORDER BY name", k_system_columns), {},
               [&](const row_reader& row) { out.push_back(system_from_row(row)); });
  return out;
}

std::vector<std::string> sql_backend::tags() {
  std::vector<std::string> out;
  runner().run("SELECT DISTINCT tag FROM tags ORDER BY tag", {},
               [&](const row_reader& row) { out.push_back(row.text(0)); });
  return out;
}

int64_t sql_backend::count_runs() {
  int64_t n = 0;
  runner().run("SELECT COUNT(*) FROM runs", {}, [&](const row_reader& row) { n = row.integer(0); });
  return n;
}

table_counts sql_backend::counts() {
  table_counts n;
  runner().run(
      "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM samples), "
      "(SELECT COUNT(*) FROM metrics), (SELECT COUNT(*) FROM tags), "
      "(SELECT COUNT(*) FROM systems)",
      {}, [&](const row_reader& row) {
        n = {row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.integer(4)};
      });
  return n;
}

std::vector<int64_t> sql_backend::run_ids() {
  std::vector<int64_t> out;
  runner().run("SELECT id FROM runs ORDER BY id", {},
               [&](const row_reader& row) { out.push_back(row.integer(0)); });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Runs read.
std::optional<run> sql_backend::get_run(int64_t id, bool with_samples, bool with_log) {
  std::vector<run> v;
  runner().run(fmt::format("SELECT {} FROM runs r WHERE r.id = {}", k_run_columns,
                           runner().sql().integer(1)),
               {id}, [&](const row_reader& row) { v.push_back(run_from_row(row)); });
  if (v.empty())
    return std::nullopt;
  load_children(v, with_samples, with_log);
  return std::move(v[0]);
}

// One pass over each child table for all the runs: the ids travel as one parameter, which keeps
// the statement's size independent of the number of runs.
void sql_backend::load_children(std::vector<run>& runs, bool samples, bool log) {
  if (runs.empty())
    return;
  std::map<int64_t, run*> by_id;
  std::vector<int64_t> ids;
  for (auto& r : runs) {
    by_id[r.id] = &r;
    ids.push_back(r.id);
  }
  const dialect& d = runner().sql();
  const std::string wanted = d.in_ids(1);
  const std::vector<value> params = {d.id_set(ids)};
  runner().run("SELECT run_id, name, value, unit, direction FROM metrics WHERE run_id " + wanted +
                   " ORDER BY run_id, name",
               params, [&](const row_reader& row) {
                 by_id[row.integer(0)]->metrics.push_back(
                     {row.text(1), row.real(2), row.text(3), direction_from_string(row.text(4))});
               });
  runner().run("SELECT run_id, tag FROM tags WHERE run_id " + wanted + " ORDER BY run_id, tag",
               params,
               [&](const row_reader& row) { by_id[row.integer(0)]->tags.push_back(row.text(1)); });
  if (samples)
    runner().run(samples_sql(wanted), params, [&](const row_reader& row) {
      by_id[row.integer(0)]->samples.push_back(sample_from_row(row));
    });
  if (log)
    runner().run("SELECT id, mllog FROM runs WHERE mllog IS NOT NULL AND id " + wanted, params,
                 [&](const row_reader& row) { by_id[row.integer(0)]->mllog = row.text(1); });
}

namespace {
// A query's text and its parameters, numbered as they are added.
class query_text {
public:
  explicit query_text(const dialect& d) : m_d(d) {}
  std::string arg(value v) {
    m_params.push_back(std::move(v));
    return m_d.param((int)m_params.size());
  }
  int next() { return (int)m_params.size() + 1; }
  void add_raw(value v) { m_params.push_back(std::move(v)); }
  const dialect& d() const { return m_d; }
  const std::vector<value>& params() const { return m_params; }
  std::string sql;

private:
  const dialect& m_d;
  std::vector<value> m_params;
};

// " AND (a OR b ...)", each alternative written by `one`.
template <class T, class F> void any_of(query_text& q, const std::vector<T>& items, F one) {
  if (items.empty())
    return;
  q.sql += " AND (";
  for (size_t i = 0; i < items.size(); ++i)
    q.sql += (i ? " OR " : "") + one(items[i]);
  q.sql += ")";
}

void where_names(query_text& q, const run_filter& f) {
  if (!f.systems.empty()) {
    q.sql += " AND r.system IN (";
    for (size_t i = 0; i < f.systems.size(); ++i)
      q.sql += (i ? ", " : "") + q.arg(f.systems[i]);
    q.sql += ")";
  }
  // A trailing '*' matches a prefix, ignoring ASCII case as SQLite's LIKE does.
  any_of(q, f.workloads, [&](const std::string& w) {
    if (!w.empty() && w.back() == '*')
      return fmt::format("r.workload {} {}", q.d().like(), q.arg(w.substr(0, w.size() - 1) + "%"));
    return "r.workload = " + q.arg(w);
  });
  for (const auto& t : f.tags)
    q.sql +=
        " AND EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = " + q.arg(t) + ")";
  any_of(q, f.accelerators, [&](const std::string& a) {
    std::string p = q.arg(fmt::format("%{}%", a));
    return fmt::format("s.accelerator_model {0} {1} OR r.accelerator_model {0} {1}", q.d().like(),
                       p);
  });
}

void where_values(query_text& q, const run_filter& f) {
  if (!f.ids.empty()) {
    q.sql += " AND r.id " + q.d().in_ids(q.next());
    q.add_raw(q.d().id_set(f.ids));
  }
  for (const auto& [k, v] : f.config) {
    // Config values are stored as JSON (numbers as numbers); compare as text.
    q.sql += " AND " + q.d().json_field("r.config", q.next());
    q.add_raw(q.d().json_key(k));
    q.sql += " = " + q.arg(v);
  }
  if (!f.source.empty())
    q.sql += " AND r.source = " + q.arg(f.source);
  if (!f.since.empty())
    q.sql += " AND r.started_at >= " + q.arg(f.since);
  if (!f.until.empty())
    q.sql += " AND r.started_at < " + q.arg(f.until);
}
} // namespace

namespace {
// The SELECT of `columns` (alias r) of the runs `f` selects, by start then id.
query_text selected(const dialect& d, const run_filter& f, const char* columns) {
  query_text q(d);
  q.sql = fmt::format("SELECT {} FROM runs r LEFT JOIN systems s ON s.name = r.system WHERE 1=1",
                      columns);
  where_names(q, f);
  where_values(q, f);
  q.sql += " ORDER BY r.started_at, r.id";
  return q;
}
} // namespace

std::vector<run> sql_backend::query(const run_filter& f) {
  const query_text q = selected(runner().sql(), f, k_run_columns);
  std::vector<run> out;
  runner().run(q.sql, q.params(), [&](const row_reader& row) { out.push_back(run_from_row(row)); });
  load_children(out, f.with_samples, f.with_log);
  return out;
}

std::vector<history_row> sql_backend::history_rows(const run_filter& f) {
  const query_text q = selected(runner().sql(), f, k_history_columns);
  std::vector<history_row> out;
  config_keys keys;
  runner().run(q.sql, q.params(),
               [&](const row_reader& row) { out.push_back(history_row_from_row(row, keys)); });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Runs deleted.
void sql_backend::delete_batch(const std::vector<int64_t>& ids, table_counts& n,
                               std::set<std::string>& named) {
  const dialect& d = runner().sql();
  const std::string wanted = d.in_ids(1);
  const std::vector<value> params = {d.id_set(ids)};
  runner().run(fmt::format("SELECT (SELECT COUNT(*) FROM samples WHERE run_id {0}), "
                           "(SELECT COUNT(*) FROM metrics WHERE run_id {0}), "
                           "(SELECT COUNT(*) FROM tags WHERE run_id {0})",
                           wanted),
               params, [&](const row_reader& row) {
                 n.samples += row.integer(0);
                 n.metrics += row.integer(1);
                 n.tags += row.integer(2);
               });
  runner().run("DELETE FROM runs WHERE id " + wanted + " RETURNING system", params,
               [&](const row_reader& row) {
                 ++n.runs;
                 named.insert(row.text(0));
               });
}

table_counts sql_backend::delete_in_batches(const std::vector<int64_t>& ids, size_t batch,
                                            const std::function<bool()>& stop) {
  table_counts n;
  std::set<std::string> named;
  for (size_t i = 0; i < ids.size(); i += batch) {
    stop_if_asked(stop);
    delete_batch({ids.begin() + (std::ptrdiff_t)i,
                  ids.begin() + (std::ptrdiff_t)std::min(ids.size(), i + batch)},
                 n, named);
  }
  const std::string p = runner().sql().param(1);
  for (const auto& name : named)
    n.systems += runner().run(fmt::format("DELETE FROM systems WHERE name = {0} AND NOT EXISTS "
                                          "(SELECT 1 FROM runs WHERE system = {0})",
                                          p),
                              {name});
  return n;
}

} // namespace accelbench::store::detail
