// Mann-Whitney U: hand-worked values, scipy's documented figures, and the exact null distribution
// against brute-force enumeration.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "harness/compare/mann_whitney.hpp"
#include "harness/core/error.hpp"

using namespace accelbench;
using namespace accelbench::compare;

TEST_CASE("mann_whitney: complete separation, exact p by hand", "[compare][mann_whitney]") {
  // x = {1,2,3}, y = {4,5,6}: ranks of x are 1,2,3, R1 = 6, U1 = 6 - 3*4/2 = 0, U2 = 9.
  // Of the C(6,3) = 20 equally likely orderings exactly one gives U = 0 and one gives U = 9, so the
  // two-sided p = 2 * 1/20 = 0.1 (scipy.stats.mannwhitneyu gives statistic 0.0, pvalue 0.1).
  const auto r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  CHECK(r.u1 == 0);
  CHECK(r.u2 == 9);
  CHECK(r.exact);
  CHECK_FALSE(r.ties);
  CHECK(r.p_value == Approx(0.1).epsilon(1e-12));

  // 1..5 against 6..10: one ordering of C(10,5) = 252 at each extreme: p = 2/252.
  const auto r5 = mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  CHECK(r5.u1 == 25);
  CHECK(r5.p_value == Approx(2.0 / 252).epsilon(1e-12));
}

TEST_CASE("mann_whitney: scipy documentation example", "[compare][mann_whitney]") {
  // scipy.stats.mannwhitneyu docs: males = [19, 22, 16, 29, 24], females = [20, 11, 17, 12].
  // Pooled order 11f 12f 16m 17f 19m 20f 22m 24m 29m: male ranks 3+5+7+8+9 = 32, U1 = 32 - 15 = 17.
  // Exact: P(U >= 17) = P(U <= 3) = (1 + 1 + 2 + 3)/C(9,4) = 7/126, p = 14/126 = 0.1111...
  // (scipy: statistic=17.0, pvalue=0.1111111111111111 with method="exact").
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  const auto r = mann_whitney_u(males, females);
  CHECK(r.u1 == 17);
  CHECK(r.exact);
  CHECK(r.p_value == Approx(14.0 / 126).epsilon(1e-12));
}

TEST_CASE("mann_whitney: ties use mid-ranks and the tie-corrected normal approximation",
          "[compare][mann_whitney]") {
  // x = {1,2,2,3,4}, y = {2,3,5,6,7}. Pooled: 1x | 2x 2x 2y | 3x 3y | 4x | 5y 6y 7y.
  // Mid-ranks: 1 -> 1; the three 2s share ranks 2..4 -> 3; the two 3s share 5,6 -> 5.5; 4 -> 7.
  // R1 = 1 + 3 + 3 + 5.5 + 7 = 19.5, U1 = 19.5 - 15 = 4.5, U2 = 25 - 4.5 = 20.5.
  // Ties: sum(t^3 - t) = (27 - 3) + (8 - 2) = 30; N = 10.
  // var = 5*5/12 * (11 - 30/(10*9)) = 22.2222; z = (20.5 - 12.5 - 0.5)/sqrt(22.2222) = 1.590990
  // p = 2 * (1 - Phi(1.590990)) = 0.111611768 (as scipy's asymptotic method).
  const auto r = mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 5, 6, 7});
  CHECK(r.u1 == 4.5);
  CHECK(r.u2 == 20.5);
  CHECK(r.ties);
  CHECK_FALSE(r.exact);
  CHECK(r.z == Approx(1.590990257669732).epsilon(1e-9));
  CHECK(r.p_value == Approx(0.11161176829829222).epsilon(1e-9));
}

TEST_CASE("mann_whitney: large samples use the normal approximation", "[compare][mann_whitney]") {
  // x = 1..25, y = 10.5..34.5 (no ties). U1 = #(x > y) = 1 + 2 + ... + 15 = 120, U2 = 505.
  // z = (505 - 312.5 - 0.5) / sqrt(625 * 51 / 12) = 3.725347; p = 2 * (1 - Phi(z)) = 1.95047e-4.
  std::vector<double> x, y;
  for (int i = 1; i <= 25; ++i)
    x.push_back(i);
  for (int i = 10; i <= 34; ++i)
    y.push_back(i + 0.5);
  const auto r = mann_whitney_u(x, y);
  CHECK(r.u1 == 120);
  CHECK_FALSE(r.exact);
  CHECK(r.p_value == Approx(0.00019504657252439938).epsilon(1e-8));
  // Same value of the scipy docs example's asymptotic p: 0.11134688653314041.
  CHECK(2 * normal_sf((17 - 10 - 0.5) / std::sqrt(20.0 * 10 / 12)) ==
        Approx(0.11134688653314041).epsilon(1e-12));
}

TEST_CASE("mann_whitney: exact null distribution matches brute-force enumeration",
          "[compare][mann_whitney]") {
  for (size_t m = 1; m <= 6; ++m) {
    for (size_t n = 1; n <= 6; ++n) {
      // Enumerate every choice of which m of the m + n ranks belong to x.
      std::vector<long long> brute(m * n + 1, 0);
      const size_t total = m + n;
      for (unsigned mask = 0; mask < (1u << total); ++mask) {
        if (static_cast<size_t>(__builtin_popcount(mask)) != m)
          continue;
        long long u = 0; // pairs (x, y) with x ranked above y
        for (size_t i = 0; i < total; ++i)
          if (mask & (1u << i))
            for (size_t j = 0; j < i; ++j)
              if (!(mask & (1u << j)))
                ++u;
        ++brute[u];
      }
      INFO("m = " << m << ", n = " << n);
      CHECK(mann_whitney_null_counts(m, n) == brute);
    }
  }
  // The largest exact case stays exact in 64-bit counts: the total is C(40, 20).
  const auto big = mann_whitney_null_counts(20, 20);
  long long sum = 0;
  for (long long c : big)
    sum += c;
  CHECK(sum == 137846528820LL);
}

TEST_CASE("mann_whitney: symmetric in its arguments, degenerate inputs",
          "[compare][mann_whitney]") {
  const std::vector<double> a = {3.1, 2.7, 4.4, 3.9, 3.0, 2.2}, b = {4.5, 5.1, 3.8, 4.9, 6.0};
  const auto ab = mann_whitney_u(a, b), ba = mann_whitney_u(b, a);
  CHECK(ab.u1 == ba.u2);
  CHECK(ab.p_value == Approx(ba.p_value));
  // Every value equal: no evidence of a shift.
  CHECK(mann_whitney_u({1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}).p_value == 1.0);
  CHECK_THROWS_AS(mann_whitney_u({}, {1.0}), input_error);
  CHECK_THROWS_AS(mann_whitney_u({NAN, 1.0}, {1.0}), input_error);
}
