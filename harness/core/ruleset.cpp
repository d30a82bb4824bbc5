#include "harness/core/ruleset.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/suggest.hpp"
#include "harness/core/text_input.hpp"

#ifndef ACCELBENCH_DEFAULT_HOME
#define ACCELBENCH_DEFAULT_HOME "."
#endif

namespace accelbench {

namespace fs = std::filesystem;

std::string to_string(cache_policy c) { return c == cache_policy::cold ? "cold" : "hot"; }

namespace {

// <prefix>/share/accelbench when this binary is <prefix>/bin/accelbench of an install (cmake
// --install); empty otherwise. The schemas are what every command reads, so their presence tells
// an install from a build folder.
fs::path find_installed_data_root() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return {};
  fs::path share = exe.parent_path().parent_path() / "share" / "accelbench";
  return fs::is_regular_file(share / "schemas" / "results.schema.json", ec) ? share : fs::path();
}

const fs::path& installed_data_root() {
  static const fs::path p = find_installed_data_root();
  return p;
}

} // namespace

fs::path data_root() {
  if (const char* h = std::getenv("ACCELBENCH_HOME"); h && *h)
    return fs::path(h);
  if (!installed_data_root().empty())
    return installed_data_root();
  return fs::path(ACCELBENCH_DEFAULT_HOME);
}

fs::path default_results_dir() {
  const fs::path root = data_root();
  if (installed_data_root().empty() || root != installed_data_root())
    return root / "results";
  // An installed data folder is not the user's to write: results go to the user's data folder.
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return fs::path(x) / "accelbench";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".local" / "share" / "accelbench";
  return root / "results";
}

measurement_settings ruleset::measurement() const {
  measurement_settings m;
  const json& j = section("measurement");
  if (j.is_null())
    return m;
  m.warmup_iterations = j.value("warmup_iterations", m.warmup_iterations);
  m.min_warmup_time_s = j.value("min_warmup_time_s", m.min_warmup_time_s);
  m.max_steady_warmup_s = j.value("max_steady_warmup_s", m.max_steady_warmup_s);
  m.iterations = j.value("iterations", m.iterations);
  m.repetitions = j.value("repetitions", m.repetitions);
  m.rounds = j.value("rounds", m.rounds);
  m.min_time_s = j.value("min_time_s", m.min_time_s);
  m.max_time_s = j.value("max_time_s", m.max_time_s);
  m.cache = j.value("cache", std::string("hot")) == "cold" ? cache_policy::cold : cache_policy::hot;
  return m;
}

double ruleset::tolerance(const std::string& dtype) const {
  const json& c = section("correctness");
  if (c.is_object() && c.contains("tolerance") && c["tolerance"].contains(dtype))
    return c["tolerance"][dtype].get<double>();
  throw input_error(
      fmt::format("ruleset {} has no correctness tolerance for dtype '{}'", id, dtype));
}

int64_t ruleset::correctness_samples() const {
  const json& c = section("correctness");
  return c.is_object() ? c.value("sample_points", int64_t{256}) : 256;
}

double ruleset::min_effect_pct() const {
  const json& c = section("comparison");
  return c.is_object() ? c.value("min_effect_pct", 5.0) : 5.0;
}

double ruleset::alpha() const {
  const json& c = section("comparison");
  return c.is_object() ? c.value("alpha", 0.01) : 0.01;
}

double ruleset::between_run_noise_pct() const {
  const json& c = section("comparison");
  return c.is_object() ? c.value("between_run_noise_pct", 0.0) : 0.0;
}

const json& ruleset::section(const std::string& name) const {
  static const json null_json;
  auto it = doc.find(name);
  return it == doc.end() ? null_json : *it;
}

bool ruleset::applies(const workload_spec& spec) const {
  for (const auto& a : applies_to)
    if (a == spec.name || a == spec.family || a == "*")
      return true;
  return false;
}

namespace {

ruleset from_doc(json doc, const fs::path& path) {
  static const json_schema schema = load_builtin_schema("ruleset.schema.json");
  schema.require_valid(doc, fmt::format("ruleset {}", path.string()));
  ruleset r;
  r.id = doc.at("id").get<std::string>();
  r.version = doc.at("version").get<std::string>();
  r.description = doc.value("description", "");
  r.applies_to = doc.at("applies_to").get<std::vector<std::string>>();
  r.doc = std::move(doc);
  r.path = path;
  return r;
}

ruleset load_file(const fs::path& p) { return from_doc(read_json_file(p, "ruleset file"), p); }

std::vector<fs::path> ruleset_files() {
  std::vector<fs::path> out;
  fs::path root = data_root();
  std::error_code ec;
  auto scan = [&](const fs::path& dir) {
    if (!fs::is_directory(dir, ec))
      return;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json")
        out.push_back(e.path());
  };
  scan(root / "rulesets");
  if (fs::is_directory(root / "workloads", ec))
    for (const auto& w : fs::directory_iterator(root / "workloads", ec))
      scan(w.path() / "rulesets");
  std::sort(out.begin(), out.end());
  return out;
}

// A --rule key is a dotted path of names (measurement.repetitions); anything else (a~b, a..b,
// a/b) would be read as a JSON pointer with its own escapes and fail inside the JSON library.
void check_override_key(const std::string& key) {
  bool ok = !key.empty() && key.front() != '.' && key.back() != '.' &&
            key.find("..") == std::string::npos;
  for (char c : key)
    ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  if (!ok)
    throw input_error(
        fmt::format("--rule key '{}' is not a setting name (letters, digits, _ and -, sections "
                    "joined by '.', e.g. measurement.repetitions)",
                    key));
}

// A --rule setting the ruleset schema does not define is blamed on the override, with the nearest
// name in its section ("repetitons" -> "repetitions"), not on the shipped ruleset file it would
// make invalid. Sections the schema leaves open (training.hyperparameters) take any name.
void check_setting_exists(const std::string& key, const std::string& value, const std::string& full,
                          const std::string& ruleset_id) {
  static const json schema =
      read_json_file(data_root() / "schemas" / "ruleset.schema.json", "schema");
  const json* node = &schema;
  std::string path;
  size_t from = 0;
  while (from <= full.size()) {
    const size_t dot = std::min(full.find('.', from), full.size());
    const std::string part = full.substr(from, dot - from);
    if (!node->is_object() || !node->contains("properties"))
      return;
    const json& props = (*node)["properties"];
    if (!props.contains(part)) {
      auto open = node->find("additionalProperties");
      if (open == node->end() || !open->is_boolean() || open->get<bool>())
        return;
      std::vector<std::string> names;
      for (const auto& [k, v] : props.items())
        names.push_back(k);
      throw input_error(fmt::format(
          "--rule {}={}: ruleset {} has no setting '{}'{} (settings{}: {})", key, value, ruleset_id,
          path + part, did_you_mean(part, names),
          path.empty() ? "" : " of " + path.substr(0, path.size() - 1), fmt::join(names, ", ")));
    }
    node = &props[part];
    path += part + ".";
    from = dot + 1;
  }
}

} // namespace

ruleset load_ruleset(const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return load_file(name_or_path);
  for (const auto& p : ruleset_files())
    if (p.stem() == name_or_path)
      return load_file(p);
  std::string known;
  for (const auto& p : ruleset_files())
    known += (known.empty() ? "" : ", ") + p.stem().string();
  throw input_error(fmt::format("unknown ruleset '{}' (known: {})", name_or_path, known));
}

std::vector<ruleset> list_rulesets() {
  std::vector<ruleset> out;
  for (const auto& p : ruleset_files())
    out.push_back(load_file(p));
  return out;
}

namespace {

// The value a ruleset document holds at a JSON pointer, or nullptr when it holds none there.
const json* existing_setting(const json& doc, const std::string& pointer) {
  try {
    const json::json_pointer ptr(pointer);
    return doc.contains(ptr) ? &doc.at(ptr) : nullptr;
  } catch (const json::exception&) {
    return nullptr;
  }
}

} // namespace

ruleset apply_overrides(const ruleset& base, const std::map<std::string, std::string>& overrides,
                        json& user) {
  user = json::object();
  if (overrides.empty())
    return base;
  json doc = base.doc;
  std::vector<std::string> allowed = doc.value("overridable", std::vector<std::string>{});
  for (const auto& [key, value] : overrides) {
    check_override_key(key);
    std::string full = key.find('.') == std::string::npos ? "measurement." + key : key;
    check_setting_exists(key, value, full, base.id);
    bool ok = false;
    for (const auto& a : allowed)
      ok |= (a == full || a == "*" ||
             (a.ends_with(".*") && full.rfind(a.substr(0, a.size() - 1), 0) == 0));
    if (!ok)
      throw input_error(fmt::format("ruleset {} does not allow overriding '{}' (allowed: {})",
                                    base.id, full, fmt::join(allowed, ", ")));
    json val = parse_json_lenient(value);
    if (val.is_discarded())
      val = value; // a bare word such as cold
    std::string p = "/";
    for (char c : full)
      p += (c == '.') ? '/' : c;
    // A setting that holds text takes the text as written: training.round=5.0 is the round
    // "5.0", not the number 5.
    if (const json* now = existing_setting(doc, p); now && now->is_string() && !val.is_string())
      val = value;
    try {
      doc[json::json_pointer(p)] = val;
    } catch (const json::exception&) {
      // e.g. measurement.repetitions.x: repetitions is a number, not a section
      throw input_error(fmt::format("--rule {}={}: '{}' is not a setting of ruleset {}", key, value,
                                    full, base.id));
    }
    user[full] = val;
  }
  ruleset r = from_doc(std::move(doc), base.path);
  return r;
}

} // namespace accelbench
