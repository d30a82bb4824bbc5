#include "harness/core/json_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <regex>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

json_schema::json_schema(json schema) : m_root(std::move(schema)) {}

json_schema json_schema::load(const std::filesystem::path& file) {
  return json_schema(read_json_file(file, "schema"));
}

json_schema load_builtin_schema(const std::string& name) {
  return json_schema::load(data_root() / "schemas" / name);
}

const json& json_schema::resolve(const std::string& ref) const {
  if (ref.rfind('#', 0) != 0)
    throw input_error(fmt::format("schema $ref '{}' is not local", ref));
  json::json_pointer ptr(ref.substr(1));
  if (!m_root.contains(ptr))
    throw input_error(fmt::format("schema $ref '{}' not found", ref));
  return m_root.at(ptr);
}

namespace {
// A schema's pattern compiled once for the program: compiling a std::regex costs far more than a
// search with it, and a results document checks the same few patterns on every run it holds (a
// POST of 50 runs compiled them hundreds of times). Shared by the server's request threads; a
// compiled regex is only read after it is stored.
const std::regex& compiled(const std::string& pattern) {
  static std::mutex mutex;
  static std::map<std::string, std::regex, std::less<>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(pattern);
  if (it == cache.end())
    it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return it->second;
}

// An "integer" is one a reader can hold in an int64_t: 1e19 or 2^64-1 are integers to JSON
// Schema, but converting them wraps (1e19 became INT64_MIN), so they are out of range here.
bool fits_int64(const json& v) {
  if (v.is_number_unsigned())
    return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX);
  if (v.is_number_integer())
    return true;
  const double x = v.get<double>();
  return x >= -9223372036854775808.0 && x < 9223372036854775808.0;
}
bool is_integral(const json& v) {
  return v.is_number_integer() ||
         (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
}
bool type_matches(const std::string& t, const json& v) {
  if (t == "object")
    return v.is_object();
  if (t == "array")
    return v.is_array();
  if (t == "string")
    return v.is_string();
  if (t == "integer")
    return is_integral(v);
  if (t == "number")
    return v.is_number();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "null")
    return v.is_null();
  return false;
}
// The JSON pointer of a member or element below `path`.
std::string child_path(const std::string& path, const std::string& key) {
  std::string p = path;
  p += '/';
  p += key;
  return p;
}
std::string short_dump(const json& v) {
  std::string s = dump_json(v);
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}
} // namespace

namespace {
// One schema node checked against one value, one method per group of keywords. Subschemas go
// back through `recurse` (json_schema::check, which resolves $ref).
template <class Recurse> struct node_check {
  const json& s;
  const json& v;
  const std::string& path;
  std::vector<schema_violation>& out;
  const Recurse& recurse;

  void fail(std::string msg) { out.push_back({path.empty() ? "/" : path, std::move(msg)}); }

  // false when the value has the wrong type (other keywords would only repeat the problem).
  bool type_holds() {
    auto it = s.find("type");
    if (it == s.end())
      return true;
    bool ok = false;
    if (it->is_string())
      ok = type_matches(it->get<std::string>(), v);
    else
      for (const auto& t : *it)
        ok |= type_matches(t.get<std::string>(), v);
    if (!ok) {
      fail(fmt::format("expected {}, got {}", it->is_string() ? it->get<std::string>() : it->dump(),
                       short_dump(v)));
      return false;
    }
    const bool wants_integer = it->is_string()
                                   ? *it == "integer"
                                   : std::find(it->begin(), it->end(), "integer") != it->end();
    if (wants_integer && is_integral(v) && !fits_int64(v)) {
      fail(fmt::format("{} is outside the 64-bit integer range", short_dump(v)));
      return false;
    }
    return true;
  }

  void enum_and_const() {
    if (auto it = s.find("enum"); it != s.end()) {
      bool ok = false;
      for (const auto& e : *it)
        ok |= (e == v);
      if (!ok)
        fail(fmt::format("{} is not one of {}", short_dump(v), it->dump()));
    }
    if (auto it = s.find("const"); it != s.end() && *it != v)
      fail(fmt::format("{} must be {}", short_dump(v), it->dump()));
  }

  void number_bounds() {
    double x = v.get<double>();
    if (auto it = s.find("minimum"); it != s.end() && x < it->get<double>())
      fail(fmt::format("{} is below the minimum {}", short_dump(v), it->dump()));
    if (auto it = s.find("maximum"); it != s.end() && x > it->get<double>())
      fail(fmt::format("{} is above the maximum {}", short_dump(v), it->dump()));
    if (auto it = s.find("exclusiveMinimum"); it != s.end() && x <= it->get<double>())
      fail(fmt::format("{} must be greater than {}", short_dump(v), it->dump()));
  }

  void string_rules() {
    const auto& str = v.get_ref<const std::string&>();
    if (auto it = s.find("minLength"); it != s.end() && str.size() < it->get<size_t>())
      fail(fmt::format("string shorter than {}", it->dump()));
    if (auto it = s.find("pattern"); it != s.end()) {
      if (!std::regex_search(str, compiled(it->get<std::string>())))
        fail(fmt::format("{} does not match pattern {}", short_dump(v), it->dump()));
    }
  }

  void array_rules() {
    if (auto it = s.find("minItems"); it != s.end() && v.size() < it->get<size_t>())
      fail(fmt::format("array has {} items, fewer than {}", v.size(), it->dump()));
    if (auto it = s.find("maxItems"); it != s.end() && v.size() > it->get<size_t>())
      fail(fmt::format("array has {} items, more than {}", v.size(), it->dump()));
    if (auto it = s.find("items"); it != s.end())
      for (size_t i = 0; i < v.size(); ++i)
        recurse(*it, v[i], child_path(path, std::to_string(i)), out);
  }

  void object_rules() {
    if (auto it = s.find("required"); it != s.end())
      for (const auto& r : *it)
        if (!v.contains(r.get<std::string>()))
          fail(fmt::format("missing required property '{}'", r.get<std::string>()));
    for (const auto& [k, val] : v.items())
      property(k, val);
  }

  // One property: by name (properties), by pattern (patternProperties), else additionalProperties.
  void property(const std::string& k, const json& val) {
    const json* props = s.contains("properties") ? &s.at("properties") : nullptr;
    const json* pprops = s.contains("patternProperties") ? &s.at("patternProperties") : nullptr;
    std::string p = child_path(path, k);
    bool matched = false;
    if (props && props->contains(k)) {
      matched = true;
      recurse(props->at(k), val, p, out);
    }
    if (pprops)
      for (const auto& [pat, sub] : pprops->items())
        if (std::regex_search(k, compiled(pat))) {
          matched = true;
          recurse(sub, val, p, out);
        }
    if (matched)
      return;
    if (auto it = s.find("additionalProperties"); it != s.end()) {
      if (it->is_boolean() && !it->get<bool>())
        out.push_back({p, fmt::format("unknown property '{}'", k)});
      else if (it->is_object())
        recurse(*it, val, p, out);
    }
  }

  void combinators() {
    if (auto it = s.find("allOf"); it != s.end())
      for (const auto& sub : *it)
        recurse(sub, v, path, out);
    if (auto it = s.find("anyOf"); it != s.end())
      any_of(*it);
    if (auto it = s.find("oneOf"); it != s.end()) {
      int n = 0;
      for (const auto& sub : *it) {
        std::vector<schema_violation> tmp;
        recurse(sub, v, path, tmp);
        n += tmp.empty();
      }
      if (n != 1)
        fail(fmt::format("matches {} of oneOf (exactly one required)", n));
    }
  }

  // No match: the first alternative's violations explain it.
  void any_of(const json& subs) {
    std::vector<schema_violation> first;
    for (const auto& sub : subs) {
      std::vector<schema_violation> tmp;
      recurse(sub, v, path, tmp);
      if (tmp.empty())
        return;
      if (first.empty())
        first = tmp;
    }
    fail("matches none of anyOf");
    out.insert(out.end(), first.begin(), first.end());
  }
};
} // namespace

void json_schema::check(const json& s, const json& v, const std::string& path,
                        std::vector<schema_violation>& out) const {
  if (s.is_boolean()) {
    if (!s.get<bool>())
      out.push_back({path, "no value is allowed here"});
    return;
  }
  if (!s.is_object())
    return;
  if (auto it = s.find("$ref"); it != s.end())
    check(resolve(it->get<std::string>()), v, path, out);
  auto recurse = [this](const json& sub, const json& inst, const std::string& p,
                        std::vector<schema_violation>& o) { check(sub, inst, p, o); };
  node_check<decltype(recurse)> node{s, v, path, out, recurse};
  if (!node.type_holds())
    return;
  node.enum_and_const();
  if (v.is_number())
    node.number_bounds();
  if (v.is_string())
    node.string_rules();
  if (v.is_array())
    node.array_rules();
  if (v.is_object())
    node.object_rules();
  node.combinators();
}

std::optional<std::string> first_non_finite_number(const json& v, const std::string& path) {
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return path.empty() ? "/" : path;
  if (v.is_object())
    for (const auto& [k, sub] : v.items())
      if (auto p = first_non_finite_number(sub, child_path(path, k)))
        return p;
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i)
      if (auto p = first_non_finite_number(v[i], child_path(path, std::to_string(i))))
        return p;
  return std::nullopt;
}

std::vector<schema_violation> json_schema::validate(const json& instance) const {
  std::vector<schema_violation> out;
  // JSON has no infinity: an infinite value is a literal such as 1e400 that overflowed a double
  // when parsed. Anywhere in a document, typed by the schema or not, it would be written back as
  // null and break every reader after us.
  if (auto p = first_non_finite_number(instance))
    out.push_back({*p, "number out of range (beyond the largest double, about 1.8e308)"});
  check(m_root, instance, "", out);
  return out;
}

void json_schema::require_valid(const json& instance, const std::string& what) const {
  auto v = validate(instance);
  if (!v.empty())
    throw input_error(fmt::format("{} is invalid: {}: {}", what,
                                  v[0].path.empty() ? "/" : v[0].path, v[0].message));
}

} // namespace accelbench
