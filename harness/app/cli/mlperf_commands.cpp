#include "harness/app/cli/mlperf_commands.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/core/error.hpp"
#include "harness/core/progress.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/benchmarks.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/package.hpp"
#include "importers/mlperf/score.hpp"

namespace accelbench::cli {

json mlperf_scores(const std::vector<run>& runs) {
  std::vector<run> ml;
  for (const auto& r : runs)
    if (r.cfg.workload.rfind("mlperf.", 0) == 0)
      ml.push_back(r);
  json out = json::array();
  if (ml.empty())
    return out;
  for (const auto& s : mlperf::score_groups(ml))
    out.push_back(s.to_json());
  return out;
}

store::system_record published_system_record(const mlperf::system_description& s) {
  store::system_record rec;
  rec.name = s.name;
  rec.accelerator_model = s.accelerator_model;
  rec.accelerators_per_node = s.accelerators_per_node;
  rec.nodes = s.nodes;
  rec.source = "published";
  rec.description = s.to_json();
  return rec;
}

// One note per closed benchmark folder whose RCP check could not be done (extra.rcp_not_checked):
// its score above is not one MLCommons' checker would have passed as it stands.
void print_rcp_not_checked(const std::vector<run>& runs) {
  std::set<std::string> said;
  for (const auto& r : runs) {
    const auto why = r.extra.find("rcp_not_checked");
    if (why == r.extra.end() || !why->is_string())
      continue;
    const auto bench = r.cfg.values.find("benchmark");
    const std::string folder =
        r.system + "/" + (bench == r.cfg.values.end() ? r.cfg.workload : bench->second);
    if (said.insert(folder).second)
      std::cout << fmt::format("note: {}: no RCP check, {}\n", printable(folder),
                               why->get<std::string>());
  }
}

int cmd_import_mlperf(const std::string& db_path, const std::string& dir, bool quiet,
                      const import_labels& labels) {
  // Parse and check everything first; the store is touched only once the folder was read.
  // Progress per organisation folder, on a terminal only (a log keeps the diagnostics alone).
  progress::options po = progress::for_stderr(quiet);
  po.quiet = po.quiet || !po.terminal;
  std::optional<progress> bar;
  auto res = mlperf::ingest(dir, mlperf::benchmark_table::builtin(),
                            [&](size_t i, size_t total, const std::string& org) {
                              if (!bar)
                                bar.emplace(total, po);
                              bar->step(i, "reading " + printable(org));
                            });
  if (bar)
    bar->finish();
  for (const auto& d : res.diagnostics)
    std::cerr << "accelbench: " << printable(d.to_string()) << "\n";
  // Exit 1 means "some logs had problems, the rest was imported"; a folder that gave no run at
  // all is bad input: exit 2, and the database is neither written nor created.
  if (res.runs.empty())
    throw input_error(fmt::format(
        "nothing to import from '{}': no result_<i>.txt log could be read ({} diagnostic(s) above)",
        printable(dir), res.diagnostics.size()));
  std::vector<store::system_record> records;
  records.reserve(res.systems.size());
  for (const auto& s : res.systems)
    records.push_back(published_system_record(s));
  apply_import_labels(labels, res.runs, records);
  if (!labels.system.empty())
    for (auto& s : res.systems)
      s.name = labels.system;
  auto db = store::store::open(resolve_db_path(db_path), store::access::read_write);
  for (const auto& rec : records)
    db.upsert_system(rec);
  size_t n = db.insert_runs(res.runs);
  size_t failed = 0;
  for (const auto& r : res.runs)
    failed += r.status != run_status::ok;
  std::cout << fmt::format("imported {} run(s) from {} system(s) in {}{} ({} already present, {} "
                           "failed, {} diagnostic(s))\n",
                           n, res.systems.size(), dir, import_job_words(labels, res.runs, n),
                           res.runs.size() - n, failed, res.diagnostics.size());
  if (!quiet) {
    table t({"system", "benchmark", "accelerators", "runs", "score (min)", "valid"});
    for (const auto& s : mlperf::score_groups(res.runs)) {
      int64_t acc = 0;
      for (const auto& sys : res.systems)
        if (sys.name == s.system)
          acc = sys.total_accelerators;
      // 0: no description, or one whose counts are not sane (diagnosed above).
      t.add({s.system, s.benchmark, acc > 0 ? std::to_string(acc) : "-", std::to_string(s.runs),
             s.valid ? fmt::format("{:.4f}", s.score_min) : "-", s.valid ? "VALID" : "INVALID"});
    }
    t.print(std::cout);
    print_rcp_not_checked(res.runs);
  }
  return res.diagnostics.empty() && failed == 0 ? exit_ok : exit_failed;
}

int cmd_package(const package_cli_options& o) {
  // The names become folder names: refused before the database is read (write_packages checks
  // them again, for its other callers).
  mlperf::check_path_name("organisation", o.org);
  mlperf::check_path_name("system", o.system);
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
        // A database written by another tool (or edited by hand) may hold anything here.
        if (!log.is_string())
          throw input_error(
              fmt::format("run {} in {}: extra.mllogs[{}] is {}, not an MLPerf log (a string)",
                          r.uuid, db.path().string(), i, log.type_name()));
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
    throw input_error(fmt::format("system '{}' has no runs with an MLPerf log in {} (run "
                                  "train.llama --set mode=time_to_train, or import MLPerf results)",
                                  o.system, db.path().string()));
  // Group by benchmark; each benchmark becomes one results folder.
  std::map<std::string, std::vector<run>> by_bench;
  for (auto& r : candidates)
    by_bench[mlperf::run_benchmark(r)].push_back(std::move(r));
  std::vector<std::string> wanted = o.benchmarks;
  if (wanted.empty())
    for (const auto& [b, _] : by_bench)
      wanted.push_back(b);
  mlperf::package_options po;
  po.out_dir = o.out;
  po.org = o.org;
  po.system = o.system;
  po.division = o.division;
  po.status = o.status;
  po.system_json = o.system_json;
  po.force = o.force;
  po.command_line = o.command_line;
  // Validate every benchmark before writing anything; write_packages writes all or nothing.
  std::vector<std::vector<run>> groups;
  for (const auto& b : wanted) {
    if (!by_bench.count(b))
      throw input_error(
          fmt::format("system '{}' has no runs of benchmark '{}' with an MLPerf log", o.system, b));
    groups.push_back(std::move(by_bench[b]));
    by_bench.erase(b);
  }
  for (const auto& res : mlperf::write_packages(groups, po)) {
    std::cout << fmt::format("wrote {} result file(s) for {} to {}\n", res.result_files.size(),
                             res.benchmark, res.org_dir.string());
    if (res.rcp)
      std::cout << "  " << res.rcp->summary() << "\n";
    // The package's path names no round, and check-package refuses to guess one.
    std::cout << fmt::format("  check it: accelbench check-package {} --round {}\n",
                             res.org_dir.string(), res.round.empty() ? "ROUND" : res.round);
  }
  return exit_ok;
}

// The --round value, refused (exit 2) unless it names a round whose rules we know: checking
// against no rules would call a package VALID that was never checked.
std::string checked_round(const std::string& round) {
  if (round.empty())
    return round;
  const auto known = mlperf::benchmark_table::builtin().rounds();
  std::string r = mlperf::normalize_round(round);
  if (r.empty() || std::find(known.begin(), known.end(), r) == known.end())
    throw input_error(
        fmt::format("unknown MLPerf Training round '{}' for --round (known rounds: {})",
                    printable(round), fmt::join(known, ", ")));
  return r;
}

int cmd_check_package(const std::string& dir, const std::string& round, bool as_json,
                      bool seed_checker_bypass, bool rcp_bypass) {
  mlperf::check_options opt;
  opt.round = checked_round(round);
  opt.seed_checker_bypass = seed_checker_bypass;
  opt.rcp_bypass = rcp_bypass;
  // A path that is not a folder is a mistake on the command line, not an INVALID package.
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw input_error(fmt::format(
        "'{}' is not a folder (check-package takes a package's organisation folder, DIR/ORG)",
        printable(dir)));
  if (opt.round.empty() && mlperf::round_from_path(dir).empty())
    throw input_error(fmt::format(
        "the MLPerf Training round of '{}' is unknown: give --round (known rounds: {}); "
        "MLCommons' package checker takes the ruleset too, and without it neither the RCP check "
        "nor a round's rules could be applied (a path through a training_vX.Y folder names it)",
        printable(dir), fmt::join(mlperf::benchmark_table::builtin().rounds(), ", ")));
  auto res = mlperf::check_package(dir, opt);
  if (as_json) {
    std::cout << dump_json(res.to_json(), 2) << "\n";
  } else {
    std::cout << (res.valid ? "VALID" : "INVALID")
              << fmt::format(" — {} ({} system(s), {} result file(s){})\n", dir, res.systems,
                             res.result_files, res.round.empty() ? "" : ", round " + res.round);
    for (const auto& r : res.reasons)
      std::cout << "  reason: " << printable(r) << "\n";
    for (const auto& w : res.warnings)
      std::cout << "  warning: " << printable(w) << "\n";
    // Each RCP verdict as MLCommons' package checker logs it, with its numbers.
    for (const auto& v : res.rcp)
      std::cout << "  rcp: " << printable(v.folder + ": " + v.summary()) << "\n";
  }
  return res.valid ? exit_ok : exit_failed;
}

command_hook add_package(CLI::App& app, context& ctx) {
  auto o = std::make_shared<package_cli_options>();
  auto* pkg =
      app.add_subcommand("package", "Write an MLPerf Training submission package from stored runs");
  pkg->add_option("--org", o->org, "Submitting organisation (folder name)")->required();
  pkg->add_option("--system", o->system, "System name (as stored; also the package's system file)")
      ->required();
  pkg->add_option("--division", o->division, "closed | open")
      ->required()
      ->check(CLI::IsMember({"closed", "open"}));
  pkg->add_option("--out", o->out, "Output folder (the package is written under OUT/ORG)")
      ->required();
  pkg->add_option("--benchmark", o->benchmarks, "Only these benchmarks (repeatable)");
  pkg->add_option("--status", o->status,
                  "System status: Available on-premise | Available cloud | Research, Development, "
                  "or Internal (RDI) | Preview");
  pkg->add_option("--system-json", o->system_json,
                  "JSON file with system-description fields that cannot be detected");
  add_db_option(pkg, o->db);
  pkg->add_flag("--force", o->force, "Replace an existing package for this system and benchmark");
  std::string cmdline;
  for (int i = 0; i < ctx.argc; ++i)
    cmdline += (i ? " " : "") + std::string(ctx.argv[i]);
  return {pkg, [o, cmdline] {
            o->command_line = cmdline;
            return cmd_package(*o);
          }};
}

command_hook add_check_package(CLI::App& app, context&) {
  struct options {
    std::string dir, round;
    bool as_json = false;
    bool seed_checker_bypass = false;
    bool rcp_bypass = false;
  };
  auto o = std::make_shared<options>();
  auto* chk = app.add_subcommand(
      "check-package",
      "Check an MLPerf Training package (DIR/ORG) like the MLCommons package checker");
  chk->add_option("dir", o->dir, "Organisation folder of a package")->required();
  chk->add_option("--round", o->round,
                  "Rules round, e.g. 5.0 (default: from a training_vX.Y folder in the path; "
                  "required without one)");
  chk->add_flag(
      "--seed-checker-bypass", o->seed_checker_bypass,
      "Skip the seed checker, as MLCommons' --seed-checker-bypass does (a warning says so)");
  chk->add_flag("--rcp-bypass", o->rcp_bypass,
                "Let a failed RCP check (found, interpolated or missing) pass, as MLCommons' "
                "--rcp-bypass does (a warning says so)");
  add_json_flag(chk, o->as_json);
  return {chk, [o] {
            return cmd_check_package(o->dir, o->round, o->as_json, o->seed_checker_bypass,
                                     o->rcp_bypass);
          }};
}

} // namespace accelbench::cli
