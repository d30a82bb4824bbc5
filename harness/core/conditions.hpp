#pragma once
// Conditions that make a run's numbers unreliable, measured around every run and judged by the
// ruleset's "conditions" section: a coefficient of variation above the limit, a machine loaded by
// other processes, a CPU frequency governor other than "performance" or turbo left on, a debug
// build of the library that produced imported Google Benchmark results. Each is recorded in
// run.extra["conditions"]; the ruleset says whether it makes the run INVALID or is a warning
// (run.extra["warnings"]), and both are shown by show, compare and the report.
#include <optional>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench {

// A snapshot of the machine taken before and after a run.
struct machine_state {
  double wall_s = 0;     // steady clock
  double busy_cpu_s = 0; // CPU time of all processes (from /proc/stat), seconds
  double own_cpu_s = 0;  // CPU time of this process, seconds
  double load1 = -1;     // 1-minute load average (-1: unknown)
  int cores = 0;
  std::string governor; // cpu0's scaling governor ("" when not readable)
  std::string turbo;    // "on" | "off" | "" (unknown)
};
machine_state read_machine_state();

// How the ruleset treats each condition ("invalid" | "warn" | "ignore") and its limits.
struct condition_rules {
  double max_cv = 0.05;         // samples' stddev / mean
  double max_other_load = 0.25; // CPU used by other processes, as a share of the cores
  std::string on_high_cv = "warn";
  std::string on_loaded = "warn";
  std::string on_governor = "warn"; // governor not "performance", or turbo on
  std::string on_debug_library = "warn";
};
condition_rules conditions_of(const ruleset& r);

// CPU used by other processes between two snapshots, as a share of the machine's cores: the
// load average counts this benchmark's own threads (and those of the previous run of a sweep), so
// the judgement subtracts our own CPU time from the machine's.
double other_load(const machine_state& before, const machine_state& after);

// Records the conditions of `r` measured between `before` and `after` and applies the rules.
void judge_conditions(run& r, const condition_rules& rules, const machine_state& before,
                      const machine_state& after);

// Judges a run that was not measured here (an import): only the conditions it carries (CV of its
// samples, the build type of the library that produced it).
void judge_imported_conditions(run& r, const condition_rules& rules);

// Other processes' share of the cores during `r` when it broke the ruleset's load limit (the
// "loaded" condition judge_conditions records; a run stored before it: a share above 25%), else
// nullopt. Such a run's speed says as much about the machine as about the code: compare and the
// report do not call a change from it (harness/compare discount_loaded).
std::optional<double> loaded_share(const run& r);

// The warnings recorded in run.extra["warnings"] (empty when none).
std::vector<std::string> run_warnings(const run& r);

} // namespace accelbench
