#pragma once
// The metrics of a kernel run from its samples: one home for the GEMM and attention backends, on
// the CPU and on CUDA. In this order:
//   time (median, s) · tflops · tflops_ci_low · tflops_ci_high · pct_of_peak · cv
// The peak is the CPU's probe (harness/core/peak.hpp's table: the best unit for the dtype) or a
// GPU's datasheet (then extra["peak"] only when the datasheet names one).
// The above-peak rule, one home for every "% of peak" figure (a kernel's pct_of_peak, training's
// MFU): judge_against_peak. No figure is ever above 100%: a run faster than its peak gets none,
// and the record says which peak it beat and by how much (a CPU probe: probed again first, then a
// warning; a datasheet: INVALID beyond k_peak_margin, a warning within it).
// pct_of_peak is a measurement or nothing: when no trustworthy peak is known (no datasheet figure,
// a CPU probe taken on a loaded machine, a probe the run beat even after probing again) the metric
// is absent and run.extra["pct_of_peak_unknown"] says why. A 0 would be averaged, charted and
// compared as if the kernel had done no work.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/dtype.hpp"
#include "harness/core/model.hpp"
#include "harness/core/stats.hpp"

namespace accelbench {

struct cpu_peak;

enum class peak_source { cpu_probe, datasheet };

// clang-tidy 14 reads this struct's implicit moves as throwing (a json member): they are noexcept.
struct kernel_peak { // NOLINT(bugprone-exception-escape)
  peak_source source = peak_source::cpu_probe;
  double tflops = 0;     // 0: unknown
  nlohmann::json record; // extra["peak"]
  std::string what; // datasheet only: "NVIDIA datasheet, bf16 dense", for the above-peak reason
  // Why this rate gives no % of peak ("" when it does): a CPU probe that was not quiet.
  std::string unusable;
  // CPU probe: the peak for `type` again after a run beat this one (cpu_peak_after_beaten);
  // nullptr: not asked.
  kernel_peak (*reprobe)(dtype type) = nullptr;
  dtype type = dtype::fp32;
};

struct kernel_figures {
  stats::summary sum; // of the samples' values (seconds per iteration)
  double tflops = 0;  // at the median
};

// The CPU's FMA-probe peak for `type` (cached_cpu_peak), as its record; probed again once per
// process when a run beats it.
kernel_peak cpu_probe_peak(dtype type);
// The kernel peak of one probe for `type` (unusable when the probe was not quiet), with no reprobe.
kernel_peak probe_peak_of(const cpu_peak& probe, dtype type);

// The above-peak rule: the % of `peak` that `tflops` is, or nullopt with the reason in
// out.extra["pct_of_peak_unknown"] (and a warning, or INVALID, when the run beat the peak). Records
// the peak judged against in out.extra["peak"] (probed again when the run beat a CPU probe).
std::optional<double> judge_against_peak(run& out, double tflops, const kernel_peak& peak);

// Adds the metrics above to `out` (from out.samples) for `flops` per iteration.
kernel_figures add_kernel_metrics(run& out, double flops, const kernel_peak& peak);

// Why `r` has no % of peak (run.extra["pct_of_peak_unknown"]), "" when it has one or never had a
// peak. Runs stored before the key existed: a CPU probe the run beat (extra.peak.below_achieved).
std::string pct_of_peak_unknown(const run& r);

// A stored metric that is no measurement: the pct_of_peak of 0 that versions before
// pct_of_peak_unknown wrote for an unknown peak. Readers of stored runs leave it out.
bool unknown_figure(const metric& m);

} // namespace accelbench
