#include "harness/compare/format.hpp"

#include <fmt/format.h>

#include "harness/core/units.hpp"

namespace accelbench::compare {

// A pair has a test (a p-value and a CI) only when both sides have samples and more than one
// figure between them: one figure a side is shown as a change with no CI and no p.
bool has_test(const sample_comparison& c) {
  return c.tested && c.n_baseline > 0 && c.n_candidate > 0;
}

// The smallest change the pair's comparison would call (80% power): "9.1%", "-" untested.
std::string detectable_text(const sample_comparison& c) {
  return has_test(c) && c.detectable_pct > 0 ? fmt::format("{:.1f}%", c.detectable_pct) : "-";
}

namespace {

// What an inconclusive pair's comparison could see, and how to see more: an A/B of one job pairs
// the rounds and removes the noise between jobs; a paired one can only add rounds.
std::string could_see_text(const sample_comparison& c) {
  return fmt::format("this comparison could only see changes above {}: {}", detectable_text(c),
                     c.paired ? "run more rounds" : "run more rounds, or use `accelbench ab`");
}

} // namespace

// The reason every output shows for a pair: compare's, in the one wording for an untested pair,
// and for an inconclusive pair ending with what the comparison could see.
std::string reason_text(const sample_comparison& c) {
  if (!c.tested) // "no baseline samples", or compare's one wording for one figure a side
    return c.reason.empty() ? untested_wording : c.reason;
  if (c.result == verdict::inconclusive && has_test(c) && c.detectable_pct > 0)
    return c.reason + "; " + could_see_text(c);
  return c.reason;
}

std::string ci_label(double alpha) { return fmt::format("{:g}% CI", 100 * (1 - alpha)); }

std::string format_value(double v, const std::string& unit) {
  return format_quantity(v, unit, compare_style);
}

} // namespace accelbench::compare
