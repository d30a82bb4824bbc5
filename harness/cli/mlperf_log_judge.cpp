#include "harness/cli/mlperf_log_judge.hpp"

#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/ingest.hpp"

namespace accelbench::cli {

external::log_verdict judge_mlperf_log(const std::string& log_text, const std::string& round) {
  const auto& table = mlperf::benchmark_table::builtin();
  std::vector<mlperf::diagnostic> diags;
  const std::string repaired = mlperf::repair_text_lines(log_text, "<stdout>", diags);
  const mlperf::parsed_log log = mlperf::parse_mllog(repaired, "<stdout>");
  external::log_verdict v;
  if (const mlperf::event* b = log.first("submission_benchmark"); b && b->value.is_string())
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

} // namespace accelbench::cli
