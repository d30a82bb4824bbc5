#include "harness/compare/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "harness/core/error.hpp"

namespace accelbench::compare {

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

std::vector<long long> mann_whitney_null_counts(size_t m, size_t n) {
  // The standard recurrence (Mann & Whitney 1947): ordering the m + n values, the largest one is
  // either an x, which then beats all n y's (U drops by n for the rest), or a y, which beats
  // nothing:  f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1),  f(0; 0, n) = f(0; m, 0) = 1.
  // Row i holds f(.; i, j) for j = 0..n; each is a vector of length i*j + 1.
  std::vector<std::vector<long long>> prev(n + 1, std::vector<long long>{1}); // i = 0
  for (size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<long long>> cur(n + 1);
    cur[0] = {1};
    for (size_t j = 1; j <= n; ++j) {
      std::vector<long long> f(i * j + 1, 0);
      const auto& a = prev[j];    // f(.; i-1, j), shifted by j
      const auto& b = cur[j - 1]; // f(.; i, j-1)
      for (size_t u = 0; u < a.size(); ++u)
        f[u + j] += a[u];
      for (size_t u = 0; u < b.size(); ++u)
        f[u] += b[u];
      cur[j] = std::move(f);
    }
    prev = std::move(cur);
  }
  return prev[n];
}

namespace {

// The null distribution only depends on (m, n); nightly comparisons repeat the same sizes
// thousands of times, so the last one is kept per thread.
const std::vector<long long>& cached_counts(size_t m, size_t n) {
  thread_local size_t cm = SIZE_MAX, cn = SIZE_MAX;
  thread_local std::vector<long long> counts;
  if (cm != m || cn != n) {
    counts = mann_whitney_null_counts(m, n);
    cm = m;
    cn = n;
  }
  return counts;
}

} // namespace

double mann_whitney_exact_p(double u, size_t m, size_t n) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  const double big = std::max(u, mn - u);
  const auto& counts = cached_counts(m, n);
  // P(U >= big), with big an integer in the tie-free case; ceil guards against rounding.
  const size_t from = static_cast<size_t>(std::ceil(big - 1e-9));
  long double tail = 0, total = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    total += counts[k];
    if (k >= from)
      tail += counts[k];
  }
  return std::min(1.0, static_cast<double>(2 * tail / total));
}

mann_whitney_result mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || y.empty())
    throw input_error("mann_whitney_u: empty sample (sizes " + std::to_string(x.size()) + " and " +
                      std::to_string(y.size()) + ")");
  const size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;
  // Pool with a side tag, sort, and give each run of equal values its mid-rank.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n);
  for (double v : x)
    pooled.emplace_back(v, 0);
  for (double v : y)
    pooled.emplace_back(v, 1);
  for (const auto& p : pooled)
    if (std::isnan(p.first))
      throw input_error("mann_whitney_u: sample holds a NaN");
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  mann_whitney_result r;
  double r1 = 0;       // rank sum of x
  double tie_term = 0; // sum over tie groups of t^3 - t
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first)
      ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 0)
        r1 += mid_rank;
    if (j - i > 1) {
      r.ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  r.u1 = r1 - dn1 * (dn1 + 1) / 2;
  r.u2 = dn1 * dn2 - r.u1;

  if (!r.ties && n1 <= mann_whitney_exact_max_n && n2 <= mann_whitney_exact_max_n) {
    r.exact = true;
    r.p_value = mann_whitney_exact_p(r.u1, n1, n2);
    return r;
  }
  // Normal approximation (as scipy): mean n1 n2 / 2; variance n1 n2 / 12 * ((N + 1) -
  // sum(t^3 - t) / (N (N - 1))); continuity correction 0.5 towards the mean.
  const double dn = static_cast<double>(n);
  const double mu = dn1 * dn2 / 2;
  const double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) { // every value equal: no evidence of any shift
    r.p_value = 1;
    return r;
  }
  const double big = std::max(r.u1, r.u2);
  r.z = (big - mu - 0.5) / std::sqrt(var);
  r.p_value = std::clamp(2 * normal_sf(r.z), 0.0, 1.0);
  return r;
}

} // namespace accelbench::compare
