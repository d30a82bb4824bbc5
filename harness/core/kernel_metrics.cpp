#include "harness/core/kernel_metrics.hpp"

#include <vector>

#include <fmt/format.h>

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

// The CPU's FMA probe is a measurement too: one taken on a loaded machine reads low, and matrix
// units (AMX) are not what it measures. A run faster than it says the probe is not this run's
// roof, so no % of peak is given (0, as for an unknown peak), the record says why and the run
// carries a warning naming the fix.
void add_cpu_probe_peak(run& out, const kernel_figures& f, const kernel_peak& peak) {
  const double tflops = f.tflops;
  const bool probe_low = peak.tflops > 0 && tflops > peak.tflops * (1 + k_peak_margin);
  add_pct_of_peak(out, tflops, probe_low ? 0.0 : peak.tflops);
  out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
  out.extra["peak"] = peak.record;
  if (!probe_low)
    return;
  out.extra["peak"]["below_achieved"] = true;
  if (!out.extra.contains("warnings") || !out.extra["warnings"].is_array())
    out.extra["warnings"] = nlohmann::json::array();
  out.extra["warnings"].push_back(fmt::format(
      "the CPU peak on record ({:.3g} TFLOP/s, FMA probe) is below this run's {:.3g} TFLOP/s: "
      "the probe ran on a loaded machine (accelbench env --reprobe) or the kernel uses matrix "
      "units it does not measure; no % of peak given",
      peak.tflops, tflops));
}

} // namespace

kernel_peak cpu_probe_peak(dtype type) {
  const cpu_peak peak = cached_cpu_peak();
  kernel_peak pk;
  pk.tflops = peak_tflops_for(peak, to_string(type));
  pk.record = {{"tflops", pk.tflops},
               {"dtype", to_string(type)},
               {"source", "accelbench FMA probe"},
               {"probe", peak.to_json()}};
  return pk;
}

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
    add_cpu_probe_peak(out, f, peak);
    return f;
  }
  out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
  add_datasheet_peak(out, f.tflops, peak);
  return f;
}

} // namespace accelbench
