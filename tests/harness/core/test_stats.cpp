#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "harness/core/stats.hpp"

using namespace accelbench::stats;

TEST_CASE("descriptive statistics match hand-computed values", "[stats]") {
  // v = 2, 4, 4, 4, 5, 5, 7, 9: mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
  // sample variance 32/7, stddev sqrt(4.571428...) = 2.13809; median (4+5)/2 = 4.5.
  std::vector<double> v = {4, 2, 9, 4, 5, 4, 7, 5};
  auto s = summarize(v);
  CHECK(s.n == 8);
  CHECK(s.mean == Approx(5.0));
  CHECK(s.median == Approx(4.5));
  CHECK(s.stddev == Approx(2.1380899));
  CHECK(s.cv == Approx(2.1380899 / 5.0));
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  // Type-7 quantile: h = (n-1) q; p5: h = 0.35 → 2 + 0.35·(4-2) = 2.7;
  // p95: h = 6.65 → 7 + 0.65·(9-7) = 8.3.
  CHECK(s.p5 == Approx(2.7));
  CHECK(s.p95 == Approx(8.3));
}

TEST_CASE("median of odd and even counts, geomean", "[stats]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({1, 2, 3, 10}) == 2.5);
  CHECK(geomean({1, 4, 16}) == Approx(4.0));
  CHECK(quantile_sorted({1, 2, 3, 4, 5}, 0.25) == Approx(2.0));
}

TEST_CASE("bootstrap CI of the median is seeded, ordered and brackets the median", "[stats]") {
  rng g(7);
  std::vector<double> v;
  for (int i = 0; i < 50; ++i)
    v.push_back(10 + g.normal());
  auto a = bootstrap_median_ci(v, 0.95, 2000, 42);
  auto b = bootstrap_median_ci(v, 0.95, 2000, 42);
  auto c = bootstrap_median_ci(v, 0.95, 2000, 43);
  CHECK(a == b); // same seed, same interval
  CHECK(a != c);
  double m = median(v);
  CHECK(a.first <= m);
  CHECK(a.second >= m);
  CHECK(a.first < a.second);
  // A 95% interval is wider than a 50% one.
  auto narrow = bootstrap_median_ci(v, 0.5, 2000, 42);
  CHECK(narrow.second - narrow.first < a.second - a.first);
}

TEST_CASE("bootstrap ratio CI covers a planted ratio", "[stats]") {
  rng g(3);
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(100 * (1 + 0.01 * g.normal()));
    b.push_back(110 * (1 + 0.01 * g.normal()));
  }
  auto ci = bootstrap_ratio_ci(a, b);
  CHECK(ci.first < 1.10);
  CHECK(ci.second > 1.10);
  CHECK(ci.first > 1.05);
}

TEST_CASE("rng is deterministic and uniform in the unit interval", "[stats]") {
  rng a(1), b(1);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    double x = a.uniform();
    REQUIRE(x == b.uniform());
    REQUIRE(x >= 0);
    REQUIRE(x < 1);
    sum += x;
  }
  CHECK(sum / 10000 == Approx(0.5).margin(0.02));
}

TEST_CASE("stats: the regularized incomplete beta gives binomial tail probabilities", "[stats]") {
  // P(Bin(10, 0.3) >= 4) summed directly.
  double direct = 0;
  for (int k = 4; k <= 10; ++k) {
    double c = std::tgamma(11.0) / (std::tgamma(k + 1.0) * std::tgamma(11.0 - k));
    direct += c * std::pow(0.3, k) * std::pow(0.7, 10 - k);
  }
  CHECK(regularized_incomplete_beta(4, 7, 0.3) == Approx(direct).epsilon(1e-10));
  CHECK(regularized_incomplete_beta(2, 3, 0) == 0);
  CHECK(regularized_incomplete_beta(2, 3, 1) == 1);
  CHECK(regularized_incomplete_beta(50, 50, 0.5) == Approx(0.5).epsilon(1e-9)); // symmetric
  CHECK(regularized_incomplete_beta(50, 51, 0.5) ==
        Approx(0.5397946187).epsilon(1e-9)); // P(Bin(100, 1/2) >= 50)
}

TEST_CASE("stats: huge finite samples give finite statistics, not the NaN of an overflowed sum",
          "[stats]") {
  // 1e308 + 1.7e308 overflows: the direct mean was inf, the standard deviation inf and the CV
  // inf / inf = NaN, which the store refuses as a metric.
  const std::vector<double> v = {1e308, 1.7e308};
  const summary s = summarize(v);
  CHECK(s.mean == Approx(1.35e308));
  CHECK(s.median == Approx(1.35e308));
  CHECK(s.stddev == Approx(0.7e308 / std::sqrt(2.0)));
  CHECK(s.cv == Approx(0.7 / std::sqrt(2.0) / 1.35));
  CHECK(std::isfinite(s.ci_low));
  CHECK(std::isfinite(s.ci_high));
  CHECK(s.ci_low >= 1e308);
  CHECK(s.ci_high <= 1.7e308);
  // Squares overflow long before the values do.
  CHECK(stddev({1e160, 3e160}) == Approx(std::sqrt(2.0) * 1e160));
  // Opposite signs: the interpolation's difference overflows, the halves do not.
  CHECK(median({-1.7e308, 1.7e308}) == 0);
  CHECK(quantile_sorted({-1.7e308, 1.7e308}, 0.25) == Approx(-0.85e308));
  CHECK(median_standard_error({-1.7e308, -1e308, 1e308, 1.7e308}) ==
        Approx(1.7e308 / 1.959963984540054));
}

TEST_CASE("stats: the median of equal infinities is that infinity, not NaN", "[stats]") {
  // A rate of FLOPs over 1e-300 s is inf in every sample: inf + 0.5 * (inf - inf) was NaN, which
  // hid the rate instead of showing it to the runner's rule for non-finite values.
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(median({inf, inf}) == inf);
  CHECK(median({1, inf, inf, inf}) == inf);
  CHECK(std::isnan(mean({inf, -inf}))); // no finite answer: NaN stays NaN for the runner to see
}
