#pragma once
// Internals of the report shared with its tests: exact bootstrap intervals for medians.
#include <utility>
#include <vector>

namespace accelbench::report {

// Percentile bootstrap CI of the median computed from the exact bootstrap distribution (the limit
// of infinitely many resamples) instead of Monte-Carlo resampling: for sorted data x(1..n) the
// median of a resample is x(k) or below with probability P(Binomial(n, k/n) >= m), m = (n+1)/2
// (Efron 1979; Maritz & Jarrett 1978). For even n the two middle order statistics are mixed
// half and half. Cost O(n) instead of O(resamples x n), which keeps a report over a million
// samples within seconds. `sorted` must be sorted ascending and non-empty.
std::pair<double, double> exact_bootstrap_median_ci(const std::vector<double>& sorted,
                                                    double level);

// Percentile bootstrap CI of median(b) / median(a) from the two exact bootstrap distributions
// (independent sides), found by bisection on the ratio's CDF. Both sorted ascending, non-empty;
// falls back to Monte-Carlo (stats::bootstrap_ratio_ci) when a value is not positive.
std::pair<double, double> exact_bootstrap_ratio_ci(const std::vector<double>& sorted_a,
                                                   const std::vector<double>& sorted_b,
                                                   double level);

} // namespace accelbench::report
