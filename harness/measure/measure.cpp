#include "harness/measure/measure.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/dist/dist.hpp"

namespace accelbench::measure {

namespace {

using clk = std::chrono::steady_clock;

size_t llc_bytes() {
  // The largest cache level sysfs reports for cpu0; 32 MiB when unknown.
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
    std::string s;
    if (!(in >> s))
      continue;
    size_t mult = 1;
    if (s.back() == 'K')
      mult = 1024;
    if (s.back() == 'M')
      mult = size_t(1024) * 1024;
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
      if (r.run_type != Run::RT_Iteration)
        continue;
      if (r.error_occurred) {
        error = r.error_message;
        continue;
      }
      sample s;
      s.index = (int64_t)samples.size();
      s.iterations = (int64_t)r.iterations;
      s.value = r.real_accumulated_time / (double)r.iterations; // seconds per iteration
      samples.push_back(std::move(s));
    }
  }
  std::vector<sample> samples;
  std::string error;
};

std::mutex g_runner_mutex; // Google Benchmark's registry is global

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

namespace {

// Seconds that `n` iterations of `k` take on this rank, timed as a sample would be (the flushes
// of a cold run stay outside the timed span).
double time_batch_here(kernel& k, int64_t n, bool cold) {
  if (k.manual_timing() && !cold)
    return k.run_timed(n);
  double total = 0;
  if (cold) {
    for (int64_t i = 0; i < n; ++i) {
      k.flush_cache();
      if (k.manual_timing()) {
        total += k.run_timed(1);
      } else {
        auto t0 = clk::now();
        k.run();
        total += seconds_since(t0);
      }
    }
    return total;
  }
  auto t0 = clk::now();
  for (int64_t i = 0; i < n; ++i)
    k.run();
  return seconds_since(t0);
}

// Seconds that `n` iterations take on the slowest rank: every decision taken from a time (warm-up
// length, iterations per sample, repetitions) is then the same on every rank, which keeps the
// ranks of a collective in step. The local time at world size 1.
double time_batch(kernel& k, int64_t n, bool cold) {
  return dist::max_all(time_batch_here(k, n, cold));
}

// Warm-up (untimed for the samples): at least warmup_iterations and min_warmup_time_s, one
// iteration at a time, then on while the kernel is not steady (bounded by max_steady_warmup_s),
// in batches sized to last at least k_steady_batch_s.
struct warmup_result {
  double last = 0; // seconds per iteration of the last warm-up batch (the warmest one)
  int64_t iterations = 0;
  int64_t batches = 0;
  double seconds = 0;
  bool steady = true;
};

// Iterations of the next steady-phase batch: enough for 1.25 x k_steady_batch_s at the last
// batch's time per iteration, so that timer jitter does not leave a batch just short of the floor
// (the same on every rank: the times are the slowest rank's).
int64_t steady_batch_size(double per_iteration) {
  if (per_iteration <= 0)
    return 1;
  const double n = std::ceil(1.25 * k_steady_batch_s / per_iteration);
  return std::clamp<int64_t>((int64_t)n, 1, (int64_t)1e9);
}

warmup_result warm_up(kernel& k, const measurement_settings& m, bool cold) {
  warmup_result w;
  std::vector<warmup_batch> recent;
  auto start = clk::now();
  auto batch = [&](int64_t n) {
    const warmup_batch b{time_batch(k, n, cold), n};
    w.last = b.per_iteration();
    if (recent.size() >= 256)
      recent.erase(recent.begin(), recent.begin() + 128); // the newest suffice
    recent.push_back(b);
    w.iterations += n;
    ++w.batches;
  };
  // Ranks go on while any of them wants more (the same count everywhere).
  while (dist::any(w.iterations <= 1000000 &&
                   (w.iterations < std::max<int64_t>(1, m.warmup_iterations) ||
                    seconds_since(start) < m.min_warmup_time_s))) {
    batch(1);
  }
  const double ruleset_s = seconds_since(start);
  auto wants_more = [&] {
    w.steady = k.steady(recent);
    return !w.steady && seconds_since(start) - ruleset_s < m.max_steady_warmup_s;
  };
  while (dist::any(wants_more()))
    batch(steady_batch_size(w.last));
  w.seconds = seconds_since(start);
  return w;
}

// Samples aim this far above min_time_s, so that ordinary run-to-run variation does not make one
// come out short.
constexpr double k_calibration_margin = 1.25;

// Iterations per sample so that a sample lasts min_time_s, from a steady estimate: batches grow
// tenfold until one lasts a tenth of min_time_s (the first iterations after the warm-up can still
// be slow — page faults, library JIT — and one of them must not set the count for the run). Also
// returns the steady seconds per iteration.
std::pair<int64_t, double> calibrate(kernel& k, const measurement_settings& m, bool cold) {
  int64_t n = 1;
  double per_iter = 0;
  for (int step = 0; step < 12; ++step) {
    const double t = time_batch(k, n, cold);
    per_iter = t / (double)n;
    if (t >= m.min_time_s / 10 || n >= (int64_t)1e9)
      break;
    n *= 10;
  }
  // The fastest of three batches: a batch the scheduler preempted overstates the time per
  // iteration (and so understates the iterations a sample needs); nothing makes one faster.
  for (int again = 0; again < 2; ++again)
    per_iter = std::min(per_iter, time_batch(k, n, cold) / (double)n);
  const double want = k_calibration_margin * m.min_time_s / std::max(per_iter, 1e-12);
  return {std::clamp<int64_t>((int64_t)std::ceil(want), 1, (int64_t)1e12), per_iter};
}

// What one pass of Google Benchmark's runner produced.
struct pass_result {
  std::vector<sample> samples; // across ranks: each sample is the slowest rank's
  std::string error;
  int64_t cut = 0; // repetitions not taken because max_time_s was reached
};

// The error Google Benchmark reports for a repetition not taken because max_time_s was reached.
constexpr const char* k_time_up = "max_time_s reached";

// What the repetitions of one pass leave behind for run_samples, besides Google Benchmark's
// samples.
struct pass_state {
  std::vector<json> extras; // per sample, the kernel's sample_extra()
  std::vector<std::vector<double>>
      rank_seconds; // per sample, every rank's seconds (world size > 1)
  std::exception_ptr failure;
  int64_t cut = 0;
  clk::time_point started = clk::now();
};

// Across ranks, whether to take a sample is agreed: a failure or max_time_s on any rank stops all.
// A repetition not taken is ended as an error with no iterations timed.
bool skip_repetition(benchmark::State& st, const measurement_settings& m, pass_state& ps) {
  const bool failed = dist::any(ps.failure != nullptr);
  if (!failed && !dist::any(seconds_since(ps.started) > m.max_time_s))
    return false;
  if (!failed)
    ++ps.cut;
  st.SkipWithError(failed ? "an earlier repetition failed (on this or another rank)" : k_time_up);
  for (auto _ : st) {
  }
  return true;
}

// The iterations of one sample, each span of time booked as it is measured.
template <class Book>
inline void time_iterations(benchmark::State& st, kernel& k, bool cold, const Book& book) {
  if (k.manual_timing() && cold) {
    // Device timers, cold: the flush is enqueued before the start event, one iteration per
    // timed span.
    for (auto _ : st) {
      k.flush_cache();
      book(k.run_timed(1));
    }
  } else if (k.manual_timing()) {
    // Device timers, hot: all iterations of the sample back to back between one pair of
    // events (per-iteration events would time the host's launch latency too), booked on the
    // last iteration as below.
    const auto n = st.max_iterations;
    benchmark::IterationCount i = 0;
    for (auto _ : st)
      if (++i == n)
        book(k.run_timed(n));
  } else if (cold) {
    // The flush runs between iterations, outside the timed span.
    for (auto _ : st) {
      k.flush_cache();
      auto t0 = clk::now();
      k.run();
      book(seconds_since(t0));
    }
  } else {
    // Hot: back to back; one timed span over all iterations of the sample (the manual times
    // of a sample add up, so the span is booked on the last iteration).
    const auto n = st.max_iterations;
    benchmark::IterationCount i = 0;
    clk::time_point t0;
    for (auto _ : st) {
      if (i == 0)
        t0 = clk::now(); // after Google Benchmark started its own (unused) timer
      k.run();
      if (++i == n)
        book(seconds_since(t0));
    }
  }
}

// One repetition of the pass (Google Benchmark calls it once per sample). Every sample is timed
// by us and handed to Google Benchmark as manual time: device timers for GPU kernels,
// steady_clock around the kernel loop for host kernels. Google Benchmark's own timer also reads
// the process CPU clock at every start and stop, which costs about a microsecond in a VM; two
// steady_clock reads per sample cost a few tens of nanoseconds.
// An exception inside a sample (a device error, say) must not escape Google Benchmark: the
// benchmark would stay registered and the next measurement would run it again over a kernel
// that no longer exists. It ends the benchmark as an error and is rethrown once GB is clean.
// Across ranks each sample starts after a barrier, and its time is the slowest rank's (as a
// step of data-parallel training is); every rank's time is kept with the sample.
void take_sample(benchmark::State& st, kernel& k, const measurement_settings& m, pass_state& ps) {
  if (skip_repetition(st, m, ps))
    return;
  dist::barrier();
  double here = 0; // this rank's seconds for the sample
  auto book = [&](double t) {
    here += t;
    st.SetIterationTime(t);
  };
  try {
    time_iterations(st, k, m.cache == cache_policy::cold, book);
    ps.extras.push_back(k.sample_extra());
  } catch (const std::exception& e) {
    ps.failure = std::current_exception();
    st.SkipWithError(e.what());
  }
  if (dist::distributed())
    ps.rank_seconds.push_back(dist::gather_all(here));
}

// The kernel's extras and, across ranks, every rank's time per iteration go with each sample,
// whose value becomes the slowest rank's seconds per iteration.
void attach_pass_state(std::vector<sample>& samples, const pass_state& ps) {
  for (size_t i = 0; i < samples.size() && i < ps.extras.size(); ++i)
    if (!ps.extras[i].empty())
      samples[i].extra = ps.extras[i];
  for (size_t i = 0; i < samples.size() && i < ps.rank_seconds.size(); ++i) {
    auto& smp = samples[i];
    const double n = (double)smp.iterations;
    json per_rank = json::array();
    double slowest = 0;
    for (double t : ps.rank_seconds[i]) {
      per_rank.push_back(t / n);
      slowest = std::max(slowest, t);
    }
    smp.value = slowest / n; // seconds per iteration on the slowest rank
    smp.extra["rank_s"] = per_rank;
  }
}

// Runs `reps` samples of `iters` iterations through Google Benchmark's runner. Repetitions that
// would start after max_time_s has passed are not taken.
pass_result run_samples(const std::string& name, kernel& k, const measurement_settings& m,
                        int64_t iters, int64_t reps) {
  pass_state ps;
  auto* b = benchmark::RegisterBenchmark(name.c_str(),
                                         [&](benchmark::State& st) { take_sample(st, k, m, ps); });
  b->Iterations(iters)->Repetitions((int)reps)->ReportAggregatesOnly(false);
  b->UseManualTime();
  b->Unit(benchmark::kSecond);

  sample_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::ClearRegisteredBenchmarks();
  if (ps.failure)
    std::rethrow_exception(ps.failure);

  attach_pass_state(rep.samples, ps);
  pass_result out;
  out.samples = std::move(rep.samples);
  out.error = rep.error == k_time_up ? "" : rep.error;
  out.cut = ps.cut;
  return out;
}

// The shortest sample of a pass, in seconds (a sample's value is seconds per iteration).
double shortest_sample_s(const std::vector<sample>& samples) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& s : samples)
    best = std::min(best, s.value * (double)s.iterations);
  return best;
}

// Repetitions that fit in max_time_s at `per_iter` seconds per iteration (never below 3).
int64_t repetitions_within_bound(const measurement_settings& m, int64_t iters, double per_iter) {
  const double projected = per_iter * (double)iters * (double)m.repetitions;
  if (projected <= m.max_time_s || m.repetitions <= 3)
    return m.repetitions;
  return std::max<int64_t>(3, (int64_t)std::floor(m.max_time_s / (per_iter * (double)iters)));
}

// The rules a measurement must meet to be VALID: every sample at least min_time_s long (when the
// harness chose the iterations), and all samples within max_time_s.
void judge_samples(result& res, const measurement_settings& m, bool auto_iters, int64_t cut) {
  if (cut > 0)
    res.invalid_reasons.push_back(fmt::format("max_time_s={} s reached: {} of {} samples taken",
                                              m.max_time_s, res.samples.size(),
                                              res.samples.size() + (size_t)cut));
  if (!auto_iters)
    return;
  size_t short_samples = 0;
  for (const auto& s : res.samples)
    short_samples += s.value * (double)s.iterations < m.min_time_s;
  if (short_samples > 0)
    res.invalid_reasons.push_back(fmt::format(
        "{} of {} samples lasted less than min_time_s={} s (shortest {:.3g} s) "
        "after recalibrating: the time per iteration is not steady",
        short_samples, res.samples.size(), m.min_time_s, shortest_sample_s(res.samples)));
}

} // namespace

bool settled(const std::vector<double>& values, size_t window, double tolerance) {
  if (window == 0 || values.size() < window)
    return false;
  std::vector<double> last(values.end() - (std::ptrdiff_t)window, values.end());
  std::sort(last.begin(), last.end());
  const double med = last[last.size() / 2];
  for (double v : last)
    if (std::abs(v - med) > tolerance * std::abs(med))
      return false;
  return true;
}

bool batches_settled(const std::vector<warmup_batch>& recent, const steadiness_rule& rule) {
  if (rule.window == 0 || recent.size() < rule.window)
    return false;
  std::vector<double> per_iteration;
  for (auto it = recent.end() - (std::ptrdiff_t)rule.window; it != recent.end(); ++it) {
    if (it->seconds < rule.min_batch_s)
      return false;
    per_iteration.push_back(it->per_iteration());
  }
  return settled(per_iteration, rule.window, rule.tolerance);
}

result run_kernel(const std::string& name, kernel& k, const measurement_settings& m) {
  std::lock_guard lock(g_runner_mutex);
  result res;
  const bool cold = m.cache == cache_policy::cold;
  const bool auto_iters = m.iterations <= 0;

  const warmup_result w = warm_up(k, m, cold);
  double per_iter = w.last;
  int64_t iters = m.iterations;
  if (auto_iters)
    std::tie(iters, per_iter) = calibrate(k, m, cold);
  const int64_t reps = repetitions_within_bound(m, iters, per_iter);

  pass_result pass = run_samples(name, k, m, iters, reps);
  res.effective = {{"iterations_per_sample", iters},
                   {"repetitions", reps},
                   {"steady_time_per_iteration_s", per_iter},
                   {"warmup",
                    {{"iterations", w.iterations},
                     {"batches", w.batches},
                     {"seconds", w.seconds},
                     {"steady", w.steady}}},
                   {"cache", to_string(m.cache)},
                   {"timer", k.manual_timing() ? "device events (manual time)"
                                               : "host steady_clock (manual time)"}};
  // A sample shorter than min_time_s means the calibration was wrong (the kernel got faster):
  // calibrate again from the samples themselves and take them all again, once.
  if (auto_iters && pass.error.empty() && !pass.samples.empty() &&
      shortest_sample_s(pass.samples) < m.min_time_s) {
    const double shortest = shortest_sample_s(pass.samples);
    const int64_t before = iters;
    iters = (int64_t)std::ceil((double)iters * k_calibration_margin * m.min_time_s /
                               std::max(shortest, 1e-12));
    pass = run_samples(name, k, m, iters, reps);
    res.effective["iterations_per_sample"] = iters;
    res.effective["recalibrated"] =
        fmt::format("a sample lasted {:.3g} s < min_time_s={} s with {} iterations; "
                    "taken again with {}",
                    shortest, m.min_time_s, before, iters);
  }
  if (m.repetitions != reps)
    res.effective["repetitions_reduced"] = fmt::format("from {} to {} to stay within max_time_s={}",
                                                       m.repetitions, reps, m.max_time_s);
  res.samples = std::move(pass.samples);
  res.error = pass.error;
  judge_samples(res, m, auto_iters, pass.cut);
  return res;
}

bool measure_into(run& out, const std::string& name, kernel& k, const measurement_settings& m) {
  auto res = run_kernel(name, k, m);
  if (!res.error.empty()) {
    out.mark_failed(res.error);
    return false;
  }
  out.samples = std::move(res.samples);
  for (auto& reason : res.invalid_reasons)
    out.mark_invalid(std::move(reason));
  out.sample_unit = std::string("s"); // not = "s": GCC 12's false -Wrestrict (GCC bug 105329)
  out.sample_dir = direction::lower_is_better;
  out.effective_settings["measurement_applied"] = res.effective;
  return true;
}

} // namespace accelbench::measure
