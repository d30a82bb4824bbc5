#include "importers/mlperf/seed_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/check_common.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

namespace {

// Whitespace as Python's str.strip() and int() skip it around a number (ASCII; the separators
// 0x1c..0x1f count too).
bool python_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// int() of a string: surrounding whitespace, a sign, decimal digits with single underscores
// between them ("1_000"); the value in canonical decimal, nullopt where int() raises ("1.5",
// "abc", "").
std::optional<std::string> python_int_text(std::string_view s) {
  while (!s.empty() && python_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && python_space(s.back()))
    s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (digit(i))
      digits += s[i];
    else if (!(s[i] == '_' && i > 0 && digit(i - 1) && digit(i + 1)))
      return std::nullopt;
  }
  if (digits.empty())
    return std::nullopt;
  const size_t nonzero = digits.find_first_not_of('0');
  if (nonzero == std::string::npos)
    return "0";
  return (negative ? "-" : "") + digits.substr(nonzero);
}

// The whole number a double truncates to, in decimal ("-0" is 0); nullopt for inf.
std::optional<std::string> truncated(double d) {
  if (!std::isfinite(d))
    return std::nullopt;
  const double t = std::trunc(d);
  return t == 0 ? std::string("0") : fmt::format("{:.0f}", t);
}

// int() of a logged seed: an integer, a float truncated, a bool as 0/1, a string of an integer;
// nullopt where int() raises (None, a list, an object, "1.5").
std::optional<std::string> python_int(const json& v) {
  if (v.is_boolean())
    return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer())
    return v.dump();
  if (v.is_number_float())
    return truncated(v.get<double>());
  if (v.is_string())
    return python_int_text(v.get_ref<const std::string&>());
  return std::nullopt;
}

// A metadata value as a dict key of Python's: equal texts for values Python finds equal (5, 5.0
// and "5" are not all the same: 5 == 5.0 != "5"; True == 1); nullopt for a list or an object,
// which are not hashable.
std::optional<std::string> python_key(const json& v) {
  if (v.is_string())
    return "s" + v.get<std::string>();
  if (v.is_null())
    return std::string("N");
  if (v.is_boolean() || v.is_number_integer())
    return "n" + *python_int(v);
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::trunc(d))
      return "n" + *truncated(d);
    return "f" + v.dump();
  }
  return std::nullopt;
}

// The seed of `e` as the seed checker keys it, or why it cannot (after the file and line).
std::string read_seed(const mllog::event& e, seed_record& r) {
  for (const char* k : {"file", "lineno"})
    if (!e.has_meta(k))
      return fmt::format("seed event has no '{}' in its metadata (MLCommons' seed checker fails "
                         "on it)",
                         k);
  const auto file_key = python_key(e.metadata["file"]);
  const auto line_key = python_key(e.metadata["lineno"]);
  if (!file_key || !line_key)
    return fmt::format("seed event's metadata file or lineno is a list or an object ({}:{}), "
                       "which MLCommons' seed checker cannot compare (it stops with a TypeError)",
                       short_value(e.metadata["file"]), short_value(e.metadata["lineno"]));
  const auto seed = python_int(e.value);
  if (!seed)
    return fmt::format("seed {} is not an integer (int() refuses it)", short_value(e.value));
  r.file = e.meta_string("file");
  r.lineno = e.meta_string("lineno");
  r.seed = *seed;
  const bool same_number = e.value.is_number_integer() ||
                           (e.value.is_number_float() && python_key(e.value)->front() == 'n') ||
                           (e.value.is_string() && e.value.get_ref<const std::string&>() == *seed);
  if (!same_number)
    r.changed_by_int = short_value(e.value);
  r.key = *file_key + '\0' + *line_key + '\0' + *seed;
  r.line = e.line;
  return {};
}

// "4038 at a.py:553, 17 at a.py:560": the seeds a warning lists, at most three.
std::string some_seeds(const std::vector<seed_record>& seeds) {
  std::vector<std::string> out;
  out.reserve(3);
  for (size_t i = 0; i < seeds.size() && i < 3; ++i)
    out.push_back(fmt::format("{} at {}:{}", seeds[i].seed, seeds[i].file, seeds[i].lineno));
  return fmt::format("{}{}", fmt::join(out, ", "), seeds.size() > 3 ? ", ..." : "");
}

} // namespace

file_seeds read_seeds(const fs::path& file, const mllog::parsed_log& log) {
  file_seeds out;
  out.file = file;
  if (!log.mlp_parser_errors.empty()) {
    out.error =
        fmt::format("{} ({} such line(s) in the file); MLCommons' seed checker fails on "
                    "a file with parsing errors",
                    log.mlp_parser_errors.front().to_string(), log.mlp_parser_errors.size());
    return out;
  }
  const std::vector<const mllog::event*> seed_events = log.all("seed");
  out.seeds.reserve(seed_events.size());
  for (const mllog::event* e : seed_events) {
    seed_record r;
    const std::string problem = read_seed(*e, r);
    if (!problem.empty()) {
      // The checker reads a file's seeds in one expression: one that fails loses them all.
      out.seeds.clear();
      out.error = fmt::format("{}:{}: {}", file.string(), e->line, problem);
      return out;
    }
    out.seeds.push_back(std::move(r));
  }
  return out;
}

namespace {

// Warnings for what the checker lets pass: a seed int() changes, and one seed value logged by two
// files at different places (the same place is the checker's own failure).
void seed_value_warnings(const std::vector<file_seeds>& files, seed_verdict& v) {
  std::map<std::string, const seed_record*> first_by_value;
  std::map<const seed_record*, const file_seeds*> file_of;
  for (const auto& f : files)
    for (const auto& s : f.seeds) {
      if (!s.changed_by_int.empty())
        v.warnings.push_back(fmt::format("{}:{}: seed {} is not a whole number; MLCommons' seed "
                                         "checker takes int() of it, {}",
                                         f.file.string(), s.line, s.changed_by_int, s.seed));
      file_of[&s] = &f;
      const auto [first, inserted] = first_by_value.emplace(s.seed, &s);
      if (!inserted && first->second->key != s.key && file_of[first->second] != &f)
        v.warnings.push_back(fmt::format(
            "{}:{}: seed {} (at {}:{}) is the seed {} logged at {}:{}: two runs on one random "
            "stream are not independent (MLCommons' seed checker compares file and line too, "
            "and lets it pass)",
            f.file.string(), s.line, s.seed, s.file, s.lineno,
            file_of[first->second]->file.filename().string(), first->second->file,
            first->second->lineno));
    }
}

} // namespace

seed_verdict judge_seeds(const std::vector<file_seeds>& files) {
  seed_verdict v;
  std::map<std::string, const file_seeds*> logged_by;
  for (const auto& f : files) {
    if (!f.error.empty()) {
      v.reasons.push_back(f.error);
      continue;
    }
    if (f.seeds.empty())
      v.reasons.push_back(fmt::format("{}: logs no seed", f.file.string()));
    if (f.seeds.size() > 1)
      v.warnings.push_back(fmt::format("{}: logs {} seeds ({}); MLCommons' seed checker warns of "
                                       "more than one",
                                       f.file.string(), f.seeds.size(), some_seeds(f.seeds)));
    for (const auto& s : f.seeds) {
      const auto [first, inserted] = logged_by.emplace(s.key, &f);
      if (!inserted)
        v.reasons.push_back(fmt::format("{}:{}: seed {} logged at {}:{} was already logged there "
                                        "by {}",
                                        f.file.string(), s.line, s.seed, s.file, s.lineno,
                                        first->second->file.filename().string()));
    }
  }
  seed_value_warnings(files, v);
  return v;
}

bool seed_checker_runs(const std::string& round, const std::string& division) {
  return division == "closed" && (round.empty() || compare_rounds(round, "1.0") >= 0);
}

std::vector<std::string> seed_reuse::add(const std::string& benchmark, const std::string& system,
                                         const std::vector<file_seeds>& files) {
  std::vector<std::string> out;
  auto& seen = m_seen[benchmark];
  for (const auto& f : files)
    for (const auto& s : f.seeds) {
      auto& uses = seen[s.key];
      const auto other = std::find_if(uses.begin(), uses.end(),
                                      [&](const first_use& u) { return u.system != system; });
      if (other != uses.end())
        out.push_back(fmt::format("{}:{}: seed {} logged at {}:{} is logged there by another "
                                  "system's {} too, {}:{} (MLCommons checks seeds within one "
                                  "folder only)",
                                  f.file.string(), s.line, s.seed, s.file, s.lineno, benchmark,
                                  other->file.string(), other->line));
      const bool known = std::any_of(uses.begin(), uses.end(),
                                     [&](const first_use& u) { return u.system == system; });
      if (!known)
        uses.push_back({system, f.file, s.line});
    }
  return out;
}

} // namespace accelbench::mlperf
