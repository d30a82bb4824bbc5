#pragma once
// Rulesets: versioned JSON files that fix how a workload is measured and judged
// (schemas/ruleset.schema.json). A ruleset plus the user's overrides resolves into the effective
// settings, and both are stored with every run (MLPerf LoadGen logs user and effective settings).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

enum class cache_policy { hot, cold };
std::string to_string(cache_policy c);

struct measurement_settings {
  int64_t warmup_iterations = 1; // untimed iterations before the first sample
  double min_warmup_time_s = 0;  // ... and at least this long
  // Bound on the warm-up a kernel adds until it is steady (measure::kernel::steady); tests make
  // it short. A kernel still unsteady then is measured anyway, marked not steady.
  double max_steady_warmup_s = 3.0;
  int64_t iterations = 0;   // iterations per sample; 0: chosen so a sample lasts min_time_s
  int64_t repetitions = 10; // samples
  // Runs of each config per job, interleaved across the job's configs (round 1 runs every config,
  // then round 2...), so a comparison can measure the noise between runs and not only within one.
  int64_t rounds = 1;
  double min_time_s = 0.05; // smallest duration of one sample when iterations is 0
  double max_time_s = 60;   // bound on all samples of one run together
  cache_policy cache = cache_policy::hot;
};
// clang-tidy 14 reads this struct's implicit moves as throwing (a json member): they are noexcept.
struct ruleset {       // NOLINT(bugprone-exception-escape)
  std::string id;      // "kernel-v1"
  std::string version; // "1.0"
  std::string description;
  std::vector<std::string> applies_to; // workload names or families ("kernel", "training")
  json doc;                            // the whole (effective) document
  std::filesystem::path path;          // where it was loaded from (empty for built-in)

  measurement_settings measurement() const;
  // Correctness tolerance for a dtype (relative error bound); throws input_error when absent.
  double tolerance(const std::string& dtype) const;
  int64_t correctness_samples() const; // sampled output elements checked
  double min_effect_pct() const;       // comparison threshold (default 5)
  double alpha() const;                // comparison significance (default 0.01)
  // The standard deviation of a whole job's level that a comparison adds to each side, in %
  // (default 0): the noise between jobs that one job's own rounds cannot see.
  double between_run_noise_pct() const;
  const json& section(const std::string& name) const; // e.g. "training"; null json when absent
  bool applies(const workload_spec& spec) const;
};

// Directory of built-in data (rulesets, suites, catalogues, schemas): $ACCELBENCH_HOME, else
// <prefix>/share/accelbench beside an installed binary (<prefix>/bin/accelbench, as cmake
// --install lays it out), else the source tree this binary was built from.
std::filesystem::path data_root();

// Where the default database lives: <data root>/results, except for an installed binary, whose
// data folder is not the user's to write: $XDG_DATA_HOME/accelbench, else
// ~/.local/share/accelbench.
std::filesystem::path default_results_dir();

// Load by id ("kernel-v1", looked up under workloads/*/rulesets/ and rulesets/) or by file path.
// Validates against schemas/ruleset.schema.json; throws input_error naming the file and the
// first violation.
ruleset load_ruleset(const std::string& name_or_path);
std::vector<ruleset> list_rulesets();

// Apply --rule KEY=VALUE overrides ("repetitions=5", "measurement.cache=cold"). A short key is
// looked up in "measurement". Keys not listed in "overridable" are refused (input_error).
// Returns the effective ruleset; `user` receives the overrides as JSON.
ruleset apply_overrides(const ruleset& base, const std::map<std::string, std::string>& overrides,
                        json& user);

} // namespace accelbench
