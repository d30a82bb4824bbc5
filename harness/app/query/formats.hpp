#pragma once
// The one table of output formats of each result model, which every front end chooses from by
// name: `accelbench compare --format NAME`, the report's outputs, the server's ?format=NAME. A new
// format is one file in reporters/ (e.g. reporters/compare/csv.cpp) and one row in formats.cpp.
#include "harness/compare/compare.hpp"
#include "reporters/output/format.hpp"
#ifdef ACCELBENCH_HAVE_REPORT
#include "reporters/report/report.hpp"
#endif

namespace accelbench::query {

// table, markdown, junit, json, bmf, csv (reporters/compare), in that order.
output::format_table<compare::set_comparison> compare_formats();

#ifdef ACCELBENCH_HAVE_REPORT
// json, html, text (reporters/report).
output::format_table<report::report_model> report_formats();
#endif

} // namespace accelbench::query
