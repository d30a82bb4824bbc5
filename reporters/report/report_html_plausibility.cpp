// The report page's plausibility section: every figure against its device's datasheet peak, and
// the implied model-FLOP utilisation of time-to-train results with its formula.
#include <fmt/format.h>

#include "harness/core/peak.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report::html_page {

namespace {

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

} // namespace

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

} // namespace accelbench::report::html_page
