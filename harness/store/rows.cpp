#include "harness/store/rows.hpp"

#include <cmath>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::store {

namespace detail {

const char* const k_run_columns =
    "r.id, r.uuid, r.workload, r.backend, r.config, r.system, r.ruleset, r.user_settings, "
    "r.effective_settings, r.environment, r.fingerprint, r.status, r.status_reason, r.valid, "
    "r.invalid_reasons, r.started_at, r.finished_at, r.harness_revision, r.sample_unit, "
    "r.sample_direction, r.extra, r.source";

const char* const k_system_columns =
    "name, accelerator_model, accelerators_per_node, nodes, source, description";

const char* const k_insert_columns =
    "uuid, workload, backend, config_key, config, system, ruleset, user_settings, "
    "effective_settings, "
    "environment, fingerprint, status, status_reason, valid, invalid_reasons, started_at, "
    "finished_at, "
    "harness_revision, sample_unit, sample_direction, extra, mllog, source, sample_count, median, "
    "log_median, log_median_se, accelerator_model, job_id";

const char* const k_history_columns =
    "r.id, r.workload, r.backend, r.config, r.system, r.ruleset, r.status, r.started_at, "
    "r.sample_unit, r.sample_direction, r.median, r.job_id, r.fingerprint, r.valid";

namespace {
std::string dump(const json& j) { return dump_json(j); }

// obj[outer][key] when both levels are objects and the value has T's type, else `fallback`
// (environments come from imported documents too).
template <class T> T member_or(const json& obj, const char* outer, const char* key, T fallback) {
  if (!obj.is_object() || !obj.contains(outer) || !obj[outer].is_object() ||
      !obj[outer].contains(key))
    return fallback;
  const json& v = obj[outer][key];
  if constexpr (std::is_same_v<T, std::string>)
    return v.is_string() ? v.get<std::string>() : fallback;
  else
    return v.is_number_integer() ? v.get<T>() : fallback;
}

// A stored config's values: strings as they are, anything else as its JSON text.
std::map<std::string, std::string> config_values(const std::string& text) {
  std::map<std::string, std::string> out;
  const json cfg = parse_or(text, json::object()); // alive through the loop (items() refers to it)
  for (const auto& [k, v] : cfg.items())
    out[k] = v.is_string() ? v.get<std::string>() : dump(v);
  return out;
}
} // namespace

// Stored text was written by whoever wrote the database (a shared file, an older accelbench):
// parsed with the bounded parser, and anything malformed or of the wrong type reads as the
// fallback instead of throwing.
json parse_or(const std::string& s, json fallback) {
  if (s.empty())
    return fallback;
  json j = parse_json_lenient(s);
  if (j.is_discarded() || j.type() != fallback.type())
    return fallback;
  return j;
}

run run_from_row(const row_reader& st) {
  run r;
  r.id = st.integer(0);
  r.uuid = st.text(1);
  r.cfg.workload = st.text(2);
  r.cfg.backend = st.text(3);
  r.cfg.values = config_values(st.text(4));
  r.system = st.text(5);
  r.ruleset = st.text(6);
  r.user_settings = parse_or(st.text(7), json::object());
  r.effective_settings = parse_or(st.text(8), json::object());
  r.environment = parse_or(st.text(9), json::object());
  r.fingerprint = st.text(10);
  r.status = run_status_from_string(st.text(11));
  r.status_reason = st.text(12);
  r.valid = st.integer(13) != 0;
  for (const auto& why : parse_or(st.text(14), json::array()))
    r.invalid_reasons.push_back(why.is_string() ? why.get<std::string>() : dump(why));
  r.started_at = st.text(15);
  r.finished_at = st.text(16);
  r.harness_revision = st.text(17);
  r.sample_unit = st.text(18);
  r.sample_dir = direction_from_string(st.text(19));
  r.extra = parse_or(st.text(20), json::object());
  r.source = st.text(21);
  return r;
}

const std::string& config_keys::key(const std::string& workload, const std::string& backend,
                                    const std::string& config_text) {
  std::string seen = workload;
  seen += '\0';
  seen += backend;
  seen += '\0';
  seen += config_text;
  auto it = m_seen.find(seen);
  if (it != m_seen.end())
    return it->second;
  const config cfg{workload, backend, config_values(config_text)};
  return m_seen.emplace(std::move(seen), cfg.key()).first->second;
}

history_row history_row_from_row(const row_reader& st, config_keys& keys) {
  history_row h;
  h.id = st.integer(0);
  h.config_key = keys.key(st.text(1), st.text(2), st.text(3));
  h.system = st.text(4);
  h.ruleset = st.text(5);
  h.status = run_status_from_string(st.text(6));
  h.started_at = st.text(7);
  h.sample_unit = st.text(8);
  h.dir = direction_from_string(st.text(9));
  if (!st.is_null(10))
    h.median = st.real(10);
  h.job_id = st.text(11);
  h.fingerprint = st.text(12);
  h.valid = st.integer(13) != 0;
  return h;
}

sample_summary summarize_samples(std::vector<double> values) {
  sample_summary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty())
    return s;
  // NULL rather than a value SQL cannot hold or history cannot use: a median of samples that are
  // not finite (the runner stores none; a database written otherwise may hold them).
  if (const double m = stats::median(values); std::isfinite(m))
    s.median = m;
  for (double& v : values) {
    if (!(v > 0) || !std::isfinite(v))
      return s;
    v = std::log(v);
  }
  s.log_median = stats::median(values);
  s.log_median_se = stats::median_standard_error(std::move(values));
  return s;
}

std::string accelerator_of(const json& environment) {
  return member_or(environment, "accelerator", "model", std::string());
}

std::string job_of(const json& extra) {
  if (!extra.is_object())
    return {};
  auto it = extra.find("job_id");
  return it != extra.end() && it->is_string() ? it->get<std::string>() : std::string();
}

system_record system_from_row(const row_reader& row) {
  column_cursor c(row);
  return {c.text(),    c.text(), c.integer(),
          c.integer(), c.text(), parse_or(c.text(), json::object())};
}

sample sample_from_row(const row_reader& st) {
  sample smp;
  smp.index = st.integer(1);
  smp.value = st.real(2);
  smp.iterations = st.integer(3);
  if (!st.is_null(4))
    smp.extra = parse_or(st.text(4), json::object());
  return smp;
}

std::string samples_sql(const std::string& wanted) {
  return "SELECT run_id, idx, value, iterations, extra FROM samples WHERE run_id " + wanted +
         " ORDER BY run_id, idx";
}

void assign_uuid(run& r) {
  if (r.uuid.empty())
    r.uuid = new_uuid();
}

std::optional<std::string> sample_extra(const sample& s) {
  if (s.extra.empty())
    return std::nullopt;
  return dump(s.extra);
}

namespace {

// The store's last guard: a run over a limit of harness/core/limits.hpp is refused whole, naming
// it (every path in checks them before; this one holds for callers that did not, such as a
// workload that wrote more samples than a run may hold: the run loop reports it unstored).
void require_within_limits(const run& r) {
  if (std::string why = limits::run_problem(r); !why.empty())
    throw storage_error(fmt::format("run {} is not stored: {}", printable(r.uuid), why));
}

// A metric name given twice keeps its last value, in the place of its first. Hashed by name: a
// search of the kept ones per metric made 10^5 metrics quadratic.
std::vector<metric> last_of_each_name(const metric_list& ms) {
  std::vector<metric> out;
  out.reserve(ms.size());
  std::unordered_map<std::string_view, std::size_t> at; // views of ms's names, alive meanwhile
  at.reserve(ms.size());
  for (const auto& m : ms) {
    const auto [it, fresh] = at.try_emplace(m.name, out.size());
    if (fresh)
      out.push_back(m);
    else
      out[it->second] = m;
  }
  return out;
}

// A tag given twice is stored once, in the place of its first.
std::vector<std::string> each_once(const std::vector<std::string>& tags) {
  std::vector<std::string> out;
  out.reserve(tags.size());
  std::unordered_set<std::string_view> seen; // views of tags' strings
  seen.reserve(tags.size());
  for (const auto& t : tags)
    if (seen.insert(t).second)
      out.push_back(t);
  return out;
}

} // namespace

run_row row_of(const run& r) {
  require_within_limits(r);
  run_row w;
  w.uuid = r.uuid;
  w.workload = r.cfg.workload;
  w.backend = r.cfg.backend;
  w.config_key = r.cfg.key();
  w.config = dump(r.cfg.to_json());
  w.system = r.system;
  w.ruleset = r.ruleset;
  w.user_settings = dump(r.user_settings);
  w.effective_settings = dump(r.effective_settings);
  w.environment = dump(r.environment);
  w.fingerprint = r.fingerprint;
  // A run from a document of an older accelbench may carry a version-1 fingerprint: stored as
  // migration 6 rewrites the stored ones, so that it compares with new runs of its machine.
  if (!r.environment.empty())
    w.fingerprint = w.fingerprint.empty() ? environment_fingerprint(r.environment)
                                          : current_fingerprint(r.environment, w.fingerprint);
  w.status = to_string(r.status);
  w.status_reason = r.status_reason;
  w.valid = r.valid ? 1 : 0;
  w.invalid_reasons = dump(json(r.invalid_reasons));
  w.started_at = r.started_at.empty() ? now_iso8601() : r.started_at;
  w.finished_at = r.finished_at.empty() ? now_iso8601() : r.finished_at;
  w.harness_revision = r.harness_revision;
  if (w.harness_revision.empty())
    w.harness_revision = member_or(r.environment, "harness", "git_revision", std::string());
  w.sample_unit = r.sample_unit;
  w.sample_direction = to_string(r.sample_dir);
  w.extra = dump(r.extra);
  if (!r.mllog.empty())
    w.mllog = r.mllog;
  w.source = r.source;
  std::vector<double> values;
  values.reserve(r.samples.size());
  for (const auto& smp : r.samples)
    values.push_back(smp.value);
  w.summary = summarize_samples(std::move(values));
  w.accelerator_model = accelerator_of(r.environment);
  w.job_id = job_of(r.extra);
  w.system_accelerator = w.accelerator_model;
  w.system_count = member_or(r.environment, "accelerator", "count", int64_t{1});
  w.system_source = r.source == "published" ? "published" : "measured";
  w.metrics = last_of_each_name(r.metrics);
  w.tags = each_once(r.tags);
  return w;
}

void mark_stored(run& r, const run_row& w, int64_t id) {
  r.id = id;
  r.harness_revision = w.harness_revision;
  r.fingerprint = w.fingerprint;
}

bool known_version(int64_t v) { return v >= 0 && v <= k_schema_version; }

std::string unsupported_version(int64_t v, const std::string& shown_name) {
  if (v > k_schema_version)
    return fmt::format("database '{}' has unsupported schema version {}: a newer accelbench wrote "
                       "it (this one knows "
                       "versions 1 to {}); upgrade accelbench to use it",
                       shown_name, v, k_schema_version);
  return fmt::format(
      "database '{}' has unsupported schema version {} (accelbench schema versions are 1 to {})",
      shown_name, v, k_schema_version);
}

} // namespace detail

// The system record and its JSON form live in harness/core/system.hpp.

} // namespace accelbench::store
