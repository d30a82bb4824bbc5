#include "reporters/html/nightly_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "reporters/html/html.hpp"

namespace accelbench::html {

namespace {

using std::string;

constexpr double k_w = 760, k_h = 260;                                 // chart size (px)
constexpr double k_left = 92, k_right = 48, k_top = 30, k_bottom = 44; // plot margins
constexpr const char* k_point_colour = "#4e79a7";

struct frame {
  value_axis axis;
  size_t n = 1; // nights
  double x(size_t i) const {
    return n <= 1 ? k_left + (k_w - k_left - k_right) / 2
                  : k_left + (k_w - k_left - k_right) * double(i) / double(n - 1);
  }
  double y(double v) const {
    return k_h - k_bottom - (v - axis.lo) / (axis.hi - axis.lo) * (k_h - k_top - k_bottom);
  }
};

// The number of ticks from the multiple of `step` at or below lo to the one at or above hi.
size_t ticks_at(double lo, double hi, double step) {
  const double a = std::floor(lo / step + 1e-9), b = std::ceil(hi / step - 1e-9);
  return static_cast<size_t>(std::llround(b - a)) + 1;
}

string value_ticks(const frame& f, const string& unit) {
  string o;
  for (double v : f.axis.ticks)
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#e6e6ea\" class=\"grid\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                     "class=\"tl tick\" text-anchor=\"end\">{}</text>\n",
                     k_left, k_w - k_right, f.y(v), f.y(v), k_left - 6, f.y(v) + 4,
                     escape(format_quantity(v, unit)));
  return o;
}

// Dates under the axis: at most 8, evenly spread; the last night always, and a regular label only
// a full spacing before it (two dates closer than that overlap).
string date_labels(const frame& f, const std::vector<night>& nights) {
  string o;
  const size_t n = nights.size(), every = std::max<size_t>(1, (n + 7) / 8);
  for (size_t i = 0; i < n; ++i)
    if ((i % every == 0 && n - 1 - i >= every) || i + 1 == n)
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\" "
                       "text-anchor=\"middle\">{}</text>\n",
                       f.x(i), k_h - k_bottom + 16, escape(nights[i].date));
  return o;
}

string axis_titles(const nightly_chart& c) {
  const double mid = (k_top + k_h - k_bottom) / 2;
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"al\" text-anchor=\"middle\">night "
                     "(run start, UTC)</text>\n<text x=\"14\" y=\"{:.1f}\" class=\"al\" "
                     "text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1f})\">{}</text>\n",
                     (k_left + k_w - k_right) / 2, k_h - 8, mid, mid, escape(c.y_title));
}

string change_marks(const frame& f, const nightly_chart& c) {
  string o;
  for (const auto& m : c.marks) {
    const double x = (f.x(m.index) + f.x(m.index > 0 ? m.index - 1 : 0)) / 2;
    o += fmt::format("<line class=\"cp\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" "
                     "y2=\"{2:.1f}\" stroke=\"{3}\" stroke-dasharray=\"4 3\" "
                     "stroke-width=\"1.5\"><title>{4}</title></line>\n",
                     x, k_top - 8, k_h - k_bottom, m.colour, escape(m.tip));
    if (!m.label.empty())
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"middle\" "
                       "style=\"fill:{}\">{}</text>\n",
                       x, k_top - 12, m.colour, escape(m.label));
  }
  for (const auto& l : c.levels)
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                     "stroke-opacity=\".45\" stroke-width=\"3\"><title>{}</title></line>\n",
                     f.x(l.from), f.x(l.to), f.y(l.value), f.y(l.value), l.colour, escape(l.tip));
  return o;
}

// A night's runs: a vertical line over their min..max and a short tick at each (one run: none).
string spread(const frame& f, size_t i, const night& nt, const string& unit) {
  if (nt.runs.size() < 2)
    return "";
  const auto [lo, hi] = std::minmax_element(nt.runs.begin(), nt.runs.end());
  const double x = f.x(i);
  string o = fmt::format("<line class=\"spread\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" "
                         "y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"1.2\" opacity=\"0.7\">"
                         "<title>{4} runs: {5} to {6}</title></line>\n",
                         x, f.y(*lo), f.y(*hi), k_point_colour, nt.runs.size(),
                         escape(format_quantity(*lo, unit)), escape(format_quantity(*hi, unit)));
  for (double r : nt.runs)
    o += fmt::format("<line class=\"run\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"{}\" stroke-width=\"1\"/>",
                     x - 3, x + 3, f.y(r), f.y(r), k_point_colour);
  return o + "\n";
}

string points(const frame& f, const nightly_chart& c) {
  string o, path;
  for (size_t i = 0; i < c.nights.size(); ++i)
    path += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", f.x(i), f.y(c.nights[i].value));
  if (c.nights.size() > 1)
    o += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + k_point_colour +
         "\" stroke-width=\"1.5\"/>\n";
  for (size_t i = 0; i < c.nights.size(); ++i) {
    const night& nt = c.nights[i];
    o += spread(f, i, nt, c.unit);
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title>"
                     "</circle>\n",
                     f.x(i), f.y(nt.value), k_point_colour, escape(nt.tip));
  }
  // A lone night has no line to read it from: its value is written beside it.
  if (c.nights.size() == 1)
    o +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl pv\">{}</text>\n", f.x(0) + 8,
                    f.y(c.nights[0].value) + 4, escape(format_quantity(c.nights[0].value, c.unit)));
  return o;
}

} // namespace

std::vector<double> round_ticks(double lo, double hi) {
  // Over two decades from a power of ten at or below a sixth of the span: the rounding of the
  // logarithm may start one decade low.
  const double mag = std::pow(10.0, std::floor(std::log10((hi - lo) / 6)));
  double step = 100 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0})
    if (ticks_at(lo, hi, m * mag) <= 6) {
      step = m * mag;
      break;
    }
  const double first = std::floor(lo / step + 1e-9) * step;
  const size_t n = ticks_at(lo, hi, step);
  std::vector<double> t;
  t.reserve(n);
  for (size_t i = 0; i < n; ++i)
    t.push_back(first + double(i) * step);
  return t;
}

value_axis nightly_axis(const std::vector<double>& values) {
  if (values.empty())
    return {0, 1, round_ticks(0, 1)};
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  const double mid = stats::median(values);
  const double half = k_min_half_span * std::fabs(mid);
  double lo = std::min(*mn, mid - half), hi = std::max(*mx, mid + half);
  if (!(hi > lo)) // every value 0
    lo -= 1, hi += 1;
  value_axis a;
  a.ticks = round_ticks(lo, hi);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

string nightly_svg(const nightly_chart& c) {
  std::vector<double> values;
  for (const auto& nt : c.nights) {
    values.push_back(nt.value);
    values.insert(values.end(), nt.runs.begin(), nt.runs.end());
  }
  for (const auto& l : c.levels)
    values.push_back(l.value);
  frame f{nightly_axis(values), std::max<size_t>(1, c.nights.size())};
  string o = fmt::format("<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
                         "aria-label=\"{}\">\n",
                         k_w, k_h, k_w, k_h, escape(c.title));
  o += value_ticks(f, c.unit) + date_labels(f, c.nights) + axis_titles(c);
  o += change_marks(f, c) + points(f, c);
  return o + "</svg>\n";
}

} // namespace accelbench::html
