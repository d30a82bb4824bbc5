#include "reporters/report/history_html.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report {

namespace {

using std::string;

constexpr double k_w = 760, k_h = 260;                                 // chart size (px)
constexpr double k_left = 84, k_right = 48, k_top = 30, k_bottom = 44; // plot margins

const char* k_history_css = R"CSS(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1f2328;margin:24px;font-size:14px;line-height:1.45;max-width:1000px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:28px 0 4px}
.mut{color:#57606a}.reg{color:#b42318;font-weight:600}.chg{color:#1a7f37;font-weight:600}
svg{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#57606a}
table{border-collapse:collapse;margin:6px 0}td,th{border-bottom:1px solid #d0d7de;padding:3px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
)CSS";

struct frame {
  double lo = 0, hi = 1; // value range
  size_t n = 1;          // nights
  double x(size_t i) const {
    return n <= 1 ? k_left + (k_w - k_left - k_right) / 2
                  : k_left + (k_w - k_left - k_right) * double(i) / double(n - 1);
  }
  double y(double v) const {
    return k_h - k_bottom - (v - lo) / (hi - lo) * (k_h - k_top - k_bottom);
  }
};

// A value axis from zero (or below the smallest value when negative) to a round number above the
// largest, in 1-2-5 steps: a change is seen against the whole value, not a zoomed slice.
std::vector<double> value_ticks(frame& f, double max_v, double min_v) {
  f.lo = std::min(0.0, min_v);
  const double span = std::max(max_v - f.lo, 1e-300);
  const double raw = span / 4;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1   ? mag
                      : raw / mag <= 2 ? 2 * mag
                      : raw / mag <= 5 ? 5 * mag
                                       : 10 * mag;
  f.hi = f.lo + std::ceil(span / step) * step;
  std::vector<double> t;
  for (double v = f.lo; v <= f.hi + step / 2; v += step)
    t.push_back(v);
  return t;
}

string axes(const frame& f, const std::vector<double>& yt, const json& points, const string& unit) {
  string o;
  for (double v : yt)
    o += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eaeef2\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        k_left, k_w - k_right, f.y(v), f.y(v), k_left - 6, f.y(v) + 4,
        html_escape(format_quantity(v, unit)));
  // Dates on the x axis: at most 8 labels, evenly spread, first and last always.
  const size_t n = points.size(), every = std::max<size_t>(1, (n + 7) / 8);
  // The last night is labelled unless a regular label sits too close to it.
  for (size_t i = 0; i < n; ++i)
    if ((i % every == 0 && n - 1 - i > every / 2) || i + 1 == n)
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", f.x(i),
                       k_h - k_bottom + 16,
                       html_escape(points[i].value("started_at", "").substr(0, 10)));
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">night (run start, UTC)"
                   "</text>\n",
                   (k_left + k_w - k_right) / 2, k_h - 8);
  return o;
}

string change_marks(const frame& f, const json& s) {
  string o;
  const string unit = s.value("unit", "");
  const auto& cps = s["change_points"];
  for (size_t k = 0; k < cps.size(); ++k) {
    const auto& cp = cps[k];
    const size_t at = cp.value("index", size_t{0});
    const size_t from = k == 0 ? 0 : cps[k - 1].value("index", size_t{0});
    const size_t to = k + 1 < cps.size() ? cps[k + 1].value("index", size_t{0}) : f.n;
    const bool reg = cp.value("regression", false);
    const char* colour = reg ? "#b42318" : "#1a7f37";
    const double x = (f.x(at) + f.x(at > 0 ? at - 1 : 0)) / 2;
    o += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-dasharray=\"4 3\" stroke-width=\"1.5\"/>\n",
        x, double(k_top) - 8, k_h - k_bottom, colour);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" style=\"fill:{}\">{} "
                     "x{:.3f}</text>\n",
                     x, double(k_top) - 12, colour, reg ? "regression" : "improvement",
                     cp.value("magnitude", 0.0));
    // The means either side, as flat segments.
    const double mb = cp.value("mean_before", 0.0), ma = cp.value("mean_after", 0.0);
    o += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-opacity=\".45\" stroke-width=\"3\"><title>mean before: {}</title></line>\n",
        f.x(from), x, f.y(mb), f.y(mb), colour, html_escape(format_quantity(mb, unit)));
    o += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-opacity=\".45\" stroke-width=\"3\"><title>mean after: {}</title></line>\n",
        x, f.x(to > 0 ? to - 1 : 0), f.y(ma), f.y(ma), colour,
        html_escape(format_quantity(ma, unit)));
  }
  return o;
}

string series_chart(const json& s) {
  const json& pts = s["points"];
  const string unit = s.value("unit", "");
  double max_v = 0, min_v = 0;
  for (const auto& p : pts) {
    max_v = std::max(max_v, p.value("value", 0.0));
    min_v = std::min(min_v, p.value("value", 0.0));
  }
  frame f;
  f.n = std::max<size_t>(1, pts.size());
  const auto yt = value_ticks(f, max_v, min_v);
  string o = fmt::format("<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
                         "aria-label=\"nightly series\">\n",
                         k_w, k_h, k_w, k_h);
  o += axes(f, yt, pts, unit);
  o += fmt::format("<text x=\"14\" y=\"{:.1f}\" transform=\"rotate(-90 14 {:.1f})\" "
                   "text-anchor=\"middle\">median per night ({}, {} is better)</text>\n",
                   (k_top + k_h - k_bottom) / 2, (k_top + k_h - k_bottom) / 2, html_escape(unit),
                   s.value("direction", "") == "higher" ? "higher" : "lower");
  o += change_marks(f, s);
  string path;
  for (size_t i = 0; i < pts.size(); ++i)
    path += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", f.x(i), f.y(pts[i].value("value", 0.0)));
  o += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"/>\n";
  for (size_t i = 0; i < pts.size(); ++i)
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#4e79a7\"><title>run {} "
                     "({}): {}</title></circle>\n",
                     f.x(i), f.y(pts[i].value("value", 0.0)), pts[i].value("run_id", int64_t{0}),
                     html_escape(pts[i].value("started_at", "")),
                     html_escape(format_quantity(pts[i].value("value", 0.0), unit)));
  return o + "</svg>\n";
}

string change_table(const json& s) {
  const auto& cps = s["change_points"];
  if (cps.empty())
    return "<p class=\"mut\">No change point.</p>\n";
  const string unit = s.value("unit", "");
  string o = "<table><tr><th>change</th><th>first night after</th><th>run</th><th>mean before</th>"
             "<th>mean after</th><th>ratio</th><th>p</th></tr>\n";
  for (const auto& cp : cps) {
    const bool reg = cp.value("regression", false);
    o += fmt::format("<tr><td class=\"{}\">{}</td><td>{}</td><td class=\"n\">{}</td><td "
                     "class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">x{:.3f}</td><td "
                     "class=\"n\">{:.1e}</td></tr>\n",
                     reg ? "reg" : "chg", reg ? "regression" : "improvement",
                     html_escape(cp.value("started_at", "").substr(0, 10)),
                     cp.value("run_id", int64_t{0}),
                     html_escape(format_quantity(cp.value("mean_before", 0.0), unit)),
                     html_escape(format_quantity(cp.value("mean_after", 0.0), unit)),
                     cp.value("magnitude", 0.0), cp.value("p_value", 1.0));
  }
  return o + "</table>\n";
}

} // namespace

std::string history_to_html(const json& doc) {
  const string workload = doc.value("workload", "");
  size_t regressions = 0, changes = 0;
  for (const auto& s : doc["series"])
    for (const auto& cp : s["change_points"])
      ++(cp.value("regression", false) ? regressions : changes);
  string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta "
             "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<title>accelbench history: " + html_escape(workload) + "</title>\n<style>" + k_history_css +
       "</style></head><body>\n";
  o += "<h1>Nightly history: " + html_escape(workload) + "</h1>\n";
  o += fmt::format("<p class=\"mut\">{} series; {} regression(s) and {} improvement(s) "
                   "(E-divisive means, Welch t-test). Dashed lines mark the first night after a "
                   "change; thick lines the means either side.</p>\n",
                   doc["series"].size(), regressions, changes);
  for (const auto& s : doc["series"]) {
    o += "<h2>" + html_escape(s.value("config_key", "")) + "</h2>\n";
    o += fmt::format("<p class=\"mut\">system {} · ruleset {} · {} night(s)</p>\n",
                     html_escape(s.value("system", "")), html_escape(s.value("ruleset", "")),
                     s["points"].size());
    o += series_chart(s) + change_table(s);
  }
  return o + "</body></html>\n";
}

} // namespace accelbench::report
