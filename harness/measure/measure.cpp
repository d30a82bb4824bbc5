#include "harness/measure/measure.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

namespace accelbench::measure {

namespace {

using clk = std::chrono::steady_clock;

size_t llc_bytes() {
  // The largest cache level sysfs reports for cpu0; 32 MiB when unknown.
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
    std::string s;
    if (!(in >> s)) continue;
    size_t mult = 1;
    if (s.back() == 'K') mult = 1024;
    if (s.back() == 'M') mult = 1024 * 1024;
    try {
      size_t v = std::stoull(s) * mult;
      best = std::max(best, v);
    } catch (...) {
    }
  }
  return best ? best : (size_t)32 << 20;
}

// Our display reporter (Google Benchmark's BenchmarkReporter): every repetition of the one
// registered benchmark becomes one sample; aggregates are ignored because the harness computes
// its own statistics from the raw samples.
class sample_reporter : public benchmark::BenchmarkReporter {
public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      if (r.error_occurred) {
        error = r.error_message;
        continue;
      }
      sample s;
      s.index = (int64_t)samples.size();
      s.iterations = (int64_t)r.iterations;
      s.value = r.real_accumulated_time / (double)r.iterations;  // seconds per iteration
      samples.push_back(std::move(s));
    }
  }
  std::vector<sample> samples;
  std::string error;
};

std::mutex g_runner_mutex;  // Google Benchmark's registry is global

} // namespace

void flush_cpu_cache() {
  static std::vector<char> buf(2 * llc_bytes());
  static unsigned char salt = 1;
  // Writing a buffer twice the last-level cache evicts the kernel's working set.
  std::fill(buf.begin(), buf.end(), (char)salt++);
  benchmark::DoNotOptimize(buf.data());
  benchmark::ClobberMemory();
}

void kernel::flush_cache() { flush_cpu_cache(); }

result run_kernel(const std::string& name, kernel& k, const measurement_settings& m) {
  std::lock_guard lock(g_runner_mutex);
  result res;
  const bool cold = m.cache == cache_policy::cold;

  // Warm-up (untimed for the samples): at least warmup_iterations and min_warmup_time_s. It also
  // estimates the time per iteration used to choose iterations per sample.
  double per_iter = 0;
  {
    int64_t n = 0;
    double total = 0;
    auto start = clk::now();
    while (n < std::max<int64_t>(1, m.warmup_iterations) ||
           std::chrono::duration<double>(clk::now() - start).count() < m.min_warmup_time_s) {
      if (cold) k.flush_cache();
      double dt;
      if (k.manual_timing()) {
        dt = k.run_timed(1);
      } else {
        auto t0 = clk::now();
        k.run();
        dt = std::chrono::duration<double>(clk::now() - t0).count();
      }
      total += dt;
      ++n;
      if (n > 1000000) break;
    }
    per_iter = total / (double)n;
  }

  int64_t iters = m.iterations;
  if (iters <= 0)
    iters = std::max<int64_t>(1, (int64_t)std::ceil(m.min_time_s / std::max(per_iter, 1e-9)));
  int64_t reps = m.repetitions;
  double projected = per_iter * (double)iters * (double)reps;
  bool reduced = false;
  if (projected > m.max_time_s && reps > 3) {
    reps = std::max<int64_t>(3, (int64_t)std::floor(m.max_time_s / (per_iter * (double)iters)));
    reduced = true;
  }

  std::vector<json> extras;
  // Every sample is timed by us and handed to Google Benchmark as manual time: device timers for
  // GPU kernels, steady_clock around the kernel loop for host kernels. Google Benchmark's own
  // timer also reads the process CPU clock at every start and stop, which costs about a
  // microsecond in a VM; two steady_clock reads per sample cost a few tens of nanoseconds.
  // An exception inside a sample (a device error, say) must not escape Google Benchmark: the
  // benchmark would stay registered and the next measurement would run it again over a kernel
  // that no longer exists. It ends the benchmark as an error and is rethrown once GB is clean.
  std::exception_ptr failure;
  auto body = [&k, cold, &extras, &failure](benchmark::State& st) {
    if (failure) {
      st.SkipWithError("an earlier repetition failed");
      for (auto _ : st) {
      }
      return;
    }
    try {
      if (k.manual_timing() && cold) {
        // Device timers, cold: the flush is enqueued before the start event, one iteration per
        // timed span.
        for (auto _ : st) {
          k.flush_cache();
          st.SetIterationTime(k.run_timed(1));
        }
      } else if (k.manual_timing()) {
        // Device timers, hot: all iterations of the sample back to back between one pair of
        // events (per-iteration events would time the host's launch latency too), booked on the
        // last iteration as below.
        const auto n = st.max_iterations;
        benchmark::IterationCount i = 0;
        for (auto _ : st)
          if (++i == n) st.SetIterationTime(k.run_timed(n));
      } else if (cold) {
        // The flush runs between iterations, outside the timed span.
        for (auto _ : st) {
          k.flush_cache();
          auto t0 = clk::now();
          k.run();
          st.SetIterationTime(std::chrono::duration<double>(clk::now() - t0).count());
        }
      } else {
        // Hot: back to back; one timed span over all iterations of the sample (the manual times
        // of a sample add up, so the span is booked on the last iteration).
        const auto n = st.max_iterations;
        benchmark::IterationCount i = 0;
        clk::time_point t0;
        for (auto _ : st) {
          if (i == 0) t0 = clk::now();  // after Google Benchmark started its own (unused) timer
          k.run();
          if (++i == n) st.SetIterationTime(std::chrono::duration<double>(clk::now() - t0).count());
        }
      }
      extras.push_back(k.sample_extra());
    } catch (const std::exception& e) {
      failure = std::current_exception();
      st.SkipWithError(e.what());
    }
  };
  auto* b = benchmark::RegisterBenchmark(name.c_str(), body);
  b->Iterations(iters)->Repetitions((int)reps)->ReportAggregatesOnly(false);
  b->UseManualTime();
  b->Unit(benchmark::kSecond);

  sample_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::ClearRegisteredBenchmarks();
  if (failure) std::rethrow_exception(failure);

  for (size_t i = 0; i < rep.samples.size() && i < extras.size(); ++i)
    if (!extras[i].empty()) rep.samples[i].extra = extras[i];
  res.samples = std::move(rep.samples);
  res.error = rep.error;
  res.effective = {{"iterations_per_sample", iters},
                   {"repetitions", reps},
                   {"warmup_time_per_iteration_s", per_iter},
                   {"cache", to_string(m.cache)},
                   {"timer", k.manual_timing() ? "device events (manual time)" : "host steady_clock (manual time)"}};
  if (reduced)
    res.effective["repetitions_reduced"] =
        fmt::format("from {} to {} to stay within max_time_s={}", m.repetitions, reps, m.max_time_s);
  return res;
}

bool measure_into(run& out, const std::string& name, kernel& k, const measurement_settings& m) {
  auto res = run_kernel(name, k, m);
  if (!res.error.empty()) {
    out.mark_failed(res.error);
    return false;
  }
  out.samples = std::move(res.samples);
  out.sample_unit = "s";
  out.sample_dir = direction::lower_is_better;
  out.effective_settings["measurement_applied"] = res.effective;
  return true;
}

} // namespace accelbench::measure
