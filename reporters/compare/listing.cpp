// What the comparison formats share: which pairs a listing shows and in which order, and the words
// and numbers of a pair and of a geomean.
#include "reporters/compare/listing.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"

namespace accelbench::compare {

namespace {

// Regressions first (what a reader must act on), then what could not be judged, then the rest.
int verdict_rank(verdict v) {
  switch (v) {
  case verdict::regressed:
    return 0;
  case verdict::inconclusive:
    return 1;
  case verdict::improved:
    return 2;
  case verdict::unchanged:
    return 3;
  case verdict::skipped:
    return 4;
  }
  return 5;
}

bool changed(const pair_result& p) {
  return p.cmp.result == verdict::regressed || p.cmp.result == verdict::improved;
}

} // namespace

std::vector<const pair_result*> listed(const set_comparison& c) {
  std::vector<const pair_result*> out;
  for (const auto& p : c.pairs)
    if (!c.only_changed || changed(p))
      out.push_back(&p);
  return out;
}

size_t not_shown(const set_comparison& c) { return c.pairs.size() - listed(c).size(); }

std::string not_shown_line(const set_comparison& c) {
  return fmt::format("{} unchanged or inconclusive config(s) not shown (--only-changed)",
                     not_shown(c));
}

std::vector<const pair_result*> ordered(const set_comparison& c) {
  std::vector<const pair_result*> out = listed(c);
  std::stable_sort(out.begin(), out.end(), [](const pair_result* a, const pair_result* b) {
    return std::make_pair(verdict_rank(a->cmp.result), a->name) <
           std::make_pair(verdict_rank(b->cmp.result), b->name);
  });
  return out;
}

bool ratio_defined(const sample_comparison& c) { return c.ratio > 0 && std::isfinite(c.ratio); }

std::string change_text(const sample_comparison& c) {
  return ratio_defined(c) ? fmt::format("{:+.1f}%", (c.ratio - 1) * 100) : "-";
}

std::string ci_text(const sample_comparison& c) {
  return ratio_defined(c) && c.has_ci && has_test(c)
             ? fmt::format("{:+.1f}% .. {:+.1f}%", (c.ratio_ci_low - 1) * 100,
                           (c.ratio_ci_high - 1) * 100)
             : "-";
}

std::string p_text(const sample_comparison& c) {
  return has_test(c) ? fmt::format("{:.2g}", c.p_value) : "-";
}

std::string median_text(double m, size_t n, const std::string& unit) {
  return n == 0 ? "-" : format_value(m, unit);
}

// The geomean's change, "worse" or "better" only where its own test says so.
std::string speedup_point(const workload_summary& s) {
  const bool tested = s.geomean_has_ci;
  const char* word = tested && s.geomean_verdict == verdict::regressed  ? " worse"
                     : tested && s.geomean_verdict == verdict::improved ? " better"
                                                                        : "";
  return fmt::format("{:.3f}x ({:+.1f}%{})", s.geomean_speedup, (s.geomean_speedup - 1) * 100,
                     word);
}

std::string geomean_ci_range(const workload_summary& s) {
  return s.geomean_has_ci ? fmt::format("{:.3f}x..{:.3f}x", s.geomean_ci_low, s.geomean_ci_high)
                          : "-";
}

std::string geomean_ci_text(const workload_summary& s, double alpha) {
  return s.geomean_has_ci ? ci_label(alpha) + " " + geomean_ci_range(s) : "no CI";
}

// "inconclusive: <why>", or "not tested" where no pair of the workload was.
std::string geomean_verdict_text(const workload_summary& s) {
  if (!s.geomean_has_ci)
    return "not tested";
  const std::string v = to_string(s.geomean_verdict);
  return s.geomean_reason.empty() ? v : v + ": " + s.geomean_reason;
}

// "0.859x (-14.1%) over 6 configs, 99% CI 0.800x..0.920x, inconclusive: ...": the geomean with
// its own CI and verdict.
std::string geomean_line(const workload_summary& s, double alpha) {
  if (!(s.geomean_speedup > 0))
    return fmt::format("- over {} configs", s.pairs);
  return fmt::format("{} over {} configs, {}, {}", speedup_point(s), s.pairs,
                     geomean_ci_text(s, alpha), geomean_verdict_text(s));
}

// Whether every pair is an A/B of one job, paired round by round (the title says so once).
// Every tested pair is paired (pairs skipped on both sides, or without a test, have no say).
bool all_paired(const set_comparison& c) {
  bool any = false;
  for (const auto& p : c.pairs) {
    if (!p.cmp.tested)
      continue;
    if (!p.cmp.paired)
      return false;
    any = true;
  }
  return any;
}

std::string paired_note(const set_comparison& c) {
  return all_paired(c) ? ", paired by round (A/B of one job)" : "";
}

// One line under the table for the pairs with nothing to test, whose "-" would otherwise go
// unexplained.
std::string untested_line(const set_comparison& c) {
  const size_t n = std::count_if(c.pairs.begin(), c.pairs.end(), [](const pair_result& p) {
    return !p.cmp.tested && p.cmp.reason == untested_wording;
  });
  return n == 0 ? "" : fmt::format("{} config(s) with {}", n, untested_wording);
}

// One line under the table for the inconclusive pairs: the range of what they could see.
std::string could_see_line(const set_comparison& c) {
  double lo = 0, hi = 0;
  size_t n = 0;
  for (const auto& p : c.pairs)
    if (p.cmp.result == verdict::inconclusive && has_test(p.cmp) && p.cmp.detectable_pct > 0) {
      lo = n == 0 ? p.cmp.detectable_pct : std::min(lo, p.cmp.detectable_pct);
      hi = std::max(hi, p.cmp.detectable_pct);
      ++n;
    }
  if (n == 0)
    return "";
  const std::string range =
      lo == hi ? fmt::format("{:.1f}%", lo) : fmt::format("{:.1f}% to {:.1f}%", lo, hi);
  return fmt::format("{} inconclusive config(s): this comparison could only see changes above {} "
                     "(column 'sees ≥'): {}",
                     n, range,
                     all_paired(c) ? "run more rounds" : "run more rounds, or use `accelbench ab`");
}

std::string counts_line(const set_comparison& c) {
  const size_t skipped = c.count(verdict::skipped);
  return fmt::format(
      "{} regressed, {} inconclusive, {} improved, {} unchanged{} ({} configs compared, "
      "{} only in {}, {} only in {})",
      c.count(verdict::regressed), c.count(verdict::inconclusive), c.count(verdict::improved),
      c.count(verdict::unchanged), skipped > 0 ? fmt::format(", {} skipped", skipped) : "",
      c.pairs.size(), c.only_baseline.size(), c.baseline_label, c.only_candidate.size(),
      c.candidate_label);
}

// "t on log run medians, 3 + 3 runs": the test a pair's p-value and CI come from.
std::string method_text(const sample_comparison& c) {
  if (c.method.empty())
    return "";
  return fmt::format("{}, {} + {} run(s)", c.method, c.runs_baseline, c.runs_candidate);
}

std::string environment_text(const pair_result& p) {
  return p.environment_differences.empty()
             ? std::string("fingerprint only")
             : printable(fmt::format("{}", fmt::join(p.environment_differences, ", ")));
}

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|"; // GFM: an escaped pipe does not end the cell, even in code
    else if (ch == '\n' || ch == '\r')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

} // namespace accelbench::compare
