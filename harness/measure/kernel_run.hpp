#pragma once
// The one kernel-run sequence of the GEMM and attention workloads, on the CPU and on CUDA, as the
// collective workload's run_kernel orders its own: the backend prepares the inputs (seeded with
// hash.hpp seed_of) and the kernel, then
//   timed samples  warm-up and samples under the ruleset's measurement (measure_into)
//   description    run.extra of the run: implementation, FLOPs and bytes per iteration, ...
//   metrics        time, tflops, pct_of_peak, cv against the backend's peak (kernel_metrics.hpp)
//   check          the outputs against the reference: extra.correctness, INVALID when wrong
// The peak is asked for after the samples: a CPU's FMA probe must not run before them.
#include <functional>
#include <string>

#include "harness/core/kernel_metrics.hpp"
#include "harness/core/workload.hpp"
#include "harness/measure/measure.hpp"

namespace accelbench::measure {

// What differs between workloads and backends; run_checked_kernel calls them in the order above.
struct kernel_run_steps {
  double flops = 0;                   // per iteration
  std::function<kernel_peak()> peak;  // the roof of pct_of_peak
  std::function<void(run&)> describe; // may be empty
  std::function<void(run&)> check;    // may be empty
};

// Runs the sequence above for `k` under `ctx`'s rules; false when the measurement failed (out
// says why) and nothing after it ran.
inline bool run_checked_kernel(run& out, const std::string& key, kernel& k, const run_context& ctx,
                               const kernel_run_steps& steps) {
  if (!measure_into(out, key, k, ctx.rules->measurement()))
    return false;
  if (steps.describe)
    steps.describe(out);
  add_kernel_metrics(out, steps.flops, steps.peak());
  if (steps.check)
    steps.check(out);
  return true;
}

} // namespace accelbench::measure
