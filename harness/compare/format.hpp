#pragma once
// The words of a comparison that every output of it shares: the formats of reporters/compare
// (table, markdown, JUnit, JSON, BMF, CSV), the report and the server's dashboard. The formats
// themselves are in reporters/compare/formats.hpp.
#include <string>

#include "harness/compare/compare.hpp"

namespace accelbench::compare {

// The reason every output shows for a pair: compare's, and for an inconclusive pair ending with
// what the comparison could see (the table, markdown, JSON, JUnit and the server's dashboard).
std::string reason_text(const sample_comparison& c);

// The label of a CI at the comparison's own level, 1 - alpha: "99% CI" at alpha 0.01. A verdict
// "not significant at alpha 0.01" never sits beside a 95% CI that excludes 1.
std::string ci_label(double alpha);

// A pair has a test (a p-value and a CI) only when both sides have samples and more than one
// figure between them: one figure a side is shown as a change with no CI and no p.
bool has_test(const sample_comparison& c);

// The smallest change the pair's comparison would call (80% power): "9.1%", "-" untested.
std::string detectable_text(const sample_comparison& c);

// A sample value in compare's outputs: harness/core/units.hpp's format_quantity in compare_style
// ("1.234 ms", "412.5 TFLOP/s"). Kept for the callers that print it beside compare's tables.
std::string format_value(double v, const std::string& unit);

} // namespace accelbench::compare
