// The HTML kit's SVG charts: axes with ticks, scatter and line charts, bars with whiskers, strip
// plots of samples. Every label goes through escape; numbers through units.hpp or the kit's num.
#include "reporters/html/chart.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "reporters/html/html.hpp"

namespace accelbench::html {

namespace {

using std::string;

string esc(const string& s) { return escape(s); }

// Grid, SI tick labels and axis titles of xy_chart's plot area (560 x 300, margins 100/20/30/50).
string xy_axes(const scale& sx, const scale& sy, const string& xlabel, const string& ylabel,
               std::array<double, 4> range, bool logx, bool logy) {
  const int W = 560, H = 300, L = 100, R = 20, T = 30, B = 50;
  const auto [y0, y1, x0, x1] = range;
  string o;
  for (double t : ticks(y0, y1, logy))
    o += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text "
                     "x=\"{}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"end\">{}</text>",
                     L, W - R, sy(t), sy(t), L - 6, sy(t) + 4, esc(axis_tick(t, ylabel)));
  for (double t : ticks(x0, x1, logx))
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/><text "
                     "x=\"{:.1f}\" y=\"{}\" class=\"tl\" text-anchor=\"middle\">{}</text>",
                     sx(t), sx(t), T, H - B, sx(t), H - B + 16, esc(axis_tick(t, xlabel)));
  o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"al\" text-anchor=\"middle\">{}</text>",
                   (L + W - R) / 2, H - 10, esc(xlabel));
  o += fmt::format("<text x=\"14\" y=\"{}\" class=\"al\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 14 {})\">{}</text>",
                   (T + H - B) / 2, (T + H - B) / 2,
                   esc(ylabel.rfind("TFLOP/s", 0) == 0 ? "throughput" : ylabel));
  return o;
}

string strip_points(const strip& st, double cx, const scale& sy) {
  string o;
  std::vector<double> v = *st.values;
  for (size_t i = 0; i < v.size(); ++i)
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" opacity=\"0.75\">"
                     "<title>{}: {}</title></circle>",
                     cx + 60 * ((double(i % 9) / 8.0) - 0.5), sy(v[i]), st.color, esc(st.sublabel),
                     esc(format_quantity(v[i], st.unit)));
  if (!v.empty()) {
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    o +=
        fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#222\" "
                    "stroke-width=\"2\"><title>median {}</title></line>",
                    cx - 40, cx + 40, sy(med), sy(med), esc(format_quantity(med, st.unit)));
  }
  return o;
}

// A side drawn as one point has no line to read it from: its value is written beside it, in the
// value axis's unit ("648 TFLOP/s"). Runs drawn one by one (no legend entry) are not labelled.
string lone_value(const series& s, const scale& sx, const scale& sy, const string& ylabel,
                  bool logx, bool logy) {
  if (s.pts.size() != 1 || !s.legend)
    return "";
  const auto [x, y] = s.pts.front();
  if ((logx && x <= 0) || (logy && y <= 0))
    return "";
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl pv\">{}</text>", sx(x) + 7,
                     sy(y) - 6, esc(axis_tick(y, ylabel)));
}

} // namespace

// Tick labels with SI prefixes: "500 k", "1.5 G", "20 m"; plain between 0.01 and 1000.
string si_tick(double v) {
  const double a = std::fabs(v);
  if (a == 0 || (a >= 0.01 && a < 1000))
    return fmt::format("{:.3g}", v);
  static const std::pair<double, const char*> prefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"},       {1e6, "M"}, {1e3, "k"},
      {1, ""},     {1e-3, "m"}, {1e-6, "\u00b5"}, {1e-9, "n"}};
  for (const auto& [f, p] : prefixes)
    if (a >= f * 0.9999)
      return fmt::format("{:.3g} {}", v / f, p);
  return fmt::format("{:.3g}", v);
}

// A tick of an axis whose title names a unit format_quantity scales ("TFLOP/s", "FLOP per
// iteration"): "1.50 PFLOP/s", "2.00 TFLOP"; other axes get SI prefixes alone.
string axis_tick(double v, const string& axis_title) {
  for (const char* unit : {"TFLOP/s", "FLOP"})
    if (axis_title.rfind(unit, 0) == 0)
      return format_quantity(v, unit);
  return si_tick(v);
}
std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> t;
  if (log) {
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p) {
      double v = std::pow(10.0, p);
      if (v >= lo * 0.999 && v <= hi * 1.001)
        t.push_back(v);
    }
    if (t.size() < 3) { // less than two decades: 1-2-5 steps inside the range
      t.clear();
      for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p)
        for (double m : {1.0, 2.0, 5.0}) {
          const double v = m * std::pow(10.0, p);
          if (v >= lo * 0.999 && v <= hi * 1.001)
            t.push_back(v);
        }
    }
    if (t.size() < 2)
      t = {lo, hi};
    return t;
  }
  const double span = hi - lo;
  if (span <= 0)
    return {lo};
  const double raw = span / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(v);
  return t;
}

// Scatter / line chart with axes and <title> on every point.
string xy_chart(const string& title, const string& xlabel, const string& ylabel,
                const std::vector<series>& ss, bool logx, bool logy, const string& note) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : ss)
    for (const auto& [x, y] : s.pts) {
      if ((logx && x <= 0) || (logy && y <= 0))
        continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (x0 > x1)
    return "";
  if (x0 == x1)
    x0 = logx ? x0 / 2 : x0 - 1, x1 = logx ? x1 * 2 : x1 + 1;
  if (y0 == y1)
    y0 = logy ? y0 / 2 : y0 - 1, y1 = logy ? y1 * 2 : y1 + 1;
  if (!logy && y0 > 0)
    y0 = 0;
  if (logx)
    x0 /= 1.5, x1 *= 1.5;
  if (logy)
    y0 /= 1.5, y1 *= 1.5;
  else
    y1 += (y1 - y0) * 0.08;
  const int W = 560, H = 300, L = 100, R = 20, T = 30, B = 50;
  scale sx{x0, x1, double(L), double(W - R), logx}, sy{y0, y1, double(H - B), double(T), logy};
  std::ostringstream o;
  // The legend goes under the plot, one row per entry: never over the data.
  const int legend_rows = static_cast<int>(
      std::count_if(ss.begin(), ss.end(), [](const series& s) { return s.legend; }));
  const int HL = H + 16 * legend_rows;
  o << fmt::format("<figure class=\"chart\"><svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                   "role=\"img\" aria-label=\"{}\">",
                   W, HL, W, HL, esc(title));
  o << fmt::format("<text x=\"{}\" y=\"18\" class=\"ct\">{}</text>", L, esc(title));
  o << xy_axes(sx, sy, xlabel, ylabel, {y0, y1, x0, x1}, logx, logy);
  int li = 0;
  for (const auto& s : ss) {
    if (s.line && s.pts.size() > 1) {
      string d;
      for (const auto& [x, y] : s.pts)
        d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", sx(x), sy(y));
      o << fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" opacity=\"0.8\"/>", d,
          s.color);
    }
    for (size_t i = 0; i < s.pts.size(); ++i) {
      const auto& [x, y] = s.pts[i];
      if ((logx && x <= 0) || (logy && y <= 0))
        continue;
      const string tip = i < s.titles.size() ? s.titles[i]
                                             : fmt::format("{}: {} = {}, {} = {}", s.name, xlabel,
                                                           exact(x), ylabel, exact(y));
      o << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" "
                       "opacity=\"0.85\"><title>{}</title></circle>",
                       sx(x), sy(y), s.color, esc(tip));
    }
    o << lone_value(s, sx, sy, ylabel, logx, logy);
    if (!s.legend)
      continue;
    o << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text "
                     "x=\"{}\" y=\"{}\" class=\"tl\">{}</text>",
                     L, H + 16 * li, s.color, L + 15, H + 9 + 16 * li,
                     esc(s.name.size() > 70 ? s.name.substr(0, 68) + "…" : s.name));
    ++li;
  }
  o << "</svg>";
  if (!note.empty())
    o << "<figcaption>" << esc(note) << "</figcaption>";
  o << "</figure>";
  return o.str();
}

// Ticks of a ratio axis (log scale): the ratios people read (0.5x, 0.8x, 1x, 1.25x, 2x...) that
// fall inside the range, 1x always among them.
std::vector<double> ratio_ticks(double lo, double hi) {
  static const double nice[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1,
                                1.1,  1.25, 1.5,  2,   3,   4,    5,   10,   20,  50,  100};
  std::vector<double> t;
  for (double v : nice)
    if (v >= lo && v <= hi)
      t.push_back(v);
  // Neighbours closer than 4% of the axis width overlap as text: keep every other, and 1x.
  const double span = std::log10(hi) - std::log10(lo);
  std::vector<double> kept;
  for (double v : t)
    if (kept.empty() || (std::log10(v) - std::log10(kept.back())) / span > 0.06)
      kept.push_back(v);
    else if (v == 1)
      kept.back() = 1;
  return kept;
}

string ratio_label(double v) { return fmt::format("{:g}\u00d7", v); }

// ci: the whiskers' label, "99% CI".
string bar_chart(const string& title, const string& xlabel, const std::vector<bar>& bars,
                 double ref, bool logx, const string& ci) {
  if (bars.empty())
    return "";
  double x0 = logx ? 1e300 : 0, x1 = ref;
  for (const auto& b : bars) {
    x1 = std::max({x1, b.v, b.hi});
    if (logx)
      x0 = std::min({x0, b.v > 0 ? b.v : x0, b.lo > 0 ? b.lo : x0, ref});
  }
  if (logx)
    x0 /= 1.3, x1 *= 1.3;
  else
    x1 *= 1.1;
  const int W = 1100, L = 430, R = 30, T = 30, row = 22, H = T + row * int(bars.size()) + 40;
  scale sx{x0, x1, double(L), double(W - R), logx};
  std::ostringstream o;
  o << fmt::format("<figure class=\"chart wide\"><svg viewBox=\"0 0 {} {}\" width=\"{}\" "
                   "height=\"{}\" role=\"img\" aria-label=\"{}\">",
                   W, H, W, H, esc(title));
  o << fmt::format("<text x=\"10\" y=\"18\" class=\"ct\">{}</text>", esc(title));
  for (double t : logx ? ratio_ticks(x0, x1) : ticks(x0, x1, false)) {
    const double x = sx(t);
    o << fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/><text "
                     "x=\"{:.1f}\" y=\"{}\" class=\"tl\" text-anchor=\"middle\">{}</text>",
                     x, x, T, H - 35, x, H - 20, esc(logx ? ratio_label(t) : num(t)));
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = T + row * double(i);
    // A ratio's bar starts at the reference (1x) and runs right when better, left when worse;
    // a percentage's starts at 0.
    const double from = sx(logx ? ref : 0), to = sx(std::max(b.v, logx ? x0 : 0.0));
    const double xa = std::min(from, to), xb = std::max(from, to);
    o << fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"end\">{}</text>",
                     L - 8, y + 15,
                     esc(b.label.size() > 66 ? b.label.substr(0, 64) + "…" : b.label));
    o << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\" "
                     "opacity=\"0.8\"><title>{}</title></rect>",
                     xa, y + 4, std::max(0.0, xb - xa), b.color, esc(b.tip));
    if (b.hi > b.lo && b.lo > 0) {
      const double l = sx(b.lo), h = sx(b.hi), m = y + 11;
      o << fmt::format("<g class=\"whisker\"><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
                       "y2=\"{:.1f}\"/><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
                       "y2=\"{:.1f}\"/><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
                       "y2=\"{:.1f}\"/><title>{} [{}, {}]</title></g>",
                       l, h, m, m, l, l, m - 5, m + 5, h, h, m - 5, m + 5, esc(ci), exact(b.lo),
                       exact(b.hi));
    }
  }
  const double xr = sx(ref);
  o << fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"ref\"/>", xr, xr,
                   T - 4, H - 35);
  o << fmt::format("<text x=\"{}\" y=\"{}\" class=\"al\" text-anchor=\"middle\">{}</text>",
                   (L + W - R) / 2, H - 4, esc(xlabel));
  o << "</svg></figure>";
  return o.str();
}

// Samples of both sides on a categorical x axis (baseline | candidate), the value axis in SI
// units from zero, the categories named under the axis: no legend over the data.
string strip_chart(const string& title, const strip& a, const strip& b) {
  double hi = 0;
  for (const auto* st : {&a, &b})
    for (double v : *st->values)
      hi = std::max(hi, v);
  if (!(hi > 0))
    return "";
  const int W = 560, H = 300, L = 80, R = 20, T = 30, B = 56;
  const std::vector<double> yt = ticks(0, hi * 1.08, false);
  scale sy{0, std::max(hi * 1.08, yt.back()), double(H - B), double(T), false};
  std::ostringstream o;
  o << fmt::format("<figure class=\"chart\"><svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                   "role=\"img\" aria-label=\"{}\">",
                   W, H, W, H, esc(title));
  o << fmt::format("<text x=\"{}\" y=\"18\" class=\"ct\">{}</text>", L, esc(title));
  for (double t : yt)
    o << fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text "
                     "x=\"{}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"end\">{}</text>",
                     L, W - R, sy(t), sy(t), L - 6, sy(t) + 4, esc(format_quantity(t, a.unit)));
  const double c1 = L + (W - R - L) * 0.28, c2 = L + (W - R - L) * 0.72;
  for (const auto& [st, cx] : {std::pair{&a, c1}, std::pair{&b, c2}}) {
    o << strip_points(*st, cx, sy);
    o << fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" class=\"al\" text-anchor=\"middle\" "
        "style=\"fill:{}\">{}</text><text x=\"{:.1f}\" y=\"{}\" class=\"tl\" "
        "text-anchor=\"middle\">{}</text>",
        cx, H - B + 18, st->color, esc(st->label), cx, H - B + 33,
        esc(st->sublabel.size() > 40 ? st->sublabel.substr(0, 38) + "…" : st->sublabel));
  }
  o << fmt::format("<text x=\"14\" y=\"{}\" class=\"al\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 14 {})\">sample ({})</text>",
                   (T + H - B) / 2, (T + H - B) / 2, esc(a.unit));
  o << "</svg><figcaption>Each dot is one sample; the black bar is the "
       "median.</figcaption></figure>";
  return o.str();
}

} // namespace accelbench::html
