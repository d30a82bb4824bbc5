// accelbench delete SEL and accelbench gc --keep-days N: removing stored runs, with their samples,
// metrics and tags, and the systems no run names any more (store::delete_runs, one transaction).
//
// What is removed is listed first. --dry-run stops there. Otherwise the command asks on a
// terminal; when stdin is not a terminal (a script, CI) it needs --yes, so that a pipeline never
// deletes by accident: without it the command is a usage error (exit 2) and nothing changes.
// Ctrl-C during the deletion rolls it back: nothing changes, exit 130.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/sigint_guard.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

namespace {

struct delete_options {
  std::string db, selector;
  filter_options filter;
  int64_t keep_days = 0;              // gc
  std::vector<std::string> keep_tags; // gc: runs with any of these tags are kept
  bool dry_run = false, yes = false;
};

constexpr int k_exit_interrupted = 130; // as a shell reports a process that SIGINT ended

volatile std::sig_atomic_t g_interrupted = 0;

// The first Ctrl-C asks the deletion to stop: the store rolls it back. A second one exits at once;
// the database rolls back the transaction that was never committed (as after kill -9). Only
// async-signal-safe calls here.
void on_interrupt(int) {
  if (g_interrupted) {
    static const char again[] = "\naccelbench: interrupted again; exiting now\n";
    (void)!::write(STDERR_FILENO, again, sizeof again - 1);
    ::_exit(k_exit_interrupted);
  }
  g_interrupted = 1;
}

// What will go, per system and workload, so that a person can see it before saying yes.
void print_doomed(const std::vector<run>& runs) {
  std::map<std::pair<std::string, std::string>, std::pair<size_t, std::string>> groups;
  for (const auto& r : runs) {
    auto& g = groups[{r.system, r.cfg.workload}];
    ++g.first;
    if (g.second.empty() || r.started_at < g.second)
      g.second = r.started_at;
  }
  table t({"system", "workload", "runs", "oldest"});
  for (const auto& [k, v] : groups)
    t.add({k.first, k.second, std::to_string(v.first), v.second.substr(0, 19)});
  t.print(std::cout);
}

// On a terminal: asks. Otherwise --yes must have been given (checked by the caller).
bool confirmed(size_t n, const std::string& where) {
  std::cerr << fmt::format("Delete {} run(s) from {}? This cannot be undone. [y/N] ", n,
                           printable(where));
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "Y" || answer == "yes";
}

int delete_selected(const delete_options& o, const std::vector<run>& runs,
                    const std::string& what) {
  if (runs.empty()) {
    std::cout << fmt::format("nothing to delete: {}\n", what);
    return exit_ok;
  }
  print_doomed(runs);
  const std::string where = resolve_db_path(o.db);
  if (o.dry_run) {
    std::cout << fmt::format("{} run(s) would be deleted (--dry-run: nothing changed)\n",
                             runs.size());
    return exit_ok;
  }
  if (!o.yes && !isatty(STDIN_FILENO))
    throw usage_error(fmt::format("refusing to delete {} run(s) without confirmation: stdin is not "
                                  "a terminal; pass --yes (or --dry-run to list them)",
                                  runs.size()));
  if (!o.yes && !confirmed(runs.size(), where)) {
    std::cout << "nothing deleted\n";
    return exit_ok;
  }
  std::vector<int64_t> ids;
  ids.reserve(runs.size());
  for (const auto& r : runs)
    ids.push_back(r.id);
  // SA_RESTART: SQLite and libpq calls go on until the next check.
  const sigint_guard guard(on_interrupt, SA_RESTART);
  auto db = store::store::open(where, store::access::read_write);
  std::cerr << fmt::format("accelbench: deleting {} run(s) (Ctrl-C cancels: nothing is deleted "
                           "until the end)\n",
                           ids.size());
  store::table_counts n;
  try {
    n = db.delete_runs(ids, [] { return g_interrupted != 0; });
  } catch (const store::cancelled&) {
    std::cerr << fmt::format("accelbench: interrupted; rolled back, nothing deleted from {}\n",
                             printable(db.path().string()));
    return k_exit_interrupted;
  }
  std::cout << fmt::format(
      "deleted {} run(s) ({} sample(s), {} metric(s), {} tag(s)) and {} system(s) left without "
      "runs from {}\n",
      n.runs, n.samples, n.metrics, n.tags, n.systems, printable(db.path().string()));
  return exit_ok;
}

int cmd_delete(const delete_options& o) {
  const std::string sel = combined_selector(o.selector, o.filter);
  if (sel.empty())
    throw usage_error("delete needs a selector (e.g. tag=scratch, run=12,13) or a filter option; "
                      "to delete old runs use accelbench gc --keep-days N");
  std::vector<run> runs;
  {
    auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
    runs = query::select_runs(db, sel, false, false).runs;
  }
  return delete_selected(o, runs, sel);
}

// started_at is stored as UTC "YYYY-MM-DDTHH:MM:SS.mmmZ", so the cut-off compares as text.
std::string days_ago(int64_t days) {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() -
                                                      std::chrono::hours(24 * days));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

bool has_any_tag(const run& r, const std::vector<std::string>& tags) {
  for (const auto& t : tags)
    if (std::find(r.tags.begin(), r.tags.end(), t) != r.tags.end())
      return true;
  return false;
}

// Runs stored before imports checked dates can have a started_at that is not one ("yesterday"):
// compared as text it says nothing of age, so gc keeps them and says which they are.
void note_undated(const std::vector<const run*>& undated) {
  if (undated.empty())
    return;
  std::string ids;
  for (size_t i = 0; i < undated.size() && i < 20; ++i)
    ids += (ids.empty() ? "" : ",") + std::to_string(undated[i]->id);
  std::cerr << fmt::format(
      "accelbench: gc: note: {} run(s) have a started_at that is not a date (run {}: '{}'), so "
      "their age is unknown and gc keeps them; accelbench delete run={}{} removes them\n",
      undated.size(), undated[0]->id, printable(undated[0]->started_at), ids,
      undated.size() > 20 ? ",..." : "");
}

int cmd_gc(const delete_options& o) {
  const std::string cutoff = days_ago(o.keep_days);
  std::vector<run> old, all;
  {
    auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
    auto f = to_run_filter(o.filter);
    f.with_samples = false;
    all = db.query(f);
  }
  std::vector<const run*> undated;
  for (auto& r : all)
    if (!is_utc_timestamp(r.started_at))
      undated.push_back(&r);
    else if (r.started_at < cutoff && !has_any_tag(r, o.keep_tags))
      old.push_back(std::move(r));
  note_undated(undated);
  return delete_selected(o, old, fmt::format("no run started before {}Z", cutoff));
}

void add_confirmation_options(CLI::App* a, delete_options& o) {
  a->add_flag("--dry-run", o.dry_run, "List what would be deleted, change nothing");
  a->add_flag("-y,--yes", o.yes, "Delete without asking (required when stdin is not a terminal)");
  add_db_option(a, o.db);
}

} // namespace

command_hook add_delete(CLI::App& app, context&) {
  auto o = std::make_shared<delete_options>();
  auto* del = app.add_subcommand(
      "delete", "Delete the runs a selector matches, with their samples, metrics and tags");
  del->add_option("selector", o->selector,
                  "Which runs: system name, system=, accelerator=, family=, tag=, workload=, "
                  "run=ID,ID, since=, until=, job= (joined with &)")
      ->check(text_value(false));
  add_filter_options(del, o->filter, true);
  add_confirmation_options(del, *o);
  return {del, [o] { return cmd_delete(*o); }};
}

command_hook add_gc(CLI::App& app, context&) {
  auto o = std::make_shared<delete_options>();
  auto* gc = app.add_subcommand("gc", "Delete runs older than N days (keeping tagged baselines)");
  gc->add_option("--keep-days", o->keep_days, "Keep runs started in the last N days")
      ->required()
      ->check(integer_in(1, 100000));
  gc->add_option("--keep-tag", o->keep_tags,
                 "Never delete runs with this tag, however old (repeatable), e.g. baseline")
      ->check(text_value(false));
  add_filter_options(gc, o->filter);
  add_confirmation_options(gc, *o);
  return {gc, [o] { return cmd_gc(*o); }};
}

} // namespace accelbench::cli
