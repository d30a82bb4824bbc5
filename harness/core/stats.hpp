#pragma once
// Descriptive statistics on raw samples. Quantiles use linear interpolation between order
// statistics (Hyndman & Fan type 7, the default of R and numpy).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace accelbench::stats {

struct summary {
  size_t n = 0;
  double median = 0, mean = 0, stddev = 0, cv = 0, min = 0, max = 0, p5 = 0, p95 = 0;
  double ci_low = 0, ci_high = 0; // bootstrap 95% CI of the median
};

double mean(const std::vector<double>& v);
double stddev(const std::vector<double>& v); // sample standard deviation (n - 1)
double median(std::vector<double> v);
double quantile_sorted(const std::vector<double>& sorted, double q); // q in [0, 1]
double geomean(const std::vector<double>& v);
// McKean and Schrader's (1984) distribution-free standard error of the median, from the order
// statistics that bound its 95% interval: c = max(1, round((n + 1) / 2 - 1.96 sqrt(n / 4))),
// SE = (x_(n-c+1) - x_(c)) / (2 * 1.96); 0 for fewer than two values. compare's within-run
// variance of a run's log median, and the store's log_median_se (written once per run).
double median_standard_error(std::vector<double> v);
// The regularized incomplete beta function I_x(a, b), a, b > 0 (0 at x <= 0, 1 at x >= 1): the
// tail probabilities of Student's t (compare's Welch test) and of the binomial (the report's
// exact bootstrap of the median) both come from it.
double regularized_incomplete_beta(double a, double b, double x);

// Small deterministic generator (splitmix64): bootstrap results must be reproducible from a seed
// on every platform, which std:: distributions do not promise.
class rng {
public:
  explicit rng(uint64_t seed) : m_state(seed) {}
  uint64_t next();
  double uniform();       // [0, 1)
  size_t below(size_t n); // [0, n)
  double normal();        // standard normal (Box-Muller)
private:
  uint64_t m_state;
};

// Percentile bootstrap CI of the median at `level` (0.95).
std::pair<double, double> bootstrap_median_ci(const std::vector<double>& v, double level = 0.95,
                                              int resamples = 2000, uint64_t seed = 42);
// Percentile bootstrap CI of median(b) / median(a).
std::pair<double, double> bootstrap_ratio_ci(const std::vector<double>& a,
                                             const std::vector<double>& b, double level = 0.95,
                                             int resamples = 2000, uint64_t seed = 42);

summary summarize(const std::vector<double>& v, uint64_t seed = 42);

} // namespace accelbench::stats
