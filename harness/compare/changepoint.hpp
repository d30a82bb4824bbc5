#pragma once
// Change-point detection for nightly series: E-divisive means (Matteson & James 2014,
// "A nonparametric approach for multiple change point analysis of multivariate data"), in the
// variant MongoDB's signal-processing-algorithms and Hunter use: the split maximising the energy
// statistic of a segment is kept only when a Welch t-test between the two sides is significant,
// segments are split recursively, and a final merge pass re-tests every change point against its
// neighbouring segments and drops the weakest until all pass (Hunter's split / merge).
#include <cstddef>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench::compare {

struct changepoint_options {
  direction dir = direction::lower_is_better; // which way a change is a regression
  // Fewest points on each side of a change. A single outlier night cannot form a segment of its
  // own, so it never raises an alarm; a real change needs min_segment nights to be confirmed.
  size_t min_segment = 5;
  double max_pvalue = 0.001;    // Welch t-test significance (Hunter's default)
  double min_magnitude_pct = 0; // changes of the segment means smaller than this are dropped
  // 0: the whole series is one window. Otherwise the split pass runs on windows of this length
  // (overlapping by half), as Hunter does to bound the cost on long series.
  size_t window = 0;
};

struct change_point {
  size_t index = 0;        // first point of the new segment
  double mean_before = 0;  // mean of the segment before (from the previous change point)
  double mean_after = 0;   // mean of the segment after (to the next change point)
  double magnitude = 1;    // mean_after / mean_before
  double p_value = 1;      // Welch t-test of the two segments
  double energy = 0;       // E-divisive statistic q-hat of the split when it was found
  bool regression = false; // the change is in the bad direction for opt.dir
};

// Change points in index order. Throws input_error when min_segment < 2 (a t-test needs two
// points per side) or the series holds a non-finite value.
std::vector<change_point> detect_change_points(const std::vector<double>& series,
                                               const changepoint_options& opt = {});

// E-divisive statistic q-hat(tau) for each split tau of [0, n): q[tau] for tau in
// [min_segment, n - min_segment], 0 elsewhere. Exposed for tests.
std::vector<double> energy_statistics(const std::vector<double>& series, size_t min_segment);

// Two-sided Welch t-test p-value of a against b (both of size >= 2).
double welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// Student t survival, two-sided: P(|T_df| >= |t|).
double student_t_two_sided_p(double t, double df);

// One Unicode block (▁▂▃▄▅▆▇█) per point, scaled between the series' min and max; a flat series
// sits at mid height (▄) so it does not read as a drop; a non-finite point is a space. With
// width > 0 and a longer series, consecutive points are averaged into width buckets.
std::string sparkline(const std::vector<double>& series, size_t width = 0);

} // namespace accelbench::compare
