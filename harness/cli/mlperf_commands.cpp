#include "harness/cli/mlperf_commands.hpp"

#include <iostream>

#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/table.hpp"
#include "harness/core/error.hpp"
#include "workloads/mlperf/check.hpp"
#include "workloads/mlperf/ingest.hpp"
#include "workloads/mlperf/package.hpp"
#include "workloads/mlperf/score.hpp"

namespace accelbench::cli {

json mlperf_scores(const std::vector<run>& runs) {
  std::vector<run> ml;
  for (const auto& r : runs)
    if (r.cfg.workload.rfind("mlperf.", 0) == 0) ml.push_back(r);
  json out = json::array();
  if (ml.empty()) return out;
  for (const auto& s : mlperf::score_groups(ml)) out.push_back(s.to_json());
  return out;
}

int cmd_import_mlperf(const std::string& db_path, const std::string& dir, bool quiet) {
  // Parse and check everything first; the store is touched only once the folder was read.
  auto res = mlperf::ingest(dir);
  for (const auto& d : res.diagnostics) std::cerr << "accelbench: " << d.to_string() << "\n";
  auto db = store::store::open(resolve_db_path(db_path), store::access::read_write);
  for (const auto& s : res.systems) {
    store::system_record rec;
    rec.name = s.name;
    rec.accelerator_model = s.accelerator_model;
    rec.accelerators_per_node = s.accelerators_per_node;
    rec.nodes = s.nodes;
    rec.source = "published";
    rec.description = s.to_json();
    db.upsert_system(rec);
  }
  size_t n = db.insert_runs(res.runs);
  size_t failed = 0;
  for (const auto& r : res.runs) failed += r.status != run_status::ok;
  std::cout << fmt::format("imported {} run(s) from {} system(s) in {} ({} already present, {} failed, {} diagnostic(s))\n",
                           n, res.systems.size(), dir, res.runs.size() - n, failed, res.diagnostics.size());
  if (!quiet) {
    table t({"system", "benchmark", "accelerators", "runs", "score (min)", "valid"});
    for (const auto& s : mlperf::score_groups(res.runs)) {
      int64_t acc = 0;
      for (const auto& sys : res.systems)
        if (sys.name == s.system) acc = sys.total_accelerators;
      t.add({s.system, s.benchmark, std::to_string(acc), std::to_string(s.runs),
             s.valid ? fmt::format("{:.4f}", s.score_min) : "-", s.valid ? "VALID" : "INVALID"});
    }
    t.print(std::cout);
  }
  return res.diagnostics.empty() && failed == 0 ? exit_ok : exit_failed;
}

int cmd_package(const package_cli_options& o) {
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
  store::run_filter f;
  f.systems = {o.system};
  f.with_log = true;
  std::vector<run> candidates;
  for (auto& r : db.query(f)) {
    // A time-to-train run of accelbench's trainer holds one MLPerf log per training run in
    // extra.mllogs (run.mllog is their concatenation); an imported MLPerf run holds its own log.
    if (r.extra.contains("mllogs") && r.extra["mllogs"].is_array() && !r.extra["mllogs"].empty()) {
      int i = 0;
      for (const auto& log : r.extra["mllogs"]) {
        run one = r;
        one.uuid = mlperf::name_uuid(r.uuid + "/" + std::to_string(i++));
        one.mllog = log.get<std::string>();
        one.extra.erase("mllogs");
        candidates.push_back(std::move(one));
      }
    } else if (!r.mllog.empty()) {
      candidates.push_back(std::move(r));
    }
  }
  if (candidates.empty())
    throw input_error(fmt::format("system '{}' has no runs with an MLPerf log in {} (run train.llama --set mode=time_to_train, or import MLPerf results)",
                                  o.system, db.path().string()));
  // Group by benchmark; each benchmark becomes one results folder.
  std::map<std::string, std::vector<run>> by_bench;
  for (auto& r : candidates) by_bench[mlperf::run_benchmark(r)].push_back(std::move(r));
  std::vector<std::string> wanted = o.benchmarks;
  if (wanted.empty())
    for (const auto& [b, _] : by_bench) wanted.push_back(b);
  mlperf::package_options po;
  po.out_dir = o.out;
  po.org = o.org;
  po.system = o.system;
  po.division = o.division;
  po.status = o.status;
  po.system_json = o.system_json;
  po.force = o.force;
  po.command_line = o.command_line;
  // Validate every benchmark before writing anything.
  for (const auto& b : wanted)
    if (!by_bench.count(b))
      throw input_error(fmt::format("system '{}' has no runs of benchmark '{}' with an MLPerf log", o.system, b));
  for (const auto& b : wanted) {
    auto res = mlperf::write_package(by_bench[b], po);
    std::cout << fmt::format("wrote {} result file(s) for {} to {}\n", res.result_files.size(), b, res.org_dir.string());
  }
  return exit_ok;
}

int cmd_check_package(const std::string& dir, const std::string& round, bool as_json) {
  mlperf::check_options opt;
  opt.round = round;
  auto res = mlperf::check_package(dir, opt);
  if (as_json) {
    std::cout << res.to_json().dump(2) << "\n";
  } else {
    std::cout << (res.valid ? "VALID" : "INVALID") << fmt::format(" — {} ({} system(s), {} result file(s){})\n", dir,
                                                                 res.systems, res.result_files,
                                                                 res.round.empty() ? "" : ", round " + res.round);
    for (const auto& r : res.reasons) std::cout << "  reason: " << r << "\n";
    for (const auto& w : res.warnings) std::cout << "  warning: " << w << "\n";
  }
  return res.valid ? exit_ok : exit_failed;
}

} // namespace accelbench::cli
