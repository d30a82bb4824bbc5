#pragma once
// The accelbench commands. Each returns the process exit code (harness/core/error.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/app/query/database.hpp"
#include "harness/app/runner/runner.hpp"
#include "harness/core/assignment.hpp"
#include "harness/core/workload.hpp"
#include "harness/store/store.hpp"

namespace accelbench::cli {

// `accelbench run`'s options: what to run (the runner's request, one home of those fields), and
// what only the command line has.
struct run_options : runner::request {
  std::string db;
  bool json = false;
  bool quiet = false;
  // run external: the program's name and its argv (what follows --), as the config's name and
  // command parameters.
  std::string name;
  std::vector<std::string> command;
  // Stop once every config is planned (resolved and checked): nothing runs, no database is
  // opened. The fuzz targets of suites, catalogues and --set/--sweep/--rule use it.
  bool plan_only = false;
};

int cmd_run(const registry& reg, const run_options& o);

// The options of run that say what to measure (the workload or suite, its settings and rules, the
// program after --, --plugin): declared once for `run` and for `ab`, whose children are given
// them back as measured_args (each value as its option, the workload first, without the command).
void add_measured_options(CLI::App* cmd, run_options& o, std::vector<std::string>& plugins);
std::vector<std::string> measured_args(const run_options& o,
                                       const std::vector<std::string>& plugins);

// KEY=VALUE and stored text from the command line: harness/core/assignment.hpp.
using accelbench::require_text;
using accelbench::split_assignment;

// --db, else $ACCELBENCH_DB, else the default path; a config as "k=v k=v" (harness/app/query).
using query::resolve_db_path;
using query::short_config;

// The primary metric of the run's workload when it is registered here, else "" (what the run's
// headline, harness/core/headline_metric.hpp, tries first).
std::string primary_metric_of(const registry& reg, const run& r);

// What a reader of a run should be warned of: the conditions recorded when it was measured or
// imported (high CV, a loaded machine, governor, a debug library; harness/core/conditions.hpp) and,
// when its samples are loaded, too few of them for compare to call a change.
std::vector<std::string> run_notes(const run& r);

// What import applies to every run it read, whatever the format (accelbench, gbench, mlperf):
// --tag (added to each run's tags), --system (the runs' system, and the system record of
// theirs renamed to it) and the import's job (extra.job_id of each run that brings none, so that
// job=ID selects what one import stored; a run that brings one keeps it). Throws usage_error when
// --system would merge runs of several systems.
struct import_labels {
  std::vector<std::string> tags;
  std::string system;
  std::string job_id; // one new uuid per gbench or mlperf import command; "": none
};
void apply_import_labels(const import_labels& l, std::vector<run>& runs,
                         std::vector<store::system_record>& systems);
// What an import's summary line says of its job: " as job=ID" when a run it stored may carry
// the import's job id, "" when nothing was stored or every run kept a job of its own.
std::string import_job_words(const import_labels& l, const std::vector<run>& runs, size_t inserted);

} // namespace accelbench::cli
