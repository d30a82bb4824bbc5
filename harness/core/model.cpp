#include "harness/core/model.hpp"

#include <sys/random.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench {

std::string to_string(direction d) { return d == direction::higher_is_better ? "higher" : "lower"; }

direction direction_from_string(const std::string& s) {
  if (s == "higher")
    return direction::higher_is_better;
  if (s == "lower")
    return direction::lower_is_better;
  throw input_error(fmt::format("unknown metric direction '{}' (expected higher or lower)", s));
}

std::string to_string(axis_type t) {
  switch (t) {
  case axis_type::integer:
    return "integer";
  case axis_type::number:
    return "number";
  case axis_type::string:
    return "string";
  case axis_type::boolean:
    return "boolean";
  }
  return "?";
}

const axis* workload_spec::find_axis(const std::string& n) const {
  for (const auto& a : axes)
    if (a.name == n)
      return &a;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
std::string config::key() const {
  std::string k = workload + "/" + backend + "/";
  bool first = true;
  for (const auto& [name, value] : values) {
    if (!first)
      k += ",";
    first = false;
    k += name;
    k += '=';
    k += value;
  }
  return k;
}

const std::string& config::at(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end())
    throw input_error(fmt::format("config of {} has no parameter '{}'", workload, name));
  return it->second;
}

int64_t config::get_int(const std::string& name) const { return std::stoll(at(name)); }
double config::get_number(const std::string& name) const { return std::stod(at(name)); }
bool config::get_bool(const std::string& name) const { return at(name) == "1"; }

namespace {
bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty())
    return false;
  size_t pos = 0;
  try {
    out = std::stoll(s, &pos, 10);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}
bool parse_number(const std::string& s, double& out) {
  if (s.empty())
    return false;
  size_t pos = 0;
  try {
    out = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size() && std::isfinite(out);
}
} // namespace

json config::to_json() const {
  json j = json::object();
  for (const auto& [name, value] : values) {
    int64_t i;
    double d;
    if (parse_int(value, i))
      j[name] = i;
    else if (parse_number(value, d))
      j[name] = d;
    else
      j[name] = value;
  }
  return j;
}

namespace {

// The user's parameters that are no axis of the spec: kept as given (strings) when the spec has
// open axes, else refused naming the parameter and the spec's list.
void take_open_parameters(const workload_spec& spec,
                          const std::map<std::string, std::string>& user_values, config& c) {
  for (const auto& [name, value] : user_values) {
    if (spec.find_axis(name))
      continue;
    if (spec.open_axes) {
      c.values[name] = value;
      continue;
    }
    std::string list;
    for (const auto& a : spec.axes)
      list += (list.empty() ? "" : ", ") + a.name;
    throw input_error(fmt::format("unknown parameter '{}' for workload {} (parameters: {})", name,
                                  spec.name, list));
  }
}

} // namespace

config resolve_config(const workload_spec& spec, const std::string& backend,
                      const std::map<std::string, std::string>& user_values) {
  config c;
  c.workload = spec.name;
  c.backend = backend;
  bool known_backend = false;
  for (const auto& b : spec.backends)
    known_backend |= (b == backend);
  if (!known_backend) {
    std::string list;
    for (const auto& b : spec.backends)
      list += (list.empty() ? "" : ", ") + b;
    throw input_error(fmt::format("unknown backend '{}' for workload {} (available here: {})",
                                  backend, spec.name, list));
  }
  take_open_parameters(spec, user_values, c);
  for (const auto& a : spec.axes) {
    auto it = user_values.find(a.name);
    if (it == user_values.end() && a.only_when_stated)
      continue;
    std::string v = it != user_values.end() ? it->second : a.default_value;
    if (v.empty() && it == user_values.end() && a.type != axis_type::string)
      throw input_error(fmt::format("parameter '{}' of workload {} is required (--set {}=...)",
                                    a.name, spec.name, a.name));
    switch (a.type) {
    case axis_type::integer: {
      int64_t i;
      if (!parse_int(v, i))
        throw input_error(fmt::format("parameter {} must be an integer, got '{}'", a.name, v));
      if (i < a.min_int)
        throw input_error(fmt::format("parameter {} must be >= {}, got {}", a.name, a.min_int, i));
      v = std::to_string(i); // canonical form: "0010" and "10" are the same config
      break;
    }
    case axis_type::number: {
      double d;
      if (!parse_number(v, d))
        throw input_error(fmt::format("parameter {} must be a number, got '{}'", a.name, v));
      break;
    }
    case axis_type::boolean: {
      // assign(1, c), not v = "1": GCC 12 reports a false -Wrestrict in the inlined
      // basic_string::_M_replace of a string-literal assignment (GCC bug 105329).
      if (v == "true" || v == "yes")
        v.assign(1, '1');
      if (v == "false" || v == "no")
        v.assign(1, '0');
      if (v != "0" && v != "1")
        throw input_error(fmt::format("parameter {} must be 0 or 1, got '{}'", a.name, v));
      break;
    }
    case axis_type::string: {
      if (!a.choices.empty()) {
        bool ok = false;
        for (const auto& ch : a.choices)
          ok |= (ch == v);
        if (!ok) {
          std::string list;
          for (const auto& ch : a.choices)
            list += (list.empty() ? "" : ", ") + ch;
          throw input_error(fmt::format("unknown {} '{}' for workload {} (choices: {})", a.name, v,
                                        spec.name, list));
        }
      }
      break;
    }
    }
    c.values[a.name] = v;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
std::string to_string(run_status s) {
  switch (s) {
  case run_status::ok:
    return "ok";
  case run_status::failed:
    return "failed";
  case run_status::skipped:
    return "skipped";
  }
  return "?";
}

run_status run_status_from_string(const std::string& s) {
  if (s == "ok")
    return run_status::ok;
  if (s == "failed")
    return run_status::failed;
  if (s == "skipped")
    return run_status::skipped;
  throw input_error(fmt::format("unknown run status '{}'", s));
}

// ---------------------------------------------------------------------------------------------
metric_list::metric_list(std::initializer_list<metric> ms) {
  m_items.reserve(ms.size());
  for (const auto& m : ms)
    push_back(m);
}

const metric* metric_list::find(const std::string& name) const {
  const auto it = m_first.find(name);
  return it == m_first.end() ? nullptr : &m_items[it->second];
}

void metric_list::push_back(metric m) {
  m_first.try_emplace(m.name, m_items.size());
  m_items.push_back(std::move(m));
}

void metric_list::set(metric m) {
  const auto [it, fresh] = m_first.try_emplace(m.name, m_items.size()); // one lookup
  if (fresh)
    m_items.push_back(std::move(m));
  else
    m_items[it->second] = std::move(m);
}

void metric_list::truncate(std::size_t n) {
  if (n >= m_items.size())
    return;
  m_items.resize(n);
  reindex();
}

void metric_list::clear() {
  m_items.clear();
  m_first.clear();
}

void metric_list::reindex() {
  m_first.clear();
  for (std::size_t i = 0; i < m_items.size(); ++i)
    m_first.try_emplace(m_items[i].name, i);
}

const metric* run::find_metric(const std::string& name) const { return metrics.find(name); }

void run::add_metric(std::string name, double value, std::string unit, direction dir) {
  metrics.set({std::move(name), value, std::move(unit), dir});
}

void run::mark_invalid(std::string reason) {
  valid = false;
  invalid_reasons.push_back(std::move(reason));
}

void run::mark_failed(std::string reason) {
  status = run_status::failed;
  status_reason = std::move(reason);
  valid = false;
  invalid_reasons.push_back("run failed: " + status_reason);
}

void run::mark_skipped(std::string reason) {
  status = run_status::skipped;
  status_reason = std::move(reason);
}

json to_json(const run& r) {
  json j;
  j["id"] = r.id;
  j["uuid"] = r.uuid;
  j["workload"] = r.cfg.workload;
  j["backend"] = r.cfg.backend;
  j["config"] = r.cfg.to_json();
  j["config_key"] = r.cfg.key();
  j["system"] = r.system;
  j["ruleset"] = r.ruleset;
  j["user_settings"] = r.user_settings;
  j["effective_settings"] = r.effective_settings;
  j["environment"] = r.environment;
  j["fingerprint"] = r.fingerprint;
  j["status"] = to_string(r.status);
  j["status_reason"] = r.status_reason;
  j["validity"] = r.valid ? "VALID" : "INVALID";
  j["invalid_reasons"] = r.invalid_reasons;
  j["tags"] = r.tags;
  j["source"] = r.source;
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at;
  j["harness_revision"] = r.harness_revision;
  j["sample_unit"] = r.sample_unit;
  j["sample_direction"] = to_string(r.sample_dir);
  json samples = json::array();
  for (const auto& s : r.samples) {
    json sj{{"index", s.index}, {"value", s.value}, {"iterations", s.iterations}};
    if (!s.extra.empty())
      sj["extra"] = s.extra;
    samples.push_back(std::move(sj));
  }
  j["samples"] = std::move(samples);
  json metrics = json::array();
  for (const auto& m : r.metrics)
    metrics.push_back(
        {{"name", m.name}, {"value", m.value}, {"unit", m.unit}, {"direction", to_string(m.dir)}});
  j["metrics"] = std::move(metrics);
  j["extra"] = r.extra;
  if (!r.mllog.empty())
    j["mllog"] = r.mllog;
  return j;
}

namespace {
// j[key] when it is there, else an empty array; a reference, not a copy as j.value() would make
// (a run's samples are most of a document).
const json& array_member(const json& j, const char* key) {
  static const json k_empty = json::array();
  const auto it = j.find(key);
  return it == j.end() ? k_empty : *it;
}
} // namespace

run run_from_json(const json& j) {
  try {
    run r;
    r.id = j.value("id", int64_t{0});
    r.uuid = j.at("uuid").get<std::string>();
    r.cfg.workload = j.at("workload").get<std::string>();
    r.cfg.backend = j.at("backend").get<std::string>();
    for (const auto& [k, v] : j.at("config").items()) {
      // Numbers keep their written form (dump): converting 18446744073709551615 to int64_t
      // first would wrap it to -1.
      if (v.is_string())
        r.cfg.values[k] = v.get<std::string>();
      else if (v.is_boolean())
        r.cfg.values[k] = std::string(v.get<bool>() ? "1" : "0"); // GCC bug 105329
      else
        r.cfg.values[k] = v.dump();
    }
    r.system = j.value("system", "");
    r.ruleset = j.value("ruleset", "");
    r.user_settings = j.value("user_settings", json::object());
    r.effective_settings = j.value("effective_settings", json::object());
    r.environment = j.value("environment", json::object());
    r.fingerprint = j.value("fingerprint", "");
    r.status = run_status_from_string(j.value("status", "ok"));
    r.status_reason = j.value("status_reason", "");
    r.valid = j.value("validity", "VALID") == "VALID";
    r.invalid_reasons = j.value("invalid_reasons", std::vector<std::string>{});
    r.tags = j.value("tags", std::vector<std::string>{});
    r.source = j.value("source", "measured");
    r.started_at = j.value("started_at", "");
    r.finished_at = j.value("finished_at", "");
    r.harness_revision = j.value("harness_revision", "");
    r.sample_unit = j.value("sample_unit", "s");
    r.sample_dir = direction_from_string(j.value("sample_direction", "lower"));
    const json& samples = array_member(j, "samples");
    r.samples.reserve(samples.size());
    for (const auto& sj : samples) {
      sample s;
      s.index = sj.at("index").get<int64_t>();
      s.value = sj.at("value").get<double>();
      s.iterations = sj.value("iterations", int64_t{1});
      s.extra = sj.value("extra", json::object());
      r.samples.push_back(std::move(s));
    }
    const json& metrics = array_member(j, "metrics");
    r.metrics.reserve(metrics.size());
    for (const auto& mj : metrics)
      r.metrics.push_back({mj.at("name").get<std::string>(), mj.at("value").get<double>(),
                           mj.value("unit", ""),
                           direction_from_string(mj.value("direction", "higher"))});
    r.extra = j.value("extra", json::object());
    r.mllog = j.value("mllog", "");
    return r;
  } catch (const json::exception& e) {
    throw input_error(fmt::format("malformed run in results document: {}", e.what()));
  }
}

std::string new_uuid() {
  // Fresh kernel randomness for every id: a generator seeded once would hand the same sequence to
  // every process forked after it (parallel writers would then collide on uuid).
  uint64_t w[2];
  if (getrandom(w, sizeof w, 0) != (ssize_t)sizeof w) {
    std::random_device rd;
    w[0] = ((uint64_t)rd() << 32) ^ rd();
    w[1] = ((uint64_t)rd() << 32) ^ rd();
  }
  uint64_t a = w[0], b = w[1];
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL; // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", (uint32_t)(a >> 32),
                     (uint32_t)((a >> 16) & 0xffff), (uint32_t)(a & 0xffff), (uint32_t)(b >> 48),
                     b & 0xffffffffffffULL);
}

std::string now_iso8601() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t t = ms / 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, (int)(ms % 1000));
}

} // namespace accelbench
