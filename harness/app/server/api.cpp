#include "harness/app/server/api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/app/net/publish.hpp"
#include "harness/app/query/comparison.hpp"
#include "harness/app/query/formats.hpp"
#include "harness/app/query/history_formats.hpp"
#include "harness/app/query/report_side.hpp"
#include "harness/core/assignment.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::server {

namespace {

const std::vector<std::string> k_selector_keys = {
    "system", "accelerator", "accelerator~", "tag", "workload", "run", "source", "since"};

// The single value of `key`, or `fallback`; given twice is a 400 (which one would win?).
std::string one(const params& p, const std::string& key, const std::string& fallback = "") {
  auto [lo, hi] = p.equal_range(key);
  if (lo == hi)
    return fallback;
  if (std::next(lo) != hi)
    throw api_error(400, fmt::format("query parameter '{}' given more than once", key));
  return lo->second;
}

int64_t integer(const params& p, const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
  const std::string v = one(p, key);
  if (v.empty())
    return fallback;
  int64_t x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi)
    throw api_error(400, fmt::format("query parameter {}='{}' is not an integer in [{}, {}]", key,
                                     printable(v), lo, hi));
  return x;
}

double number(const params& p, const std::string& key, double fallback, double lo, double hi) {
  const std::string v = one(p, key);
  if (v.empty())
    return fallback;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !std::isfinite(x) || x < lo || x > hi)
    throw api_error(400, fmt::format("query parameter {}='{}' is not a number in [{}, {}]", key,
                                     printable(v), lo, hi));
  return x;
}

bool flag(const params& p, const std::string& key) {
  const std::string v = one(p, key, "0");
  if (v != "0" && v != "1" && v != "true" && v != "false")
    throw api_error(
        400, fmt::format("query parameter {}='{}' is not 0, 1, true or false", key, printable(v)));
  return v == "1" || v == "true";
}

// The selector the CLI would be given: key=value filters joined with '&'.
std::string selector_from(const params& p) {
  std::string sel;
  for (const auto& [k, v] : p) {
    if (std::find(k_selector_keys.begin(), k_selector_keys.end(), k) == k_selector_keys.end())
      continue;
    if (v.find('&') != std::string::npos)
      throw api_error(400, fmt::format("query parameter {}='{}': a value may not contain '&'", k,
                                       printable(v)));
    if (!sel.empty())
      sel += '&';
    sel += k;
    if (k != "accelerator~")
      sel += '=';
    sel += v;
  }
  return sel;
}

// A selector given whole (compare's and report's baseline and candidate): parsed first, so that a
// malformed one is a 400 and one that matches nothing a 404. Never read as a file.
query::selection select_whole(store::store& db, const std::string& sel, const std::string& what) {
  if (sel.empty())
    throw api_error(400, fmt::format("query parameter '{}' is required (a selector)", what));
  query::parse_selector(sel);
  try {
    return query::select_runs(db, sel, true, false);
  } catch (const input_error&) {
    // The CLI's message names the database file: a client learns nothing from it but where the
    // server keeps its data, so the answer names the selector only.
    throw api_error(
        404, fmt::format("{}: no stored run matches the selector '{}'", what, printable(sel)));
  }
}

// The format of `table` that the query parameter `format` names, or when it is not given the one
// named `fallback` (nullptr for ""); a name not in the table is a 400 naming it and the known ones
// (the one rule of ?format= on every endpoint that takes it).
template <class Model>
const output::format<Model>* format_param(const params& p, output::format_table<Model> table,
                                          const std::string& fallback) {
  if (p.find("format") == p.end() && fallback.empty())
    return nullptr;
  const std::string name = one(p, "format", fallback);
  const auto* format = output::find_format(table, name);
  if (!format)
    throw api_error(400, fmt::format("query parameter format='{}' is not one of {}",
                                     printable(name), output::format_names(table)));
  return format;
}

std::vector<std::string> all_of(const params& p, const std::string& key) {
  std::vector<std::string> out;
  auto [lo, hi] = p.equal_range(key);
  for (auto it = lo; it != hi; ++it)
    out.push_back(it->second);
  return out;
}

} // namespace

void allow_only(const params& p, std::initializer_list<const char*> allowed) {
  for (const auto& kv : p) {
    const std::string& k = kv.first;
    if (std::none_of(allowed.begin(), allowed.end(), [&k](const char* a) { return k == a; }))
      throw api_error(400, fmt::format("unknown query parameter '{}'", printable(k)));
    if (!valid_utf8(kv.second))
      throw api_error(400, fmt::format("query parameter '{}' is not UTF-8", printable(k)));
  }
}

query::selection select_from(store::store& db, const params& p, bool with_samples) {
  const std::string sel = selector_from(p);
  if (sel.empty()) {
    query::selection all;
    store::run_filter f;
    f.with_samples = with_samples;
    all.runs = db.query(f);
    for (const auto& s : db.systems())
      all.systems[s.name] = s;
    return all;
  }
  query::parse_selector(sel); // malformed: input_error, a 400
  try {
    return query::select_runs(db, sel, with_samples, false);
  } catch (const input_error&) {
    return query::selection{sel, {}, {}}; // well-formed, matches nothing
  }
}

json list_runs(store::store& db, const params& p) {
  allow_only(p, {"system", "accelerator", "accelerator~", "tag", "workload", "run", "source",
                 "since", "limit", "offset", "samples"});
  const int64_t limit = integer(p, "limit", 100, 1, 10000),
                offset = integer(p, "offset", 0, 0, INT64_MAX);
  auto sel = select_from(db, p, flag(p, "samples"));
  json runs = json::array();
  for (size_t i = (size_t)std::min<int64_t>(offset, (int64_t)sel.runs.size());
       i < sel.runs.size() && (int64_t)runs.size() < limit; ++i)
    runs.push_back(to_json(sel.runs[i]));
  return {{"total", sel.runs.size()}, {"offset", offset}, {"limit", limit}, {"runs", runs}};
}

json one_run(store::store& db, const std::string& id_text, const params& p) {
  allow_only(p, {"log"});
  int64_t id = 0;
  auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size() || id <= 0)
    throw api_error(400, fmt::format("run id '{}' is not a positive integer", printable(id_text)));
  auto r = db.get_run(id, true, flag(p, "log"));
  if (!r)
    throw api_error(404, fmt::format("no run with id {}", id));
  return to_json(*r);
}

compare_answer compare_runs(store::store& db, const params& p) {
  allow_only(p,
             {"baseline", "candidate", "threshold", "alpha", "strict", "only_changed", "format"});
  const auto* format = format_param(p, query::compare_formats(), "");
  query::compare_options o;
  o.baseline = one(p, "baseline");
  o.candidate = one(p, "candidate");
  o.threshold = number(p, "threshold", -1, 0, 1000);
  o.alpha = number(p, "alpha", 0.01, 1e-12, 1 - 1e-12);
  o.history = &db;
  const bool strict = flag(p, "strict");
  const bool only_changed = flag(p, "only_changed");
  auto base = select_whole(db, o.baseline, "baseline");
  auto cand = select_whole(db, o.candidate, "candidate");
  compare::set_comparison c;
  try {
    c = query::compare_selections(base, cand, o);
  } catch (const input_error& e) {
    throw api_error(422, e.what());
  }
  c.only_changed = only_changed;
  const int exit_code = compare::exit_code_for(c, strict);
  if (format)
    return {{format->write(c, {}), std::string(format->media_type)}, exit_code};
  json counts = json::object();
  for (auto v : {compare::verdict::regressed, compare::verdict::improved,
                 compare::verdict::unchanged, compare::verdict::inconclusive})
    counts[compare::to_string(v)] = c.count(v);
  const json answer{{"exit_code", exit_code},
                    {"strict", strict},
                    {"verdict_counts", counts},
                    {"comparison", compare::to_json(c)}};
  return {{dump_json(answer, 2) + "\n", "application/json"}, exit_code};
}

namespace {

// How the series are judged: history's --min-segment, --max-pvalue and --window.
query::history_options history_options_of(const params& p) {
  query::history_options o;
  o.min_segment = (size_t)integer(p, "min_segment", 5, 2, 1000000);
  o.max_pvalue = number(p, "max_pvalue", 0.001, 1e-300, 1 - 1e-12);
  o.window = (size_t)integer(p, "window", 0, 0, 1000000);
  return o;
}

// What `accelbench history` writes of the answer: its document without the server's "runs" and
// "regression", and the --min-segment the series were judged with.
query::history_model history_model_of(const json& h, const params& p) {
  return {{{"schema_version", h["schema_version"]},
           {"workload", h["workload"]},
           {"series", h["series"]}},
          history_options_of(p).min_segment};
}

} // namespace

json history_for(store::store& db, const params& p, bool require_workload) {
  std::string workload = one(p, "workload");
  if (workload.empty()) {
    if (require_workload)
      throw api_error(400, "query parameter 'workload' is required (a workload, or prefix*)");
    workload = std::string("*"); // not = "*": GCC 12's false -Wrestrict (bug 105329)
  }
  const std::string system = one(p, "system"), since = one(p, "since");
  const query::history_options o = history_options_of(p);
  if (!since.empty())
    query::require_date(since, "since");
  store::run_filter f;
  if (workload != "*")
    f.workloads = {workload};
  if (!system.empty())
    f.systems = {system};
  const std::string accel = one(p, "accelerator");
  if (!accel.empty())
    f.accelerators = {accel};
  f.tags = all_of(p, "tag");
  f.since = since;
  for (const auto& s : all_of(p, "set"))
    f.config.push_back(split_assignment(s, "set"));
  auto runs = db.history_rows(f);
  bool regression = false;
  json series = query::history_series(runs, o, &regression);
  return {{"schema_version", 1},
          {"workload", workload},
          {"runs", runs.size()},
          {"series", std::move(series)},
          {"regression", regression}};
}

document history(store::store& db, const params& p) {
  allow_only(p, {"workload", "system", "accelerator", "tag", "since", "set", "min_segment",
                 "max_pvalue", "window", "format"});
  const auto* format = format_param(p, query::history_formats(), "");
  json h = history_for(db, p, true);
  if (h["runs"].get<size_t>() == 0)
    throw api_error(404, fmt::format("no runs of workload '{}' match (check set, system, since)",
                                     printable(h["workload"].get<std::string>())));
  if (format)
    return {format->write(history_model_of(h, p), {}), std::string(format->media_type)};
  return {dump_json(h, 2) + "\n", "application/json"};
}

document report(store::store& db, const params& p, bool allow_empty) {
  allow_only(p, {"baseline", "candidate", "format"});
  const auto* format = format_param(p, query::report_formats(), "json");
  auto side = [&](const char* key, const char* fallback) {
    const std::string sel = one(p, key, fallback);
    try {
      return select_whole(db, sel, key);
    } catch (const api_error& e) {
      if (!allow_empty || e.status() != 404)
        throw;
      return query::selection{sel, {}, {}};
    }
  };
  // H100 against every Blackwell part, as scripts/run-default.sh writes it (which says why the
  // baseline is not family=Hopper).
  auto b = side("baseline", "accelerator=H100");
  auto c = side("candidate", "family=Blackwell");
  report::options opt;
  opt.devices = report::device_catalogue::builtin();
  opt.prices = report::price_table::builtin();
  // No machine_cpu_peak: the server's own CPU says nothing of the machines that measured the runs.
  opt.floor_by_ruleset = compare::settings_from_rulesets({&b.runs, &c.runs}).floor_by_ruleset;
  report::report_model rep = report::build_report(
      query::report_side(b.label, std::move(b.runs), std::move(b.systems)),
      query::report_side(c.label, std::move(c.runs), std::move(c.systems)), opt);
  return {format->write(rep, {}), std::string(format->media_type)};
}

void check_storable(const std::vector<run>& runs) {
  // Each run on its own was checked where the document was read (results_document's
  // storable_run_problem, the one home shared with import): a repeated sample index or metric,
  // a time that is not a date, a sample that is not positive. What is left is the document's:
  // one run given twice.
  std::set<std::string> uuids;
  for (size_t i = 0; i < runs.size(); ++i) {
    const run& r = runs[i];
    if (!r.uuid.empty() && !uuids.insert(r.uuid).second)
      throw api_error(400, fmt::format("run {} of the document repeats the uuid '{}' of an earlier "
                                       "run",
                                       i, printable(r.uuid)));
  }
}

void check_idempotency_key(const std::string& key, const std::vector<std::string>& uuids) {
  if (key.empty())
    return; // optional: runs are stored once by their uuids either way
  if (key.size() > 256)
    throw api_error(400, "Idempotency-Key longer than 256 characters");
  const std::string expected = net::idempotency_key_for(uuids);
  if (key != expected)
    throw api_error(
        422, fmt::format("Idempotency-Key '{}' is not the key of the runs in the body, '{}' (a "
                         "body changed between retries?)",
                         printable(key), expected));
}

bool is_json_media_type(const std::string& content_type) {
  // type/subtype, then parameters; only charset is meaningful for JSON, and it must be UTF-8
  // (RFC 8259): anything else is a body this server would misread.
  auto trim = [](const std::string& v) {
    const size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
  };
  auto lower = [](std::string v) {
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return (char)std::tolower(c); });
    return v;
  };
  size_t at = content_type.find(';');
  if (lower(trim(content_type.substr(0, at))) != "application/json")
    return false;
  while (at != std::string::npos) {
    const size_t next = content_type.find(';', at + 1);
    const std::string param = trim(content_type.substr(at + 1, next - at - 1));
    at = next;
    if (param.empty())
      continue;
    const size_t eq = param.find('=');
    if (eq == std::string::npos)
      return false;
    std::string value = lower(trim(param.substr(eq + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (lower(trim(param.substr(0, eq))) != "charset" || (value != "utf-8" && value != "utf8"))
      return false;
  }
  return true;
}

ingest_result ingest(store::store& db, const std::string& body,
                     const std::string& idempotency_key) {
  json systems = json::array();
  std::vector<run> runs;
  try {
    runs = read_results_document(body, "request body", &systems);
  } catch (const input_error& e) {
    throw api_error(400, e.what());
  }
  if (runs.empty())
    throw api_error(400, "the results document holds no runs");
  std::vector<std::string> uuids;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].uuid.empty())
      throw api_error(
          400,
          fmt::format("run {} of the document has no uuid: it cannot be stored idempotently", i));
    uuids.push_back(runs[i].uuid);
  }
  check_storable(runs);
  check_idempotency_key(idempotency_key, uuids);
  std::vector<store::system_record> records;
  for (const auto& s : systems)
    records.push_back(store::system_from_json(s));
  for (auto& r : runs)
    r.id = 0;
  const size_t stored = db.insert_runs(runs);
  // A replay changes nothing: the systems are written with new runs, or when still missing.
  for (const auto& rec : records)
    if (stored > 0 || !db.get_system(rec.name))
      db.upsert_system(rec);
  json ids = json::array();
  for (const auto& r : runs)
    ids.push_back(r.id);
  ingest_result out;
  out.status = stored > 0 ? 201 : 200;
  out.body = {{"stored", stored},
              {"already_present", runs.size() - stored},
              {"replayed", stored == 0},
              {"idempotency_key", idempotency_key},
              {"run_ids", ids}};
  return out;
}

json health(store::store& db) {
  return {{"status", "ok"},
          {"database", "ok"},
          {"runs", db.count_runs()},
          {"schema_version", db.schema_version()}};
}

} // namespace accelbench::server
