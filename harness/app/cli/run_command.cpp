// accelbench run: the options, the loop and the output. The runner (harness/app/runner) plans every
// config first (bad input stops there, before anything runs or is stored) and runs one config at a
// time; here each run is stored in its own transaction and printed.
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/register_all.hpp"
#include "harness/app/cli/sigint_guard.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/app/runner/runner.hpp"
#include "harness/core/assignment.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/headline_metric.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/progress.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "harness/dist/dist.hpp"
#include "workloads/external/external_workload.hpp"
#include "workloads/external/process.hpp"
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
#include "importers/gbench/gbench_import.hpp"
#endif
#include "workloads/plugin/plugin_workload.hpp"

namespace accelbench::cli {

std::vector<std::string> run_notes(const run& r) {
  std::vector<std::string> notes = run_warnings(r);
  const size_t n = r.samples.size();
  // The thresholds of harness/compare: fewer than 5 a side is inconclusive, fewer than 9 flagged.
  if (n > 0 && n < 5)
    notes.push_back(
        fmt::format("only {} sample(s): compare needs at least 5 a side to call a change", n));
  else if (n > 0 && n < 9)
    notes.push_back(fmt::format(
        "{} samples: a comparison with it has little power (9 or more recommended)", n));
  return notes;
}

std::string primary_metric_of(const registry& reg, const run& r) {
  const workload* w = reg.find(r.cfg.workload);
  return w ? w->spec().primary_metric : std::string();
}

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
// Tells a running external program to end (its whole process group): lock-free, so the handler
// may set it.
std::atomic<bool> g_cancel{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// The first Ctrl-C asks for a clean stop: the current run finishes and is stored, the rest are
// not started; an external program running now is ended (its run, failed, is not stored). A second
// one exits at once (a run can take minutes): the database keeps every run stored so far, since
// each is its own transaction. Only async-signal-safe calls here.
void on_interrupt(int) {
  if (g_interrupted) {
    static const char again[] = "\naccelbench: interrupted again; exiting now\n";
    (void)!::write(STDERR_FILENO, again, sizeof again - 1);
    ::_exit(130);
  }
  g_interrupted = 1;
  g_cancel = true;
  static const char first[] =
      "\naccelbench: interrupted; stopping after the current run (Ctrl-C again to exit now)\n";
  (void)!::write(STDERR_FILENO, first, sizeof first - 1);
}

// The run's row of the result table: its headline metric (with the CI of TFLOP/s) or the reason.
std::vector<std::string> result_row(const registry& reg, const run& r) {
  const metric* m = headline_metric(r, primary_metric_of(reg, r));
  std::string ci;
  if (r.status == run_status::ok && m && m->name == "tflops") {
    auto lo = r.find_metric("tflops_ci_low"), hi = r.find_metric("tflops_ci_high");
    if (lo && hi)
      ci = fmt::format("[{}, {}]", format_quantity(lo->value, lo->unit),
                       format_quantity(hi->value, hi->unit));
  }
  return {std::to_string(r.id),
          r.cfg.workload,
          effective_config_text(r),
          to_string(r.status),
          r.status == run_status::skipped ? "-" : (r.valid ? "VALID" : "INVALID"),
          m ? format_quantity(m->value, m->unit)
            : (r.status_reason.empty() ? "" : clip(r.status_reason, 60)),
          ci};
}

// The RCP verdict of a time-to-train set (extra.rcp, extra.rcp_not_checked): a pass, which no
// reason or warning names, or why there was no check.
void tell_about_rcp(const run& r, progress& bar) {
  if (!r.extra.is_object())
    return;
  if (const auto v = r.extra.find("rcp"); v != r.extra.end() && v->is_object() &&
                                          v->value("pass", false) && !v->value("bypassed", false))
    bar.message(
        fmt::format("accelbench: run {} {}", r.id, printable(v->value("summary", "RCP passed"))));
  if (const auto why = r.extra.find("rcp_not_checked"); why != r.extra.end() && why->is_string())
    bar.message(fmt::format("accelbench: run {} no RCP check: {}", r.id,
                            printable(why->get<std::string>())));
}

// Why a run is INVALID or skipped, and its warnings, as messages beside the progress line.
void tell_about(const run& r, progress& bar) {
  for (const auto& why : r.valid ? std::vector<std::string>{} : r.invalid_reasons)
    bar.message(fmt::format("accelbench: run {} INVALID: {}", r.id, printable(why)));
  if (r.status == run_status::skipped)
    bar.message(fmt::format("accelbench: run {} skipped: {}", r.id, printable(r.status_reason)));
  for (const auto& w : run_warnings(r))
    bar.message(fmt::format("accelbench: run {} warning: {}", r.id, printable(w)));
  tell_about_rcp(r, bar);
}

// What was stored: the runs as JSON (--json), else the result table and where they went.
void print_results(bool as_json, const std::vector<run>& done, const table& t,
                   const std::string& db_path) {
  if (as_json) {
    json arr = json::array();
    for (const auto& r : done)
      arr.push_back(to_json(r));
    std::cout << dump_json(json{{"database", db_path}, {"runs", arr}}, 2) << "\n";
    return;
  }
  t.print(std::cout);
  std::cout << fmt::format("{} run(s) stored in {}\n", done.size(), printable(db_path));
}

// Why a run makes the job exit 1 ("failed: <why>", "INVALID: <first reason>"); "" if it does not.
std::string failure_of(const run& r) {
  if (r.status == run_status::failed)
    return "failed: " +
           (r.status_reason.empty() ? std::string("no reason recorded") : r.status_reason);
  if (!r.valid)
    return "INVALID: " + (r.invalid_reasons.empty() ? std::string("no reason recorded")
                                                    : r.invalid_reasons.front());
  return "";
}

// The last line of a job that exits 1: how many runs failed or are INVALID and why the first did,
// or how many the store refused (`unstored`: CONFIG: WHY). The reasons were said while the job
// ran, hundreds of lines up; the exit code alone says nothing.
std::string failure_summary(const std::vector<run>& done,
                            const std::vector<std::string>& unstored) {
  if (!unstored.empty())
    return fmt::format("accelbench: exit 1: {} run(s) could not be stored ({}); {} run(s) stored",
                       unstored.size(), unstored.front(), done.size());
  size_t n = 0;
  const run* first = nullptr;
  for (const auto& r : done)
    if (!failure_of(r).empty()) {
      first = first ? first : &r;
      ++n;
    }
  if (!first)
    return "";
  return fmt::format("accelbench: exit 1: {} of {} run(s) failed or INVALID (run {}, {}: {})", n,
                     done.size(), first->id, first->cfg.key(), failure_of(*first));
}

// run external's --name and command as the config's name and command parameters.
std::vector<std::string> sets_of(const run_options& o) {
  std::vector<std::string> sets = o.sets;
  if (o.workload != "external") { // (run gbench never reaches here: cmd_run_gbench)
    if (!o.command.empty())
      throw usage_error(fmt::format("argument not expected: {} (a program to run, after --, is "
                                    "for run external and run gbench only; workload '{}')",
                                    printable(o.command.front()), printable(o.workload)));
    if (!o.name.empty())
      throw usage_error(fmt::format("--name is for run external only (got workload '{}')",
                                    printable(o.workload)));
    return sets;
  }
  if (!o.name.empty())
    sets.push_back("name=" + o.name);
  if (!o.command.empty())
    sets.push_back("command=" + external::command_value(o.command));
  return sets;
}

runner::request request_of(const run_options& o) {
  runner::request r = o;
  r.sets = sets_of(o);
  return r;
}

// Stores r, or says why the store refused it and adds that to `unstored`: one run the database
// cannot take (a constraint, a limit, a full disk; the store rolls it back whole) never ends the
// runs after it in a suite.
bool store_run(store::store& db, run& r, progress& bar, std::vector<std::string>& unstored) {
  try {
    db.insert_run(r);
    return true;
  } catch (const error& e) {
    unstored.push_back(printable(fmt::format("{}: {}", r.cfg.key(), e.what())));
    bar.message("accelbench: a run could not be stored: " + unstored.back());
    return false;
  }
}

int execute_plan(const registry& reg, const run_options& o, const runner::request& req,
                 const runner::job_plan& plan) {
  // Only rank 0 prints and stores; the other ranks run the same configs in step.
  const bool root = dist::is_root();
  const bool quiet = o.quiet || !root;
  // Open (and migrate) the database before running anything: an unwritable or corrupt file is
  // reported now, not after an hour of benchmarks.
  std::optional<store::store> db;
  if (root)
    db.emplace(store::store::open(resolve_db_path(o.db), store::access::read_write));
  runner::environment job = runner::describe_job(req, plan);
  // A rank killed mid-run makes the launcher end the others: they exit 1, nothing half-stored.
  dist::exit_1_on_launcher_termination();
  job.log = &std::cerr;
  job.interactive = isatty(STDERR_FILENO) && !quiet;
  job.cancel = &g_cancel;
  std::optional<sigint_guard> ctrl_c(std::in_place, on_interrupt);
  table t({"id", "workload", "config", "status", "validity", "result", "ci95"});
  std::vector<run> done;
  std::vector<std::string> unstored;
  int worst = exit_ok;
  const auto order = runner::job_order(plan.configs, job.rounds);
  progress bar(order.size(), progress::for_stderr(quiet));
  for (size_t k = 0; k < order.size(); ++k) {
    if (dist::any(g_interrupted != 0)) {
      g_interrupted = 1;
      if (root)
        bar.message(fmt::format("accelbench: interrupted; {} of {} runs stored", k, order.size()));
      break;
    }
    const auto [round, i] = order[k];
    const runner::planned& p = plan.configs[i];
    bar.step(
        k, printable(fmt::format(
               "{}{} {}", job.rounds > 1 ? fmt::format("round {}/{} ", round + 1, job.rounds) : "",
               p.cfg.workload, short_config(p.cfg))));
    run r = runner::run_one(p, job, round);
    if (!root)
      continue;
    if (g_interrupted && r.status == run_status::failed) {
      bar.message(fmt::format("accelbench: the interrupted run is not stored ({})",
                              printable(r.status_reason)));
      continue;
    }
    const bool kept = store_run(*db, r, bar, unstored);
    if (!kept || r.status == run_status::failed || !r.valid)
      worst = exit_failed;
    if (!kept)
      continue;
    t.add(result_row(reg, r));
    if (!quiet)
      tell_about(r, bar);
    done.push_back(std::move(r));
  }
  ctrl_c.reset();
  if (!root)
    return dist::broadcast(0); // rank 0's exit code
  bar.finish();
  print_results(o.json, done, t, db->path().string());
  if (!g_interrupted && worst != exit_ok)
    std::cerr << printable(failure_summary(done, unstored)) << "\n";
  return dist::broadcast(g_interrupted ? 130 : worst);
}

} // namespace

#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
// ---------------------------------------------------------------------------------------------
// run gbench -- ./bm ARGS: a Google Benchmark executable run with the ruleset's repetitions; its
// JSON is read back as `import --format gbench` reads it, and each benchmark is stored as a run
// measured here, with this machine's environment.

// The ruleset's repetitions (with --rule overrides); kernel-v1 unless --rules names another.
int64_t gbench_repetitions(const run_options& o) {
  std::map<std::string, std::string> overrides;
  for (const auto& a : o.rule_overrides)
    overrides.insert(split_assignment(a, "--rule"));
  json user;
  const ruleset rules =
      apply_overrides(load_ruleset(o.rules.empty() ? "kernel-v1" : o.rules), overrides, user);
  return rules.measurement().repetitions;
}

// The command with the options accelbench owns appended; the user's own copies are refused.
std::vector<std::string> gbench_argv(const run_options& o, int64_t reps, const std::string& out) {
  for (const auto& a : o.command)
    for (const char* owned : {"--benchmark_repetitions", "--benchmark_out"})
      if (a.rfind(owned, 0) == 0)
        throw usage_error(fmt::format("run gbench sets {} itself (the ruleset's repetitions and "
                                      "its own output file); remove '{}'",
                                      owned, printable(a)));
  std::vector<std::string> argv = o.command;
  argv.push_back(fmt::format("--benchmark_repetitions={}", reps));
  argv.push_back("--benchmark_out=" + out);
  argv.emplace_back("--benchmark_out_format=json");
  return argv;
}

// The executable run to its end: its JSON output, or an error (exit 1) with its stderr tail.
std::string run_gbench_program(const std::vector<std::string>& argv, const std::string& out) {
  external::launch l;
  l.argv = argv;
  l.cancel = &g_cancel;
  l.max_stdout_bytes = 1 << 20;
  const external::process_outcome r = external::run_process(l);
  if (r.cancelled)
    throw interrupted_error("interrupted; the benchmark program was ended and nothing was stored");
  if (!r.succeeded())
    throw program_error(fmt::format("the benchmark program failed ({}); nothing was stored; its "
                                    "stderr ends: {}",
                                    r.failure(), printable(clip(r.stderr_tail, 300))));
  // The program may have replaced its output file with a link, a FIFO or a folder: read as a
  // file found in a folder (never through a link, never blocking), and its fault, not the user's.
  std::string text;
  try {
    text = read_found_file(out, "Google Benchmark output", mllog::k_max_log_bytes);
  } catch (const input_error& e) {
    throw program_error(fmt::format(
        "the benchmark program's output is not usable: {}; nothing was stored", e.what()));
  }
  if (text.empty())
    throw program_error(fmt::format("the benchmark program wrote no JSON to {}", out));
  return text;
}

// The imported runs made runs of this job: fresh ids, measured here, this machine's environment
// (the file's context kept beside it), the ruleset, tags and job.
void as_measured(std::vector<run>& runs, const run_options& o, const std::string& rules) {
  json env = capture_environment();
  const std::string fingerprint = environment_fingerprint(env);
  const std::string job = new_uuid();
  for (run& r : runs) {
    for (const auto& [k, v] : r.environment.items())
      if (!env.contains(k))
        env[k] = v;
    r.uuid = new_uuid();
    r.source = "measured";
    r.ruleset = rules;
    r.environment = env;
    r.fingerprint = fingerprint;
    r.tags = o.tags;
    r.extra["job_id"] = job;
  }
}

// A temporary folder for the executable's JSON (out.json in it), removed with whatever the
// program left there on every way out: the program may replace its output file with a folder,
// which an unlink of the file would leave behind.
struct temp_output {
  std::filesystem::path dir;
  std::string path; // dir/out.json, named to the program by --benchmark_out
  temp_output() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "accelbench-gbench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw error(fmt::format("cannot make a temporary folder: {}", std::strerror(errno)));
    dir = tmpl;
    path = (dir / "out.json").string();
  }
  temp_output(const temp_output&) = delete;
  temp_output& operator=(const temp_output&) = delete;
  ~temp_output() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// Runs the executable with Ctrl-C ending it (and nothing stored).
std::string gbench_output(const std::vector<std::string>& argv, const std::string& out) {
  const sigint_guard ctrl_c(on_interrupt);
  return run_gbench_program(argv, out);
}

int cmd_run_gbench(const run_options& o) {
  if (o.command.empty())
    throw usage_error("run gbench needs the benchmark program after --: accelbench run gbench -- "
                      "./my_benchmarks [--benchmark_filter=...]");
  if (!o.sets.empty() || !o.sweeps.empty() || !o.shapes.empty() || !o.suite.empty() ||
      !o.name.empty())
    throw usage_error("run gbench takes its benchmarks from the executable: --set, --sweep, "
                      "--shapes, --suite and --name do not apply (filter with "
                      "--benchmark_filter=... after --)");
  external::resolve_program(o.command.front());
  const temp_output out;
  const std::vector<std::string> argv = gbench_argv(o, gbench_repetitions(o), out.path);
  // Opened before the benchmarks run: an unwritable database is said now, not after them.
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_write);
  // The runs are measured: their times are this clock's around the program, never the date the
  // program claims (importers::gbench_import_options::measured).
  importers::measured_times when;
  when.started_at = now_iso8601();
  const std::string text = gbench_output(argv, out.path);
  when.finished_at = now_iso8601();
  importers::gbench_import_options g;
  g.measured = when;
  g.system = o.system.empty() ? capture_environment().value("hostname", "localhost") : o.system;
  std::vector<run> runs = importers::runs_from_gbench_json(text, o.command.front(), g);
  // The ruleset's own id, not the --rules text (which may be a file path): comparisons look the
  // id up for their settings.
  as_measured(runs, o, load_ruleset(o.rules.empty() ? "kernel-v1" : o.rules).id);
  db.insert_runs(runs);
  table t({"id", "workload", "config", "status", "validity", "result", "ci95"});
  int worst = exit_ok;
  for (const run& r : runs) {
    const metric* m = r.find_metric("time");
    t.add({std::to_string(r.id), r.cfg.workload, short_config(r.cfg), to_string(r.status),
           r.valid ? "VALID" : "INVALID", m ? format_quantity(m->value, m->unit) : "", ""});
    if (r.status == run_status::failed || !r.valid)
      worst = exit_failed;
  }
  print_results(o.json, runs, t, db.path().string());
  if (worst != exit_ok)
    std::cerr << printable(failure_summary(runs, {})) << "\n";
  return worst;
}
#endif

int cmd_run(const registry& reg, const run_options& o) {
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
  if (o.workload == "gbench")
    return cmd_run_gbench(o);
#endif
  const runner::request req = request_of(o);
  const runner::job_plan plan = runner::plan(reg, req);
  if (o.plan_only)
    return exit_ok;
  try {
    return execute_plan(reg, o, req, plan);
  } catch (const error& e) {
    if (!dist::distributed())
      throw;
    // The other ranks may be waiting in a collective for this one: end the whole job.
    std::cerr << "accelbench: rank " << dist::rank() << ": error: " << printable(e.what()) << "\n";
    dist::abort_job(e.exit_code());
  }
}

void add_measured_options(CLI::App* cmd, run_options& o, std::vector<std::string>& plugins) {
  cmd->add_option("workload", o.workload, "Workload name (see accelbench list)");
  cmd->add_option("command", o.command,
                  "run external: the program and its arguments, after -- ({K} placeholders take "
                  "the config's values)");
  cmd->add_option("--name", o.name, "run external: your name for the program")
      ->check(text_value(false));
  cmd->add_option("--backend", o.backend, "Backend: cpu (default) or cuda");
  // One value per occurrence of each repeatable option: a "--" right after one is then the start
  // of run external's command, not the end of the option's values (CLI11's default).
  cmd->add_option("--set", o.sets, "Parameter value KEY=VALUE (repeatable)")
      ->take_all()
      ->allow_extra_args(false)
      ->check(text_value(false));
  cmd->add_option("--sweep", o.sweeps, "Cartesian sweep KEY=V1,V2,... (repeatable)")
      ->allow_extra_args(false)
      ->check(text_value(false));
  cmd->add_option("--shapes", o.shapes,
                  "Run a shape catalogue (e.g. llama3-70b; see accelbench list catalogues)");
  cmd->add_option("--rules", o.rules, "Ruleset id or file (default: the workload's)");
  cmd->add_option("--rule", o.rule_overrides,
                  "Override a ruleset setting KEY=VALUE (e.g. repetitions=5)")
      ->allow_extra_args(false)
      ->check(text_value(false));
  cmd->add_option("--system", o.system, "System name stored with the runs (default: hostname)")
      ->check(text_value(false));
  cmd->add_option("--suite", o.suite, "Run a suite by name (quick, nightly) or file");
  cmd->add_flag("--force", o.force, "Allow sweeps over 10,000 configs");
  // --plugin: the built-in workloads and the plugins the user named (docs/plugins.md).
  cmd->add_option("--plugin", plugins, "Load a workload plugin from this path (repeatable)")
      ->allow_extra_args(false)
      ->check(text_value(false));
}

std::vector<std::string> measured_args(const run_options& o,
                                       const std::vector<std::string>& plugins) {
  std::vector<std::string> a;
  if (!o.workload.empty())
    a.push_back(o.workload);
  auto one = [&a](const char* opt, const std::string& v) {
    if (!v.empty())
      a.insert(a.end(), {opt, v});
  };
  auto each = [&a](const char* opt, const std::vector<std::string>& vs) {
    for (const auto& v : vs)
      a.insert(a.end(), {opt, v});
  };
  one("--name", o.name);
  one("--backend", o.backend == runner::request{}.backend ? "" : o.backend);
  each("--set", o.sets);
  each("--sweep", o.sweeps);
  one("--shapes", o.shapes);
  one("--rules", o.rules);
  each("--rule", o.rule_overrides);
  one("--system", o.system);
  one("--suite", o.suite);
  if (o.force)
    a.emplace_back("--force");
  each("--plugin", plugins);
  return a;
}

command_hook add_run(CLI::App& app, context& ctx) {
  auto o = std::make_shared<run_options>();
  auto* run = app.add_subcommand("run", "Run a workload (or a suite) and store every run");
  auto plugins = std::make_shared<std::vector<std::string>>();
  add_measured_options(run, *o, *plugins);
  run->add_option("--tag", o->tags, "Tag the runs (repeatable)")
      ->allow_extra_args(false)
      ->check(text_value(false));
  add_db_option(run, o->db);
  run->add_option("--rounds", o->rounds,
                  "Runs of each config, interleaved round by round (default: the rules' "
                  "measurement.rounds); comparisons then measure the noise between runs")
      ->check(CLI::Range(1, 100));
  run->add_option("--seed", o->seed,
                  "Seed of the inputs, mixed with each config key (0: the key alone; time to "
                  "train: a fresh seed per run)")
      ->check(unsigned_64());
  run->add_flag("--quiet", o->quiet, "No progress on stderr");
  add_json_flag(run, o->json);
  const registry* reg = &ctx.reg;
  return {run, [o, reg, plugins] {
            // The plugins of --plugin and of the suite file the user named, never of stored data.
            std::vector<std::string> paths = *plugins;
            for (auto& p : runner::suite_plugins(o->suite))
              paths.push_back(std::move(p));
            if (paths.empty())
              return cmd_run(*reg, *o);
            registry with_plugins;
            register_all(with_plugins);
            plugin::register_plugins(with_plugins, paths);
            return cmd_run(with_plugins, *o);
          }};
}

} // namespace accelbench::cli
