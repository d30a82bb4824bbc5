#include "harness/app/cli/compare_commands.hpp"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/app/query/comparison.hpp"
#include "harness/app/query/formats.hpp"
#include "harness/app/query/history_formats.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/compare/changepoint.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/error.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#ifdef ACCELBENCH_HAVE_REPORT
#include "reporters/report/history_html.hpp"
#endif

namespace accelbench::cli {

namespace {
bool to_stdout(const std::string& output) { return output.empty() || output == "-"; }

void emit(const std::string& text, const std::string& output) {
  if (to_stdout(output))
    std::cout << text;
  else
    write_file_atomic(output, text);
}

// compare --metric NAME: each run's samples become the per-repetition values of NAME (cpu_time:
// the CPU time of each repetition; another name: the user counter of that name, with the unit and
// direction of the run's metric). Runs without a value for every sample are left out.
void use_metric(query::selection& side, const std::string& name, const std::string& which) {
  std::vector<run> kept;
  std::set<std::string> have;
  for (auto& r : side.runs) {
    for (const auto& m : r.metrics)
      have.insert(m.name);
    const metric* m = r.find_metric(name);
    bool all = !r.samples.empty() && (name == "cpu_time" || m);
    for (auto& s : r.samples) {
      const json* v = name == "cpu_time"
                          ? (s.extra.contains("cpu_time_s") ? &s.extra["cpu_time_s"] : nullptr)
                      : s.extra.contains("counters") && s.extra["counters"].contains(name)
                          ? &s.extra["counters"][name]
                          : nullptr;
      if (!v || !v->is_number()) {
        all = false;
        break;
      }
      s.value = v->get<double>();
    }
    if (!all)
      continue;
    r.sample_unit = name == "cpu_time" ? "s" : m->unit;
    r.sample_dir = name == "cpu_time" ? direction::lower_is_better : m->dir;
    kept.push_back(std::move(r));
  }
  if (kept.empty())
    throw input_error(fmt::format(
        "--metric {}: no run of the {} has a value of it for every sample (metrics of its runs: "
        "{})",
        printable(name), which, printable(fmt::format("{}", fmt::join(have, ", ")))));
  side.runs = std::move(kept);
}

// What cmd_compare judges: harness/app/query, with the command line's options.
compare::set_comparison compare_selections(store::store& db, const query::selection& base,
                                           const query::selection& cand,
                                           const compare_cli_options& o) {
  query::compare_options q;
  q.history = &db;
  q.baseline = o.baseline;
  q.candidate = o.candidate;
  q.threshold = o.threshold;
  q.alpha = o.alpha;
  q.trust_loaded = o.trust_loaded;
  return query::compare_selections(base, cand, q);
}

} // namespace

void check_compare_options(const compare_cli_options& o) {
  if (!output::find_format(query::compare_formats(), o.format))
    throw usage_error(fmt::format("unknown --format '{}' ({})", printable(o.format),
                                  output::format_names(query::compare_formats())));
  // Written so that NaN fails too: it compares false with everything.
  if (!(o.alpha > 0 && o.alpha < 1))
    throw usage_error(fmt::format("--alpha must be in (0, 1), got {}", o.alpha));
  if (!std::isfinite(o.threshold))
    throw usage_error(fmt::format("--threshold must be a finite percentage, got {}", o.threshold));
  // The output path is checked before any work; it may not replace the database being read.
  if (!to_stdout(o.output))
    check_output_path(o.output, "--output", {resolve_db_path(o.db)});
}

int print_comparison(const compare_cli_options& o) {
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
  auto base = query::select_runs(db, o.baseline);
  auto cand = query::select_runs(db, o.candidate);
  if (!o.metric.empty() && o.metric != "time") {
    use_metric(base, o.metric, "baseline");
    use_metric(cand, o.metric, "candidate");
  }
  auto c = compare_selections(db, base, cand, o);
  c.only_changed = o.only_changed;
  const auto* format = output::find_format(query::compare_formats(), o.format);
  emit(format->write(c, {o.color && o.output.empty() && isatty(STDOUT_FILENO)}), o.output);
  int rc = compare::exit_code_for(c, o.strict);
  std::cerr << fmt::format(
      "accelbench: {} pair(s): {} regressed, {} improved, {} unchanged, {} inconclusive\n",
      c.pairs.size(), c.count(compare::verdict::regressed), c.count(compare::verdict::improved),
      c.count(compare::verdict::unchanged), c.count(compare::verdict::inconclusive));
  return rc;
}

int cmd_compare(const compare_cli_options& o) {
  check_compare_options(o);
  return print_comparison(o);
}

namespace {

json history_series(const std::vector<store::history_row>& runs, const history_cli_options& o,
                    bool* regression) {
  return query::history_series(runs, {o.min_segment, o.max_pvalue, o.window}, regression);
}

// --html FILE: checked before any work (it may not replace the database being read).
void check_history_html(const history_cli_options& o) {
#ifdef ACCELBENCH_HAVE_REPORT
  check_output_path(o.html, "--html", {resolve_db_path(o.db)});
#else
  throw usage_error("history --html needs the report module, which this build does not have");
#endif
}

void write_history_html(const history_cli_options& o, const json& doc) {
#ifdef ACCELBENCH_HAVE_REPORT
  if (!o.html.empty())
    write_file_atomic(o.html, report::history_to_html(doc));
#else
  (void)o;
  (void)doc;
#endif
}

} // namespace

int cmd_history(const history_cli_options& o) {
  if (!output::find_format(query::history_formats(), o.format))
    throw usage_error(fmt::format("unknown --format '{}' ({})", printable(o.format),
                                  output::format_names(query::history_formats())));
  if (o.min_segment < 2)
    throw usage_error(fmt::format("--min-segment must be at least 2, got {}", o.min_segment));
  if (!(o.max_pvalue > 0 && o.max_pvalue < 1))
    throw usage_error(fmt::format("--max-pvalue must be in (0, 1), got {}", o.max_pvalue));
  if (!o.since.empty())
    query::require_date(o.since, "--since");
  if (!o.html.empty())
    check_history_html(o);
  require_text(o.system, "--system");
  for (const auto& t : o.tags)
    require_text(t, "--tag", false);
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
  store::run_filter f;
  f.workloads = {o.workload};
  if (!o.system.empty())
    f.systems = {o.system};
  f.tags = o.tags;
  f.since = o.since;
  for (const auto& s : o.sets)
    f.config.push_back(split_assignment(s, "--set"));
  auto runs = db.history_rows(f);
  if (runs.empty())
    throw input_error(
        fmt::format("no runs of workload '{}' match in {} (check --set, --system, --since)",
                    o.workload, db.path().string()));
  bool regression = false;
  const query::history_model h{{{"schema_version", 1},
                                {"workload", o.workload},
                                {"series", history_series(runs, o, &regression)}},
                               o.min_segment};
  write_history_html(o, h.doc);
  std::cout << output::find_format(query::history_formats(), o.format)->write(h, {});
  return o.fail_on_regression && regression ? exit_failed : exit_ok;
}

void add_comparison_options(CLI::App* cmd, compare_cli_options& o) {
  cmd->add_option("--format", o.format, output::format_names(query::compare_formats(), " | "));
  cmd->add_option("--metric", o.metric,
                  "Compare this per-sample metric instead of the time: cpu_time, or a user "
                  "counter of imported Google Benchmark runs (e.g. items_per_second)")
      ->check(text_value(false));
  add_output_option(cmd, o.output);
  cmd->add_option("--threshold", o.threshold,
                  "Minimum effect in percent (default: the ruleset's, else 5)")
      ->check(number_in(0, 1000, false, false));
  cmd->add_option("--alpha", o.alpha,
                  "Significance level of the t-test behind every verdict; the CI is at 1 - alpha "
                  "(default 0.01)")
      ->check(number_in(0, 1, true, true));
  cmd->add_flag("--strict", o.strict,
                "Exit 4 when something is inconclusive and nothing regressed");
  cmd->add_flag("--color", o.color, "Colour verdicts on a terminal");
  cmd->add_flag("--trust-loaded", o.trust_loaded,
                "Call changes from runs measured while other processes loaded the machine "
                "(otherwise such pairs are inconclusive)");
  cmd->add_flag("--only-changed", o.only_changed,
                "List only regressed and improved configs (table, markdown, json)");
}

command_hook add_compare(CLI::App& app, context&) {
  auto o = std::make_shared<compare_cli_options>();
  auto* cmp = app.add_subcommand(
      "compare", "Compare two selections of runs: verdicts per config, exit 1 on a regression");
  add_sides_options(cmp, o->baseline, o->candidate);
  add_comparison_options(cmp, *o);
  add_db_option(cmp, o->db);
  return {cmp, [o] { return cmd_compare(*o); }};
}

command_hook add_history(CLI::App& app, context&) {
  auto o = std::make_shared<history_cli_options>();
  auto* hist = app.add_subcommand(
      "history", "Find step changes in a nightly series (E-divisive means + t-test)");
  hist->add_option("workload", o->workload, "Workload (prefix*)")->required();
  hist->add_option("--set", o->sets, "Only configs with KEY=VALUE (repeatable)");
  hist->add_option("--system", o->system, "Only this system")->check(text_value(false));
  hist->add_option("--tag", o->tags, "Only runs with this tag")->check(text_value(false));
  hist->add_option("--since", o->since, "Only runs started on or after this date (YYYY-MM-DD)")
      ->check(date_value());
  hist->add_option("--format", o->format, output::format_names(query::history_formats(), " | "));
  hist->add_option("--min-segment", o->min_segment,
                   "Fewest nights on each side of a change (default 5)")
      ->check(integer_in(2, 1000000));
  hist->add_option("--max-pvalue", o->max_pvalue,
                   "Significance of a change (Welch t-test, default 0.001)")
      ->check(number_in(0, 1, true, true));
  hist->add_option("--window", o->window,
                   "Analyse in windows of this many nights (0: whole series)")
      ->check(integer_in(0, 1000000));
  hist->add_flag("--fail-on-regression", o->fail_on_regression,
                 "Exit 1 when a change point is a regression");
  hist->add_option("--html", o->html, "Also write the series as a self-contained HTML page")
      ->check(text_value(false));
  add_db_option(hist, o->db);
  return {hist, [o] { return cmd_history(*o); }};
}

} // namespace accelbench::cli
