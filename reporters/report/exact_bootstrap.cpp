// Exact bootstrap distribution of the sample median (see report_internal.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/core/stats.hpp"
#include "reporters/report/report_internal.hpp"

namespace accelbench::report {

namespace {

// P(Binomial(n, p) >= m) = I_p(m, n - m + 1), 1 <= m <= n.
double binomial_upper(int64_t n, int64_t m, double p) {
  if (m <= 0)
    return 1;
  if (m > n)
    return 0;
  return stats::regularized_incomplete_beta(double(m), double(n - m + 1), p);
}

// CDF of the bootstrap median's order-statistic index over the window [lo, hi] (1-based); below
// the window the CDF is 0, above it 1 (to within 1e-15).
struct median_dist {
  int64_t lo = 1, hi = 1;
  std::vector<double> cdf; // cdf[k - lo] = P(index <= k)
  double at(int64_t k) const {
    if (k < lo)
      return 0;
    if (k > hi)
      return 1;
    return cdf[size_t(k - lo)];
  }
};

median_dist distribution(int64_t n) {
  auto F = [n](int64_t k) {
    const double p = double(k) / double(n);
    if (n % 2 == 1)
      return binomial_upper(n, (n + 1) / 2, p);
    return 0.5 * (binomial_upper(n, n / 2, p) + binomial_upper(n, n / 2 + 1, p));
  };
  median_dist d;
  constexpr double cut = 1e-15;
  int64_t mid = std::max<int64_t>(1, (n + 1) / 2);
  int64_t lo = mid, hi = mid;
  while (lo > 1 && F(lo - 1) > cut)
    --lo;
  while (hi < n && F(hi) < 1 - cut)
    ++hi;
  d.lo = lo;
  d.hi = hi;
  for (int64_t k = lo; k <= hi; ++k)
    d.cdf.push_back(k == n ? 1.0 : F(k));
  return d;
}

// Smallest order statistic whose CDF reaches q.
double quantile_of(const std::vector<double>& sorted, const median_dist& d, double q) {
  for (int64_t k = d.lo; k <= d.hi; ++k)
    if (d.at(k) >= q)
      return sorted[size_t(k - 1)];
  return sorted[size_t(d.hi - 1)];
}

} // namespace

std::pair<double, double> exact_bootstrap_median_ci(const std::vector<double>& sorted,
                                                    double level) {
  if (sorted.empty())
    return {0, 0};
  if (sorted.size() == 1)
    return {sorted[0], sorted[0]};
  const median_dist d = distribution(int64_t(sorted.size()));
  const double a = (1 - level) / 2;
  return {quantile_of(sorted, d, a), quantile_of(sorted, d, 1 - a)};
}

std::pair<double, double> exact_bootstrap_ratio_ci(const std::vector<double>& a,
                                                   const std::vector<double>& b, double level) {
  if (a.empty() || b.empty())
    return {0, 0};
  if (a.front() <= 0 || b.front() <= 0)
    return stats::bootstrap_ratio_ci(a, b, level);
  const median_dist da = distribution(int64_t(a.size())), db = distribution(int64_t(b.size()));
  // Probability masses of the baseline median over its window.
  std::vector<std::pair<double, double>> pa; // (value, mass)
  for (int64_t k = da.lo; k <= da.hi; ++k) {
    const double m = da.at(k) - da.at(k - 1);
    if (m > 0)
      pa.emplace_back(a[size_t(k - 1)], m);
  }
  // P(median(b)/median(a) <= t) = sum_i P(Ma = a_i) P(Mb <= t a_i); t a_i rises with i, so one
  // forward pass over b's window suffices.
  auto cdf = [&](double t) {
    double s = 0;
    int64_t j = db.lo - 1; // largest index with b(j) <= t a_i
    for (const auto& [ai, m] : pa) {
      const double y = t * ai;
      while (j < db.hi && b[size_t(j)] <= y)
        ++j; // b[j] is order statistic j + 1
      s += m * db.at(j);
    }
    return s;
  };
  auto quantile = [&](double q) {
    double lo = b[size_t(db.lo - 1)] / pa.back().first,
           hi = b[size_t(db.hi - 1)] / pa.front().first;
    if (cdf(lo) >= q)
      return lo;
    for (int it = 0; it < 100 && hi / lo > 1 + 1e-12; ++it) {
      const double mid = std::sqrt(lo * hi);
      (cdf(mid) >= q ? hi : lo) = mid;
    }
    return hi;
  };
  const double al = (1 - level) / 2;
  return {quantile(al), quantile(1 - al)};
}

} // namespace accelbench::report
