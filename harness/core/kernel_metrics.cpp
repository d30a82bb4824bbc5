#include "harness/core/kernel_metrics.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "harness/core/peak.hpp"

namespace accelbench {

namespace {

// The metric when the peak is known, otherwise the reason in its place: never a 0.
void add_pct_of_peak(run& out, double tflops, double peak_tflops, const std::string& unknown) {
  if (unknown.empty() && peak_tflops > 0 && std::isfinite(peak_tflops)) {
    out.add_metric("pct_of_peak", 100.0 * tflops / peak_tflops, "%", direction::higher_is_better);
    out.extra.erase("pct_of_peak_unknown");
    return;
  }
  out.extra["pct_of_peak_unknown"] = unknown.empty() ? "no peak is known for this dtype" : unknown;
}

// A datasheet figure is recorded only when the device has one; above it, the run is INVALID.
void add_datasheet_peak(run& out, double tflops, const kernel_peak& peak) {
  add_pct_of_peak(out, tflops, peak.tflops,
                  peak.tflops > 0 ? peak.unusable
                                  : "no datasheet peak is known for this device and dtype");
  if (peak.tflops <= 0)
    return;
  out.extra["peak"] = peak.record;
  if (auto why = above_peak_reason(tflops, peak.tflops, peak.what); !why.empty())
    out.mark_invalid("above peak: " + why);
}

bool beats(double tflops, const kernel_peak& peak) {
  return peak.tflops > 0 && tflops > peak.tflops * (1 + k_peak_margin);
}

void warn(run& out, const std::string& what) {
  if (!out.extra.contains("warnings") || !out.extra["warnings"].is_array())
    out.extra["warnings"] = nlohmann::json::array();
  out.extra["warnings"].push_back(what);
}

// The CPU's FMA probe is a measurement too: one taken on a loaded machine reads low, and matrix
// units (AMX) are not what it measures. A run faster than it has the peak probed again (the cached
// one may be the low one); a run faster than that too says the probe is not this run's roof, so no
// % of peak is given, the record says why and the run carries a warning naming the fix.
void add_cpu_probe_peak(run& out, const kernel_figures& f, const kernel_peak& given) {
  const double tflops = f.tflops;
  kernel_peak peak = given;
  if (beats(tflops, peak) && peak.reprobe) {
    peak = peak.reprobe(given.type);
    peak.record["probed_again_after"] = fmt::format(
        "this run's {:.3g} TFLOP/s beat the {:.3g} TFLOP/s on record", tflops, given.tflops);
  }
  const bool probe_low = beats(tflops, peak);
  const std::string why =
      probe_low
          ? fmt::format("the CPU peak on record ({:.3g} TFLOP/s, FMA probe) is below this run's "
                        "{:.3g} TFLOP/s: the probe ran on a loaded machine (accelbench env "
                        "--reprobe) or the kernel uses matrix units it does not measure",
                        peak.tflops, tflops)
          : peak.unusable;
  add_pct_of_peak(out, tflops, peak.tflops, why);
  out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
  // No record, no key: a null extra.peak (a plugin naming no dtype) made import refuse the export.
  if (peak.record.is_object())
    out.extra["peak"] = peak.record;
  if (!probe_low)
    return;
  out.extra["peak"]["below_achieved"] = true;
  warn(out, why + "; no % of peak given");
}

} // namespace

kernel_peak probe_peak_of(const cpu_peak& probe, dtype type) {
  kernel_peak pk;
  pk.type = type;
  pk.tflops = peak_tflops_for(probe, to_string(type));
  pk.record = {{"tflops", pk.tflops},
               {"dtype", to_string(type)},
               {"source", "accelbench FMA probe"},
               {"probe", probe.to_json()}};
  if (probe.quiet())
    return pk;
  pk.unusable =
      probe.other_load < 0
          ? std::string("the CPU peak on record does not say how busy the machine was while it "
                        "was probed, and a probe on a quiet machine could not be taken")
          : fmt::format("the CPU peak was probed while other processes used {:.0f}% of the cores "
                        "(more than {:.0f}%), so it reads low; no % of peak until a probe on a "
                        "quiet machine (accelbench env --reprobe)",
                        100 * probe.other_load, 100 * k_probe_max_other_load);
  return pk;
}

kernel_peak cpu_probe_peak(dtype type) {
  kernel_peak pk = probe_peak_of(cached_cpu_peak(), type);
  pk.reprobe = [](dtype t) { return probe_peak_of(cpu_peak_after_beaten(), t); };
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

std::string pct_of_peak_unknown(const run& r) {
  if (!r.extra.is_object())
    return "";
  if (auto it = r.extra.find("pct_of_peak_unknown"); it != r.extra.end() && it->is_string())
    return it->get<std::string>();
  if (auto it = r.extra.find("peak");
      it != r.extra.end() && it->is_object() && it->value("below_achieved", false))
    return "the CPU peak on record was below what the run achieved";
  return "";
}

bool unknown_figure(const metric& m) { return m.name == "pct_of_peak" && !(m.value > 0); }

} // namespace accelbench
