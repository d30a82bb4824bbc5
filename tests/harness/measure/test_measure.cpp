// harness/measure: how samples are timed for device-timed (manual) kernels, and that a kernel
// throwing inside a sample leaves Google Benchmark clean for the next measurement.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "harness/core/error.hpp"
#include "harness/measure/measure.hpp"

using namespace accelbench;

namespace {
// A kernel timed "on the device": run_timed(n) reports n milliseconds and counts its calls.
struct fake_device_kernel : measure::kernel {
  int64_t timed_calls = 0, timed_iterations = 0, flushes = 0, runs = 0;
  int64_t throw_on_call = -1; // run_timed call number that throws (-1: never)
  void run() override { ++runs; }
  bool manual_timing() const override { return true; }
  double run_timed(int64_t n) override {
    if (timed_calls++ == throw_on_call)
      throw backend_error("device error in sample");
    timed_iterations += n;
    return double(n) * 1e-3;
  }
  void flush_cache() override { ++flushes; }
};
measurement_settings fixed(int64_t iterations, int64_t reps, cache_policy c) {
  measurement_settings m;
  m.iterations = iterations;
  m.repetitions = reps;
  m.warmup_iterations = 1;
  m.cache = c;
  return m;
}
} // namespace

TEST_CASE("device-timed kernels: hot samples are one timed span, cold ones one per iteration",
          "[measure]") {
  SECTION("hot") {
    fake_device_kernel k;
    auto r = measure::run_kernel("hot", k, fixed(5, 3, cache_policy::hot));
    REQUIRE(r.samples.size() == 3);
    for (auto& s : r.samples)
      CHECK(s.value == Approx(1e-3)); // seconds per iteration
    // One warm-up iteration, then one event pair per sample, not per iteration.
    CHECK(k.timed_calls == 1 + 3);
    CHECK(k.timed_iterations == 1 + 15);
    CHECK(k.flushes == 0);
  }
  SECTION("cold") {
    fake_device_kernel k;
    auto r = measure::run_kernel("cold", k, fixed(5, 3, cache_policy::cold));
    REQUIRE(r.samples.size() == 3);
    for (auto& s : r.samples)
      CHECK(s.value == Approx(1e-3));
    CHECK(k.timed_calls == 1 + 15); // each iteration timed alone, after its flush
    CHECK(k.flushes == 1 + 15);
  }
}

TEST_CASE("a kernel that throws inside a sample leaves the runner clean", "[measure]") {
  fake_device_kernel bad;
  bad.throw_on_call = 2; // call 0 is the warm-up; the second sample fails
  CHECK_THROWS_WITH(measure::run_kernel("bad", bad, fixed(2, 4, cache_policy::hot)),
                    Catch::Contains("device error in sample"));
  CHECK(bad.timed_calls == 3); // no further repetition ran after the failure
  // The next measurement runs its own benchmark only (the failed one was unregistered).
  fake_device_kernel good;
  auto r = measure::run_kernel("good", good, fixed(2, 3, cache_policy::hot));
  CHECK(r.samples.size() == 3);
  CHECK(good.timed_calls == 1 + 3);
}

namespace {
// A device-timed kernel whose time per iteration follows a script: `slow_calls` first run_timed
// calls take `slow` seconds per iteration, later ones `fast` (a kernel that is slow until its
// caches, pages or JIT are warm), optionally getting `speedup` times faster on every later call.
struct scripted_kernel : measure::kernel {
  int64_t calls = 0, slow_calls = 1;
  double slow = 12.7e-3, fast = 10e-6, speedup = 1;
  bool manual_timing() const override { return true; }
  void run() override {}
  double run_timed(int64_t n) override {
    double per = calls < slow_calls ? slow : fast;
    if (calls >= slow_calls)
      fast /= speedup;
    ++calls;
    return per * (double)n;
  }
};
measurement_settings auto_iterations(double min_time_s, int64_t reps) {
  measurement_settings m;
  m.iterations = 0;
  m.repetitions = reps;
  m.min_time_s = min_time_s;
  m.warmup_iterations = 1;
  return m;
}
} // namespace

TEST_CASE("iterations per sample come from a steady estimate, not one slow warm-up iteration",
          "[measure]") {
  // One 12.7 ms first iteration, then 10 µs: samples must still last min_time_s (20 ms). A count
  // taken from the warm-up alone gives 2 iterations and 0.02 ms samples.
  scripted_kernel k;
  auto r = measure::run_kernel("steady", k, auto_iterations(0.02, 5));
  REQUIRE(r.samples.size() == 5);
  for (const auto& s : r.samples)
    CHECK(s.value * (double)s.iterations >= 0.02);
  CHECK(r.invalid_reasons.empty());
  CHECK(r.effective["iterations_per_sample"].get<int64_t>() >= 2000);
}

TEST_CASE("a sample shorter than min_time_s triggers one recalibration", "[measure]") {
  // Calibration sees 1 ms per iteration, the samples 0.1 ms: the first pass is short.
  scripted_kernel k;
  k.slow_calls = 5; // warm-up, the calibration batches (1 and 10 iterations) and their 2 repeats
  k.slow = 1e-3;
  k.fast = 1e-4;
  auto r = measure::run_kernel("drift", k, auto_iterations(0.02, 3));
  REQUIRE(r.samples.size() == 3);
  CHECK(r.effective.contains("recalibrated"));
  for (const auto& s : r.samples)
    CHECK(s.value * (double)s.iterations >= 0.02);
  CHECK(r.invalid_reasons.empty());
}

TEST_CASE("samples that stay shorter than min_time_s make the run INVALID", "[measure]") {
  // Every call twice as fast as the one before: no calibration can keep up.
  scripted_kernel k;
  k.slow_calls = 0;
  k.fast = 1e-3;
  k.speedup = 2;
  auto r = measure::run_kernel("unsteady", k, auto_iterations(0.02, 4));
  REQUIRE_FALSE(r.invalid_reasons.empty());
  CHECK_THAT(r.invalid_reasons.front(), Catch::Contains("less than min_time_s"));
  run out;
  scripted_kernel k2 = scripted_kernel{};
  k2.slow_calls = 0;
  k2.fast = 1e-3;
  k2.speedup = 2;
  REQUIRE(measure::measure_into(out, "unsteady", k2, auto_iterations(0.02, 4)));
  CHECK_FALSE(out.valid);
}

TEST_CASE("max_time_s bounds the samples: later repetitions are not taken and the run is INVALID",
          "[measure][timing]") {
  // Each sample sleeps at least 0.3 s (a sleep never returns early), max_time_s is 0.5: the
  // repetitions are reduced to 3 (never fewer), and the third would start at least 0.6 s in,
  // after the bound: it is never taken. The first two start before the bound unless a busy
  // machine delays the process by 0.5 s or, for the second, the first sleep by 0.2 s: 1 or 2 are
  // taken, and the reason names that count.
  struct sleepy : measure::kernel {
    void run() override { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }
  } k;
  measurement_settings m;
  m.iterations = 1;
  m.repetitions = 10;
  m.warmup_iterations = 0;
  m.max_time_s = 0.5;
  auto r = measure::run_kernel("sleepy", k, m);
  CHECK(r.effective["repetitions"] == 3);
  const size_t taken = r.samples.size();
  CHECK(taken >= 1);
  CHECK(taken < 3);
  REQUIRE(r.invalid_reasons.size() == 1);
  CHECK_THAT(r.invalid_reasons[0],
             Catch::Contains("max_time_s=0.5") && Catch::Contains(std::to_string(taken) + " of 3"));
}

TEST_CASE("settled: the last window values within a relative tolerance of their median",
          "[measure]") {
  CHECK_FALSE(measure::settled({1.0, 1.0}, 3, 0.01));         // too few values
  CHECK(measure::settled({5.0, 1.0, 1.005, 0.998}, 3, 0.01)); // the old 5.0 is outside the window
  CHECK_FALSE(measure::settled({1.0, 1.0, 1.05}, 3, 0.01));
  CHECK(measure::settled({1.0, 1.0, 1.05}, 3, 0.06));
  CHECK_FALSE(measure::settled({1.0}, 0, 0.5));
}

namespace {
// Steady only after `unsteady` calls of steady() (a GPU whose clock is still ramping up).
struct warming_kernel : fake_device_kernel {
  int64_t unsteady = 0, asked = 0;
  size_t last_recent = 0;
  bool steady(const std::vector<measure::warmup_batch>& recent) override {
    last_recent = recent.size();
    return ++asked > unsteady;
  }
};
} // namespace

TEST_CASE("the warm-up goes on until the kernel is steady and records how long it took",
          "[measure][timing]") {
  warming_kernel k;
  k.unsteady = 7;
  auto m = fixed(2, 3, cache_policy::hot);
  // Only the steadiness rule ends this warm-up: the wall-clock cap (3 s by default, a few
  // microseconds of fake batches needed here) is lifted out of reach of a preempted process.
  m.max_steady_warmup_s = 600;
  auto r = measure::run_kernel("warming", k, m);
  REQUIRE(r.samples.size() == 3);
  CHECK(k.asked == 8);
  CHECK(k.last_recent == 8); // one ruleset warm-up iteration + 7 more batches
  // The fake kernel's iterations last 1 ms: every steady-phase batch is two (1.25 ms wanted).
  CHECK(r.effective["warmup"]["iterations"].get<int64_t>() == 1 + 7 * 2);
  CHECK(r.effective["warmup"]["batches"].get<int64_t>() == 8);
  CHECK(r.effective["warmup"]["steady"].get<bool>());
}

TEST_CASE("a kernel that never settles is measured after the bounded warm-up, marked not steady",
          "[measure][timing]") {
  warming_kernel k;
  k.unsteady = std::numeric_limits<int64_t>::max();
  auto m = fixed(2, 3, cache_policy::hot);
  // The bound comes from the ruleset (max_steady_warmup_s): tests make it short.
  ruleset rs;
  rs.doc = json::parse(R"({"measurement": {"max_steady_warmup_s": 0.25}})");
  m.max_steady_warmup_s = rs.measurement().max_steady_warmup_s;
  REQUIRE(m.max_steady_warmup_s == 0.25);
  auto r = measure::run_kernel("never steady", k, m);
  REQUIRE(r.samples.size() == 3);
  CHECK_FALSE(r.effective["warmup"]["steady"].get<bool>());
  const double s = r.effective["warmup"]["seconds"].get<double>();
  CHECK(s >= 0.25);
  // Hang guard only: the warm-up ends after the batch (a few fake 1 ms iterations, timed in
  // microseconds) during which the cap passed; 30 s is far above that on any machine.
  CHECK(s < 0.25 + 30.0);
  CHECK(ruleset{}.measurement().max_steady_warmup_s == measure::k_max_steady_warmup_s);
}

namespace {
measure::warmup_batch batch_of(double seconds, int64_t n) { return {seconds, n}; }
} // namespace

TEST_CASE("steadiness is judged on warm-up batches of at least 1 ms, never on single short "
          "launches",
          "[measure]") {
  // A 5 us kernel timed launch by launch: CUDA events resolve ~0.5 us, so its single times
  // spread by 10% and can never agree within 3%, however warm the GPU is.
  std::vector<measure::warmup_batch> singles;
  for (int i = 0; i < 8; ++i)
    singles.push_back(batch_of(5e-6 + 0.5e-6 * (i % 3 - 1), 1));
  CHECK_FALSE(measure::batches_settled(singles));
  // Even singles that happen to agree do not count: they are shorter than the batch floor.
  CHECK_FALSE(measure::batches_settled(std::vector<measure::warmup_batch>(8, batch_of(5e-6, 1))));
  // The same kernel in batches of 250 launches (1.25 ms): the timer's 0.5 us is 0.04%.
  std::vector<measure::warmup_batch> batches;
  for (int i = 0; i < 5; ++i)
    batches.push_back(batch_of(250 * 5e-6 + 0.5e-6 * (i % 3 - 1), 250));
  CHECK(measure::batches_settled(batches));
  // A batch just short of 1 ms inside the window: not judged.
  auto short_one = batches;
  short_one[1] = batch_of(0.999e-3, 200);
  CHECK_FALSE(measure::batches_settled(short_one));
  // A batch 5% slower inside the window (a clock still ramping up): not steady.
  auto slow = batches;
  slow[2].seconds *= 1.05;
  CHECK_FALSE(measure::batches_settled(slow));
  // ...until 5 agreeing batches follow it.
  for (int i = 0; i < 5; ++i)
    slow.push_back(batch_of(1.25e-3, 250));
  CHECK(measure::batches_settled(slow));
  // Fewer batches than the window: not yet.
  batches.pop_back();
  CHECK_FALSE(measure::batches_settled(batches));
  // Times per iteration are compared, so batches of different sizes agree when the kernel does.
  CHECK(measure::batches_settled({batch_of(1e-3, 200), batch_of(2e-3, 400), batch_of(1e-3, 200),
                                  batch_of(1.5e-3, 300), batch_of(1e-3, 200)}));
}

namespace {
// A 5 us kernel whose device timer jitters by +-0.5 us per timed span, steady as the device
// kernel judges it (measure::batches_settled).
struct short_device_kernel : measure::kernel {
  int64_t spans = 0;
  void run() override {}
  bool manual_timing() const override { return true; }
  double run_timed(int64_t n) override {
    return double(n) * 5e-6 + 0.5e-6 * double(spans++ % 3 - 1);
  }
  bool steady(const std::vector<measure::warmup_batch>& recent) override {
    return measure::batches_settled(recent);
  }
};
} // namespace

TEST_CASE("a 5 us kernel settles within a few 1 ms batches instead of spending the warm-up cap",
          "[measure][timing]") {
  short_device_kernel k;
  auto m = fixed(10, 3, cache_policy::hot);
  // The batch count shows the warm-up's length; the wall-clock cap is lifted out of reach of a
  // preempted process, so that only the steadiness rule can end it.
  m.max_steady_warmup_s = 600;
  auto r = measure::run_kernel("short", k, m);
  REQUIRE(r.samples.size() == 3);
  const auto& w = r.effective["warmup"];
  INFO(w.dump());
  CHECK(w["steady"].get<bool>());
  // One ruleset iteration, one batch sized from it, then the 5 agreeing batches of >= 1 ms.
  CHECK(w["batches"].get<int64_t>() <= 8);
  CHECK(w["iterations"].get<int64_t>() >= 5 * 200);
  // Its wall-clock seconds are the machine's, not the rule's: not asserted.
}
