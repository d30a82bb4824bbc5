#include "importers/mlperf/power.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "importers/mlperf/folder.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

namespace {

std::optional<double> number(const json& v) {
  if (v.is_number())
    return v.get<double>();
  return std::nullopt;
}

// The summarizer sorts the lines by time before integrating (a stable sort keeps log order on
// ties).
std::vector<const mllog::event*> by_time(const mllog::parsed_log& log) {
  std::vector<const mllog::event*> out;
  for (const mllog::event& e : log.events)
    out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const mllog::event* a, const mllog::event* b) {
    return a->time_ms < b->time_ms;
  });
  return out;
}

// The power logs named PREFIX*.txt in `dir`, sorted; a link among them is a diagnostic, skipped
// (folder.hpp: never followed).
std::vector<fs::path> files_with_prefix(const fs::path& dir, const std::string& prefix,
                                        std::vector<mllog::diagnostic>& diags) {
  const std::vector<folder_entry> listed = list_folder(dir);
  std::vector<fs::path> out;
  out.reserve(listed.size());
  for (const auto& e : listed) {
    const std::string n = e.path.filename().string();
    if (n.rfind(prefix, 0) != 0 || e.path.extension() != ".txt")
      continue;
    if (e.kind == entry_kind::link)
      diags.push_back({e.path.string(), 0, link_refusal(e.path) + "; skipped"});
    else if (e.kind == entry_kind::file)
      out.push_back(e.path);
  }
  return out;
}

mllog::parsed_log parse_power_log(const fs::path& f) {
  return mllog::parse_mllog(read_folder_file(f, "power log"), f.string());
}

} // namespace

std::optional<double> node_energy_j(const mllog::parsed_log& log, double time_to_train_ms,
                                    std::string* why) {
  auto fail = [&](std::string w) -> std::optional<double> {
    if (why)
      *why = std::move(w);
    return std::nullopt;
  };
  double prev = 0, last = 0, start = 0, stop = 0, agg = 0, eff = 1.0;
  bool started = false, stopped = false;
  for (const mllog::event* e : by_time(log)) {
    const double t = static_cast<double>(e->time_ms);
    if (e->key == "power_measurement_start") {
      start = prev = t;
      started = true;
    }
    if (e->key == "power_reading" && !stopped && started) {
      const auto w = number(e->value);
      if (!w)
        return fail(fmt::format("line {}: power_reading value is not a number", e->line));
      agg += *w * (t - prev);
      prev = t;
      last = std::max(last, t);
    }
    if (e->key == "power_measurement_stop") {
      stop = t;
      stopped = true;
    }
    if (e->key == "conversion_eff") {
      const auto x = number(e->value);
      if (!x)
        return fail(fmt::format("line {}: conversion_eff value is not a number", e->line));
      eff = *x;
    }
  }
  if (!started)
    return fail("no power_measurement_start");
  if (!stopped)
    stop = last; // the summarizer then takes the last reading as the stop
  if (!(stop > start))
    return fail("the power measurement has no duration (stop <= start)");
  return eff * agg * time_to_train_ms / (stop - start) / 1000.0;
}

double switch_energy_j(const mllog::parsed_log& log, double time_to_train_ms) {
  double agg = 0, eff = 1.0;
  for (const mllog::event& e : log.events) {
    if (e.key == "conversion_eff")
      if (auto x = number(e.value))
        eff = *x;
    if (e.key == "interconnect_power_est") {
      agg = number(e.value).value_or(0);
      break;
    }
  }
  return eff * agg * time_to_train_ms / 1000.0;
}

std::optional<run_energy> read_run_energy(const fs::path& benchmark_dir,
                                          const std::string& result_stem, double time_to_train_ms,
                                          std::vector<mllog::diagnostic>& diags) {
  const fs::path dir = benchmark_dir / "power" / result_stem;
  if (!is_dir(dir))
    return std::nullopt;
  const auto nodes = files_with_prefix(dir, "node_", diags),
             switches = files_with_prefix(dir, "sw_", diags);
  if (nodes.empty()) {
    diags.push_back(
        {dir.string(), 0, "power folder without node_<k>.txt logs: no energy for this run"});
    return std::nullopt;
  }
  run_energy out;
  for (const auto& f : nodes) {
    std::string why;
    std::optional<double> j;
    try {
      j = node_energy_j(parse_power_log(f), time_to_train_ms, &why);
    } catch (const input_error& e) {
      why = e.what();
    }
    if (!j) {
      diags.push_back(
          {f.string(), 0, "power log not usable (" + why + "): no energy for this run"});
      return std::nullopt;
    }
    out.joules += *j;
    ++out.node_files;
  }
  for (const auto& f : switches) {
    try {
      out.joules += switch_energy_j(parse_power_log(f), time_to_train_ms);
      ++out.switch_files;
    } catch (const input_error& e) {
      diags.push_back(
          {f.string(), 0,
           std::string("power log not readable (") + e.what() + "): no energy for this run"});
      return std::nullopt;
    }
  }
  return out;
}

void attach_energy(run& r, const fs::path& benchmark_dir, const std::string& result_stem,
                   std::vector<mllog::diagnostic>& diags) {
  const fs::path power = benchmark_dir / "power";
  if (kind_of(power) == entry_kind::link) {
    diags.push_back({power.string(), 0, link_refusal(power) + "; no energy for this run"});
    return;
  }
  if (!is_dir(power) || r.samples.empty())
    return;
  const json& x = r.samples.front().extra;
  if (!x.is_object() || !x.contains("run_start_ms") || !x.contains("run_stop_ms"))
    return;
  const double ttt_ms = x["run_stop_ms"].get<double>() - x["run_start_ms"].get<double>();
  if (kind_of(power / result_stem) == entry_kind::link) {
    diags.push_back(
        {(power / result_stem).string(), 0, link_refusal(power / result_stem) + "; skipped"});
    return;
  }
  if (!is_dir(power / result_stem)) {
    diags.push_back(
        {(benchmark_dir / "power").string(), 0,
         fmt::format("no power logs for {} although the benchmark publishes power results",
                     result_stem)});
    return;
  }
  auto e = read_run_energy(benchmark_dir, result_stem, ttt_ms, diags);
  if (!e)
    return;
  r.add_metric("energy_j", e->joules, "J", direction::lower_is_better);
  r.extra["energy"] = {
      {"joules", e->joules},
      {"node_files", e->node_files},
      {"switch_files", e->switch_files},
      {"source", "MLPerf power logs (power/" + result_stem + "/), result summarizer's formula"}};
}

std::optional<double> energy_score_j(const std::vector<run>& runs, const score_result& s) {
  if (!s.valid || s.runs_used.empty())
    return std::nullopt;
  double sum = 0;
  for (const auto& id : s.runs_used) {
    auto it = std::find_if(runs.begin(), runs.end(), [&](const run& r) { return r.uuid == id; });
    if (it == runs.end())
      return std::nullopt;
    const metric* m = it->find_metric("energy_j");
    if (!m || !std::isfinite(m->value))
      return std::nullopt;
    sum += m->value;
  }
  return sum / double(s.runs_used.size()) * s.scaling_factor;
}

} // namespace accelbench::mlperf
