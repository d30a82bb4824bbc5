#include "harness/app/cli/mlperf_log_judge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/text_input.hpp"
#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::cli {

external::log_verdict judge_mlperf_log(const std::string& log_text, const std::string& round) {
  const auto& table = mlperf::benchmark_table::builtin();
  std::vector<mllog::diagnostic> diags;
  const std::string repaired = mllog::repair_text_lines(log_text, "<stdout>", diags);
  const mllog::parsed_log log = mllog::parse_mllog(repaired, "<stdout>");
  external::log_verdict v;
  if (const mllog::event* b = log.first("submission_benchmark"); b && b->value.is_string())
    v.benchmark = b->value.get<std::string>();
  mlperf::result_context ctx;
  ctx.benchmark = v.benchmark;
  ctx.round = round;
  ctx.relative_path = "<stdout>";
  v.as_run = mlperf::run_from_parsed_log(log, repaired, ctx, diags, table); // parsed once
  if (const mlperf::benchmark_info* info = table.find(v.benchmark)) {
    v.known_benchmark = true;
    v.benchmark = info->name; // an alias (ssd, gnn) as the table names it now
    v.required_runs = info->required_runs;
    v.max_dropped = info->max_dropped;
    v.quality_reached = mlperf::evaluate_quality(info->quality, log).reached;
    v.target = info->quality.to_json();
  }
  return v;
}

namespace {

// The logs parsed as the RCP check reads result files ("training run N" names each).
std::vector<mllog::parsed_log> parse_set(const std::vector<std::string>& logs) {
  std::vector<mllog::parsed_log> out;
  out.reserve(logs.size());
  for (size_t i = 0; i < logs.size(); ++i) {
    const std::string name = fmt::format("training run {}", i + 1);
    std::vector<mllog::diagnostic> diags;
    out.push_back(mllog::parse_mllog(mllog::repair_text_lines(logs[i], name, diags), name));
  }
  return out;
}

// The first string value of `key` in the first log that logs one ("" when none does).
std::string first_string(const std::vector<mllog::parsed_log>& logs, const std::string& key) {
  for (const auto& log : logs)
    if (const mllog::event* e = log.first(key); e && e->value.is_string())
      return e->value.get<std::string>();
  return {};
}

// Whether any log says the closed division: the RCP check is the closed division's, and a set
// one of whose runs claims it is held to it.
bool claims_closed(const std::vector<mllog::parsed_log>& logs) {
  for (const auto& log : logs)
    if (const mllog::event* e = log.first("submission_division"); e && e->value == "closed")
      return true;
  return false;
}

// The round whose reference data judges `benchmark`: `round` when it has data for it, else
// (round "") the newest that has; "" when none.
std::string reference_round(const std::string& round, const std::string& benchmark) {
  if (!round.empty()) {
    const std::string r = mlperf::normalize_round(round);
    return mlperf::rcp_set::builtin(r, benchmark) ? r : std::string();
  }
  std::string newest; // rcp_rounds() lists the rounds oldest first
  for (const std::string& r : mlperf::rcp_rounds())
    if (mlperf::rcp_set::builtin(r, benchmark))
      newest = r;
  return newest;
}

external::set_verdict not_checked(std::string why) {
  external::set_verdict v;
  v.not_checked = std::move(why);
  return v;
}

} // namespace

external::set_verdict judge_mlperf_set(const std::vector<std::string>& logs,
                                       const std::string& round, bool bypass) {
  const std::vector<mllog::parsed_log> parsed = parse_set(logs);
  if (!claims_closed(parsed)) {
    const std::string division = first_string(parsed, "submission_division");
    return not_checked(fmt::format("the logs say {}, not the closed division: MLPerf's RCP check "
                                   "is the closed division's",
                                   division.empty() ? std::string("no submission_division")
                                                    : "division '" + printable(division) + "'"));
  }
  const std::string benchmark = first_string(parsed, "submission_benchmark");
  const std::string r = reference_round(round, benchmark);
  if (r.empty())
    return not_checked(
        round.empty()
            ? fmt::format("no MLPerf round has reference convergence points for '{}' (rounds {})",
                          printable(benchmark), fmt::join(mlperf::rcp_rounds(), ", "))
            : fmt::format("MLPerf round {} has no reference convergence points for '{}'",
                          printable(round), printable(benchmark)));
  std::vector<const mllog::parsed_log*> ptrs;
  ptrs.reserve(parsed.size());
  for (const auto& l : parsed)
    ptrs.push_back(&l);
  const mlperf::rcp_verdict rv = mlperf::check_rcp(ptrs, r, bypass);
  external::set_verdict v;
  v.checked = true;
  v.pass = rv.pass;
  v.bypassed = rv.bypassed;
  v.norm_factor = rv.norm_factor.value_or(1);
  v.summary = rv.summary();
  v.record = rv.to_json();
  v.record["summary"] = v.summary;
  v.record["round"] = r;
  return v;
}

external::mlperf_judges external_judges() { return {judge_mlperf_log, judge_mlperf_set}; }

} // namespace accelbench::cli
