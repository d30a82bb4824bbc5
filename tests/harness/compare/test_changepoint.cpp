// Change-point detection on seeded synthetic nightly series, and the sparkline.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "harness/compare/changepoint.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

using namespace accelbench;
using namespace accelbench::compare;

namespace {

// 60 nights of a time around 1.0 with 3% Gaussian noise; from `step` on, multiplied by `factor`.
std::vector<double> series(uint64_t seed, size_t n, size_t step, double factor,
                           double noise = 0.03) {
  stats::rng g(seed);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (i >= step ? factor : 1.0) * (1 + noise * g.normal());
  return v;
}

} // namespace

TEST_CASE("changepoint: Student t tail and Welch test", "[compare][changepoint]") {
  // Table values: t(0.975, 10) = 2.228138852 -> two-sided p = 0.05; df = 1 is Cauchy:
  // P(|T| >= 1) = 1/2; df -> infinity tends to the normal: P(|Z| >= 1.959964) = 0.05.
  CHECK(student_t_two_sided_p(2.228138851986, 10) == Approx(0.05).epsilon(1e-8));
  CHECK(student_t_two_sided_p(1.0, 1) == Approx(0.5).epsilon(1e-10));
  CHECK(student_t_two_sided_p(1.959963984540, 1e7) == Approx(0.05).epsilon(1e-5));
  CHECK(student_t_two_sided_p(0, 5) == Approx(1.0));
  // Welch by hand: a = {1,2,3,4} (mean 2.5, var 5/3), b = {3,4,5,6,7} (mean 5, var 2.5).
  // se^2 = 5/12 + 1/2 = 11/12; t = -2.5 / sqrt(11/12) = -2.611165;
  // df = (11/12)^2 / ((5/12)^2/3 + (1/2)^2/4) = 0.840278 / 0.120370 = 6.980769.
  const double t = -2.5 / std::sqrt(11.0 / 12), df = (121.0 / 144) / (25.0 / 432 + 1.0 / 16);
  CHECK(df == Approx(6.980769).epsilon(1e-6));
  CHECK(welch_t_test({1, 2, 3, 4}, {3, 4, 5, 6, 7}) == Approx(student_t_two_sided_p(t, df)));
  CHECK(welch_t_test({1, 2, 3, 4}, {3, 4, 5, 6, 7}) == Approx(0.0350).margin(0.001));
}

TEST_CASE("changepoint: energy statistic by hand", "[compare][changepoint]") {
  // {0, 0, 1, 1} split at 2: X = {0,0}, Y = {1,1}; sum|x-y| = 4, within sums 0.
  // E = 2*4/(2*2) - 0 - 0 = 2; q = (2*2/4) * 2 = 2. Splits at 1 or 3 leave a side below 2 points.
  const auto q = energy_statistics({0, 0, 1, 1}, 2);
  REQUIRE(q.size() == 4);
  CHECK(q[2] == Approx(2.0));
  CHECK(q[1] == 0);
  CHECK(q[3] == 0);
}

TEST_CASE("changepoint: false alarms on stationary series", "[compare][changepoint]") {
  int alarms = 0;
  for (uint64_t t = 0; t < 200; ++t)
    alarms += !detect_change_points(series(1000 + t, 60, 60, 1.0)).empty();
  WARN("stationary series (60 points, 3% noise): false alarms in " << alarms << "/200 trials");
  CHECK(alarms <= 10); // <= 5%
}

namespace {

struct step_trials {
  int found = 0, extra = 0, flagged = 0;
};

// 200 series of 60 nights, 3% noise, a 10% slowdown from night `pos` on, pos drawn uniformly from
// [lo, hi]. found: a change point at pos +- 1; extra: any other change point.
step_trials run_step_trials(size_t lo, size_t hi, uint64_t seed) {
  step_trials r;
  for (uint64_t t = 0; t < 200; ++t) {
    stats::rng g(seed + 2000 + t);
    const size_t pos = lo + g.below(hi - lo + 1);
    const auto cps = detect_change_points(series(seed + t, 60, pos, 1.10));
    bool ok = false;
    for (const auto& c : cps) {
      if (std::labs(static_cast<long>(c.index) - static_cast<long>(pos)) <= 1) {
        ok = true;
        r.flagged += c.regression && c.magnitude > 1.05;
      } else {
        ++r.extra;
      }
    }
    r.found += ok;
  }
  return r;
}

} // namespace

TEST_CASE("changepoint: a planted 10% step is found at the right index", "[compare][changepoint]") {
  // Steps with at least 10 nights on either side.
  const auto mid = run_step_trials(10, 50, 5000);
  WARN("10% step at night 10..50 of 60 (3% noise): found at +-1 in "
       << mid.found << "/200 trials; " << mid.extra << " extra change points");
  CHECK(mid.found >= 190);         // >= 95%
  CHECK(mid.flagged == mid.found); // a slowdown of times is a regression
  CHECK(mid.extra <= 10);
  // Near the ends (5..9 nights on the short side) the Welch test has few points on one side: less
  // power, by design the price of robustness to single outliers. Measured, with a looser bound.
  const auto edge_lo = run_step_trials(5, 9, 6000), edge_hi = run_step_trials(51, 55, 7000);
  WARN("10% step 5..9 nights from an end: found at +-1 in " << edge_lo.found + edge_hi.found
                                                            << "/400 trials");
  CHECK(edge_lo.found + edge_hi.found >= 300); // >= 75% (measured 336/400)
}

TEST_CASE("changepoint: one bad night does not raise an alarm", "[compare][changepoint]") {
  int alarms_at_outlier = 0, any = 0;
  for (uint64_t t = 0; t < 200; ++t) {
    auto v = series(9000 + t, 60, 60, 1.0);
    const size_t pos = t % 2 == 0 ? 59 : static_cast<size_t>(t % 60); // half: the latest night
    v[pos] *= 1.5;
    const auto cps = detect_change_points(v);
    any += !cps.empty();
    for (const auto& c : cps)
      if (c.index == pos || c.index == pos + 1)
        ++alarms_at_outlier;
  }
  WARN("single +50% outlier night: series with any alarm " << any << "/200");
  CHECK(alarms_at_outlier == 0);
  CHECK(any <= 10);
}

TEST_CASE("changepoint: direction, magnitude, windows and errors", "[compare][changepoint]") {
  const auto up = series(42, 60, 30, 1.2, 0.01);
  auto cps = detect_change_points(up);
  REQUIRE(cps.size() == 1);
  CHECK(cps[0].index == 30);
  CHECK(cps[0].magnitude == Approx(cps[0].mean_after / cps[0].mean_before));
  CHECK(cps[0].magnitude == Approx(1.2).epsilon(0.02));
  CHECK(cps[0].p_value < 0.001);
  CHECK(cps[0].regression); // times went up
  changepoint_options hi;
  hi.dir = direction::higher_is_better;
  CHECK_FALSE(detect_change_points(up, hi)[0].regression); // throughput went up
  // A minimum magnitude above the step suppresses it.
  changepoint_options big;
  big.min_magnitude_pct = 30;
  CHECK(detect_change_points(up, big).empty());

  // A year of nights with two steps, whole-series and windowed.
  auto year = series(43, 365, 120, 1.1, 0.02);
  for (size_t i = 250; i < 365; ++i)
    year[i] *= 0.85;
  for (size_t window : {size_t(0), size_t(60)}) {
    changepoint_options o;
    o.window = window;
    cps = detect_change_points(year, o);
    INFO("window " << window);
    REQUIRE(cps.size() == 2);
    CHECK(std::labs(static_cast<long>(cps[0].index) - 120) <= 1);
    CHECK(std::labs(static_cast<long>(cps[1].index) - 250) <= 1);
    CHECK(cps[0].regression);
    CHECK_FALSE(cps[1].regression);
  }

  changepoint_options tiny;
  tiny.min_segment = 1;
  CHECK_THROWS_AS(detect_change_points(up, tiny), input_error);
  auto nan = up;
  nan[3] = NAN;
  CHECK_THROWS_AS(detect_change_points(nan), input_error);
  CHECK(detect_change_points({1, 2, 3}).empty()); // too short to split
}

TEST_CASE("changepoint: sparkline", "[compare][changepoint]") {
  CHECK(sparkline({1, 2, 3, 4, 5, 6, 7, 8}) == "▁▂▃▄▅▆▇█");
  CHECK(sparkline({8, 1}) == "█▁");
  CHECK(sparkline({5, 5, 5}) == "▄▄▄");
  CHECK(sparkline({1, NAN, 8}) == "▁ █");
  CHECK(sparkline({}).empty());
  // 8 points into 4 buckets: averages 1.5, 3.5, 5.5, 7.5 -> min, 1/3, 2/3, max of the range.
  CHECK(sparkline({1, 2, 3, 4, 5, 6, 7, 8}, 4) == "▁▃▆█");
}
