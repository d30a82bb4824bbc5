#pragma once
// The chart of a nightly series, one drawing for the history page (`history --html`) and the
// dashboard's /history: each night a point with the spread of the runs behind it, a value axis
// with round ticks and units, dates under it, change points as dashed lines.
//
// The value axis covers every value and spread and never less than the median ± 10% of it
// (k_min_half_span), then widens to round ticks: a 2% wiggle between two nights fills a fifth of
// the height, not all of it, and a real step of 10% or more still stands out.
#include <cstddef>
#include <string>
#include <vector>

namespace accelbench::html {

// Half the narrowest value axis, as a fraction of the series' median.
inline constexpr double k_min_half_span = 0.10;

struct night {
  std::string date;         // under the axis: "2026-10-15"
  double value = 0;         // the point (the median of its runs' medians)
  std::vector<double> runs; // each run's median: the spread drawn is their min..max
  std::string tip;          // the point's tooltip
};

// A change point: a dashed line before night `index`, `label` above it.
struct change_mark {
  size_t index = 0;
  std::string label, colour, tip;
};

// A level held over nights [from, to] (the mean either side of a change).
struct level {
  size_t from = 0, to = 0;
  double value = 0;
  std::string colour, tip;
};

struct nightly_chart {
  std::string title; // aria-label
  std::string unit;  // of every value: the tick labels carry it ("1.00 ms", "66.5 GFLOP/s")
  std::string y_title;
  std::vector<night> nights;
  std::vector<change_mark> marks;
  std::vector<level> levels;
};

// The value axis: [lo, hi] and its ticks (first == lo, last == hi).
struct value_axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
};

// 4 to 6 round ticks (1, 2, 2.5 or 5 times a power of ten apart) from at or below lo to at or
// above hi; lo < hi.
std::vector<double> round_ticks(double lo, double hi);

// The axis of a chart holding `values` (points, spreads and levels), by the rule above.
value_axis nightly_axis(const std::vector<double>& values);

// The chart as an <svg>; a lone night is a point labelled with its value.
std::string nightly_svg(const nightly_chart& c);

} // namespace accelbench::html
