#pragma once
// The metrics of a kernel run from its samples: one home for the GEMM and attention backends, on
// the CPU and on CUDA. In this order:
//   time (median, s) · tflops · tflops_ci_low · tflops_ci_high · pct_of_peak · cv
// The peak is the CPU's FMA probe (pct_of_peak always present, 0 when the probe knows no figure)
// or a GPU's datasheet (pct_of_peak and extra["peak"] only when the datasheet names one, recorded
// after cv; a run faster than it is INVALID: a measurement bug, not a result).
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/dtype.hpp"
#include "harness/core/model.hpp"
#include "harness/core/stats.hpp"

namespace accelbench {

enum class peak_source { cpu_probe, datasheet };

struct kernel_peak {
  peak_source source = peak_source::cpu_probe;
  double tflops = 0;     // 0: unknown
  nlohmann::json record; // extra["peak"]
  std::string what; // datasheet only: "NVIDIA datasheet, bf16 dense", for the above-peak reason
};

struct kernel_figures {
  stats::summary sum; // of the samples' values (seconds per iteration)
  double tflops = 0;  // at the median
};

// The CPU's FMA-probe peak for `type` (cached; measured once per machine), as its record.
kernel_peak cpu_probe_peak(dtype type);

// Adds the metrics above to `out` (from out.samples) for `flops` per iteration.
kernel_figures add_kernel_metrics(run& out, double flops, const kernel_peak& peak);

} // namespace accelbench
