// harness/core/score.hpp: MLPerf's olympic mean, the one scoring rule of time-to-train results
// (workloads/training, importers/mlperf and the report all score through it).
#include <catch2/catch.hpp>

#include "harness/core/score.hpp"

using namespace accelbench;

namespace {
std::vector<bool> all_converged(size_t n) { return std::vector<bool>(n, true); }
} // namespace

TEST_CASE("olympic mean: drop the fastest and the slowest, average the rest", "[core][score]") {
  auto a = olympic_mean({5, 1, 3, 2, 4}, all_converged(5));
  CHECK(a.valid);
  CHECK(a.mean == Approx(3.0));                  // mean(2, 3, 4)
  CHECK(a.used == std::vector<size_t>{3, 2, 4}); // fastest first, as indices into the input
  auto three = olympic_mean({10, 30, 20}, all_converged(3));
  CHECK(three.valid);
  CHECK(three.mean == Approx(20));
  CHECK(three.used == std::vector<size_t>{2});
}

TEST_CASE("olympic mean: a run that did not converge counts as the slowest", "[core][score]") {
  // Its time is ignored however fast it was: it is the one dropped at the slow end.
  auto b = olympic_mean({5, 1, 3, 2, 0.5}, {true, true, true, true, false});
  CHECK(b.valid);
  CHECK(b.mean == Approx((2 + 3 + 5) / 3.0));
  auto c = olympic_mean({10, 1, 20}, {true, false, true});
  CHECK(c.valid);
  CHECK(c.mean == Approx(20)); // drop the fastest (10) and the non-converged one
}

TEST_CASE("olympic mean: more non-converged runs than dropped ones is INVALID", "[core][score]") {
  auto c = olympic_mean({5, 1, 3, 2, 4}, {true, false, true, true, false});
  CHECK_FALSE(c.valid);
  CHECK(c.mean == 0);
  CHECK(c.reason.find("2 of 5") != std::string::npos);
  // unet3d drops 4 at each end: 4 failures of 40 runs still score.
  std::vector<double> t(40);
  std::vector<bool> conv(40, true);
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = double(i + 1);
  for (size_t i = 0; i < 4; ++i)
    conv[i] = false;
  auto u = olympic_mean(t, conv, 4);
  CHECK(u.valid);
  // Converged: 5..40 (36 runs); the 4 failures are the 4 dropped at the slow end, so only the 4
  // fastest go: keep [4, 36 - (4 - 4)) = 9..40.
  CHECK(u.mean == Approx((9 + 40) / 2.0));
  conv[4] = false;
  CHECK_FALSE(olympic_mean(t, conv, 4).valid);
}

TEST_CASE("olympic mean: fewer than 2m + 1 runs leave nothing to average", "[core][score]") {
  auto d = olympic_mean({2, 4}, all_converged(2));
  CHECK_FALSE(d.valid);
  CHECK(d.reason.find("nothing to average") != std::string::npos);
  CHECK_FALSE(olympic_mean({}, {}).valid);
  CHECK(olympic_mean_of({2, 4}, 1) == 0);
  CHECK(olympic_mean_of({4, 2, 9}, 1) == Approx(4));
}
