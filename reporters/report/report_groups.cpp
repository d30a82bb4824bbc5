// Groups of a report: families, pair keys, the runs of one system for one pair key, and the
// shared vocabulary (each run's values in its family's quantity, number formats).
#include "reporters/report/report_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/model_flops.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/score.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report_internal.hpp"

namespace accelbench::report {

namespace detail {

std::string family_of(const std::string& workload) {
  if (workload.rfind("mlperf.", 0) == 0)
    return "mlperf";
  if (workload.rfind("train.", 0) == 0)
    return "training";
  return "kernel";
}

int family_rank(const std::string& f) { return f == "mlperf" ? 0 : f == "training" ? 1 : 2; }

// The benchmark of an MLPerf run (workload mlperf.<benchmark>): cfg.values["benchmark"], else the
// workload name after "mlperf." (as mlperf::run_benchmark reads the runs of that family).
std::string benchmark_of(const run& r) {
  auto it = r.cfg.values.find("benchmark");
  if (it != r.cfg.values.end())
    return it->second;
  return r.cfg.workload.size() > 7 ? r.cfg.workload.substr(7) : r.cfg.workload;
}

std::string pair_key_of(const run& r) {
  if (family_of(r.cfg.workload) == "mlperf")
    return "mlperf/" + benchmark_of(r);
  return r.cfg.key() + " [" + r.ruleset + "]";
}

std::string json_string_at(const json& j, const char* a, const char* b) {
  if (j.is_object() && j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_string())
    return j[a][b].get<std::string>();
  return {};
}

int64_t json_int_at(const json& j, const char* a, const char* b) {
  if (j.is_object() && j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_number())
    return j[a][b].get<int64_t>();
  return 0;
}

system_facts facts_of(const run& r, const side& s) {
  system_facts f;
  auto it = s.systems.find(r.system);
  if (it != s.systems.end() && !it->second.accelerator_model.empty()) {
    f.accelerator_model = it->second.accelerator_model;
    f.accelerators = std::max<int64_t>(1, it->second.total_accelerators());
    f.per_node = std::max<int64_t>(1, it->second.accelerators_per_node);
    return f;
  }
  f.accelerator_model = json_string_at(r.environment, "accelerator", "model");
  if (int64_t c = json_int_at(r.environment, "accelerator", "count"); c > 0)
    f.accelerators = c;
  if (auto a = r.cfg.values.find("accelerators"); a != r.cfg.values.end()) {
    try {
      f.accelerators = std::max<int64_t>(1, std::stoll(a->second));
    } catch (...) {
    }
  }
  f.per_node = json_int_at(r.environment, "accelerator", "per_node") > 0
                   ? json_int_at(r.environment, "accelerator", "per_node")
                   : f.accelerators;
  if (f.accelerator_model.empty()) {
    std::string cpu = json_string_at(r.environment, "cpu", "model");
    if (!cpu.empty())
      f.accelerator_model = "CPU: " + cpu;
  }
  return f;
}

std::string format_count(int64_t n) {
  const std::string s = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) { // a comma before every third digit from the right
    if (i > 0 && (s.size() - i) % 3 == 0)
      out += ',';
    out += s[i];
  }
  return out;
}

std::string short_name(const device_spec* d, const std::string& accel_model,
                       const std::string& system) {
  if (d && !d->measured_peak) {
    // The catalogue's first pattern is the marketing name (GB200, B200, H100 PCIe, H100...).
    return d->patterns.front();
  }
  if (!accel_model.empty())
    return accel_model;
  return system;
}

std::string fmt_num(double v) { return format_significant(v, report_style); }

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

bool unit_is_per_accelerator(const std::string& unit) {
  const std::string u = ascii_lower(unit);
  return u.find("/gpu") != std::string::npos || u.find("/accelerator") != std::string::npos;
}

std::string mlperf_group_key(const std::string& pair_key, const std::string& system) {
  return pair_key + "\n" + system;
}

group_map group_runs(const side& s) {
  group_map out;
  std::set<std::string> seen; // a run selected twice (overlapping selectors) counts once
  for (const auto& r : s.runs) {
    if (!r.uuid.empty() && !seen.insert(r.uuid).second)
      continue;
    const std::string key = pair_key_of(r);
    group& g = out[key][r.system];
    if (g.runs.empty()) {
      g.key = key;
      g.workload = r.cfg.workload;
      g.family = family_of(r.cfg.workload);
      g.system = r.system;
      g.facts = facts_of(r, s);
    }
    g.runs.push_back(&r);
  }
  for (auto& [key, by_system] : out)
    for (auto& [system, g] : by_system)
      if (auto it = s.mlperf_scores.find(mlperf_group_key(key, system));
          it != s.mlperf_scores.end())
        g.mlperf_score = &it->second;
  return out;
}

run_series series_of(const run& r, const std::string& family) {
  run_series s;
  if (family == "kernel") {
    double flops = r.extra.is_object() ? r.extra.value("flops_per_iteration", 0.0) : 0.0;
    if (r.sample_unit == "TFLOP/s") {
      s = {"tflops", "TFLOP/s", direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        s.values.push_back(x.value);
      return s;
    }
    if (r.sample_unit == "s" && flops > 0) {
      s = {"tflops", "TFLOP/s", direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        if (x.value > 0)
          s.values.push_back(flops / x.value / 1e12);
      return s;
    }
  } else if (family == "training") {
    if (r.sample_unit.rfind("tokens/s", 0) == 0) {
      s = {"tokens_per_s", r.sample_unit, direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        s.values.push_back(x.value);
      return s;
    }
    if (const metric* m = r.find_metric("tokens_per_s"); m && r.sample_unit != "min") {
      s = {"tokens_per_s",
           m->unit.empty() ? "tokens/s" : m->unit,
           direction::higher_is_better,
           {m->value}};
      return s;
    }
  }
  s.quantity = r.sample_unit.empty() ? "value" : r.sample_unit;
  s.unit = r.sample_unit;
  s.dir = r.sample_dir;
  for (const auto& x : r.samples)
    s.values.push_back(x.value);
  return s;
}

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : stats::median(std::move(v)); }

std::string dtype_of(const run& r) {
  auto it = r.cfg.values.find("dtype");
  return it == r.cfg.values.end() ? std::string() : it->second;
}

} // namespace detail

std::vector<mlperf_group> mlperf_groups(const side& s) {
  using namespace detail;
  std::vector<mlperf_group> out;
  for (const auto& [key, by_system] : group_runs(s))
    for (const auto& [system, g] : by_system) {
      if (g.family != "mlperf")
        continue;
      mlperf_group m{mlperf_group_key(key, system), {}};
      for (const run* r : g.runs)
        m.runs.push_back(*r);
      out.push_back(std::move(m));
    }
  return out;
}

} // namespace accelbench::report
