#pragma once
// Selectors (SEL) shared by report, compare, publish and the server: which runs a side holds.
//   NAME                       a system name
//   system=NAME                the same, explicitly
//   accelerator=TEXT           systems whose accelerator model has TEXT among its name tokens
//                              (case-insensitive; B200 matches "NVIDIA B200-SXM-180GB", not GB200)
//   accelerator~TEXT           systems whose accelerator model contains TEXT (substring)
//   family=NAME                systems whose accelerator is of a family of results/devices.json
//                              (Blackwell, Hopper; case-insensitive): the model matches one of the
//                              family's patterns as accelerator=PATTERN would (GB200, B200 ...)
//   tag=TAG                    runs with the tag
//   workload=NAME | NAME*      runs of a workload (prefix with *)
//   run=ID,ID,...              run ids
//   source=measured|published
//   since=YYYY-MM-DD[THH:MM[:SS]]  runs started at or after it (UTC)
//   until=YYYY-MM-DD[THH:MM[:SS]]  runs started up to the end of the day, minute or second it
//                              names (UTC): until=2026-12-02 keeps all of December 2, so that
//                              since=D&until=D is day D
//   job=latest|previous|ID     the runs of one job: latest and previous are the newest and the one
//                              before it among the jobs of measured runs (`accelbench run`); an ID
//                              (run.extra.job_id) also names a gbench or mlperf import's runs
//   FILE.json                  an exported results file (accelbench export)
// Several filters are joined with '&' (all must hold): "accelerator=H100&workload=mlperf.*"
// (several accelerator terms, or several family terms, are alternatives: any of them).
#include <map>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/store/store.hpp"

namespace accelbench::query {

struct selection {
  std::string label; // the selector as given
  std::vector<run> runs;
  std::map<std::string, store::system_record> systems; // every system the runs name
};

// Throws input_error when the selector is malformed, or matches nothing (listing the systems,
// accelerators and tags that exist). `allow_files` false (a server's selectors come from the
// network): a selector naming a .json file is never read as a file, only as filters.
selection select_runs(store::store& db, const std::string& sel, bool with_samples = true,
                      bool allow_files = true);

// Keeps the runs of the selector's job= term (none: all of them). Throws input_error when
// job=latest or job=previous names a job the database does not hold.
void keep_job(store::store& db, const std::string& sel, std::vector<run>& runs);

// Keeps the runs whose accelerator model matches the selector's accelerator=, accelerator~ and
// family= terms by their own rules (the store's filter only narrowed by substring): for callers
// of parse_selector and the store's query, as select_runs does it itself.
void keep_accelerators(store::store& db, const std::string& sel, std::vector<run>& runs);

// A run's job id (extra.job_id, written by run and by gbench and mlperf imports), "" when none.
std::string job_of(const run& r);

// Throws input_error naming `what` when `value` is not YYYY-MM-DD (optionally THH:MM[:SS]): the
// form since=, until= and --since compare with stored start times.
void require_date(const std::string& value, const std::string& what);

// Parses the filter part only (no file, no database); exposed for tests.
store::run_filter parse_selector(const std::string& sel);

// Whether an accelerator model matches accelerator=TEXT (`substring` false: TEXT's name tokens,
// split at anything not a letter or digit, appear consecutively among the model's) or
// accelerator~TEXT (`substring` true). Case-insensitive. Exposed for tests.
bool accelerator_matches(const std::string& model, const std::string& text, bool substring);

} // namespace accelbench::query
