#pragma once
// What the comparison formats of reporters/compare share: which pairs a listing shows and in which
// order, and the words and numbers of a pair and of a geomean, so that the table, markdown, JUnit
// and CSV say the same thing in the same digits.
#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/compare/format.hpp"

namespace accelbench::compare {

// The pairs a listing shows: all, or with only_changed the regressed and improved ones; ordered:
// those, regressions first (what a reader must act on), then what could not be judged, then the
// rest, each group by name.
std::vector<const pair_result*> listed(const set_comparison& c);
std::vector<const pair_result*> ordered(const set_comparison& c);
size_t not_shown(const set_comparison& c);
std::string not_shown_line(const set_comparison& c); // "2 unchanged or inconclusive config(s)..."

// A pair's figures as every format writes them; "-" where there is none.
bool ratio_defined(const sample_comparison& c);
std::string change_text(const sample_comparison& c);                  // "+10.0%"
std::string ci_text(const sample_comparison& c);                      // "+8.0% .. +12.0%"
std::string p_text(const sample_comparison& c);                       // "0.00018"
std::string median_text(double m, size_t n, const std::string& unit); // "1.200 ms"
std::string method_text(const sample_comparison& c); // "t on log run medians, 3 + 3 run(s)"
// What differs in a pair's environment: "libraries.onednn, cpu.model" or "fingerprint only".
std::string environment_text(const pair_result& p);

// A geomean's figures: "1.007x (+0.7% better)", "0.950x..1.080x", "99% CI 0.950x..1.080x" or "no
// CI", "inconclusive: why" or "not tested", and the whole line of the table.
std::string speedup_point(const workload_summary& s);
std::string geomean_ci_range(const workload_summary& s);
std::string geomean_ci_text(const workload_summary& s, double alpha);
std::string geomean_verdict_text(const workload_summary& s);
std::string geomean_line(const workload_summary& s, double alpha);

// Lines said once for the comparison: ", paired by round (A/B of one job)" when every tested pair
// is; the pairs with nothing to test; what the inconclusive ones could see; the counts.
bool all_paired(const set_comparison& c);
std::string paired_note(const set_comparison& c);
std::string untested_line(const set_comparison& c);
std::string could_see_line(const set_comparison& c);
std::string counts_line(const set_comparison& c);

} // namespace accelbench::compare
