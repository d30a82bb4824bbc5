#pragma once
// What both modes of the `external` workload do with one run of the user's program: the ruleset's
// settings for it, its launch, its judged outcome, and how a failure of it ends the accelbench
// run (external_workload.cpp measures; time_to_train.cpp trains to a target).
#include <map>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/workload.hpp"
#include "workloads/external/outcome.hpp"
#include "workloads/external/process.hpp"

namespace accelbench::external {

// The settings of the ruleset that drive the program's runs.
struct program_settings {
  int64_t warmups = 1;     // measurement.warmup_iterations: untimed runs of the program
  int64_t repetitions = 1; // measurement.repetitions: samples at least
  double max_time_s = 600; // measurement.max_time_s: bound on all samples (or training runs)
  double timeout_s = 0;    // external.timeout_s: bound on one run of the program (0: none)
  double kill_grace_s = 2; // external.kill_grace_s: SIGTERM -> SIGKILL
  bool require_protocol = false;
  // external.max_memory_mib, max_open_files, max_file_mib (0: none); the runner's defaults
  // (process.hpp) where the ruleset names none.
  resource_limits limits;
};
program_settings program_settings_of(const ruleset& rules);

// The program's own settings: the config without the keys that describe the program itself
// (name, command) or how accelbench runs it (mode).
std::map<std::string, std::string> program_config(const config& cfg);

// How to start the program for `cfg` under `s`, cancelled with the run (ctx.cancel).
launch launch_of(const config& cfg, const program_settings& s, const run_context& ctx);

// One run of the program and what it amounts to.
struct invocation {
  process_outcome outcome;
  judged_run judged;
};
invocation invoke(const launch& l, const program_settings& s);

// The arguments as run, as JSON strings (bytes that are not UTF-8 become U+FFFD).
json argv_json(const std::vector<std::string>& argv);

// Ends the run with what went wrong in one run of the program (`which`: "warm-up run 1", "run
// 3"): failed or INVALID with the reason, and the tail of its stderr kept with the run.
void record_failure(run& out, const std::string& which, const invocation& i);

// The MLPerf log lines (":::MLLOG ") of a program's stdout, verbatim, each ending in '\n'.
std::string mllog_lines(const std::string& text);

} // namespace accelbench::external
