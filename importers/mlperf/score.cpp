#include "importers/mlperf/score.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

std::string run_benchmark(const run& r) {
  auto it = r.cfg.values.find("benchmark");
  if (it != r.cfg.values.end())
    return it->second;
  const std::string prefix = "mlperf.";
  if (r.cfg.workload.rfind(prefix, 0) == 0)
    return r.cfg.workload.substr(prefix.size());
  // A measured training run (train.llama) names its benchmark in its MLPerf log.
  const size_t at = r.mllog.find("\"submission_benchmark\"");
  if (at != std::string::npos) {
    const size_t nl = r.mllog.rfind('\n', at);
    const size_t start = nl == std::string::npos ? 0 : nl + 1;
    const size_t end = std::min(r.mllog.find('\n', at), r.mllog.size());
    mllog::parsed_log log =
        mllog::parse_mllog(std::string_view(r.mllog).substr(start, end - start));
    if (const mllog::event* e = log.first("submission_benchmark"); e && e->value.is_string())
      return e->value.get<std::string>();
  }
  return r.cfg.workload;
}

namespace {

// The minutes of a run that counts, or a reason it is dropped.
std::optional<double> run_minutes(const run& r, std::string& why) {
  if (r.status != run_status::ok) {
    why = "failed: " + r.status_reason;
    return std::nullopt;
  }
  if (r.extra.is_object() && r.extra.contains("converged") && r.extra["converged"].is_boolean() &&
      !r.extra["converged"].get<bool>()) {
    why = "did not converge";
    return std::nullopt;
  }
  if (!r.valid) {
    why = "invalid: " +
          (r.invalid_reasons.empty() ? std::string("no reason") : r.invalid_reasons.front());
    return std::nullopt;
  }
  if (r.samples.empty() || r.sample_unit != "min") {
    if (const metric* m = r.find_metric("time_to_train_min"))
      return m->value;
    why = "no time-to-train sample in minutes";
    return std::nullopt;
  }
  return r.samples.front().value;
}

// A benchmark folder whose RCP check failed (extra.rcp, recorded by the import) is not scored:
// MLCommons' package checker rejects it. False with the reason added.
bool rcp_passed(const run& r, std::vector<std::string>& reasons) {
  if (!r.extra.is_object() || !r.extra.contains("rcp") || !r.extra["rcp"].is_object())
    return true;
  const json& v = r.extra["rcp"];
  if (!v.contains("pass") || !v["pass"].is_boolean() || v["pass"].get<bool>())
    return true;
  reasons.push_back(v.contains("summary") && v["summary"].is_string()
                        ? v["summary"].get<std::string>()
                        : std::string("RCP Test Failed"));
  return false;
}

} // namespace

score_result score(const std::vector<run>& runs, const benchmark_table& table) {
  score_result s;
  s.runs = static_cast<int>(runs.size());
  if (runs.empty()) {
    s.reasons.emplace_back("no runs");
    return s;
  }
  s.benchmark = run_benchmark(runs.front());
  s.system = runs.front().system;
  s.ruleset = runs.front().ruleset;
  for (const run& r : runs) {
    if (run_benchmark(r) != s.benchmark || r.system != s.system) {
      s.reasons.push_back(fmt::format("runs mix systems or benchmarks ({}/{} and {}/{})", s.system,
                                      s.benchmark, r.system, run_benchmark(r)));
      return s;
    }
  }
  const benchmark_info* info = table.find(s.benchmark);
  int max_dropped = 1;
  if (info) {
    s.benchmark = info->name;
    s.required_runs = info->required_runs;
    max_dropped = info->max_dropped;
  } else {
    s.reasons.push_back(
        fmt::format("unknown benchmark '{}': required number of runs unknown", s.benchmark));
  }

  // scaling.json applies to the whole benchmark folder; every run carries the same factor.
  if (runs.front().extra.is_object() && runs.front().extra.contains("scaling_factor") &&
      runs.front().extra["scaling_factor"].is_number())
    s.scaling_factor = runs.front().extra["scaling_factor"].get<double>();

  // Every run in order: its minutes, or not converged (failed, invalid, no time) and dropped.
  std::vector<double> minutes;
  std::vector<bool> converged;
  for (const run& r : runs) {
    std::string why;
    const std::optional<double> m = run_minutes(r, why);
    minutes.push_back(m.value_or(0.0));
    converged.push_back(m.has_value());
    if (!m) {
      s.runs_dropped.push_back(r.uuid);
      s.reasons.push_back(fmt::format("run {} dropped: {}", r.uuid, why));
    }
  }
  bool valid = info != nullptr;
  if (info && s.runs != info->required_runs) {
    valid = false;
    s.reasons.push_back(
        fmt::format("{} runs, {} requires exactly {}", s.runs, info->name, info->required_runs));
  }
  s.max_dropped = max_dropped;
  const olympic_result o = olympic_mean(minutes, converged, max_dropped);
  if (!o.valid) {
    s.reasons.push_back(o.reason);
    s.valid = false;
    return s;
  }
  for (size_t i : o.used)
    s.runs_used.push_back(runs[i].uuid);
  s.olympic_mean_min = o.mean;
  s.score_min = s.olympic_mean_min * s.scaling_factor;
  s.valid = valid && rcp_passed(runs.front(), s.reasons);
  return s;
}

std::vector<score_result> score_groups(const std::vector<run>& runs, const benchmark_table& table) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<run>> groups;
  for (const run& r : runs) {
    std::string b = run_benchmark(r);
    if (const benchmark_info* info = table.find(b))
      b = info->name;
    groups[{r.ruleset, r.system, b}].push_back(r);
  }
  std::vector<score_result> out;
  out.reserve(groups.size());
  for (const auto& [key, rs] : groups)
    out.push_back(score(rs, table));
  return out;
}

} // namespace accelbench::mlperf
