// The report page's cells and labels, shared by its sections: numbers with their CIs and units,
// sources as badges and links, the pair labels without what every pair shares.
#include <algorithm>

#include <fmt/format.h>

#include "harness/compare/format.hpp"
#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report::html_page {

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

} // namespace

string opt_cell(const std::optional<double>& v, const string& suffix) {
  if (!v)
    return "<td data-v=\"\">–</td>";
  return fmt::format("<td data-v=\"{}\">{}{}</td>", exact(*v), num(*v), suffix);
}

string num_cell(double v, const string& title) {
  return fmt::format("<td data-v=\"{}\"{}>{}</td>", exact(v),
                     title.empty() ? "" : " title=\"" + esc(title) + "\"", num(v));
}

// Counts (accelerators, runs, pairs) are whole numbers: "64", never "64.00".
string int_cell(size_t v) { return fmt::format("<td data-v=\"{0}\" class=\"n\">{0}</td>", v); }

// "1 run", "3 runs".
string count_of(size_t n, const string& one, const string& many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
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

} // namespace accelbench::report::html_page
