#pragma once
// Tests that measure something run on machines other work loads (CI runners, shared boxes, a
// full CTest run on two cores). A busy machine can make a run INVALID or add a warning by itself:
// samples a preempted calibration made too short, a run slowed past max_time_s, the ruleset's
// conditions (other processes' CPU use, a high CV). None of that is the behaviour a test checks,
// so a test that checks a run's validity either measures under rules load cannot trip or asserts
// the reason it is about; these helpers do both.
#include <map>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace test_support {

// Measurement overrides (the "measurement.*" every kernel ruleset lets a user override) under
// which load cannot change a kernel run's validity:
//   min_time_s=0, min_warmup_time_s=0: no sample can come out "shorter than min_time_s" (a
//     calibration preempted by another process counts too few iterations);
//   max_time_s=600: a slowed run is not cut by the bound (the test's own timeout still is);
//   max_steady_warmup_s=0.2: a GPU kernel that does not settle (a shared or throttled device)
//     costs a test 0.2 s, not 3 s per config (steadiness is recorded, never judged).
// Add them to a test's own overrides: a map merge keeps the test's value for a key it sets.
inline std::map<std::string, std::string>
load_free(std::map<std::string, std::string> overrides = {}) {
  overrides.insert({{"min_time_s", "0"},
                    {"min_warmup_time_s", "0"},
                    {"max_time_s", "600"},
                    {"max_steady_warmup_s", "0.2"}});
  return overrides;
}

// The same as --rule options for the accelbench command line.
inline const std::string k_load_free_rules =
    " --rule min_time_s=0 --rule min_warmup_time_s=0 --rule max_time_s=600 ";

// Small and fast runs of the command line whose validity load cannot change: the quick kernel
// rules, 3 samples, the load-free bounds above, no progress lines.
inline const std::string k_fast_rules =
    " --rules kernel-quick --rule repetitions=3 --quiet" + k_load_free_rules;

// Whether an INVALID reason is one a busy machine can cause by itself: a condition of the ruleset
// (harness/core/conditions), samples that stayed shorter than min_time_s, or max_time_s reached
// (harness/measure).
inline bool load_reason(const std::string& reason) {
  return reason.rfind("conditions: ", 0) == 0 ||
         reason.find("less than min_time_s") != std::string::npos ||
         (reason.rfind("max_time_s=", 0) == 0 && reason.find(" reached") != std::string::npos);
}

// A run's INVALID reasons but those load can cause: what a test about correctness checks.
inline std::vector<std::string> reasons_not_from_load(const accelbench::run& r) {
  std::vector<std::string> out;
  for (const auto& reason : r.invalid_reasons)
    if (!load_reason(reason))
      out.push_back(reason);
  return out;
}

} // namespace test_support
