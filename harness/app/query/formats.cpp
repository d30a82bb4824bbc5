#include "harness/app/query/formats.hpp"

#include <array>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"

namespace accelbench::query {

namespace {

using comparison = compare::set_comparison;
using output::write_options;

std::string write_table(const comparison& c, const write_options& o) {
  return compare::format_terminal(c, {o.color});
}
std::string write_junit(const comparison& c, const write_options&) {
  return compare::format_junit(c);
}

// A format that needs nothing but the model.
template <std::string (*Write)(const comparison&)>
std::string plain(const comparison& c, const write_options&) {
  return Write(c);
}

// The order is the order of the names in `--help` and in the error of an unknown name.
constexpr std::array<output::format<comparison>, 6> k_compare_formats = {{
    {"table", "text/plain; charset=utf-8", "txt", write_table},
    {"markdown", "text/markdown; charset=utf-8", "md", plain<compare::format_markdown>},
    {"junit", "application/xml", "xml", write_junit},
    {"json", "application/json", "json", plain<compare::format_json>},
    {"bmf", "application/json", "json", plain<compare::format_bmf>},
    {"csv", "text/csv; charset=utf-8", "csv", plain<compare::format_csv>},
}};

#ifdef ACCELBENCH_HAVE_REPORT
std::string write_report_json(const report::report_model& r, const write_options&) {
  return dump_json(report::to_json(r), 2) + "\n";
}
std::string write_report_html(const report::report_model& r, const write_options&) {
  return report::to_html(r);
}
std::string write_report_text(const report::report_model& r, const write_options&) {
  return report::summary_text(r);
}

constexpr std::array<output::format<report::report_model>, 3> k_report_formats = {{
    {"json", "application/json", "json", write_report_json},
    {"html", "text/html; charset=utf-8", "html", write_report_html},
    {"text", "text/plain; charset=utf-8", "txt", write_report_text},
}};
#endif

} // namespace

output::format_table<compare::set_comparison> compare_formats() { return k_compare_formats; }

#ifdef ACCELBENCH_HAVE_REPORT
output::format_table<report::report_model> report_formats() { return k_report_formats; }
#endif

} // namespace accelbench::query
