// accelbench show: the stored runs as a table, or one run in detail.
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/core/error.hpp"
#include "harness/core/headline_metric.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#ifdef ACCELBENCH_HAVE_MLPERF
#include "harness/app/cli/mlperf_commands.hpp"
#endif

namespace accelbench::cli {

namespace {

// A run across ranks: the topology, and the spread of the per-rank sample times with
// the rank that was consistently the slowest, if one was.
void print_ranks(const run& r) {
  const json d = r.environment.value("distributed", json());
  if (d.is_object()) {
    const json mpi = d.value("mpi", json::object());
    std::cout << fmt::format(
        "  ranks      {} ({} per node, {} node(s); launcher {}; {})\n",
        dump_json(d.value("world_size", json())), dump_json(d.value("ranks_per_node", json())),
        dump_json(d.value("nodes", json())), printable(d.value("launcher", std::string("?"))),
        printable(mpi.is_object() ? mpi.value("library", std::string("?")) : std::string("?")));
  }
  const json k = r.extra.value("ranks", json());
  if (!k.is_object() || !k.contains("median_s") || !k["median_s"].is_array())
    return;
  std::string medians;
  for (size_t i = 0; i < k["median_s"].size(); ++i)
    medians += fmt::format("{}r{} {}", i ? "  " : "", i,
                           k["median_s"][i].is_number()
                               ? format_quantity(k["median_s"][i].get<double>(), r.sample_unit)
                               : "?");
  std::cout << fmt::format("    per-rank median: {}\n", printable(medians));
  const double spread = k.value("spread_pct", 0.0), share = k.value("slowest_share", 0.0);
  std::cout << fmt::format("    spread {:.1f}% (slowest rank median vs fastest); rank {} slowest "
                           "in {:.0f}% of {} samples\n",
                           spread, dump_json(k.value("slowest_rank", json())), 100 * share,
                           dump_json(k.value("samples", json())));
  if (k.contains("consistently_slow_rank") && k["consistently_slow_rank"].is_number())
    std::cout << fmt::format("    rank {} is consistently slow\n",
                             dump_json(k["consistently_slow_rank"]));
}

// The environment a run was measured in, as `show RUN` prints it (the whole record: --json).
void print_environment(const json& env) {
  if (!env.is_object() || env.empty())
    return;
  auto text = [&env](const char* a, const char* b = nullptr) -> std::string {
    const json* v = env.contains(a) ? &env[a] : nullptr;
    if (v && b)
      v = v->is_object() && v->contains(b) ? &(*v)[b] : nullptr;
    if (!v || v->is_null())
      return "";
    return printable(v->is_string() ? v->get<std::string>() : dump_json(*v));
  };
  std::cout << "  environment\n";
  if (auto host = text("hostname"); !host.empty())
    std::cout << fmt::format("    host       {}\n", host);
  if (auto cpu = text("cpu", "model"); !cpu.empty())
    std::cout << fmt::format("    cpu        {} ({} logical cores, {})\n", cpu,
                             text("cpu", "logical_cores"), text("cpu", "isa"));
  if (auto mem = env.value("memory", json::object());
      mem.is_object() && mem.contains("total_bytes") && mem["total_bytes"].is_number())
    std::cout << fmt::format("    memory     {:.1f} GiB\n",
                             mem["total_bytes"].get<double>() / 1073741824.0);
  if (auto os = text("os", "name"); !os.empty())
    std::cout << fmt::format("    os         {} ({})\n", os, text("os", "kernel"));
  if (auto c = text("compiler"); !c.empty())
    std::cout << fmt::format("    compiler   {} [{}]\n", c, text("build_type"));
  if (env.contains("libraries") && env["libraries"].is_object())
    for (const auto& [k, v] : env["libraries"].items())
      std::cout << fmt::format("    library    {:<9} {}\n", printable(k),
                               printable(v.is_string() ? v.get<std::string>() : dump_json(v)));
  if (auto model = text("accelerator", "model"); !model.empty())
    std::cout << fmt::format("    accelerator {} x {}\n", text("accelerator", "count"), model);
}

// An external program's last stderr lines, kept when a run of it failed or was INVALID.
void print_stderr_tail(const run& r) {
  auto it = r.extra.find("stderr_tail");
  if (it == r.extra.end() || !it->is_string() || it->get<std::string>().empty())
    return;
  std::cout << "  stderr (the program's last lines)\n";
  const std::string tail = it->get<std::string>();
  size_t from = 0;
  while (from < tail.size()) {
    const size_t end = std::min(tail.find('\n', from), tail.size());
    std::cout << "    " << printable(tail.substr(from, end - from)) << "\n";
    from = end + 1;
  }
}

void print_run_detail(const registry& reg, const run& r) {
  std::cout << fmt::format("run {}  ({})\n", r.id, printable(r.uuid));
  std::cout << fmt::format("  workload   {} on {}\n", printable(r.cfg.workload),
                           printable(r.cfg.backend));
  std::cout << fmt::format("  config     {}\n", printable(effective_config_text(r)));
  std::cout << fmt::format("  system     {}\n", printable(r.system));
  std::cout << fmt::format("  ruleset    {}\n", printable(r.ruleset));
  std::cout << fmt::format("  source     {}\n", printable(r.source));
  std::cout << fmt::format("  started    {}   finished {}\n", printable(r.started_at),
                           printable(r.finished_at));
  std::cout << fmt::format("  status     {}{}\n", to_string(r.status),
                           r.status_reason.empty() ? "" : " — " + printable(r.status_reason));
  std::cout << fmt::format("  validity   {}\n", r.valid ? "VALID" : "INVALID");
  for (const auto& why : r.invalid_reasons)
    std::cout << "    reason: " << printable(why) << "\n";
  print_stderr_tail(r);
  if (!r.tags.empty())
    std::cout << fmt::format("  tags       {}\n",
                             printable(fmt::format("{}", fmt::join(r.tags, ", "))));
  if (r.extra.contains("job_id") && r.extra["job_id"].is_string())
    std::cout << fmt::format("  job        {}{}\n", printable(r.extra["job_id"].get<std::string>()),
                             r.extra.contains("job_round")
                                 ? fmt::format(" (round {} of {})", dump_json(r.extra["job_round"]),
                                               dump_json(r.extra.value("job_rounds", json())))
                                 : "");
  std::cout << fmt::format("  revision   {}  fingerprint {}\n", printable(r.harness_revision),
                           printable(r.fingerprint));
  if (!r.metrics.empty()) {
    std::cout << "  metrics\n";
    for (const auto& m : r.metrics)
      std::cout << fmt::format("    {:<22} {:>16} ({} is better)\n", printable(m.name),
                               printable(format_quantity(m.value, m.unit)), to_string(m.dir));
  }
  if (!r.samples.empty()) {
    std::vector<double> v;
    for (const auto& s : r.samples)
      v.push_back(s.value);
    auto s = stats::summarize(v);
    std::cout << fmt::format("  samples    {} × {} ({} is better)\n", s.n, printable(r.sample_unit),
                             to_string(r.sample_dir));
    auto q = [&r](double v) { return printable(format_quantity(v, r.sample_unit)); };
    std::cout << fmt::format("    median {}  mean {}  stddev {}  cv {:.2f}%\n", q(s.median),
                             q(s.mean), q(s.stddev), 100 * s.cv);
    std::cout << fmt::format("    min {}  p5 {}  p95 {}  max {}\n", q(s.min), q(s.p5), q(s.p95),
                             q(s.max));
    std::cout << fmt::format("    median 95% CI [{}, {}] (bootstrap)\n", q(s.ci_low), q(s.ci_high));
  }
  if (r.extra.contains("implementation") && r.extra["implementation"].is_string())
    std::cout << fmt::format("  kernel     {}\n",
                             printable(r.extra["implementation"].get<std::string>()));
  print_ranks(r);
  for (const auto& w : run_notes(r))
    std::cout << "  warning    " << printable(w) << "\n";
  print_environment(r.environment);
}

struct show_options {
  int64_t id = 0;
  std::string db;
  filter_options filter;
  int limit = 50;
  bool as_json = false;
  bool all = false;       // measured and published runs
  bool published = false; // published reference runs only
};

int show_one(const registry& reg, store::store& db, int64_t id, bool as_json) {
  auto r = db.get_run(id);
  if (!r)
    throw input_error(fmt::format("no run with id {} in {} (it holds {} runs)", id,
                                  db.path().string(), db.count_runs()));
  if (as_json)
    std::cout << dump_json(to_json(*r), 2) << "\n";
  else
    print_run_detail(reg, *r);
  return exit_ok;
}

// Per workload, the config keys whose values differ between the rows shown.
std::map<std::string, std::set<std::string>> varying_keys(const std::vector<run>& runs) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;
  std::map<std::string, std::map<std::string, size_t>> with_key;
  std::map<std::string, size_t> rows;
  for (const auto& r : runs) {
    ++rows[r.cfg.workload];
    for (const auto& [k, v] : r.cfg.values) {
      values[r.cfg.workload][k].insert(v);
      ++with_key[r.cfg.workload][k];
    }
  }
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [w, keys] : values)
    for (const auto& [k, vs] : keys)
      if (vs.size() > 1 || with_key[w][k] != rows[w]) // a value differs, or some rows lack it
        out[w].insert(k);
  return out;
}

// Whether `value` is the workload's default for axis `key` (false for a workload this build does
// not know).
bool is_default(const workload* w, const std::string& key, const std::string& value) {
  if (w)
    for (const auto& a : w->spec().axes)
      if (a.name == key && a.default_value == value)
        return true;
  return false;
}

// The config column of the runs table: what differs from the workload's defaults, what differs
// between the rows shown, and what the run resolved a default to ("batch=0→16", what ran;
// "defaults" when nothing is left; `show RUN` has the whole config). A workload this build does
// not know (imported) has no defaults: all of its config is shown.
std::string brief_config(const registry& reg, const run& r,
                         const std::map<std::string, std::set<std::string>>& varying) {
  const workload* w = reg.find(r.cfg.workload);
  const auto vary = varying.find(r.cfg.workload);
  std::string out;
  for (const auto& s : effective_config(r)) {
    const bool varies = vary != varying.end() && vary->second.count(s.key);
    if (!is_default(w, s.key, s.requested) || varies || s.resolved())
      out.append(out.empty() ? "" : " ").append(setting_text(s));
  }
  return out.empty() ? "defaults" : out;
}

void print_runs_table(const registry& reg, const std::vector<run>& runs) {
  const auto varying = varying_keys(runs);
  table t({"id", "started", "system", "workload", "config (not default)", "status", "validity",
           "result", "notes"});
  std::vector<std::string> footnotes;
  for (const auto& r : runs) {
    const metric* m = headline_metric(r, primary_metric_of(reg, r));
    const auto notes = run_notes(r);
    for (const auto& n : notes)
      footnotes.push_back(fmt::format("run {}: {}", r.id, printable(n)));
    t.add({std::to_string(r.id), r.started_at.substr(0, 19), r.system, r.cfg.workload,
           clip(brief_config(reg, r, varying), 70), to_string(r.status),
           r.status == run_status::skipped ? "-" : (r.valid ? "VALID" : "INVALID"),
           m ? format_quantity(m->value, m->unit) : "",
           notes.empty() ? "" : fmt::format("{} warning(s)", notes.size())});
  }
  t.print(std::cout);
  for (const auto& f : footnotes)
    std::cout << "warning: " << f << "\n";
}

// MLPerf results: the official-style score per system and benchmark over all matching runs.
void print_mlperf_scores([[maybe_unused]] store::store& db,
                         [[maybe_unused]] const store::run_filter& f) {
#ifdef ACCELBENCH_HAVE_MLPERF
  json scores = mlperf_scores(db.query(f));
  if (scores.empty())
    return;
  table st({"system", "benchmark", "ruleset", "runs", "score (min)", "validity", "notes"});
  for (const auto& s : scores)
    st.add({s.value("system", ""), s.value("benchmark", ""), s.value("ruleset", ""),
            std::to_string(s.value("runs", 0)),
            s.value("valid", false) ? fmt::format("{:.4f}", s.value("score_min", 0.0)) : "-",
            s.value("valid", false) ? "VALID" : "INVALID",
            s.contains("reasons") && !s["reasons"].empty()
                ? clip(s["reasons"][0].get<std::string>(), 60)
                : ""});
  std::cout << "\nMLPerf scores (olympic mean of per-run minutes x scaling factor)\n";
  st.print(std::cout);
#endif
}

// The runs the listing shows: the user's own (measured or imported) unless --all or --published
// asks for the published reference runs, which the default job imports beside them. Returns how
// many published runs were left out, so that none is hidden without a word.
size_t keep_shown_sources(const show_options& o, std::vector<run>& runs) {
  if (o.all)
    return 0;
  const auto before = runs.size();
  std::erase_if(runs, [&o](const run& r) { return (r.source == "published") != o.published; });
  return o.published ? 0 : before - runs.size();
}

void print_listing(const registry& reg, store::store& db, const show_options& o,
                   const std::vector<run>& runs, size_t hidden) {
  print_runs_table(reg, runs);
  std::cout << fmt::format("{} run(s) shown from {}\n", runs.size(), printable(db.path().string()));
  if (hidden > 0)
    std::cout << fmt::format("{} published reference run(s) not shown (show --published lists "
                             "them, show --all lists every run)\n",
                             hidden);
  auto f = to_run_filter(o.filter);
  if (o.published)
    f.source = "published";
  if (!o.all && !o.published)
    f.source = "measured"; // the scores of the runs listed (the MLPerf imports are published)
  print_mlperf_scores(db, f);
}

int cmd_show(const registry& reg, const show_options& o) {
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
  if (o.id > 0)
    return show_one(reg, db, o.id, o.as_json);
  auto f = to_run_filter(o.filter);
  f.with_samples = false;
  auto runs = db.query(f);
  const size_t hidden = keep_shown_sources(o, runs);
  if (o.limit > 0 && (int)runs.size() > o.limit)
    runs.erase(runs.begin(), runs.end() - o.limit);
  if (o.as_json) {
    json arr = json::array();
    for (const auto& r : runs)
      arr.push_back(to_json(r));
    std::cout << dump_json(arr, 2) << "\n";
    return exit_ok;
  }
  print_listing(reg, db, o, runs, hidden);
  return exit_ok;
}

} // namespace

command_hook add_show(CLI::App& app, context& ctx) {
  auto o = std::make_shared<show_options>();
  auto* show = app.add_subcommand("show", "Show stored runs, or one run in detail");
  show->add_option("run_id", o->id, "Run id")
      ->check(integer_in(1, std::numeric_limits<int64_t>::max()));
  add_db_option(show, o->db);
  add_filter_options(show, o->filter);
  show->add_option("--limit", o->limit, "Show the last N runs (default 50, 0: all)")
      ->check(integer_in(0, std::numeric_limits<int>::max()));
  add_json_flag(show, o->as_json);
  auto* all =
      show->add_flag("--all", o->all, "Also list the published reference runs (hidden by default)");
  show->add_flag("--published", o->published, "List only the published reference runs")
      ->excludes(all);
  const registry* reg = &ctx.reg;
  return {show, [o, reg] { return cmd_show(*reg, *o); }};
}

} // namespace accelbench::cli
