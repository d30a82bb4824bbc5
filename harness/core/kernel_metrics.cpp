#include "harness/core/kernel_metrics.hpp"

#include <vector>

#include "harness/core/peak.hpp"

namespace accelbench {

namespace {

void add_pct_of_peak(run& out, double tflops, double peak_tflops) {
  out.add_metric("pct_of_peak", peak_tflops > 0 ? 100.0 * tflops / peak_tflops : 0.0, "%",
                 direction::higher_is_better);
}

// A datasheet figure is recorded only when the device has one; above it, the run is INVALID.
void add_datasheet_peak(run& out, double tflops, const kernel_peak& peak) {
  if (peak.tflops <= 0)
    return;
  add_pct_of_peak(out, tflops, peak.tflops);
  out.extra["peak"] = peak.record;
  if (auto why = above_peak_reason(tflops, peak.tflops, peak.what); !why.empty())
    out.mark_invalid("above peak: " + why);
}

} // namespace

kernel_figures add_kernel_metrics(run& out, double flops, const kernel_peak& peak) {
  std::vector<double> times;
  times.reserve(out.samples.size());
  for (const sample& smp : out.samples)
    times.push_back(smp.value);
  kernel_figures f;
  f.sum = stats::summarize(times);
  f.tflops = flops / f.sum.median / 1e12;
  out.add_metric("time", f.sum.median, "s", direction::lower_is_better);
  out.add_metric("tflops", f.tflops, "TFLOP/s", direction::higher_is_better);
  out.add_metric("tflops_ci_low", flops / f.sum.ci_high / 1e12, "TFLOP/s",
                 direction::higher_is_better);
  out.add_metric("tflops_ci_high", flops / f.sum.ci_low / 1e12, "TFLOP/s",
                 direction::higher_is_better);
  if (peak.source == peak_source::cpu_probe) {
    add_pct_of_peak(out, f.tflops, peak.tflops);
    out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
    out.extra["peak"] = peak.record;
    return f;
  }
  out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
  add_datasheet_peak(out, f.tflops, peak);
  return f;
}

} // namespace accelbench
