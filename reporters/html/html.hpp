#pragma once
// The HTML kit (reporters/html): one set of text rules, charts (chart.hpp) and one stylesheet
// (style.hpp) for the report page, the history page and the dashboard. Here: escaping and the
// numbers of cells and tooltips. Numbers with units go through harness/core/units.hpp.
#include <string>

#include <nlohmann/json.hpp>

namespace accelbench::html {

// & < > " ' as entities, and control characters (U+0000..U+001F but tab and newline, U+007F,
// U+0080..U+009F) as U+FFFD: every string from users or logs goes through it.
std::string escape(const std::string& s);
// JSON text safe inside <script>: '<', '>', '&' and U+2028/9 as \u escapes, so "</script>" and
// "<!--" cannot end or alter the element.
std::string json_for_script(const nlohmann::json& j);

// A number for a cell or a tick without a unit, as the report's JSON text and summary write it
// (harness/core/units.hpp's report_style: four significant digits, a whole number bare, "n/a" when
// not finite).
std::string num(double v);
// A number as stored, for data-v attributes and tooltips: six significant digits.
std::string exact(double v);

} // namespace accelbench::html
