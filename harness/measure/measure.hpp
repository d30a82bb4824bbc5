#pragma once
// Kernel measurement through Google Benchmark's runner: RegisterBenchmark with the ruleset's
// fixed iterations and repetitions, our BenchmarkReporter as the display reporter turning each
// repetition into one stored sample, UseManualTime when the kernel times itself (device timers).
#include <functional>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench::measure {

// One batch of the warm-up: `iterations` back to back, timed together (seconds in all).
struct warmup_batch {
  double seconds = 0;
  int64_t iterations = 1;
  double per_iteration() const { return seconds / (double)(iterations > 0 ? iterations : 1); }
};

// One kernel instance, set up for one config. The harness owns the loop and the timer.
class kernel {
public:
  virtual ~kernel() = default;
  // Runs one iteration (host timing: the harness times the call).
  virtual void run() = 0;
  // Device timing: run `iterations` iterations and return their elapsed seconds measured by the
  // device (CUDA events). Only called when manual_timing() is true.
  virtual bool manual_timing() const { return false; }
  virtual double run_timed(int64_t iterations) { return 0; }
  // Cold cache policy: evict what the previous iteration left in cache. The default flushes the
  // CPU's last-level cache by streaming through a buffer twice its size.
  virtual void flush_cache();
  // Per-sample facts (SM clock, throttle flag) recorded after each sample.
  virtual json sample_extra() { return json::object(); }
  // Whether the kernel has warmed up: after the ruleset's warm-up the harness keeps warming up
  // while this says no, in batches of at least k_steady_batch_s, for at most the ruleset's
  // max_steady_warmup_s. `recent` holds the warm-up batches so far, newest last. A GPU kernel
  // waits for its batch times to settle (batches_settled; a fixed 20 ms is too short for GPU
  // boost clocks); CPU kernels are steady after the ruleset's warm-up.
  virtual bool steady(const std::vector<warmup_batch>& recent) { return true; }
};

// The default bound on the extra warm-up of kernel::steady (measurement_settings
// max_steady_warmup_s): a kernel that never settles is measured anyway after this long, and the
// run records that it did not settle (effective.warmup).
inline constexpr double k_max_steady_warmup_s = measurement_settings{}.max_steady_warmup_s;

// The shortest warm-up batch whose time steadiness is judged on: CUDA events resolve about
// 0.5 us, so single launches of a 5-20 us kernel cannot agree within a few per cent; batches of
// a millisecond or more can.
inline constexpr double k_steady_batch_s = 1e-3;

// True when the last `window` values all lie within `tolerance` (relative) of their median;
// false when there are fewer than `window` values.
bool settled(const std::vector<double>& values, size_t window, double tolerance);

// The steadiness rule of device kernels, its one home: the last `window` warm-up batches each
// lasted at least `min_batch_s` and their times per iteration agree within `tolerance` of their
// median. Shorter batches never count: their spread is the timer's, not the kernel's.
struct steadiness_rule {
  size_t window = 5;
  double tolerance = 0.03;
  double min_batch_s = k_steady_batch_s;
};
bool batches_settled(const std::vector<warmup_batch>& recent, const steadiness_rule& rule = {});

struct result {
  std::vector<sample> samples;              // seconds per iteration, one per repetition
  json effective = json::object();          // iterations and repetitions actually used
  std::string error;                        // non-empty when the runner reported an error
  std::vector<std::string> invalid_reasons; // rules the samples broke (too short, over max_time_s)
};

// Measures `k` under `m`. After the warm-up, iterations per sample: m.iterations, or (when 0)
// enough for a sample to last m.min_time_s, from a steady estimate (batches growing tenfold); when
// a sample still comes out shorter than min_time_s, the samples are taken again once with the
// count recalibrated from them, and a run whose samples stay short is INVALID. Repetitions are
// reduced when they would exceed m.max_time_s (never below 3, recorded in `effective`); samples
// that would start after max_time_s are not taken and make the run INVALID. Warm-up and
// calibration are not counted in max_time_s.
result run_kernel(const std::string& name, kernel& k, const measurement_settings& m);

// Measures `k` and records the outcome in `out`: the samples (seconds per iteration, lower is
// better) and the settings actually applied, or the runner's error as a failed run. Returns false
// when the run failed. The one way kernel workloads turn a measurement into a run.
bool measure_into(run& out, const std::string& name, kernel& k, const measurement_settings& m);

// Flushes the last-level cache of the CPU (used by kernel::flush_cache and tests).
void flush_cpu_cache();

} // namespace accelbench::measure
