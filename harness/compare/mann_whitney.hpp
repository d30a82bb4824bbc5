#pragma once
// Mann-Whitney U test (two-sided), the non-parametric test docs/architecture.md asks for before
// anything is called a regression. Conventions follow scipy.stats.mannwhitneyu so figures can be
// cross-checked: the reported U is U1 (the statistic of the first sample), the p-value uses max(U1,
// U2).
#include <cstddef>
#include <vector>

namespace accelbench::compare {

struct mann_whitney_result {
  double u1 = 0;      // R1 - n1(n1+1)/2: pairs (x, y) with x > y, ties counting 1/2
  double u2 = 0;      // n1*n2 - u1
  double p_value = 1; // two-sided
  double z = 0;       // normal approximation statistic (0 when the exact test was used)
  bool exact = false; // p from the exact null distribution
  bool ties = false;  // some value occurs more than once in the pooled sample
};

// Largest sample size (each side) for which the exact distribution is used. C(40, 20) ~ 1.4e11
// fits comfortably in the 64-bit integer counts of the exact recurrence.
inline constexpr size_t mann_whitney_exact_max_n = 20;

// Two-sided test of x against y. Ties get mid-ranks. Exact p-value when there are no ties and both
// sizes are <= mann_whitney_exact_max_n; otherwise the normal approximation with the tie
// correction of the variance and a 0.5 continuity correction. Throws input_error when a sample is
// empty or holds a NaN.
mann_whitney_result mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// Null distribution of U for sizes (m, n) without ties: counts[u] = number of the C(m+n, m)
// orderings whose statistic is u, u = 0..m*n. Exposed for tests.
std::vector<long long> mann_whitney_null_counts(size_t m, size_t n);

// Two-sided exact p-value of statistic u (either U1 or U2) for sizes (m, n): 2 * P(U >= max(u,
// mn-u)), clipped to 1 (scipy's convention).
double mann_whitney_exact_p(double u, size_t m, size_t n);

// Standard normal upper tail, 1 - Phi(z).
double normal_sf(double z);

} // namespace accelbench::compare
