// CSV (RFC 4180) for spreadsheets and pandas: one row per listed pair, by name, with the figures
// in the stored unit and the fewest digits that read back to the same double; an empty field
// where a figure is undefined (no ratio, nothing tested).
#include <fmt/format.h>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/compare/listing.hpp"

namespace accelbench::compare {

namespace {

std::string number(double v, bool defined) { return defined ? fmt::format("{}", v) : ""; }

std::string csv_row(const pair_result& p) {
  const auto& m = p.cmp;
  const bool ratio = ratio_defined(m), test = has_test(m);
  const bool ci = ratio && m.has_ci && test;
  // Stored text (names, units, reasons quoting them) is neutralised against formula injection.
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                     csv_text_field(p.name), csv_text_field(p.workload), csv_text_field(p.backend),
                     csv_text_field(p.ruleset), csv_text_field(p.unit), to_string(m.dir),
                     to_string(m.result), number(m.baseline_median, m.n_baseline > 0),
                     number(m.candidate_median, m.n_candidate > 0), m.n_baseline, m.n_candidate,
                     number(m.ratio, ratio), number(m.ratio_ci_low, ci),
                     number(m.ratio_ci_high, ci), number(m.p_value, test),
                     number(m.detectable_pct, test && m.detectable_pct > 0),
                     p.environment_differs ? "true" : "false", csv_text_field(reason_text(m)));
}

} // namespace

std::string format_csv(const set_comparison& c) {
  std::string out = "name,workload,backend,ruleset,unit,direction,verdict,baseline_median,"
                    "candidate_median,baseline_n,candidate_n,ratio,ratio_ci_low,ratio_ci_high,"
                    "p_value,detectable_pct,environment_differs,reason\n";
  for (const pair_result* p : listed(c))
    out += csv_row(*p);
  return out;
}

} // namespace accelbench::compare
