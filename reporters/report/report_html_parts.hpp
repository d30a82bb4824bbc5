#pragma once
// The report page's parts (report_html*.cpp, one file per part of the page): the cells and labels
// they share, and one writer per section, in page order as report_html.cpp lists them. The
// charts, escaping and stylesheet are the HTML kit's (reporters/html).
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "reporters/html/chart.hpp"
#include "reporters/html/html.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report::html_page {

using namespace accelbench::html; // NOLINT(google-build-using-namespace): the kit, throughout
using std::string;

inline constexpr const char* k_base_color = "#4e79a7";
inline constexpr const char* k_cand_color = "#e15759";
// No significant difference, inconclusive, not tested.
inline constexpr const char* k_neutral_color = "#9a9a9a";

inline string esc(const string& s) { return escape(s); }

// Cells and labels (report_html_cells.cpp).
string opt_cell(const std::optional<double>& v, const string& suffix = "");
string num_cell(double v, const string& title = "");
// Counts (accelerators, runs, pairs) are whole numbers: "64", never "64.00".
string int_cell(size_t v);
// "1 run", "3 runs".
string count_of(size_t n, const string& one, const string& many);
// Links only for http(s) addresses; anything else stays text.
string link_or_text(const string& s);
// A provenance record as one line: its text fields joined with " · ", addresses as links.
string provenance_line(const json& pv, std::initializer_list<const char*> keys);
string per_accelerator_cell(const side_score& s);
// The label of the report's CIs, at the level of compare's test: "99% CI".
string ci_label(const report_model& r);
string side_cell(const side_score& s, const string& ci);
// "good" / "bad" only for compare's improved / regressed: no colour says more than the test.
string verdict_class(const pair_result& p);
string badge(const string& source);
// A pair's label without the values every pair shares: what tells the pairs apart.
string brief_label(const report_model& r, const pair_result& p);
// One line under the summary's heading with what every pair shares.
void write_common_config(std::ostringstream& o, const report_model& r);
// The flags of a pair: one shown as it is, several folded under their count.
void write_flags(std::ostringstream& o, const std::vector<string>& flags);

// The sections. Tables (report_html_tables.cpp):
void write_summary(std::ostringstream& o, const report_model& r);
void write_families(std::ostringstream& o, const report_model& r);
void write_details(std::ostringstream& o, const report_model& r);
void write_pair_notes(std::ostringstream& o, const report_model& r);
void write_unpaired(std::ostringstream& o, const report_model& r);
void write_provenance(std::ostringstream& o, const report_model& r);
void write_devices(std::ostringstream& o, const report_model& r);
void write_prices(std::ostringstream& o, const report_model& r);
// Charts (report_html_charts.cpp):
void write_speedup_chart(std::ostringstream& o, const report_model& r);
void write_throughput_charts(std::ostringstream& o, const report_model& r);
void write_roofline(std::ostringstream& o, const report_model& r);
void write_eval_curves(std::ostringstream& o, const report_model& r);
void write_strip_plots(std::ostringstream& o, const report_model& r);
// MLPerf and scaling (report_html_scaling.cpp):
void write_mlperf_charts(std::ostringstream& o, const report_model& r);
void write_scaling_table(std::ostringstream& o, const report_model& r);
void write_dp_scaling(std::ostringstream& o, const report_model& r);
// Plausibility (report_html_plausibility.cpp):
void write_plausibility(std::ostringstream& o, const report_model& r);

} // namespace accelbench::report::html_page
