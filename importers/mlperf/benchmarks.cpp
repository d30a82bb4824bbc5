#include "importers/mlperf/benchmarks.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::mlperf {
namespace detail {
// Generated from benchmarks.json at build time (importers/mlperf/CMakeLists.txt).
const char* benchmarks_json();
} // namespace detail

bool quality_target::reached(double v) const {
  if (target && !(dir == direction::lower_is_better ? v <= *target : v >= *target))
    return false;
  if (!limit)
    return true;
  if (dir == direction::lower_is_better)
    return limit_inclusive ? v >= *limit : v > *limit;
  return limit_inclusive ? v <= *limit : v < *limit;
}

// Lower is better: the target bounds the value from above and the limit from below; higher is
// better the other way round.
std::string quality_target::describe() const {
  const bool lower = dir == direction::lower_is_better;
  const std::optional<double> low = lower ? limit : target, high = lower ? target : limit;
  const bool low_inclusive = lower ? limit_inclusive : true;
  const bool high_inclusive = lower ? true : limit_inclusive;
  std::string s;
  if (low)
    s += fmt::format("{:g} {} ", *low, low_inclusive ? "<=" : "<");
  s += metadata_metric.empty() ? "value" : metadata_metric;
  if (high)
    s += fmt::format(" {} {:g}", high_inclusive ? "<=" : "<", *high);
  return s;
}

bool quality_spec::multi_metric() const {
  return targets.size() > 1 || (targets.size() == 1 && !targets[0].metadata_metric.empty());
}

std::string quality_spec::describe() const {
  std::vector<std::string> parts;
  parts.reserve(targets.size());
  for (const auto& t : targets)
    parts.push_back(t.describe());
  return fmt::format("{}", fmt::join(parts, " and "));
}

namespace {
json target_json(const quality_target& t) { return t.target ? json(*t.target) : json(nullptr); }
} // namespace

json quality_spec::to_json() const {
  json j = {{"metric", metric}};
  if (targets.size() == 1) {
    j["target"] = target_json(targets[0]);
    j["direction"] = accelbench::to_string(targets[0].dir);
  } else {
    j["targets"] = json::array();
    for (const auto& t : targets)
      j["targets"].push_back({{"metric", t.metadata_metric},
                              {"target", target_json(t)},
                              {"direction", accelbench::to_string(t.dir)}});
  }
  return j;
}

const quality_spec* benchmark_info::open_quality_in(const std::string& round) const {
  if (!open_quality)
    return nullptr;
  const auto& rounds = open_quality->rounds;
  if (round.empty() || rounds.empty() ||
      std::find(rounds.begin(), rounds.end(), normalize_round(round)) != rounds.end())
    return &*open_quality;
  return nullptr;
}

quality_outcome evaluate_quality(const quality_spec& q, const mllog::parsed_log& log) {
  quality_outcome out;
  // Multi-metric evaluations (stable_diffusion) log one eval_accuracy per metric and eval point;
  // the compliance checker aggregates them by samples_count (closed_stable_diffusion.yaml BEGIN).
  const bool multi = q.multi_metric();
  std::map<double, std::map<std::string, double>> points; // position -> metric -> value
  std::vector<double> order;
  for (const mllog::event& e : log.events) {
    if (e.key != q.key || !e.value.is_number())
      continue;
    json point = json::object();
    double pos = -1;
    if (e.has_meta("samples_count")) {
      point["samples_count"] = e.metadata["samples_count"];
      pos = e.meta_number("samples_count", -1);
    }
    if (e.has_meta("epoch_num")) {
      point["epoch_num"] = e.metadata["epoch_num"];
      if (pos < 0)
        pos = e.meta_number("epoch_num", -1);
    }
    point["value"] = e.value;
    const std::string metric = e.meta_string("metric");
    if (!metric.empty())
      point["metric"] = metric;
    out.eval_curve.push_back(point);

    const double v = e.value.get<double>();
    if (!multi) {
      ++out.eval_points;
      if (!out.reached && !q.targets.empty() && q.targets[0].reached(v)) {
        out.reached = true;
        out.reached_line = e.line;
      }
      continue;
    }
    if (metric.empty())
      continue;
    if (!points.count(pos))
      order.push_back(pos);
    points[pos][metric] = v;
    if (out.reached)
      continue;
    bool all = true;
    for (const auto& t : q.targets) {
      auto it = points[pos].find(t.metadata_metric);
      if (it == points[pos].end() || !t.reached(it->second))
        all = false;
    }
    if (all) {
      out.reached = true;
      out.reached_line = e.line;
    }
  }
  if (multi)
    out.eval_points = order.size();
  for (double pos : order)
    for (const auto& t : q.targets)
      if (!points[pos].count(t.metadata_metric)) {
        out.incomplete_points.push_back(pos);
        break;
      }
  return out;
}

namespace {

hparam_rule rule_from_json(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string())
    throw input_error(fmt::format("benchmark table: rule without a 'key' in {}", where));
  hparam_rule r;
  r.key = j["key"];
  r.req = j.value("req", "");
  if (!r.req.empty() && r.req != "EXACTLY_ONE" && r.req != "AT_LEAST_ONE")
    throw input_error(
        fmt::format("benchmark table: unknown req '{}' for '{}' in {}", r.req, r.key, where));
  if (j.contains("check")) {
    r.check = j["check"];
    static const std::set<std::string> ops = {
        "eq",          "ne",          "gt",     "ge",           "lt",
        "le",          "in",          "mul_eq", "eq_ceil_diff", "eq_const_minus",
        "div_integer", "log2_integer"};
    if (!r.check.is_object() || !ops.count(r.check.value("op", "")))
      throw input_error(
          fmt::format("benchmark table: unknown check op for '{}' in {}", r.key, where));
  }
  if (j.contains("rounds"))
    for (const auto& x : j["rounds"])
      r.rounds.push_back(normalize_round(x.get<std::string>()));
  if (j.contains("when"))
    for (auto it = j["when"].begin(); it != j["when"].end(); ++it)
      r.when[it.key()] = it.value();
  return r;
}

// `bound_only`: an open-division check, whose bound may be only the limit (value < 1.0).
quality_target target_from_json(const json& j, const std::string& where, bool bound_only) {
  quality_target t;
  t.metadata_metric = j.value("metadata_metric", "");
  if (!bound_only || j.contains("target"))
    t.target = j.at("target").get<double>();
  t.dir = direction_from_string(j.at("direction").get<std::string>());
  if (j.contains("limit"))
    t.limit = j["limit"].get<double>();
  t.limit_inclusive = j.value("limit_inclusive", false);
  if (!t.target && !t.limit)
    throw input_error(fmt::format(
        "benchmark table: a quality bound with neither 'target' nor 'limit' in {}", where));
  return t;
}

quality_spec quality_from_json(const json& q, const std::string& where, bool open) {
  quality_spec spec;
  spec.metric = q.at("metric").get<std::string>();
  spec.key = q.value("key", spec.key);
  spec.eval_metadata = q.value("eval_metadata", "samples_count");
  spec.min_eval_points = q.value("min_eval_points", 1);
  if (q.contains("targets")) {
    for (const auto& x : q["targets"])
      spec.targets.push_back(target_from_json(x, where, open));
  } else {
    spec.targets.push_back(target_from_json(q, where, open));
  }
  if (q.contains("rounds"))
    for (const auto& x : q["rounds"])
      spec.rounds.push_back(normalize_round(x.get<std::string>()));
  return spec;
}

std::vector<hparam_rule> rules_from_json(const json& b, const char* field,
                                         const std::string& where) {
  std::vector<hparam_rule> out;
  if (b.contains(field))
    for (const auto& r : b[field])
      out.push_back(rule_from_json(r, where));
  return out;
}

std::map<std::string, std::vector<std::string>> rounds_from_json(const json& j) {
  std::map<std::string, std::vector<std::string>> out;
  for (auto it = j.begin(); it != j.end(); ++it)
    out[normalize_round(it.key())] = it.value().get<std::vector<std::string>>();
  return out;
}

} // namespace

benchmark_table benchmark_table::from_json(const json& doc) {
  benchmark_table t;
  t.m_doc = doc;
  try {
    for (auto it = doc.at("benchmarks").begin(); it != doc.at("benchmarks").end(); ++it) {
      const json& b = it.value();
      benchmark_info info;
      info.name = it.key();
      info.description = b.value("description", "");
      if (b.contains("aliases"))
        info.aliases = b["aliases"].get<std::vector<std::string>>();
      info.required_runs = b.at("required_runs").get<int>();
      info.max_dropped = b.value("max_dropped", 1);
      info.model = b.value("model", "");
      info.quality = quality_from_json(b.at("quality"), info.name, false);
      if (b.contains("open_quality"))
        info.open_quality = quality_from_json(b["open_quality"], info.name + " open_quality", true);
      info.closed_rules = rules_from_json(b, "closed_rules", info.name);
      info.open_rules = rules_from_json(b, "open_rules", info.name + " open_rules");
      t.m_benchmarks.push_back(std::move(info));
    }
    t.m_rounds = rounds_from_json(doc.at("rounds"));
    if (doc.contains("open_rounds"))
      t.m_open_rounds = rounds_from_json(doc["open_rounds"]);
    const json& st = doc.at("system_status");
    t.m_allowed_status = st.at("allowed").get<std::vector<std::string>>();
    t.m_legacy_status = st.value("legacy_allowed", std::vector<std::string>{});
    t.m_strict_status_since = normalize_round(st.value("strict_since", ""));
    for (auto it = doc.at("init_time_limit_min").begin(); it != doc.at("init_time_limit_min").end();
         ++it)
      t.m_init_limit[it.key()] = it.value().get<double>();
    if (doc.contains("closed_common"))
      for (const auto& r : doc["closed_common"])
        t.m_closed_common.push_back(rule_from_json(r, "closed_common"));
  } catch (const json::exception& e) {
    throw input_error(fmt::format("benchmark table is malformed: {}", e.what()));
  }
  return t;
}

const benchmark_table& benchmark_table::builtin() {
  static const benchmark_table table = from_json(json::parse(detail::benchmarks_json()));
  return table;
}

const benchmark_info* benchmark_table::find(std::string_view name) const {
  for (const auto& b : m_benchmarks) {
    if (b.name == name)
      return &b;
    for (const auto& a : b.aliases)
      if (a == name)
        return &b;
  }
  return nullptr;
}

std::vector<std::string> benchmark_table::names() const {
  std::vector<std::string> out;
  for (const auto& b : m_benchmarks)
    out.push_back(b.name);
  return out;
}

const std::vector<std::string>* benchmark_table::round_benchmarks(const std::string& round) const {
  auto it = m_rounds.find(normalize_round(round));
  return it == m_rounds.end() ? nullptr : &it->second;
}

const std::vector<std::string>*
benchmark_table::open_round_benchmarks(const std::string& round) const {
  auto it = m_open_rounds.find(normalize_round(round));
  return it == m_open_rounds.end() ? nullptr : &it->second;
}

std::vector<std::string> benchmark_table::rounds() const {
  std::vector<std::string> out;
  for (const auto& [round, _] : m_rounds)
    out.push_back(round);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return compare_rounds(a, b) < 0; });
  return out;
}

bool benchmark_table::status_allowed(const std::string& status, const std::string& round) const {
  if (std::find(m_allowed_status.begin(), m_allowed_status.end(), status) != m_allowed_status.end())
    return true;
  // system_desc_checker.py enforces the strict list from v4.1; earlier rounds accepted the
  // legacy spellings case-insensitively (e.g. "onprem" in the v4.0 results).
  const std::string r = normalize_round(round);
  if (r.empty() || compare_rounds(r, m_strict_status_since) >= 0)
    return false;
  std::string low = status;
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const auto& s : m_allowed_status) {
    std::string l = s;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
    if (l == low)
      return true;
  }
  return std::find(m_legacy_status.begin(), m_legacy_status.end(), low) != m_legacy_status.end();
}

double benchmark_table::init_limit_min(const std::string& division) const {
  auto it = m_init_limit.find(division);
  if (it != m_init_limit.end())
    return it->second;
  return m_init_limit.count("closed") ? m_init_limit.at("closed") : 30;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of the run of digits that starts at i (i itself when s[i] is not a digit).
size_t digits_end(std::string_view s, size_t i) {
  while (i < s.size() && is_digit(s[i]))
    ++i;
  return i;
}

} // namespace

// The first "MAJOR.MINOR" in s (digits, a dot, digits; a third part is ignored): "v5.0.1" is
// "5.0". Written by hand rather than with <regex>, which alone took most of this file's compile
// time.
std::string normalize_round(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_digit(s[i]))
      continue;
    const size_t dot = digits_end(s, i);
    if (dot + 1 < s.size() && s[dot] == '.' && is_digit(s[dot + 1])) {
      const size_t end = digits_end(s, dot + 1);
      return std::string(s.substr(i, dot - i)) + "." +
             std::string(s.substr(dot + 1, end - dot - 1));
    }
    i = dot; // no digit inside this run starts a match either
  }
  return {};
}

// The round a results folder belongs to: the last path part named training_vX.Y or
// training_results_vX.Y.
std::string round_from_path(const std::filesystem::path& p) {
  std::string found;
  for (const auto& part : std::filesystem::absolute(p).lexically_normal()) {
    std::string_view s = part.native();
    for (std::string_view prefix : {"training_results_v", "training_v"})
      if (s.substr(0, prefix.size()) == prefix) {
        const std::string_view v = s.substr(prefix.size());
        const size_t dot = digits_end(v, 0);
        if (dot > 0 && dot + 1 < v.size() && v[dot] == '.' && digits_end(v, dot + 1) == v.size())
          found = std::string(v);
        break;
      }
  }
  return found;
}

int compare_rounds(const std::string& a, const std::string& b) {
  auto parse = [](const std::string& s) {
    std::pair<int, int> v{0, 0};
    std::sscanf(s.c_str(), "%d.%d", &v.first, &v.second);
    return v;
  };
  auto x = parse(a), y = parse(b);
  return x < y ? -1 : (y < x ? 1 : 0);
}

} // namespace accelbench::mlperf
