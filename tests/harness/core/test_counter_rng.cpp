// harness/core/counter_rng.hpp and parallel.hpp: seeded inputs that any thread (or a device
// kernel) can fill in any order, the same values every time.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <vector>

#include "harness/core/counter_rng.hpp"
#include "harness/core/parallel.hpp"

using namespace accelbench;

TEST_CASE("counter_rng: element i is a function of (seed, i) alone", "[core]") {
  CHECK(counter_rng::bits(7, 123) == counter_rng::bits(7, 123));
  CHECK(counter_rng::bits(7, 123) != counter_rng::bits(8, 123));
  CHECK(counter_rng::bits(7, 123) != counter_rng::bits(7, 124));
  double sum = 0, sum_sq = 0, nsum = 0, nsum_sq = 0;
  float lo = 1, hi = -1;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float u = counter_rng::uniform_pm1(42, (uint64_t)i);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
    sum_sq += (double)u * u;
    const float z = counter_rng::normal(42, (uint64_t)i);
    REQUIRE(std::isfinite(z));
    nsum += z;
    nsum_sq += (double)z * z;
  }
  CHECK(lo >= -1.0f);
  CHECK(hi < 1.0f);
  CHECK(lo < -0.999f);
  CHECK(hi > 0.999f);
  // Uniform [-1, 1): mean 0, variance 1/3; normal: mean 0, variance 1 (5 sigma of the estimates).
  CHECK(std::abs(sum / n) < 5 * std::sqrt(1.0 / 3 / n));
  CHECK(sum_sq / n == Approx(1.0 / 3).epsilon(0.02));
  CHECK(std::abs(nsum / n) < 5 * std::sqrt(1.0 / n));
  CHECK(nsum_sq / n == Approx(1.0).epsilon(0.02));
  CHECK(counter_rng::stream_seed(42, 0) != counter_rng::stream_seed(42, 1));
}

TEST_CASE("parallel_for covers every index once, and a parallel fill equals the serial one",
          "[core]") {
  const int64_t n = 100003; // not a multiple of the chunks
  std::vector<std::atomic<int>> seen(n);
  parallel_for(
      n,
      [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          seen[i]++;
      },
      1000, 7);
  int64_t once = 0;
  for (auto& s : seen)
    once += s.load() == 1;
  CHECK(once == n);
  std::vector<float> serial(n), parallel(n);
  for (int64_t i = 0; i < n; ++i)
    serial[i] = counter_rng::uniform_pm1(9, (uint64_t)i);
  parallel_for(
      n,
      [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          parallel[i] = counter_rng::uniform_pm1(9, (uint64_t)i);
      },
      1000, 5);
  CHECK(serial == parallel);
  parallel_for(0, [&](int64_t, int64_t) { FAIL("called for an empty range"); });
}
