#include "harness/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace accelbench::stats {

namespace {

// The largest magnitude of v when every value is finite and one is not 0, else 0: the scale that
// keeps sums and squares of huge finite values (1e308 seconds from a program's protocol) finite.
double overflow_scale(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) {
    if (!std::isfinite(x))
      return 0;
    m = std::max(m, std::fabs(x));
  }
  return m;
}

// v divided by `scale` (every value in [-1, 1]).
std::vector<double> divided_by(const std::vector<double>& v, double scale) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v)
    out.push_back(x / scale);
  return out;
}

double plain_mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / (double)v.size();
}

double plain_stddev(const std::vector<double>& v) {
  double m = plain_mean(v), acc = 0;
  for (double x : v)
    acc += (x - m) * (x - m);
  return std::sqrt(acc / (double)(v.size() - 1));
}

// `f` of v, computed again on v scaled into [-1, 1] when the direct sums overflow finite input:
// the direct result stays bit for bit what it was wherever it is finite.
template <class F> double overflow_safe(const std::vector<double>& v, F f) {
  const double direct = f(v);
  if (std::isfinite(direct))
    return direct;
  const double scale = overflow_scale(v);
  return scale > 0 ? f(divided_by(v, scale)) * scale : direct;
}

// a + frac * (b - a), the interpolation of type-7 quantiles, without the overflow of b - a for
// finite a and b of opposite signs and huge magnitude, nor the NaN of inf - inf when a == b.
double quantile_interpolate(double a, double b, double frac) {
  if (a == b)
    return a;
  const double d = b - a;
  if (std::isfinite(d) || !std::isfinite(a) || !std::isfinite(b))
    return a + frac * d;
  return a * (1 - frac) + b * frac;
}

} // namespace

double mean(const std::vector<double>& v) {
  if (v.empty())
    return 0;
  return overflow_safe(v, plain_mean);
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2)
    return 0;
  return overflow_safe(v, plain_stddev);
}

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty())
    return 0;
  if (s.size() == 1)
    return s[0];
  double h = (double)(s.size() - 1) * q;
  size_t lo = (size_t)std::floor(h);
  size_t hi = std::min(lo + 1, s.size() - 1);
  return quantile_interpolate(s[lo], s[hi], h - (double)lo);
}

namespace {
// The type-7 quantile of an unsorted vector by selection (O(n), reorders v): same value as
// quantile_sorted on the sorted vector. Bootstrap intervals need two quantiles of thousands of
// resampled statistics, where a full sort was the largest cost of a comparison.
double quantile_select(std::vector<double>& v, double q) {
  if (v.empty())
    return 0;
  if (v.size() == 1)
    return v[0];
  double h = (double)(v.size() - 1) * q;
  size_t lo = (size_t)std::floor(h);
  std::nth_element(v.begin(), v.begin() + (ptrdiff_t)lo, v.end());
  double a = v[lo];
  if (lo + 1 >= v.size())
    return a;
  double b = *std::min_element(v.begin() + (ptrdiff_t)lo + 1, v.end());
  return quantile_interpolate(a, b, h - (double)lo);
}
} // namespace

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

double median_standard_error(std::vector<double> v) {
  const size_t n = v.size();
  if (n < 2)
    return 0;
  std::sort(v.begin(), v.end());
  const double z = 1.959963984540054;
  const double raw = std::round((static_cast<double>(n) + 1) / 2 - z * std::sqrt(n / 4.0));
  const size_t c = static_cast<size_t>(std::clamp(raw, 1.0, static_cast<double>(n + 1) / 2));
  const double se = (v[n - c] - v[c - 1]) / (2 * z);
  // Finite bounds of opposite signs and huge magnitude: their halves subtract without overflow.
  if (std::isfinite(se) || !std::isfinite(v[n - c]) || !std::isfinite(v[c - 1]))
    return se;
  return v[n - c] / (2 * z) - v[c - 1] / (2 * z);
}

double geomean(const std::vector<double>& v) {
  if (v.empty())
    return 0;
  double acc = 0;
  for (double x : v)
    acc += std::log(x);
  return std::exp(acc / (double)v.size());
}

uint64_t rng::next() {
  uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double rng::uniform() { return (double)(next() >> 11) * 0x1.0p-53; }

size_t rng::below(size_t n) { return (size_t)(uniform() * (double)n); }

double rng::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300)
    u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

namespace {
// Median of one bootstrap resample of `sorted`. Because the data are sorted, the resample's
// median is an order statistic of the drawn indices: count the draws per index and walk the
// counts. O(n) per resample with no sort of doubles (this is the hot loop of every comparison).
class resampler {
public:
  explicit resampler(const std::vector<double>& v) : m_sorted(v), m_counts(v.size()) {
    std::sort(m_sorted.begin(), m_sorted.end());
  }
  double median(rng& g) {
    const size_t n = m_sorted.size();
    std::fill(m_counts.begin(), m_counts.end(), 0u);
    size_t i = 0;
    for (; i + 1 < n; i += 2) { // two 32-bit draws per 64-bit output (Lemire's multiply-shift)
      uint64_t r = g.next();
      m_counts[(size_t)(((r & 0xffffffffULL) * n) >> 32)]++;
      m_counts[(size_t)(((r >> 32) * n) >> 32)]++;
    }
    if (i < n)
      m_counts[(size_t)(((g.next() >> 32) * n) >> 32)]++;
    size_t lo_rank = (n - 1) / 2, hi_rank = n / 2; // 0-based ranks of the middle element(s)
    size_t seen = 0;
    double lo = 0;
    bool have_lo = false;
    for (size_t k = 0; k < n; ++k) {
      seen += m_counts[k];
      if (!have_lo && seen > lo_rank) {
        lo = m_sorted[k];
        have_lo = true;
      }
      if (seen > hi_rank)
        return midpoint(lo, m_sorted[k]);
    }
    return m_sorted.back();
  }

private:
  // (a + b) / 2, and for two finite values whose sum overflows, the sum of their halves.
  static double midpoint(double a, double b) {
    const double m = 0.5 * (a + b);
    return std::isfinite(m) || !std::isfinite(a) || !std::isfinite(b) ? m : 0.5 * a + 0.5 * b;
  }
  std::vector<double> m_sorted;
  std::vector<uint32_t> m_counts;
};
} // namespace

std::pair<double, double> bootstrap_median_ci(const std::vector<double>& v, double level,
                                              int resamples, uint64_t seed) {
  if (v.empty())
    return {0, 0};
  if (v.size() == 1)
    return {v[0], v[0]};
  rng g(seed);
  resampler rs(v);
  std::vector<double> meds(resamples);
  for (int i = 0; i < resamples; ++i)
    meds[i] = rs.median(g);
  double a = (1 - level) / 2;
  double lo = quantile_select(meds, a);
  return {lo, quantile_select(meds, 1 - a)};
}

std::pair<double, double> bootstrap_ratio_ci(const std::vector<double>& a,
                                             const std::vector<double>& b, double level,
                                             int resamples, uint64_t seed) {
  if (a.empty() || b.empty())
    return {0, 0};
  rng g(seed);
  resampler ra(a), rb(b);
  std::vector<double> ratios(resamples);
  for (int i = 0; i < resamples; ++i) {
    double ma = ra.median(g);
    double mb = rb.median(g);
    ratios[i] = mb / ma;
  }
  double al = (1 - level) / 2;
  double lo = quantile_select(ratios, al);
  return {lo, quantile_select(ratios, 1 - al)};
}

summary summarize(const std::vector<double>& v, uint64_t seed) {
  summary s;
  s.n = v.size();
  if (v.empty())
    return s;
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  s.median = quantile_sorted(sorted, 0.5);
  s.mean = mean(v);
  s.stddev = stddev(v);
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
  s.min = sorted.front();
  s.max = sorted.back();
  s.p5 = quantile_sorted(sorted, 0.05);
  s.p95 = quantile_sorted(sorted, 0.95);
  auto ci = bootstrap_median_ci(v, 0.95, 2000, seed);
  s.ci_low = ci.first;
  s.ci_high = ci.second;
  return s;
}

namespace {

// Continued fraction of the regularized incomplete beta function I_x(a, b) (DLMF 8.17.22),
// evaluated by the modified Lentz method.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int max_iter = 10000;
  constexpr double eps = 1e-15, tiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny)
    d = tiny;
  d = 1 / d;
  double h = d;
  // One step of the modified Lentz recurrence for coefficient aa: d and c updated, kept off zero,
  // and the factor d * c that the fraction's value is multiplied by returned.
  auto lentz_step = [&](double aa) {
    d = 1 + aa * d;
    if (std::fabs(d) < tiny)
      d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny)
      c = tiny;
    d = 1 / d;
    return d * c;
  };
  for (int m = 1; m <= max_iter; ++m) {
    const double dm = m, m2 = 2.0 * m;
    h *= lentz_step(dm * (b - dm) * x / ((qam + m2) * (a + m2))); // even step
    const double del = lentz_step(-(a + dm) * (qab + dm) * x / ((a + m2) * (qap + m2))); // odd
    h *= del;
    if (std::fabs(del - 1) < eps)
      break;
  }
  return h;
}

} // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2))
    return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

} // namespace accelbench::stats
