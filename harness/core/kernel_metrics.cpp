#include "harness/core/kernel_metrics.hpp"

#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "harness/core/peak.hpp"

namespace accelbench {

namespace {

// The metric when the peak is known, otherwise the reason in its place: never a 0.
void add_pct_of_peak(run& out, const std::optional<double>& pct) {
  if (pct)
    out.add_metric("pct_of_peak", *pct, "%", direction::higher_is_better);
}

void warn(run& out, const std::string& what) {
  if (!out.extra.contains("warnings") || !out.extra["warnings"].is_array())
    out.extra["warnings"] = nlohmann::json::array();
  out.extra["warnings"].push_back(what);
}

// The % of a usable peak, or the reason there is none (in extra.pct_of_peak_unknown).
std::optional<double> pct_or_reason(run& out, double tflops, double peak_tflops,
                                    const std::string& unknown) {
  if (unknown.empty() && peak_tflops > 0 && std::isfinite(peak_tflops)) {
    out.extra.erase("pct_of_peak_unknown");
    return 100.0 * tflops / peak_tflops;
  }
  out.extra["pct_of_peak_unknown"] = unknown.empty() ? "no peak is known for this dtype" : unknown;
  return std::nullopt;
}

// Above the peak at all: a % of peak above 100 is not a result, whatever the margin says of
// validity.
bool above(double tflops, const kernel_peak& peak) {
  return peak.tflops > 0 && std::isfinite(peak.tflops) && tflops > peak.tflops;
}

// The unit a CPU peak comes from, for the finding ("bf16 (amx)"), from its record.
std::string peak_name(const kernel_peak& peak) {
  const std::string unit = peak.record.is_object() ? peak.record.value("unit", "") : "";
  const std::string dt = to_string(peak.type);
  return unit.empty() ? dt + ", FMA probe" : dt + " (" + unit + ")";
}

// A datasheet figure is recorded only when the device has one; above it by more than the margin,
// the run is INVALID; above it within the margin, no % of peak and a warning.
std::optional<double> judge_datasheet(run& out, double tflops, const kernel_peak& peak) {
  const std::optional<double> pct = pct_or_reason(
      out, tflops, peak.tflops,
      peak.tflops > 0 ? peak.unusable : "no datasheet peak is known for this device and dtype");
  if (peak.tflops <= 0)
    return pct;
  out.extra["peak"] = peak.record;
  if (!above(tflops, peak))
    return pct;
  if (auto why = above_peak_reason(tflops, peak.tflops, peak.what); !why.empty()) {
    out.mark_invalid("above peak: " + why);
    out.extra["pct_of_peak_unknown"] = why;
    return std::nullopt;
  }
  const std::string why = fmt::format(
      "{:.4g} TFLOP/s is above the {:.4g} TFLOP/s peak ({}) by less than {:.0f}%, which clock "
      "variation explains; no % of peak above 100",
      tflops, peak.tflops, peak.what, 100 * k_peak_margin);
  out.extra["pct_of_peak_unknown"] = why;
  warn(out, why);
  return std::nullopt;
}

// The CPU's probe is a measurement too: one taken on a loaded machine reads low, and a unit it
// did not probe (AMX on a CPU whose probe predates it) is not in it. A run faster than it has the
// peak probed again (the cached one may be the low one); a run faster than that too says the probe
// is not this run's roof, so no % of peak is given, the record says why and the run carries a
// warning naming the peak, its unit and the rate.
std::optional<double> judge_cpu_probe(run& out, double tflops, const kernel_peak& given) {
  kernel_peak peak = given;
  if (above(tflops, peak) && peak.reprobe) {
    peak = peak.reprobe(given.type);
    peak.record["probed_again_after"] = fmt::format(
        "this run's {:.3g} TFLOP/s beat the {:.3g} TFLOP/s on record", tflops, given.tflops);
  }
  const bool probe_low = above(tflops, peak);
  const std::string why =
      probe_low ? fmt::format("the CPU peak on record ({:.3g} TFLOP/s, {}) is below this run's "
                              "{:.3g} TFLOP/s ({:.0f}% of it): the peak or the FLOP count is "
                              "wrong (a probe on a loaded machine: accelbench env --reprobe; a "
                              "unit the probe does not measure; FLOPs counted that were not done)",
                              peak.tflops, peak_name(peak), tflops, 100 * tflops / peak.tflops)
                : peak.unusable;
  const std::optional<double> pct = pct_or_reason(out, tflops, peak.tflops, why);
  // No record, no key: a null extra.peak (a plugin naming no dtype) made import refuse the export.
  if (peak.record.is_object())
    out.extra["peak"] = peak.record;
  if (!probe_low)
    return pct;
  out.extra["peak"]["below_achieved"] = true;
  warn(out, why + "; no % of peak given");
  return std::nullopt;
}

} // namespace

std::optional<double> judge_against_peak(run& out, double tflops, const kernel_peak& peak) {
  return peak.source == peak_source::cpu_probe ? judge_cpu_probe(out, tflops, peak)
                                               : judge_datasheet(out, tflops, peak);
}

kernel_peak probe_peak_of(const cpu_peak& probe, dtype type) {
  kernel_peak pk;
  pk.type = type;
  pk.tflops = peak_tflops_for(probe, to_string(type));
  pk.record = {{"tflops", pk.tflops},
               {"dtype", to_string(type)},
               {"source", "accelbench FMA probe"},
               {"probe", probe.to_json()}};
  // The unit of the table the peak comes from ("amx"), where the probe has a table.
  if (const peak_unit* u = best_unit(probe, to_string(type))) {
    pk.record["unit"] = u->unit;
    pk.record["source"] = "accelbench probe, " + u->name();
  }
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
    add_pct_of_peak(out, judge_against_peak(out, f.tflops, peak));
    out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
    return f;
  }
  out.add_metric("cv", f.sum.cv, "", direction::lower_is_better);
  add_pct_of_peak(out, judge_against_peak(out, f.tflops, peak));
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
