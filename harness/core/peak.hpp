#pragma once
// The CPU's peak floating-point rate, measured by a small FMA probe (run once, cached), so that
// "% of peak" and MFU on a CPU are relative to what this machine can actually do.
#include <filesystem>
#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

struct cpu_peak {
  double fp32_tflops = 0; // all threads, FMA = 2 FLOP
  double bf16_tflops = 0; // all threads, bf16 dot products (0 when the CPU has none)
  int threads = 0;
  std::string isa; // avx512 | avx2 | scalar
  std::string cpu_model;
  std::string measured_at;
  json to_json() const;
};

cpu_peak measure_cpu_peak(int threads = 0);
// Reads the cache (~/.cache/accelbench/peak.json or $ACCELBENCH_CACHE_DIR), measuring and
// writing it when absent or for another CPU. `remeasure` probes again and keeps, per dtype, the
// higher of the cached and the new rate: the peak is what the machine can do, and a probe on a
// busy machine can only under-estimate it (accelbench env --reprobe).
cpu_peak cached_cpu_peak(bool remeasure = false);
// Peak for a dtype ("fp32", "bf16"); falls back to fp32 when no bf16 rate exists.
double peak_tflops_for(const cpu_peak& p, const std::string& dtype);

// A rate above a theoretical or datasheet peak by more than this fraction is not physics but a
// measurement bug (a wrong FLOP count, a timer that missed work, a result served from a cache):
// boost clocks above the datasheet's reference clock explain a few percent, not more.
inline constexpr double k_peak_margin = 0.05;

// Empty when `tflops` is at most `peak_tflops` x (1 + k_peak_margin), or the peak is unknown
// (<= 0, not finite). Otherwise the reason, naming both rates and the peak:
// "1650 TFLOP/s is 167% of the 989 TFLOP/s peak (NVIDIA datasheet, bf16 dense): more than 5%
// above the peak, which no clock variation explains".
std::string above_peak_reason(double tflops, double peak_tflops, const std::string& peak_what);

} // namespace accelbench
