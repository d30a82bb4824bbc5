// The report page's MLPerf and scaling parts: time to train per run and scaling efficiency
// charts, the scaling table, the data-parallel scaling of train.llama (report_scaling.cpp).
#include <fmt/format.h>

#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report::html_page {

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

} // namespace accelbench::report::html_page
