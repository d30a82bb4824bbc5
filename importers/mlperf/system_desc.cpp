#include "importers/mlperf/system_desc.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace accelbench::mlperf {

json system_description::to_json() const {
  json j = fields;
  j["derived"] = {{"org", org},
                  {"name", name},
                  {"round", round},
                  {"accelerator_model", accelerator_model},
                  {"accelerators_per_node", accelerators_per_node},
                  {"nodes", nodes},
                  {"total_accelerators", total_accelerators},
                  {"framework", framework},
                  {"software_stack", software_stack}};
  return j;
}

namespace {

// Sane bounds for the counts of a system description. The largest MLPerf Training systems
// published so far have about 12,000 accelerators; a million leaves room for growth while a
// sign error, a typo ("80000000") or an overflow is caught instead of being stored as a VALID
// result. accelerators_per_node may be 0 (a CPU-only system; result_summarizer counts such a
// node as one).
constexpr int64_t k_max_accelerators = 1'000'000;

// A whole number written as a JSON integer, an integral float, or a string of digits (published
// descriptions keep counts as strings); nullopt for anything else ("abc", "8 GPUs", 1.5).
std::optional<int64_t> whole_number(const json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned())
    return v.get<int64_t>();
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= uint64_t(INT64_MAX) ? std::optional<int64_t>(v.get<int64_t>())
                                                    : std::nullopt;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) <= 1e15)
      return static_cast<int64_t>(d);
    return std::nullopt;
  }
  if (!v.is_string())
    return std::nullopt;
  const std::string s = v.get<std::string>();
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  if (b == std::string::npos)
    return std::nullopt;
  std::string_view digits(s.data() + b, e - b + 1);
  const bool negative = digits.front() == '-';
  if (negative)
    digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 15 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const int64_t x = std::stoll(std::string(digits));
  return negative ? -x : x;
}

// The counts of a system description and the range each must be a whole number in.
struct count_rule {
  const char* key;
  int64_t lo, hi;
};
constexpr count_rule k_accelerators_per_node{"accelerators_per_node", 0, k_max_accelerators};
constexpr count_rule k_number_of_nodes{"number_of_nodes", 1, k_max_accelerators};
constexpr count_rule k_host_processors_per_node{"host_processors_per_node", 0, k_max_accelerators};

// The count under rule.key, when it is a whole number in [lo, hi]; else 0 and a problem naming
// the field and the value as written.
int64_t count_field(const json& j, const count_rule& rule, std::vector<std::string>& problems) {
  if (!j.contains(rule.key)) {
    problems.push_back(fmt::format("{} is missing", rule.key));
    return 0;
  }
  const auto n = whole_number(j[rule.key]);
  if (n && *n >= rule.lo && *n <= rule.hi)
    return *n;
  std::string shown = j[rule.key].dump();
  if (shown.size() > 40)
    shown = shown.substr(0, 40) + "...";
  problems.push_back(
      fmt::format("{} {} is not a whole number from {} to {}", rule.key, shown, rule.lo, rule.hi));
  return 0;
}

// The accelerator counts of `s` from its fields; every count is 0 (unknown) when one of them is
// not sane, and s.problems says why.
void derive_counts(system_description& s) {
  s.accelerators_per_node = count_field(s.fields, k_accelerators_per_node, s.problems);
  s.nodes = count_field(s.fields, k_number_of_nodes, s.problems);
  // result_summarizer: number_of_nodes x max(accelerators_per_node, 1).
  s.total_accelerators = s.nodes * std::max<int64_t>(s.accelerators_per_node, 1);
  if (s.problems.empty() && s.total_accelerators > k_max_accelerators)
    s.problems.push_back(fmt::format("{} nodes x {} accelerators per node = {} accelerators, more "
                                     "than {}",
                                     s.nodes, s.accelerators_per_node, s.total_accelerators,
                                     k_max_accelerators));
  if (!s.problems.empty())
    s.nodes = s.accelerators_per_node = s.total_accelerators = 0;
}

// A field's text: a string as written, any other value as JSON ("" when missing).
std::string string_field(const json& j, const char* key) {
  if (!j.contains(key))
    return {};
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

} // namespace

std::vector<std::string> system_count_problems(const json& fields) {
  std::vector<std::string> problems;
  for (const count_rule* rule :
       {&k_number_of_nodes, &k_accelerators_per_node, &k_host_processors_per_node})
    if (fields.is_object() && fields.contains(rule->key))
      count_field(fields, *rule, problems);
  return problems;
}

json environment_of(const system_description& s) {
  return {{"source", "mlperf system description"},
          {"system", s.fields},
          {"cpu", {{"model", string_field(s.fields, "host_processor_model_name")}}},
          {"accelerator",
           {{"model", s.accelerator_model},
            {"per_node", s.accelerators_per_node},
            {"nodes", s.nodes},
            {"count", s.total_accelerators}}},
          {"os", string_field(s.fields, "operating_system")},
          {"framework", s.framework},
          {"software_stack", s.software_stack}};
}

system_description describe_system(const std::string& org, const std::string& name,
                                   const std::string& round, const std::filesystem::path& file,
                                   const json& fields) {
  system_description s;
  s.org = org;
  s.name = name;
  s.round = round;
  s.file = file;
  s.fields = fields;
  s.accelerator_model = string_field(fields, "accelerator_model_name");
  derive_counts(s);
  s.framework = string_field(fields, "framework");
  if (fields.contains("other_software_stack"))
    s.software_stack = fields["other_software_stack"];
  s.division = string_field(fields, "division");
  s.status = string_field(fields, "status");
  return s;
}

} // namespace accelbench::mlperf
