#pragma once
// The CPU's peak rates, a table by dtype and unit (fp32 on the FMA units, bf16 on AVX-512 BF16 and
// on AMX tiles, int8 on AMX), each measured by a small probe (cached) beside the documented figure,
// so that "% of peak" and MFU on a CPU are relative to what this machine can actually do: a dtype's
// peak is its fastest trustworthy unit (peak_tflops_for). The AMX probe is harness/core/amx.hpp's,
// run only where the CPU, the OS and Linux allow it. The peak is a maximum, and
// a probe can only under-read it (other processes take its cores, clocks dip), so:
//   - the cache keeps, per dtype, the highest rate of the probes it was given;
//   - every probe records the load while it ran (other processes' share of the cores, measured as
//     for runs: conditions.hpp other_load);
//   - a probe taken while other processes used more than k_probe_max_other_load of the cores is
//     used by the process that took it and never cached, and gives no % of peak (quiet() false);
//   - a cache entry that is not quiet (one written before the load was recorded) is probed again;
//   - a run faster than the peak on record has it probed again (once per process).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/conditions.hpp"
#include "harness/core/model.hpp"

namespace accelbench {

// A rate above a theoretical or datasheet peak by more than this fraction is not physics but a
// measurement bug (a wrong FLOP count, a timer that missed work, a result served from a cache):
// boost clocks above the datasheet's reference clock explain a few percent, not more.
inline constexpr double k_peak_margin = 0.05;

// The most other processes may use of the cores while the probe runs for it to be cached. The
// probe's threads share the cores with them, so it reads low by about their share: at 5% (the
// margin above a peak that clock variation explains) a cached peak is at most about as far below
// the roof as a run may read above it. Stricter than a run's max_other_load (25%): a run is judged
// once, a cached peak judges every later run.
inline constexpr double k_probe_max_other_load = 0.05;

// One row of the peak table: a dtype's rate on one unit of the CPU ("bf16 (amx)").
struct peak_unit {
  std::string dtype;    // fp32 | bf16 | fp16 | int8 (int8 in TOP/s, kept with the TFLOP/s)
  std::string unit;     // avx512 fma | avx2 fma | scalar | avx512_bf16 | amx
  double tflops = 0;    // measured by the probe, all threads; 0: not probed (`note` says why)
  double clock_ghz = 0; // the core clock measured right after the probe; 0: not measured
  // The documented rate per core and cycle (the instruction's throughput x its FLOPs, on this
  // microarchitecture); 0: not documented here (`note` says why).
  double flop_per_cycle_core = 0;
  int cores = 0;            // physical cores the probe ran on (one thread per logical core)
  std::string note;         // why there is no measured or no documented figure
  std::string name() const; // "bf16 (amx)"
  // flop_per_cycle_core x cores x clock_ghz, in TFLOP/s; 0 when one of them is unknown.
  double documented_tflops() const;
  // Measured, and not above its documented figure by more than k_peak_margin (a probe that counts
  // FLOPs it did not do would otherwise become every run's roof).
  bool trustworthy() const;
  json to_json() const;
};

struct cpu_peak {
  double fp32_tflops = 0; // all threads, FMA = 2 FLOP: the best fp32 unit (kept for old readers)
  double bf16_tflops = 0; // all threads, the best bf16 unit (0 when the CPU has none)
  int threads = 0;
  std::string isa; // avx512 | avx2 | scalar
  std::string cpu_model;
  std::string measured_at;
  double other_load = -1; // other processes' share of the cores while probing; -1: not recorded
  // The table by dtype and unit; empty in a cache entry written before it existed (then the two
  // rates above are the table, peak_tflops_for reads them).
  std::vector<peak_unit> units;
  std::string amx;  // "available (bf16, int8)" or "not available: <reason>"; "" when not recorded
  std::string note; // this process's word on how the peak was found (not cached)
  // Probed while other processes used at most k_probe_max_other_load of the cores.
  bool quiet() const;
  json to_json() const;
};

// The table's row for dtype and unit, or nullptr.
const peak_unit* find_unit(const cpu_peak& p, const std::string& dtype, const std::string& unit);
// The row peak_tflops_for(p, dtype) reads: the highest trustworthy unit for the dtype; nullptr when
// the table has none (then the fp32 and bf16 rates are the peak).
const peak_unit* best_unit(const cpu_peak& p, const std::string& dtype);
// The documented FLOP per cycle and core of a unit on a CPU: 0 and the reason when not in the
// table. `vendor`: "GenuineIntel" | "AuthenticAMD"; family as CPUID reports it (extended included).
struct documented_rate {
  double flop_per_cycle_core = 0;
  std::string why_not;
};
documented_rate documented_flop_per_cycle(const std::string& vendor, int family,
                                          const std::string& dtype, const std::string& unit);

// Probes the peak on `threads` threads (0: every logical core), with the load while it ran from
// `read_state` before and after (the machine's own by default; tests give theirs).
cpu_peak measure_cpu_peak(int threads = 0,
                          const std::function<machine_state()>& read_state = read_machine_state);

// The higher of two peaks: per dtype and unit the higher rate; the date and load of the higher
// fp32 probe; b's word on AMX (b is the newer).
// A loaded probe above a quiet one makes the result not quiet: no % of peak rather than a guess.
cpu_peak highest_of(const cpu_peak& a, const cpu_peak& b);

// The cache file and the probe, apart from the process's memory (resolve_cpu_peak's inputs).
struct peak_cache {
  std::filesystem::path file; // peak.json
  std::string cpu_model;      // an entry for another CPU or core count is not used
  int threads = 0;
  std::function<cpu_peak(int threads)> probe; // measure_cpu_peak in use
  // The units this CPU's probe measures ("bf16 (amx)"): an entry without one of them (written by
  // an older accelbench, or before the unit was usable) is probed again, with a note.
  std::vector<std::string> units = {};
};

enum class probe_when {
  if_unknown, // only when the cache has no quiet entry for this CPU
  again,      // always (env --reprobe; a run beat the peak on record)
};

// The cache's rule: returns the quiet cached entry when `when` allows; otherwise probes, writes
// the cache when that probe was quiet (the highest of it and the quiet cached entry), and returns
// the highest of `known` (what this process used so far), the cached entry and the new probe.
cpu_peak resolve_cpu_peak(const peak_cache& c, probe_when when,
                          const std::optional<cpu_peak>& known = std::nullopt);

// The cache file and probe cached_cpu_peak uses from now on, in place of the machine's (tests: a
// given peak that a run must beat); forgets the peak this process knew. nullopt: the machine's.
void use_peak_cache(std::optional<peak_cache> c);

// This machine's peak through the cache (~/.cache/accelbench/peak.json or $ACCELBENCH_CACHE_DIR),
// kept for the process. `remeasure` probes again (accelbench env --reprobe).
cpu_peak cached_cpu_peak(bool remeasure = false);
// A run beat the peak on record: probes again, once per process (a kernel that beats a fresh
// probe too uses units the probe does not measure, and probing for every run would cost a second
// each), and returns the highest peak known.
cpu_peak cpu_peak_after_beaten();
// Peak for a dtype ("fp32", "bf16", "fp16", "int8"): the table's highest trustworthy unit for it
// (AMX for bf16 where the CPU has it); falls back to fp32 when the dtype has none.
double peak_tflops_for(const cpu_peak& p, const std::string& dtype);

// Empty when `tflops` is at most `peak_tflops` x (1 + k_peak_margin), or the peak is unknown
// (<= 0, not finite). Otherwise the reason, naming both rates and the peak:
// "1650 TFLOP/s is 167% of the 989 TFLOP/s peak (NVIDIA datasheet, bf16 dense): more than 5%
// above the peak, which no clock variation explains".
std::string above_peak_reason(double tflops, double peak_tflops, const std::string& peak_what);

} // namespace accelbench
