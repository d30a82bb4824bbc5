#include "reporters/report/history_html.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "reporters/html/nightly_chart.hpp"
#include "reporters/html/style.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report {

namespace {

using std::string;

// The history page's own rules, after the kit's stylesheet.
const char* k_history_css = R"CSS(
main{max-width:1000px}.mut{color:#57606a}.reg{color:#b42318;font-weight:600}.chg{color:#1a7f37;font-weight:600}
table{width:auto}
)CSS";

// A night of the series: its value, its runs' medians (the spread drawn), its tooltip.
html::night night_of(const json& p, const string& unit) {
  html::night nt;
  nt.date = p.value("started_at", "").substr(0, 10);
  nt.value = p.value("value", 0.0);
  if (const auto it = p.find("run_medians"); it != p.end() && it->is_array())
    for (const auto& m : *it)
      if (m.is_number())
        nt.runs.push_back(m.get<double>());
  nt.tip = fmt::format("run {} ({}): {}", p.value("run_id", int64_t{0}), p.value("started_at", ""),
                       format_quantity(nt.value, unit));
  if (nt.runs.size() > 1)
    nt.tip += fmt::format(" (median of {} runs)", nt.runs.size());
  return nt;
}

// Each change point: a dashed line labelled with its size, and the means either side as levels.
void add_changes(html::nightly_chart& c, const json& s) {
  const auto& cps = s["change_points"];
  for (size_t k = 0; k < cps.size(); ++k) {
    const auto& cp = cps[k];
    const size_t at = cp.value("index", size_t{0});
    const size_t from = k == 0 ? 0 : cps[k - 1].value("index", size_t{0});
    const size_t to = k + 1 < cps.size() ? cps[k + 1].value("index", size_t{0}) : c.nights.size();
    const bool reg = cp.value("regression", false);
    const string colour = reg ? "#b42318" : "#1a7f37";
    const string what =
        fmt::format("{} x{:.3f}", reg ? "regression" : "improvement", cp.value("magnitude", 0.0));
    c.marks.push_back({at, what, colour, what});
    const double mb = cp.value("mean_before", 0.0), ma = cp.value("mean_after", 0.0);
    c.levels.push_back({from, at, mb, colour, "mean before: " + format_quantity(mb, c.unit)});
    c.levels.push_back(
        {at, to > 0 ? to - 1 : 0, ma, colour, "mean after: " + format_quantity(ma, c.unit)});
  }
}

string series_chart(const json& s) {
  html::nightly_chart c;
  c.title = "nightly series";
  c.unit = s.value("unit", "");
  c.y_title = fmt::format("median per night ({}, {} is better)", c.unit,
                          s.value("direction", "") == "higher" ? "higher" : "lower");
  for (const auto& p : s["points"])
    c.nights.push_back(night_of(p, c.unit));
  add_changes(c, s);
  return html::nightly_svg(c);
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
  o += "<title>accelbench history: " + html_escape(workload) + "</title>\n<style>" +
       html::stylesheet() + k_history_css + "</style></head><body><main>\n";
  o += "<h1>Nightly history: " + html_escape(workload) + "</h1>\n";
  o += fmt::format("<p class=\"mut\">{} series; {} regression(s) and {} improvement(s) "
                   "(E-divisive means, Welch t-test). Dashed lines mark the first night after a "
                   "change; thick lines the means either side. Each point is a night's median, its "
                   "vertical line the "
                   "spread of the night's runs; the value axis spans at least \u00b1{:.0f}% around "
                   "the median, so that night-to-night noise is not magnified.</p>\n",
                   doc["series"].size(), regressions, changes, 100 * html::k_min_half_span);
  for (const auto& s : doc["series"]) {
    o += "<h2>" + html_escape(s.value("config_key", "")) + "</h2>\n";
    o += fmt::format("<p class=\"mut\">system {} · ruleset {} · {} night(s)</p>\n",
                     html_escape(s.value("system", "")), html_escape(s.value("ruleset", "")),
                     s["points"].size());
    o += series_chart(s) + change_table(s);
  }
  return o + "</main></body></html>\n";
}

} // namespace accelbench::report
