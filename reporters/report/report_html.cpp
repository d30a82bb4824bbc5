// The HTML report: one self-contained file. No network requests at all (no CDN, no web fonts,
// no external images): inline CSS, inline SVG charts with <title> tooltips, a little inline JS
// for sortable tables. Every string that comes from users or logs goes through html_escape; the
// embedded data goes through json_for_script so "</script>" in a system name stays inert.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/compare/format.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/units.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report {

namespace {

// A control character HTML would carry raw (a NUL, an ESC, DEL; tab and newline are text): shown
// as U+FFFD, the mark repair_utf8 gives a bad byte, so that it is seen, never acted on by a
// terminal that shows the page's source, and never a NUL a browser silently drops.
bool html_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F; }

// The C1 controls U+0080..U+009F, written in UTF-8 as 0xC2 0x80..0x9F, at s[i].
bool html_c1_control(const std::string& s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xC2 && i + 1 < s.size() &&
         static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(s[i + 1]) <= 0x9F;
}

constexpr const char* k_replacement = "\xEF\xBF\xBD"; // U+FFFD

} // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      if (html_control(static_cast<unsigned char>(c))) {
        out += k_replacement;
      } else if (html_c1_control(s, i)) {
        out += k_replacement;
        ++i;
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string json_for_script(const json& j) {
  // dump() with ensure_ascii=false keeps UTF-8; then the characters that could close the element
  // or open a comment are replaced by JSON \u escapes (still the same JSON value).
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + 64);
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
             (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
              static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c ==
               0x7F) { // dump() escapes C0 controls, not DEL and C1: no raw control in the page
      out += "\\u007f";
    } else if (html_c1_control(s, i)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

namespace {

using std::string;
const char* k_base_color = "#4e79a7";
const char* k_cand_color = "#e15759";
const char* k_neutral_color = "#9a9a9a"; // no significant difference, inconclusive, not tested

string esc(const string& s) { return html_escape(s); }

string num(double v) {
  if (!std::isfinite(v))
    return "n/a";
  const double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= 1e6 || a < 1e-3)
    return fmt::format("{:.3e}", v);
  if (a >= 1000)
    return fmt::format("{:.0f}", v);
  if (a >= 100)
    return fmt::format("{:.1f}", v);
  if (a >= 10)
    return fmt::format("{:.2f}", v);
  return fmt::format("{:.4g}", v);
}

string exact(double v) { return fmt::format("{:.6g}", v); }

string opt_cell(const std::optional<double>& v, const string& suffix = "") {
  if (!v)
    return "<td data-v=\"\">–</td>";
  return fmt::format("<td data-v=\"{}\">{}{}</td>", exact(*v), num(*v), suffix);
}

string num_cell(double v, const string& title = "") {
  return fmt::format("<td data-v=\"{}\"{}>{}</td>", exact(v),
                     title.empty() ? "" : " title=\"" + esc(title) + "\"", num(v));
}

// Counts (accelerators, runs, pairs) are whole numbers: "64", never "64.00".
string int_cell(size_t v) { return fmt::format("<td data-v=\"{0}\" class=\"n\">{0}</td>", v); }

// "1 run", "3 runs".
string count_of(size_t n, const string& one, const string& many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

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

// Links only for http(s) addresses; anything else stays text.
string link_or_text(const string& s) {
  if (s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0)
    return "<a href=\"" + esc(s) + "\" rel=\"noopener noreferrer\">" + esc(s) + "</a>";
  return esc(s);
}

// A provenance record as one line: its text fields joined with " · ", addresses as links.
string provenance_line(const json& pv, std::initializer_list<const char*> keys) {
  string line;
  for (const char* k : keys)
    if (pv.contains(k) && pv[k].is_string() && !pv[k].get<string>().empty())
      line += (line.empty() ? "" : " · ") + link_or_text(pv[k].get<string>());
  return line;
}

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

struct series {
  string name, color;
  std::vector<std::pair<double, double>> pts;
  bool line = false;
  std::vector<string> titles; // per point tooltip (optional)
  bool legend = true;         // one legend entry per side, not per run
};

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

// Scatter / line chart with axes and <title> on every point.
string xy_chart(const string& title, const string& xlabel, const string& ylabel,
                const std::vector<series>& ss, bool logx, bool logy, const string& note = "") {
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

// Horizontal bars with CI whiskers and a reference line (speed-up = 1).
struct bar {
  string label, tip, color;
  double v = 0, lo = 0, hi = 0;
};

// ci: the whiskers' label, "99% CI".
string bar_chart(const string& title, const string& xlabel, const std::vector<bar>& bars,
                 double ref, bool logx, const string& ci = "CI") {
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

// Per accelerator: "–" with the reason when the count or the figure is unknown, never an empty
// cell.
string per_accelerator_cell(const side_score& s) {
  if (!(s.per_accelerator > 0) || s.per_accelerator_unit.empty())
    return "<td data-v=\"\" title=\"accelerator count or figure unknown\">–</td>";
  return fmt::format("<td data-v=\"{}\" class=\"n\">{} <span class=\"u\">{}</span></td>",
                     exact(s.per_accelerator), num(s.per_accelerator), esc(s.per_accelerator_unit));
}

// The label of the report's CIs, at the level of compare's test: "99% CI".
string ci_label(const report_model& r) { return compare::ci_label(1 - r.ci_level); }

string side_cell(const side_score& s, const string& ci) {
  // No usable run (all skipped, failed or INVALID): no score, not a score of 0.
  if (!(s.value > 0))
    return "<td data-v=\"\" title=\"no usable run: no score\">–</td>";
  return fmt::format(
      "<td data-v=\"{}\" title=\"{}\">{} <span class=\"u\">{}</span><div class=\"ci\">[{}, "
      "{}]{}</div></td>",
      exact(s.value),
      esc(fmt::format("{} {}; {} [{}, {}]; {} run(s), {} sample(s)", exact(s.value), s.unit, ci,
                      exact(s.ci_low), exact(s.ci_high), s.runs, s.samples)),
      num(s.value), esc(s.unit), num(s.ci_low), num(s.ci_high),
      s.ci_degenerate ? " <span class=\"deg\">degenerate</span>" : "");
}

// "good" / "bad" only for compare's improved / regressed: no colour says more than the test.
string verdict_class(const pair_result& p) {
  return p.verdict == "improved" ? "good" : p.verdict == "regressed" ? "bad" : "";
}

string badge(const string& source) {
  return fmt::format("<span class=\"badge {}\">{}</span>",
                     source == "published"  ? "pub"
                     : source == "measured" ? "meas"
                                            : "oth",
                     esc(source));
}

const char* k_css = R"CSS(
:root{--b:#4e79a7;--c:#e15759;--fg:#1d1d1f;--mut:#666;--bd:#d8d8de}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);margin:0;background:#fff;font-size:14px;line-height:1.45}
main{max-width:1220px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--bd);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.answer{font-size:18px;background:#f4f7fb;border-left:4px solid var(--b);padding:10px 14px;margin:12px 0}
.meta{color:var(--mut);font-size:12px}
table{border-collapse:collapse;width:100%;margin:6px 0 14px;font-size:13px}
th,td{border-bottom:1px solid var(--bd);padding:5px 7px;text-align:left;vertical-align:top}
th{background:#f6f6f8;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th.asc::after{content:" \25B2";font-size:10px}table.sortable th.desc::after{content:" \25BC";font-size:10px}
td[data-v]{font-variant-numeric:tabular-nums}
td.n{white-space:nowrap;font-variant-numeric:tabular-nums}td.n .note{white-space:normal;min-width:16em}
.ci{color:var(--mut);font-size:11px}.u{color:var(--mut);font-size:11px}
.deg{color:#a05a00}
.badge{font-size:11px;border-radius:3px;padding:0 4px;border:1px solid}
.badge.pub{color:#6a3d9a;border-color:#cab2d6}.badge.meas{color:#1b7837;border-color:#a6dba0}.badge.oth{color:#555;border-color:#ccc}
.flag{color:#b30000;font-size:12px}.note{color:#555;font-size:12px}
.good{color:#1b7837;font-weight:600}.bad{color:#b30000;font-weight:600}
.warn{color:#a05a00;font-weight:600;font-size:12px}.implausible{color:#b30000;font-weight:600}.plausible{color:#1b7837}
figure.chart{display:inline-block;margin:6px 10px 10px 0;vertical-align:top}figure.wide{display:block}
figcaption{font-size:12px;color:var(--mut);max-width:560px}
svg{background:#fff;max-width:100%;height:auto}
svg .ct{font-size:13px;font-weight:600}svg .tl{font-size:11px;fill:#333}svg .al{font-size:12px;fill:#333}
svg .grid{stroke:#e6e6ea;stroke-width:1}svg .ref{stroke:#333;stroke-dasharray:4 3}
svg .whisker line{stroke:#222;stroke-width:1.3}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
#js-errors{color:#b30000;font-weight:600}
details.fold>summary{cursor:pointer;list-style:none}details.fold>summary::-webkit-details-marker{display:none}
details.fold>summary h2{display:inline-block;width:100%}details.fold>summary h2::before{content:"\25B8  ";color:var(--mut)}details.fold[open]>summary h2::before{content:"\25BE  "}
details.flags>summary{cursor:pointer;color:#b30000;font-size:12px}
code{font-size:12px;background:#f3f3f5;padding:0 3px;border-radius:3px;word-break:break-all}
@media print{main{max-width:none;padding:0}th{position:static}figure.chart{break-inside:avoid}h2{break-after:avoid}table{font-size:10px}.noprint{display:none}}
)CSS";

// Sortable tables; window.onerror writes into #js-errors so a headless browser test can see
// script errors in the dumped DOM. No network, no eval, no innerHTML with data.
const char* k_js = R"JS(
(function(){
  var box=document.getElementById('js-errors');
  window.onerror=function(msg,src,line){box.hidden=false;box.textContent+='script error: '+msg+' (line '+line+')\n';};
  try{
    var data=JSON.parse(document.getElementById('report-data').textContent);
    document.body.setAttribute('data-pairs',String(data.pairs.length));
    var tables=document.querySelectorAll('table.sortable');
    Array.prototype.forEach.call(tables,function(t){
      var ths=t.tHead?t.tHead.rows[0].cells:[];
      Array.prototype.forEach.call(ths,function(th,col){
        th.addEventListener('click',function(){
          var asc=!th.classList.contains('asc');
          Array.prototype.forEach.call(ths,function(h){h.classList.remove('asc','desc');});
          th.classList.add(asc?'asc':'desc');
          var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
          rows.sort(function(a,b){
            var ca=a.cells[col],cb=b.cells[col];if(!ca||!cb)return 0;
            var va=ca.getAttribute('data-v'),vb=cb.getAttribute('data-v');
            var x,y;
            if(va!==null&&vb!==null&&va!==''&&vb!==''&&!isNaN(+va)&&!isNaN(+vb)){x=+va;y=+vb;}
            else{x=ca.textContent.toLowerCase();y=cb.textContent.toLowerCase();}
            return (x<y?-1:x>y?1:0)*(asc?1:-1);
          });
          rows.forEach(function(r){body.appendChild(r);});
        });
      });
    });
    // A link to a row inside a folded section opens the section first.
    function reveal(id){var el=id&&document.getElementById(id);for(;el;el=el.parentElement)if(el.tagName==='DETAILS')el.open=true;}
    window.addEventListener('hashchange',function(){reveal(location.hash.slice(1));});
    reveal(location.hash.slice(1));
    document.body.setAttribute('data-js-ok','1');
  }catch(e){box.hidden=false;box.textContent+='script error: '+e.message+'\n';}
})();
)JS";

} // namespace

namespace {

// The words of a pair label ("gemm K=1024 M=1024 dtype=fp32"): the workload (or model, benchmark)
// then its config values.
std::vector<string> words_of(const string& label) {
  std::vector<string> out;
  std::istringstream in(label);
  for (string w; in >> w;)
    out.push_back(w);
  return out;
}

// The config values every pair shares, said once above the pairs instead of in every label
// (none when there is a single pair of one kind, whose label then stays whole).
std::vector<string> common_config(const report_model& r) {
  if (r.pairs.size() < 2)
    return {};
  std::vector<string> common = words_of(r.pairs.front().label);
  if (!common.empty())
    common.erase(common.begin()); // the workload is said in every label
  for (const auto& p : r.pairs) {
    const auto w = words_of(p.label);
    std::erase_if(common, [&w](const string& c) {
      return c.find('=') == string::npos || std::find(w.begin() + 1, w.end(), c) == w.end();
    });
  }
  return common;
}

// A pair's label without the values every pair shares: what tells the pairs apart.
string brief_label(const report_model& r, const pair_result& p) {
  const auto common = common_config(r);
  string out;
  for (const auto& w : words_of(p.label))
    if (std::find(common.begin(), common.end(), w) == common.end())
      out += (out.empty() ? "" : " ") + w;
  return out;
}

// One line under the summary's heading with what every pair shares.
void write_common_config(std::ostringstream& o, const report_model& r) {
  const auto common = common_config(r);
  if (common.empty())
    return;
  string all;
  for (const auto& c : common)
    all += (all.empty() ? "" : " ") + c;
  o << "<p class=\"note\" id=\"common-config\">Every pair: <code>" << esc(all)
    << "</code> (left out of the labels below)</p>\n";
}

// The flags of a pair: one shown as it is, several folded under their count.
void write_flags(std::ostringstream& o, const std::vector<string>& flags) {
  if (flags.size() > 1)
    o << "<details class=\"flags\"><summary>" << flags.size() << " flags</summary>";
  for (const auto& f : flags)
    o << "<div class=\"flag\">" << esc(f) << "</div>";
  if (flags.size() > 1)
    o << "</details>";
}

} // namespace

namespace {

// One writer per section of the page, in page order.
void write_head(std::ostringstream& o, const report_model& r) {
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>accelbench report: " << esc(r.candidate_label) << " vs " << esc(r.baseline_label)
    << "</title>"
    << "<style>" << k_css << "</style></head><body><main>\n";
  o << "<div id=\"js-errors\" hidden></div>\n";
  o << "<h1>accelbench report</h1>\n";
  o << fmt::format(
      "<p class=\"meta\">baseline <code>{}</code> · candidate <code>{}</code> · generated {} by "
      "accelbench {} (revision <code>{}</code>) · schema_version {}</p>\n",
      esc(r.baseline_label), esc(r.candidate_label), esc(r.generated_at), esc(r.harness_version),
      esc(r.harness_revision), r.schema_version);
  o << "<p class=\"answer\" id=\"answer\">" << esc(r.headline) << "</p>\n";
  o << fmt::format("<p class=\"legend\"><span><i class=\"sw\" "
                   "style=\"background:{}\"></i>baseline</span><span><i class=\"sw\" "
                   "style=\"background:{}\"></i>candidate</span>"
                   "Speed-up &gt; 1 means the candidate is better (direction-aware: time ratios "
                   "are inverted).</p>\n",
                   k_base_color, k_cand_color);
}

void write_summary(std::ostringstream& o, const report_model& r) {
  // ---- summary table
  o << "<h2>Summary</h2>\n";
  write_common_config(o, r);
  o << "<table class=\"sortable\" "
       "id=\"summary\"><thead><tr><th>pair</th><th>family</th><th>workload / "
       "config</th><th>baseline</th><th>candidate</th>"
       "<th>speed-up</th><th>"
    << esc(ci_label(r))
    << "</th><th>verdict</th><th>per accelerator</th><th>in "
       "summary</th><th>flags</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs) {
    o << "<tr><td data-v=\"" << esc(p.id.substr(1)) << "\"><a href=\"#" << esc(p.id) << "\">"
      << esc(p.id) << "</a></td><td>" << esc(p.family) << "</td><td title=\"" << esc(p.label)
      << "\">" << esc(brief_label(r, p)) << "</td>";
    o << fmt::format("<td>{} {}</td>", esc(p.baseline.display), badge(p.baseline.source));
    o << fmt::format("<td>{} {}</td>", esc(p.candidate.display), badge(p.candidate.source));
    // Green or red only where compare's rule calls the pair improved or regressed.
    const string cls = verdict_class(p);
    if (p.speedup > 0)
      o << fmt::format("<td data-v=\"{}\"{} title=\"{}\">{:.2f}x</td>", exact(p.speedup),
                       cls.empty() ? "" : " class=\"" + cls + "\"", esc(exact(p.speedup)),
                       p.speedup);
    else
      o << "<td data-v=\"\">–</td>";
    if (!(p.speedup > 0) || p.verdict == "not tested") // one figure per side: no CI
      o << "<td data-v=\"\">–</td>";
    else
      o << fmt::format("<td data-v=\"{}\">[{:.2f}, {:.2f}]{}</td>", exact(p.speedup_ci_low),
                       p.speedup_ci_low, p.speedup_ci_high,
                       p.ci_degenerate
                           ? " <span class=\"deg\" title=\"one sample per side\">degenerate</span>"
                           : "");
    o << fmt::format("<td class=\"verdict{}\" title=\"{}\">{}<div class=\"note\">{}</div></td>",
                     cls.empty() ? "" : " " + cls, esc(p.verdict + ": " + p.verdict_reason),
                     esc(p.statement), esc(p.qualifier));
    o << opt_cell(p.per_accelerator_speedup, "x");
    if (p.in_summary)
      o << "<td>yes</td>";
    else {
      o << "<td><span class=\"" << (p.like_for_like ? "warn" : "warn nl4l") << "\">"
        << (p.like_for_like ? "left out" : "not like-for-like") << "</span>";
      for (const auto& why : p.excluded_because)
        o << "<div class=\"note\">" << esc(why) << "</div>";
      o << "</td>";
    }
    o << "<td>";
    write_flags(o, p.flags);
    o << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
}

void write_families(std::ostringstream& o, const report_model& r) {
  if (!r.summaries.empty()) {
    o << "<table class=\"sortable\" id=\"families\"><thead><tr><th>family</th><th>like-for-like "
         "pairs</th><th>baselines (each counted once)</th><th>left out</th>"
         "<th>faster / slower / no difference / inconclusive / not tested</th><th>geomean "
         "speed-up</th><th>geomean per accelerator</th><th>workloads</th></tr></thead><tbody>\n";
    for (const auto& f : r.summaries) {
      string wl;
      for (const auto& w : f.workloads)
        wl += (wl.empty() ? "" : ", ") + w;
      o << "<tr><td>" << esc(f.family) << "</td>" << int_cell(f.pairs) << int_cell(f.baselines)
        << int_cell(f.excluded)
        << fmt::format("<td>{} / {} / {} / {} / {}</td>", f.faster, f.slower, f.no_difference,
                       f.inconclusive, f.not_tested)
        << (f.pairs ? num_cell(f.geomean_speedup) : string("<td data-v=\"\">–</td>"))
        << opt_cell(f.geomean_per_accelerator_speedup) << "<td>" << esc(wl) << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
  }
}

void write_speedup_chart(std::ostringstream& o, const report_model& r) {
  // ---- charts
  o << "<h2>Charts</h2>\n";
  {
    std::vector<bar> bars;
    for (const auto& p : r.pairs)
      if (p.speedup > 0)
        bars.push_back(
            {p.id + " " + brief_label(r, p) + " (" + p.candidate.display + " vs " +
                 p.baseline.display + ")",
             fmt::format("{}: speed-up {} ({} [{}, {}]): {}", p.id, exact(p.speedup), ci_label(r),
                         exact(p.speedup_ci_low), exact(p.speedup_ci_high), p.statement),
             p.verdict == "improved"    ? k_cand_color
             : p.verdict == "regressed" ? k_base_color
                                        : k_neutral_color,
             p.speedup, p.speedup_ci_low, p.speedup_ci_high});
    o << bar_chart("Speed-up per pair (candidate vs baseline), " + ci_label(r) + " whiskers",
                   "speed-up (log scale): bars start at 1\u00d7 (no change) and run right when the "
                   "candidate is better, left when worse",
                   bars, 1.0, true, ci_label(r));
  }
}

void write_throughput_charts(std::ostringstream& o, const report_model& r) {
  // Throughput vs problem size (kernel pairs), per side.
  {
    std::map<string, std::pair<series, series>> by_workload;
    for (const auto& p : r.pairs) {
      if (p.family != "kernel")
        continue;
      auto& [b, c] = by_workload[p.workload];
      b.name = "baseline: " + p.baseline.display;
      b.color = k_base_color;
      c.name = "candidate: " + p.candidate.display;
      c.color = k_cand_color;
      for (const auto& pt : p.baseline.size_points) {
        b.pts.push_back(pt);
        b.titles.push_back(fmt::format("{} {}: {} FLOP per iteration, {} TFLOP/s", p.id,
                                       p.baseline.display, exact(pt.first), exact(pt.second)));
      }
      for (const auto& pt : p.candidate.size_points) {
        c.pts.push_back(pt);
        c.titles.push_back(fmt::format("{} {}: {} FLOP per iteration, {} TFLOP/s", p.id,
                                       p.candidate.display, exact(pt.first), exact(pt.second)));
      }
    }
    for (auto& [w, bc] : by_workload)
      o << xy_chart("Throughput vs problem size: " + w, "FLOP per iteration (log)", "TFLOP/s",
                    {bc.first, bc.second}, true, false);
  }
}

// One device's roofs over [x0, x1]: attainable TFLOP/s = min(peak, bandwidth x intensity), the
// bandwidth in TB/s times FLOP per byte giving TFLOP/s. Without a bandwidth only the flat roof.
series roof_of(const string& name, double peak, double bw, double x0, double x1) {
  series roof{name, "#7f7f7f", {}, true, {}, true};
  if (bw <= 0 || peak / bw <= x0)
    roof.pts = {{x0, peak}, {x1, peak}};
  else if (peak / bw >= x1)
    roof.pts = {{x0, bw * x0}, {x1, bw * x1}};
  else
    roof.pts = {{x0, bw * x0}, {peak / bw, peak}, {x1, peak}};
  return roof;
}

// Roofline proper: each kernel side whose runs record their bytes, at its arithmetic intensity,
// under the compute and memory roofs of its device.
void write_intensity_roofline(std::ostringstream& o, const report_model& r) {
  series base{"baseline", k_base_color, {}, false, {}, true};
  series cand{"candidate", k_cand_color, {}, false, {}, true};
  std::map<std::pair<double, double>, string> roofs; // (peak, bandwidth) -> device
  double x0 = 1e300, x1 = 0;
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      if (!s->intensity || s->peak_tflops <= 0 || s->value <= 0 || s->quantity != "tflops")
        continue;
      series& into = s == &p.candidate ? cand : base;
      into.pts.emplace_back(*s->intensity, s->value);
      into.titles.push_back(fmt::format(
          "{} {}: {} FLOP/byte, {} TFLOP/s (roof {} TFLOP/s)", p.id, s->display,
          exact(*s->intensity), exact(s->value),
          exact(std::min(s->peak_tflops, s->bandwidth_tb_s > 0 ? s->bandwidth_tb_s * *s->intensity
                                                               : s->peak_tflops))));
      roofs.emplace(std::make_pair(s->peak_tflops, s->bandwidth_tb_s),
                    s->device_name.empty() ? s->display : s->device_name);
      x0 = std::min(x0, *s->intensity), x1 = std::max(x1, *s->intensity);
    }
  if (roofs.empty())
    return;
  x0 /= 8, x1 *= 8;
  std::vector<series> ss;
  ss.reserve(roofs.size() + 2);
  for (const auto& [pb, device] : roofs)
    ss.push_back(roof_of(
        fmt::format("roof: {} ({} TFLOP/s, {})", device, exact(pb.first),
                    pb.second > 0 ? exact(pb.second) + " TB/s" : string("memory roof unknown")),
        pb.first, pb.second, x0, x1));
  ss.push_back(base);
  ss.push_back(cand);
  o << xy_chart(
      "Roofline: attainable TFLOP/s vs arithmetic intensity",
      "arithmetic intensity (FLOP per byte, log)", "TFLOP/s (log)", ss, true, true,
      "Roofs (grey): min(peak compute, memory bandwidth x intensity) of each device from "
      "the device catalogue. Bytes are the least traffic of the kernel (each operand read "
      "once, the output written once), so a point's intensity is an upper bound and its "
      "distance to the roof a lower bound of what is left.");
}

void write_roofline(std::ostringstream& o, const report_model& r) {
  write_intensity_roofline(o, r);
  // Achieved vs the compute roof of each side's device (kernels) or MFU (training).
  {
    std::vector<bar> bars;
    for (const auto& p : r.pairs)
      for (const auto* s : {&p.baseline, &p.candidate})
        if (s->pct_of_peak) {
          const bool cand = s == &p.candidate;
          bars.push_back(
              {fmt::format("{} {} {}", p.id, cand ? "cand" : "base", s->display),
               fmt::format("{}: {} = {}% of peak {} TFLOP/s ({})", s->display,
                           s->pct_of_peak_kind == "mfu" ? "MFU" : "achieved",
                           exact(*s->pct_of_peak), exact(s->peak_tflops), s->peak_source),
               cand ? k_cand_color : k_base_color, *s->pct_of_peak, 0, 0});
        }
    o << bar_chart("Achieved TFLOP/s or MFU as % of the device peak",
                   "% of peak (dashed line = 100%)", bars, 100.0, false);
  }
}

void write_eval_curves(std::ostringstream& o, const report_model& r) {
  // Training loss / eval metric vs time (eval curves of the runs).
  {
    for (const auto& p : r.pairs) {
      std::vector<series> ss;
      string xl, yl;
      for (const auto* s : {&p.baseline, &p.candidate})
        for (const auto& c : s->eval_curves) {
          series se;
          se.legend = &c == &s->eval_curves.front();
          se.name = (s == &p.baseline ? "baseline " : "candidate ") + s->display;
          se.color = s == &p.baseline ? k_base_color : k_cand_color;
          se.line = true;
          for (const auto& pt : c["points"]) {
            se.pts.emplace_back(pt[0].get<double>(), pt[1].get<double>());
            se.titles.push_back(fmt::format("{} run {}: {} = {}, {} = {}", s->display,
                                            c.value("run", string()), c.value("x", string()),
                                            exact(pt[0].get<double>()), c.value("y", string()),
                                            exact(pt[1].get<double>())));
          }
          xl = c.value("x", string());
          yl = c.value("y", string());
          ss.push_back(std::move(se));
        }
      if (!ss.empty())
        o << xy_chart(p.id + " " + p.label + ": eval curve per run", xl, yl, ss, false, false,
                      "Each line is one run's evaluations (from run.extra.eval_curve).");
    }
  }
}

void write_mlperf_charts(std::ostringstream& o, const report_model& r) {
  // Time to train per run and scaling with accelerator count.
  {
    std::vector<series> ss;
    series b{"baseline runs", k_base_color, {}, false, {}},
        c{"candidate runs", k_cand_color, {}, false, {}};
    for (const auto& p : r.pairs) {
      if (p.family != "mlperf")
        continue;
      for (auto* pr : {&b, &c}) {
        const side_score& s = pr == &b ? p.baseline : p.candidate;
        for (const auto& rv : s.run_values) {
          pr->pts.emplace_back(double(s.accelerators), rv.value);
          pr->titles.push_back(fmt::format("{} {} run {}: {} min{}", p.label, s.display, rv.uuid,
                                           exact(rv.value), rv.used ? "" : " (not counted)"));
        }
      }
    }
    if (!b.pts.empty() || !c.pts.empty())
      o << xy_chart("Time to train per run vs accelerator count", "accelerators (log)",
                    "minutes (log)", {b, c}, true, true,
                    "Each dot is one MLPerf run; the olympic score drops the fastest and slowest.");
    for (const auto& s : r.scaling) {
      series e{s.device_name + " efficiency", k_cand_color, {}, true, {}};
      for (const auto& pt : s.points) {
        e.pts.emplace_back(double(pt.accelerators), pt.efficiency);
        e.titles.push_back(fmt::format("{} at {} accelerators: {} min, efficiency {}", pt.system,
                                       pt.accelerators, exact(pt.score_min), exact(pt.efficiency)));
      }
      o << xy_chart("Scaling: " + s.benchmark + " on " + s.device_name, "accelerators (log)",
                    "scaling efficiency", {e}, true, false,
                    "Efficiency = (T_ref x N_ref) / (T x N) against the smallest scale.");
    }
  }
}

// One category of a strip plot: its samples, spread sideways (deterministically) so that equal
// values do not hide each other, and their median as a bar.
struct strip {
  string label, sublabel, color, unit;
  const std::vector<double>* values = nullptr;
};

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

// Sample distributions (strip plots), first 12 pairs.
void write_strip_plots(std::ostringstream& o, const report_model& r) {
  size_t shown = 0;
  for (const auto& p : r.pairs) {
    if (shown >= 12)
      break;
    if (p.baseline.sample_values.size() + p.candidate.sample_values.size() < 3 ||
        p.baseline.unit != p.candidate.unit)
      continue;
    const strip a{"baseline", p.baseline.display, k_base_color, p.baseline.unit,
                  &p.baseline.sample_values};
    const strip b{"candidate", p.candidate.display, k_cand_color, p.candidate.unit,
                  &p.candidate.sample_values};
    o << strip_chart(p.id + " samples: " + brief_label(r, p), a, b);
    ++shown;
  }
}

void write_details(std::ostringstream& o, const report_model& r) {
  // ---- details per pair
  o << "<h2>Pairs in detail</h2>\n<table class=\"sortable\" "
       "id=\"details\"><thead><tr><th>pair</th><th>side</th><th>system</th><th>accelerators</"
       "th><th>score ["
    << esc(ci_label(r))
    << "]</th>"
       "<th>per accelerator</th><th>% of peak</th><th>cost / result</th><th>energy / result "
       "(kWh)</th><th>runs</th><th>source</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      o << "<tr id=\"" << (s == &p.baseline ? esc(p.id) : esc(p.id) + "c") << "\"><td data-v=\""
        << esc(p.id.substr(1)) << "\">" << esc(p.id) << "</td><td>"
        << (s == &p.baseline ? "baseline" : "candidate") << "</td><td>" << esc(s->system)
        << "<div class=\"note\">" << esc(s->accelerator_model) << "</div></td>"
        << int_cell(s->accelerators) << side_cell(*s, ci_label(r)) << per_accelerator_cell(*s);
      if (s->pct_of_peak)
        o << fmt::format(
            "<td data-v=\"{}\" title=\"{}\">{:.1f}%{}</td>", exact(*s->pct_of_peak),
            esc(fmt::format("peak {} TFLOP/s: {}", exact(s->peak_tflops), s->peak_source)),
            *s->pct_of_peak, s->pct_of_peak_kind == "mfu" ? " MFU" : "");
      else
        o << "<td data-v=\"\">–</td>";
      if (s->cost_usd)
        o << fmt::format("<td data-v=\"{}\" title=\"{}\">${} <span class=\"u\">per {}</span></td>",
                         exact(*s->cost_usd), esc(s->cost_source), num(*s->cost_usd),
                         esc(p.result_unit));
      else
        o << "<td data-v=\"\">–</td>";
      if (s->energy_kwh)
        o << fmt::format("<td data-v=\"{}\">{} <span class=\"u\">per {}</span><div "
                         "class=\"note\">method: {}</div></td>",
                         exact(*s->energy_kwh), num(*s->energy_kwh), esc(p.result_unit),
                         esc(s->energy_source.empty() ? "not stated" : s->energy_source));
      else
        o << "<td data-v=\"\">–</td>";
      string rv;
      for (const auto& v : s->run_values)
        rv += (rv.empty() ? "" : ", ") + num(v.value) + (v.used ? "" : "*");
      o << "<td class=\"n\" title=\"" << esc(rv) << "\" data-v=\"" << s->runs << "\">" << s->runs
        << (s->mlperf ? "<div class=\"note\">" + esc(rv) + "</div>" : "") << "</td>";
      o << "<td>" << badge(s->source) << "</td></tr>\n";
    }
  o << "</tbody></table>\n";
}

void write_pair_notes(std::ostringstream& o, const report_model& r) {
  for (const auto& p : r.pairs) {
    if (p.notes.empty() && p.environment_differences.empty())
      continue;
    o << "<h3>" << esc(p.id) << " " << esc(brief_label(r, p)) << "</h3><ul>";
    for (const auto& n : p.notes)
      o << "<li class=\"note\">" << esc(n) << "</li>";
    if (!p.environment_differences.empty()) {
      string d;
      for (const auto& x : p.environment_differences)
        d += (d.empty() ? "" : ", ") + x;
      o << "<li class=\"note\">environment fields that differ: " << esc(d) << "</li>";
    }
    o << "</ul>\n";
  }
}

// Time-to-train figures: the formula of their implied utilisation with every input, in words on
// the page (not only in a tooltip), so a reader can redo the arithmetic.
void write_ttt_utilisation(std::ostringstream& o, const report_model& r) {
  std::string items;
  for (const auto& f : r.figures)
    if (f.plausibility.ttt && f.plausibility.ttt->peak_tflops > 0)
      items += "<li><b>" + esc(f.display) + "</b> " + esc(f.label) + ": " +
               esc(ttt_formula_text(*f.plausibility.ttt)) + "</li>\n";
  if (items.empty())
    return;
  o << "<h3>Implied model-FLOP utilisation of time-to-train results</h3>\n<p class=\"note\">"
       "MFU = samples x T x F / (t x A x peak): samples trained until run_stop, T the sequence "
       "length and F the model FLOPs per token (6N + 12 L H Q T, PaLM appendix B), t the runs' "
       "minutes, A the accelerators, the peak per accelerator and dense. Flagged as kernel "
       "figures are: more than "
    << esc(fmt::format("{:.0f}%", 100 * k_peak_margin)) << " above the peak, and here also below "
    << esc(fmt::format("{:.0f}%", k_min_ttt_utilisation_pct)) << " of it.</p>\n<ul>\n"
    << items << "</ul>\n";
}

void write_plausibility(std::ostringstream& o, const report_model& r) {
  // ---- plausibility of every figure
  o << "<h2>Plausibility of every figure</h2>\n<p class=\"note\">Implied utilisation of the "
       "device's datasheet peak "
       "for the figure's precision (results/devices.json, dense): kernels TFLOP/s / peak; training "
       "tokens/s per accelerator x "
       "model FLOPs per token / peak; time to train (MLPerf) samples x sequence length x model "
       "FLOPs per token / (minutes x accelerators) / peak, against the dense FP8 peak when the "
       "log states no precision (below the table). Above the peak by more than "
    << esc(fmt::format("{:.0f}%", 100 * k_peak_margin))
    << " (clock variation) a figure cannot be true as stated: it is kept as its source states it, "
       "flagged, shown with its "
       "most likely reading, and left out of the headline and the geometric means.</p>\n";
  o << "<table class=\"sortable\" "
       "id=\"figures\"><thead><tr><th>side</th><th>system</th><th>figure</th><th>as "
       "stated</th><th>source</th>"
       "<th>implied TFLOP/s per accelerator</th><th>peak "
       "TFLOP/s</th><th>utilisation</th><th>plausibility</th><th>most likely reading</th><th>cited "
       "from</th></tr></thead><tbody>\n";
  for (const auto& f : r.figures) {
    const auto& c = f.plausibility;
    string cited;
    for (const auto& pv : f.provenance) {
      const string line =
          provenance_line(pv, {"source", "url", "code_url", "date", "org", "round"});
      if (!line.empty() && cited.find(line) == string::npos)
        cited += "<div>" + line + "</div>";
    }
    for (const auto& a : f.assumed)
      cited += "<div class=\"warn\">assumed: " + esc(a) + "</div>";
    const string status_cls = c.implausible()           ? "implausible"
                              : c.status == "plausible" ? "plausible"
                                                        : "note";
    o << "<tr><td>" << esc(f.side) << "</td><td>" << esc(f.display) << "<div class=\"note\">"
      << esc(f.system) << "</div></td><td>" << esc(f.label) << "</td>"
      << fmt::format("<td data-v=\"{}\">{} <span class=\"u\">{}</span></td>", exact(f.value),
                     num(f.value), esc(f.unit))
      << "<td>" << badge(f.source) << "</td>";
    if (c.implied_tflops > 0)
      o << fmt::format("<td data-v=\"{}\" title=\"{}\">{}{}</td>", exact(c.implied_tflops),
                       esc(c.basis + (c.flop_per_token_formula.empty()
                                          ? ""
                                          : "; FLOPs per token: " + exact(c.flop_per_token) +
                                                " = " + c.flop_per_token_formula)),
                       num(c.implied_tflops),
                       c.lower_bound ? " <span class=\"note\">(at least)</span>" : "");
    else
      o << "<td data-v=\"\">–</td>";
    if (c.peak_tflops > 0)
      o << fmt::format("<td data-v=\"{}\" title=\"{}\">{} <span class=\"u\">{}</span></td>",
                       exact(c.peak_tflops), esc(c.peak_source), num(c.peak_tflops),
                       esc(c.peak_dtype));
    else
      o << "<td data-v=\"\">–</td>";
    o << opt_cell(c.utilisation_pct, "%");
    o << "<td><span class=\"" << status_cls << "\">" << esc(c.status) << "</span>";
    if (!c.reason.empty())
      o << "<div class=\"note\">" << esc(c.reason) << "</div>";
    o << "</td>";
    if (!c.likely_reading.empty())
      o << fmt::format("<td>{}: {} <span class=\"u\">{}</span>, {:.0f}% of peak</td>",
                       esc(c.likely_reading), num(c.likely_value), esc(c.likely_unit),
                       c.likely_utilisation_pct.value_or(0));
    else
      o << "<td>–</td>";
    o << "<td>" << cited << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
  write_ttt_utilisation(o, r);
}

void write_unpaired(std::ostringstream& o, const report_model& r) {
  // ---- unpaired
  o << "<h2>Unpaired runs</h2>\n";
  if (r.unpaired.empty())
    o << "<p class=\"note\">Every group of runs found a partner.</p>\n";
  else {
    o << "<table class=\"sortable\" "
         "id=\"unpaired\"><thead><tr><th>side</th><th>system</th><th>workload / "
         "config</th><th>runs</th><th>why</th></tr></thead><tbody>\n";
    for (const auto& u : r.unpaired)
      o << "<tr><td>" << esc(u.side) << "</td><td>" << esc(u.system) << "</td><td>" << esc(u.label)
        << "</td>" << int_cell(u.runs) << "<td>" << esc(u.reason) << "</td></tr>\n";
    o << "</tbody></table>\n";
  }
}

void write_scaling_table(std::ostringstream& o, const report_model& r) {
  if (!r.scaling.empty()) {
    o << "<h2>Scaling</h2>\n<table class=\"sortable\" "
         "id=\"scaling\"><thead><tr><th>benchmark</th><th>device</th><th>system</"
         "th><th>accelerators</th><th>score (min)</th><th>efficiency</th></tr></thead><tbody>\n";
    for (const auto& s : r.scaling)
      for (const auto& pt : s.points)
        o << "<tr><td>" << esc(s.benchmark) << "</td><td>" << esc(s.device_name) << "</td><td>"
          << esc(pt.system) << "</td>" << int_cell(pt.accelerators) << num_cell(pt.score_min)
          << num_cell(pt.efficiency) << "</tr>\n";
    o << "</tbody></table>\n";
  }
}

// Data-parallel scaling of train.llama and its projection: report_scaling.cpp.
void write_dp_scaling(std::ostringstream& o, const report_model& r) {
  o << dp_scaling_html(r.dp_scaling);
}

void write_provenance(std::ostringstream& o, const report_model& r) {
  // ---- provenance
  o << "<h2>Provenance</h2>\n<table class=\"sortable\" "
       "id=\"provenance\"><thead><tr><th>pair</th><th>side</th><th>source</th><th>where "
       "from</th><th>runs</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      string where;
      for (const auto& pv : s->provenance) {
        const string line = provenance_line(
            pv, {"source", "url", "code_url", "date", "conditions", "org", "round", "result_file"});
        if (!line.empty() && where.find(line) == string::npos)
          where += "<div>" + line + "</div>";
      }
      if (!s->revisions.empty()) {
        string revs;
        for (const auto& v : s->revisions)
          revs += (revs.empty() ? "" : ", ") + v;
        where += "<div>measured by accelbench, revision <code>" + esc(revs) + "</code></div>";
      }
      string ids;
      for (const auto& u : s->uuids)
        ids += (ids.empty() ? "" : " ") + u;
      o << "<tr><td>" << esc(p.id) << "</td><td>" << (s == &p.baseline ? "baseline" : "candidate")
        << "</td><td>" << badge(s->source) << "</td><td>" << where
        << "</td><td class=\"n\"><span title=\"" << esc(ids) << "\">"
        << count_of(s->uuids.size(), "run", "runs") << "</span></td></tr>\n";
    }
  o << "</tbody></table>\n";
}

void write_devices(std::ostringstream& o, const report_model& r) {
  if (!r.devices.empty()) {
    o << "<h3>Device catalogue entries used</h3><table class=\"sortable\" "
         "id=\"devices\"><thead><tr><th>device</th><th>dense peak TFLOP/s</th><th>HBM "
         "TB/s</th><th>TDP W</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& d : r.devices) {
      string pk;
      for (const auto& [k, v] : d["peak_tflops"].items())
        pk += (pk.empty() ? "" : ", ") + k + " " + num(v.get<double>());
      if (d.value("measured_peak", false))
        pk = "measured per run";
      const json& src = d["source"];
      o << "<tr><td>" << esc(d.value("name", string())) << "</td><td>" << esc(pk) << "</td>"
        << num_cell(d.value("hbm_tb_s", 0.0)) << num_cell(d.value("tdp_w", 0.0)) << "<td>"
        << (src.is_object()
                ? esc(src.value("doc", string())) + " " + link_or_text(src.value("url", string()))
                : string())
        << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
  }
}

void write_prices(std::ostringstream& o, const report_model& r) {
  if (!r.prices.empty()) {
    o << "<h3>Prices used</h3><table id=\"prices\"><thead><tr><th>device</th><th>USD per "
         "accelerator-hour</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& p : r.prices)
      o << "<tr><td>" << esc(p.value("device", string())) << "</td>"
        << num_cell(p.value("usd_per_accelerator_hour", 0.0)) << "<td>"
        << esc(p.value("source", string())) << "</td></tr>\n";
    o << "</tbody></table>\n";
  }
}

void write_notes_and_data(std::ostringstream& o, const report_model& r) {
  if (!r.notes.empty()) {
    o << "<h2>Notes</h2><ul>";
    for (const auto& n : r.notes)
      o << "<li>" << esc(n) << "</li>";
    o << "</ul>\n";
  }
  o << "<script type=\"application/json\" id=\"report-data\">" << json_for_script(to_json(r))
    << "</script>\n";
  o << "<script>" << k_js << "</script>\n</main></body></html>\n";
}

using section_writer = void (*)(std::ostringstream&, const report_model&);
// What a first-time reader needs leads (the answer, the verdicts, the charts); the evidence behind
// it follows folded: each such section is one line until opened (a link into it opens it).
struct section {
  section_writer write;
  const char* folded_as; // nullptr: shown open; else the title of a section without an <h2>
};
const section k_sections[] = {
    {write_head, nullptr},
    {write_summary, nullptr},
    {write_families, nullptr},
    {write_speedup_chart, nullptr},
    {write_throughput_charts, nullptr},
    {write_roofline, nullptr},
    {write_eval_curves, nullptr},
    {write_mlperf_charts, nullptr},
    {write_strip_plots, "Samples of each pair"},
    {write_details, "Pairs in detail"},
    {write_pair_notes, "Notes per pair"},
    {write_plausibility, "Plausibility of every figure"},
    {write_unpaired, "Unpaired runs"},
    {write_scaling_table, "Scaling"},
    {write_dp_scaling, "Data-parallel scaling"},
    {write_provenance, "Provenance"},
    {write_devices, "Device catalogue entries used"},
    {write_prices, "Prices used"},
    {write_notes_and_data, nullptr},
};

// A section's html inside <details>, its first <h2> (or `fallback`) as the one line shown.
string folded(const string& html, const string& fallback) {
  if (html.empty())
    return html;
  string title = fallback, body = html;
  if (const auto a = html.find("<h2>"); a != string::npos && html.find_first_not_of(" \n") == a) {
    const auto e = html.find("</h2>", a);
    title = html.substr(a + 4, e - a - 4);
    body = html.substr(e + 5);
  }
  return "<details class=\"fold\"><summary><h2>" + title + "</h2></summary>\n" + body +
         "</details>\n";
}

} // namespace

string to_html(const report_model& r) {
  std::ostringstream o;
  for (const auto& sec : k_sections) {
    if (sec.folded_as == nullptr) {
      sec.write(o, r);
      continue;
    }
    std::ostringstream part;
    sec.write(part, r);
    o << folded(part.str(), sec.folded_as);
  }
  return o.str();
}

} // namespace accelbench::report
