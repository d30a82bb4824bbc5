// harness/measure: how samples are timed for device-timed (manual) kernels, and that a kernel
// throwing inside a sample leaves Google Benchmark clean for the next measurement.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "harness/core/error.hpp"
#include "harness/measure/measure.hpp"

using namespace accelbench;

namespace {
// A kernel timed "on the device": run_timed(n) reports n milliseconds and counts its calls.
struct fake_device_kernel : measure::kernel {
  int64_t timed_calls = 0, timed_iterations = 0, flushes = 0, runs = 0;
  int64_t throw_on_call = -1;  // run_timed call number that throws (-1: never)
  void run() override { ++runs; }
  bool manual_timing() const override { return true; }
  double run_timed(int64_t n) override {
    if (timed_calls++ == throw_on_call) throw backend_error("device error in sample");
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

TEST_CASE("device-timed kernels: hot samples are one timed span, cold ones one per iteration", "[measure]") {
  SECTION("hot") {
    fake_device_kernel k;
    auto r = measure::run_kernel("hot", k, fixed(5, 3, cache_policy::hot));
    REQUIRE(r.samples.size() == 3);
    for (auto& s : r.samples) CHECK(s.value == Approx(1e-3));  // seconds per iteration
    // One warm-up iteration, then one event pair per sample, not per iteration.
    CHECK(k.timed_calls == 1 + 3);
    CHECK(k.timed_iterations == 1 + 15);
    CHECK(k.flushes == 0);
  }
  SECTION("cold") {
    fake_device_kernel k;
    auto r = measure::run_kernel("cold", k, fixed(5, 3, cache_policy::cold));
    REQUIRE(r.samples.size() == 3);
    for (auto& s : r.samples) CHECK(s.value == Approx(1e-3));
    CHECK(k.timed_calls == 1 + 15);     // each iteration timed alone, after its flush
    CHECK(k.flushes == 1 + 15);
  }
}

TEST_CASE("a kernel that throws inside a sample leaves the runner clean", "[measure]") {
  fake_device_kernel bad;
  bad.throw_on_call = 2;  // call 0 is the warm-up; the second sample fails
  CHECK_THROWS_WITH(measure::run_kernel("bad", bad, fixed(2, 4, cache_policy::hot)),
                    Catch::Contains("device error in sample"));
  CHECK(bad.timed_calls == 3);  // no further repetition ran after the failure
  // The next measurement runs its own benchmark only (the failed one was unregistered).
  fake_device_kernel good;
  auto r = measure::run_kernel("good", good, fixed(2, 3, cache_policy::hot));
  CHECK(r.samples.size() == 3);
  CHECK(good.timed_calls == 1 + 3);
}
