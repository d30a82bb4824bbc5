#include "harness/core/conditions.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "harness/core/stats.hpp"

namespace accelbench {

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// Sum of all CPU states but idle and iowait, from the "cpu" line of /proc/stat, in seconds.
double busy_cpu_seconds() {
  std::istringstream in(first_line("/proc/stat"));
  std::string label;
  in >> label;
  if (label != "cpu")
    return 0;
  double v, busy = 0;
  for (int i = 0; in >> v; ++i)
    if (i != 3 && i != 4 && i < 8)
      busy += v; // user nice system [idle iowait] irq softirq steal
  return busy / (double)sysconf(_SC_CLK_TCK);
}

// utime + stime of this process and of its children it waited for (fields 14 to 17 of
// /proc/self/stat), in seconds: a program run by `run external` is this job's own load.
double own_cpu_seconds() {
  std::string s = first_line("/proc/self/stat");
  auto close = s.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; in >> field && i <= 17; ++i)
    if (i >= 14)
      ticks += std::strtod(field.c_str(), nullptr); // utime stime cutime cstime
  return ticks / (double)sysconf(_SC_CLK_TCK);
}

std::string turbo_state() {
  std::string no_turbo = first_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
  if (!no_turbo.empty())
    return no_turbo == "1" ? "off" : "on";
  std::string boost = first_line("/sys/devices/system/cpu/cpufreq/boost");
  if (!boost.empty())
    return boost == "1" ? "on" : "off";
  return "";
}

std::string string_rule(const json& c, const char* key, const std::string& fallback) {
  return c.is_object() && c.contains(key) && c[key].is_string() ? c[key].get<std::string>()
                                                                : fallback;
}

// Applies the ruleset's treatment of one condition: INVALID, a warning, or nothing.
void apply(run& r, const std::string& treatment, const std::string& what) {
  if (treatment == "invalid")
    r.mark_invalid("conditions: " + what);
  else if (treatment == "warn") {
    if (!r.extra.contains("warnings") || !r.extra["warnings"].is_array())
      r.extra["warnings"] = json::array();
    r.extra["warnings"].push_back(what);
  }
}

void judge_cv(run& r, const condition_rules& rules, json& rec) {
  if (r.samples.size() < 2)
    return;
  std::vector<double> v;
  for (const auto& s : r.samples)
    v.push_back(s.value);
  const double cv = stats::summarize(v).cv;
  rec["cv"] = cv;
  if (cv > rules.max_cv)
    apply(r, rules.on_high_cv,
          fmt::format("coefficient of variation {:.1f}% above the ruleset's {:.1f}%", 100 * cv,
                      100 * rules.max_cv));
}

} // namespace

machine_state read_machine_state() {
  machine_state m;
  m.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  m.busy_cpu_s = busy_cpu_seconds();
  m.own_cpu_s = own_cpu_seconds();
  double load[1];
  if (getloadavg(load, 1) == 1)
    m.load1 = load[0];
  m.cores = (int)std::thread::hardware_concurrency();
  m.governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  m.turbo = turbo_state();
  return m;
}

condition_rules conditions_of(const ruleset& r) {
  condition_rules c;
  const json& j = r.section("conditions");
  if (!j.is_object())
    return c;
  if (j.contains("max_cv") && j["max_cv"].is_number())
    c.max_cv = j["max_cv"].get<double>();
  if (j.contains("max_other_load") && j["max_other_load"].is_number())
    c.max_other_load = j["max_other_load"].get<double>();
  c.on_high_cv = string_rule(j, "on_high_cv", c.on_high_cv);
  c.on_loaded = string_rule(j, "on_loaded_machine", c.on_loaded);
  c.on_governor = string_rule(j, "on_governor", c.on_governor);
  c.on_debug_library = string_rule(j, "on_debug_library", c.on_debug_library);
  return c;
}

double other_load(const machine_state& before, const machine_state& after) {
  const double wall = after.wall_s - before.wall_s;
  if (wall <= 0.05 || after.cores <= 0)
    return 0; // too short to tell
  const double others =
      (after.busy_cpu_s - before.busy_cpu_s) - (after.own_cpu_s - before.own_cpu_s);
  return std::max(0.0, others / wall / after.cores);
}

void judge_conditions(run& r, const condition_rules& rules, const machine_state& before,
                      const machine_state& after) {
  json rec = {{"cores", after.cores},
              {"load_average_start", before.load1},
              {"load_average_end", after.load1},
              {"other_processes_cpu_share", other_load(before, after)}};
  if (!after.governor.empty())
    rec["governor"] = after.governor;
  if (!after.turbo.empty())
    rec["turbo"] = after.turbo;
  if (r.status == run_status::ok) {
    judge_cv(r, rules, rec);
    const double share = rec["other_processes_cpu_share"].get<double>();
    rec["max_other_load"] = rules.max_other_load;
    rec["loaded"] = share > rules.max_other_load && rules.on_loaded != "ignore";
    if (share > rules.max_other_load)
      apply(r, rules.on_loaded,
            fmt::format(
                "other processes used {:.0f}% of the {} cores during the run (limit {:.0f}%; "
                "load average {:.2f} at start, {:.2f} at end)",
                100 * share, after.cores, 100 * rules.max_other_load, before.load1, after.load1));
    if (!after.governor.empty() && after.governor != "performance")
      apply(r, rules.on_governor,
            "CPU frequency governor is '" + after.governor + "', not 'performance'");
    if (after.turbo == "on")
      apply(r, rules.on_governor, "turbo is on: clocks vary with temperature and load");
  }
  r.extra["conditions"] = rec;
}

void judge_imported_conditions(run& r, const condition_rules& rules) {
  json rec = json::object();
  judge_cv(r, rules, rec);
  const json& bt = r.extra.contains("library_build_type") ? r.extra["library_build_type"] : json();
  if (bt.is_string()) {
    rec["library_build_type"] = bt;
    if (bt.get<std::string>() == "debug")
      apply(r, rules.on_debug_library, "produced by a debug build of the benchmark library");
  }
  if (!rec.empty())
    r.extra["conditions"] = rec;
}

std::optional<double> loaded_share(const run& r) {
  if (!r.extra.is_object() || !r.extra.contains("conditions"))
    return std::nullopt;
  const json& c = r.extra["conditions"];
  if (!c.is_object() || !c.contains("other_processes_cpu_share") ||
      !c["other_processes_cpu_share"].is_number())
    return std::nullopt;
  const double share = c["other_processes_cpu_share"].get<double>();
  const bool loaded = c.contains("loaded") && c["loaded"].is_boolean()
                          ? c["loaded"].get<bool>()
                          : share > condition_rules{}.max_other_load;
  return loaded ? std::optional<double>(share) : std::nullopt;
}

std::vector<std::string> run_warnings(const run& r) {
  std::vector<std::string> out;
  if (r.extra.is_object() && r.extra.contains("warnings") && r.extra["warnings"].is_array())
    for (const auto& w : r.extra["warnings"])
      if (w.is_string())
        out.push_back(w.get<std::string>());
  return out;
}

} // namespace accelbench
