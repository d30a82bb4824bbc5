#pragma once
// The HTML kit's SVG charts, one set for the report page, the history page and the dashboard:
// axis mappings and ticks, scatter and line charts, horizontal bars with whiskers, strip plots of
// samples. Each returns a <figure> (or "" when there is nothing to draw); every label is escaped.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace accelbench::html {

// A small linear or log axis mapping.
struct scale {
  double d0, d1, r0, r1;
  bool log = false;
  double operator()(double v) const {
    if (log) {
      v = std::max(v, 1e-300);
      return r0 + (std::log10(v) - std::log10(d0)) / (std::log10(d1) - std::log10(d0)) * (r1 - r0);
    }
    return r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  }
};

// The ticks of [lo, hi]: decades (or 1-2-5 steps) on a log axis, 1-2-2.5-5 steps on a linear one.
std::vector<double> ticks(double lo, double hi, bool log);

// Tick labels with SI prefixes: "500 k", "1.5 G", "20 m"; plain between 0.01 and 1000.
std::string si_tick(double v);
// A tick of an axis whose title names a unit format_quantity scales ("TFLOP/s", "FLOP per
// iteration"): "1.50 PFLOP/s", "2.00 TFLOP"; other axes get SI prefixes alone.
std::string axis_tick(double v, const std::string& axis_title);

struct series {
  std::string name, color;
  std::vector<std::pair<double, double>> pts;
  bool line = false;
  std::vector<std::string> titles; // per point tooltip (optional)
  bool legend = true;              // one legend entry per side, not per run
};

// Scatter / line chart with axes and <title> on every point.
std::string xy_chart(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<series>& ss, bool logx, bool logy,
                     const std::string& note = "");

// Ticks of a ratio axis (log scale): the ratios people read (0.5x, 0.8x, 1x, 1.25x, 2x...) that
// fall inside the range, 1x always among them.
std::vector<double> ratio_ticks(double lo, double hi);
std::string ratio_label(double v); // "1.25×"

// Horizontal bars with CI whiskers and a reference line (speed-up = 1).
struct bar {
  std::string label, tip, color;
  double v = 0, lo = 0, hi = 0;
};

// ci: the whiskers' label, "99% CI".
std::string bar_chart(const std::string& title, const std::string& xlabel,
                      const std::vector<bar>& bars, double ref, bool logx,
                      const std::string& ci = "CI");

// One category of a strip plot: its samples, spread sideways (deterministically) so that equal
// values do not hide each other, and their median as a bar.
struct strip {
  std::string label, sublabel, color, unit;
  const std::vector<double>* values = nullptr;
};

// Samples of both sides on a categorical x axis (baseline | candidate), the value axis in SI
// units from zero, the categories named under the axis: no legend over the data.
std::string strip_chart(const std::string& title, const strip& a, const strip& b);

} // namespace accelbench::html
