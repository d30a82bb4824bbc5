#include "harness/compare/format.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/text_input.hpp"

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

// The pairs a listing shows: all, or with only_changed the regressed and improved ones.
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

std::string format_number(double v) {
  const double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= 1000)
    return fmt::format("{:.0f}", v);
  if (a >= 100)
    return fmt::format("{:.1f}", v);
  if (a >= 10)
    return fmt::format("{:.2f}", v);
  if (a >= 1)
    return fmt::format("{:.3f}", v);
  return fmt::format("{:.3g}", v);
}

double time_scale(const std::string& unit) {
  if (unit == "s")
    return 1;
  if (unit == "ms")
    return 1e-3;
  if (unit == "us")
    return 1e-6;
  if (unit == "ns")
    return 1e-9;
  return 0;
}

bool ratio_defined(const sample_comparison& c) { return c.ratio > 0 && std::isfinite(c.ratio); }

// A pair has a test (a p-value and a CI) only when both sides have samples and more than one
// figure between them: one figure a side is shown as a change with no CI and no p.
bool has_test(const sample_comparison& c) {
  return c.tested && c.n_baseline > 0 && c.n_candidate > 0;
}

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

// The smallest change the pair's comparison would call (80% power): "9.1%", "-" untested.
std::string detectable_text(const sample_comparison& c) {
  return has_test(c) && c.detectable_pct > 0 ? fmt::format("{:.1f}%", c.detectable_pct) : "-";
}

// What an inconclusive pair's comparison could see, and how to see more: an A/B of one job pairs
// the rounds and removes the noise between jobs; a paired one can only add rounds.
std::string could_see_text(const sample_comparison& c) {
  return fmt::format("this comparison could only see changes above {}: {}", detectable_text(c),
                     c.paired ? "run more rounds" : "run more rounds, or use `accelbench ab`");
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

// Display width of UTF-8 text: count code points (every character we emit is one column).
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char ch : s)
    if ((ch & 0xC0) != 0x80)
      ++w;
  return w;
}

std::string pad(const std::string& s, size_t width, bool right) {
  const size_t w = display_width(s);
  if (w >= width)
    return s;
  return right ? std::string(width - w, ' ') + s : s + std::string(width - w, ' ');
}

const char* ansi_colour(verdict v) {
  switch (v) {
  case verdict::regressed:
    return "\x1b[1;31m";
  case verdict::improved:
    return "\x1b[32m";
  case verdict::inconclusive:
    return "\x1b[33m";
  case verdict::unchanged:
  case verdict::skipped:
    return "";
  }
  return "";
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
  // Times are scaled to the unit that puts them in [1, 1000): "1.23 ms" reads faster than 0.00123.
  if (const double scale = time_scale(unit); scale > 0) {
    const double s = v * scale;
    const double a = std::fabs(s);
    if (a == 0)
      return "0 s";
    if (a < 1e-6)
      return format_number(s * 1e9) + " ns";
    if (a < 1e-3)
      return format_number(s * 1e6) + " us";
    if (a < 1)
      return format_number(s * 1e3) + " ms";
    return format_number(s) + " s";
  }
  return unit.empty() ? format_number(v) : format_number(v) + " " + unit;
}

// Stored names may hold any bytes (an imported latin-1 log line, a tag from an older version):
// the document declares UTF-8, so invalid sequences become U+FFFD, and so do U+FFFE and U+FFFF,
// which are UTF-8 but not XML characters.
std::string xml_escape(const std::string& raw) {
  const std::string s = repair_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(s[i + 2]) == 0xBE ||
         static_cast<unsigned char>(s[i + 2]) == 0xBF)) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      // XML 1.0 forbids control characters other than tab, LF and CR, even escaped.
      if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
        out += '?';
      else
        out += static_cast<char>(ch);
    }
  }
  return out;
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

// ---------------------------------------------------------------------------------------------
std::string format_terminal(const set_comparison& c, const terminal_options& opt) {
  // Names and labels come from the database: control characters are printed as escapes.
  std::string out =
      fmt::format("accelbench compare: {} -> {} (alpha {:g}){}\n", printable(c.baseline_label),
                  printable(c.candidate_label), c.alpha, paired_note(c));
  const std::vector<std::string> head = {"verdict", "config",          "baseline", "candidate",
                                         "change",  ci_label(c.alpha), "p",        "sees ≥"};
  const std::vector<bool> right = {false, false, true, true, true, true, true, true};
  std::vector<std::vector<std::string>> rows;
  std::vector<verdict> verdicts;
  for (const pair_result* p : ordered(c)) {
    const auto& m = p->cmp;
    rows.push_back({to_string(m.result),
                    printable(p->name) + (p->environment_differs ? " (env differs)" : ""),
                    median_text(m.baseline_median, m.n_baseline, p->unit),
                    median_text(m.candidate_median, m.n_candidate, p->unit), change_text(m),
                    ci_text(m), p_text(m), detectable_text(m)});
    verdicts.push_back(m.result);
  }
  std::vector<size_t> w(head.size());
  for (size_t k = 0; k < head.size(); ++k) {
    w[k] = display_width(head[k]);
    for (const auto& r : rows)
      w[k] = std::max(w[k], display_width(r[k]));
  }
  auto line = [&](const std::vector<std::string>& r, const verdict* v) {
    std::string l;
    for (size_t k = 0; k < r.size(); ++k) {
      std::string cell = pad(r[k], w[k], right[k]);
      if (k == 0 && v && opt.color && *ansi_colour(*v))
        cell = std::string(ansi_colour(*v)).append(cell).append("\x1b[0m");
      if (k > 0)
        l += "  ";
      l += cell;
    }
    while (!l.empty() && l.back() == ' ')
      l.pop_back();
    return l + "\n";
  };
  out += line(head, nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    out += line(rows[i], &verdicts[i]);
  out += printable(counts_line(c)) + "\n";
  if (c.only_changed && not_shown(c) > 0)
    out += not_shown_line(c) + "\n";
  for (const std::string& line : {untested_line(c), could_see_line(c)})
    if (!line.empty())
      out += "note: " + line + "\n";
  for (const auto& n : c.notes)
    out += fmt::format("note: {}\n", printable(n));
  for (const auto& s : c.workloads)
    out += fmt::format("geomean speed-up {}: {}\n", printable(s.workload),
                       printable(geomean_line(s, c.alpha)));
  out += fmt::format("OVERALL_GEOMEAN: {}\n", printable(geomean_line(c.overall, c.alpha)));
  for (const auto& u : c.only_baseline)
    out += fmt::format("only in {}: {}\n", printable(c.baseline_label), printable(u.name));
  for (const auto& u : c.only_candidate)
    out += fmt::format("only in {}: {}\n", printable(c.candidate_label), printable(u.name));
  for (const pair_result* p : ordered(c)) {
    if (p->environment_differs)
      out += fmt::format(
          "environment differs for {}: {}\n", printable(p->name),
          p->environment_differences.empty()
              ? std::string("fingerprint only")
              : printable(fmt::format("{}", fmt::join(p->environment_differences, ", "))));
    for (const auto& n : p->notes)
      out += fmt::format("note for {}: {}\n", printable(p->name), printable(n));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
namespace {

std::string markdown_geomean_row(const workload_summary& s, const std::string& name) {
  const bool defined = s.geomean_speedup > 0;
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", name, s.pairs,
                     defined ? speedup_point(s) : "-", defined ? geomean_ci_range(s) : "-",
                     markdown_escape(geomean_verdict_text(s)), s.regressed, s.inconclusive,
                     s.improved, s.unchanged);
}

// The geomean per workload and over every pair, each with its CI and verdict.
std::string markdown_geomeans(const set_comparison& c) {
  std::string out = fmt::format("| workload | configs | geomean speed-up | {} | verdict | "
                                "regressed | inconclusive | improved | unchanged |\n",
                                ci_label(c.alpha));
  out += "|---|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& s : c.workloads)
    out += markdown_geomean_row(s, markdown_escape(s.workload));
  return out + markdown_geomean_row(c.overall, "**OVERALL_GEOMEAN**") + "\n";
}

} // namespace

std::string format_markdown(const set_comparison& c) {
  const size_t reg = c.count(verdict::regressed);
  std::string out =
      fmt::format("## accelbench compare: `{}` → `{}`{}\n\n", markdown_escape(c.baseline_label),
                  markdown_escape(c.candidate_label), paired_note(c));
  out += fmt::format("{}: {}\n\n", reg > 0 ? "**Regression**" : "**No regression**",
                     markdown_escape(counts_line(c)));
  if (!ordered(c).empty()) {
    out += fmt::format("| verdict | config | baseline | candidate | change | {} | p | sees ≥ |\n",
                       ci_label(c.alpha));
    out += "|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (const pair_result* p : ordered(c)) {
      const auto& m = p->cmp;
      const std::string v = m.result == verdict::regressed ? "**regressed**" : to_string(m.result);
      out += fmt::format("| {} | `{}`{} | {} | {} | {} | {} | {} | {} |\n", v,
                         markdown_escape(p->name), p->environment_differs ? " ⚠ env" : "",
                         median_text(m.baseline_median, m.n_baseline, p->unit),
                         median_text(m.candidate_median, m.n_candidate, p->unit), change_text(m),
                         ci_text(m), p_text(m), detectable_text(m));
    }
    out += "\n";
  }
  if (c.only_changed && not_shown(c) > 0)
    out += not_shown_line(c) + "\n\n";
  for (const std::string& line : {untested_line(c), could_see_line(c)})
    if (!line.empty())
      out += fmt::format("> {}\n\n", markdown_escape(line));
  for (const auto& n : c.notes)
    out += fmt::format("> {}\n\n", markdown_escape(n));
  if (!c.workloads.empty())
    out += markdown_geomeans(c);
  auto list = [&](const std::vector<unpaired_run>& v, const std::string& label) {
    if (v.empty())
      return;
    out += fmt::format("Only in `{}` ({}):\n\n", markdown_escape(label), v.size());
    for (const auto& u : v)
      out += fmt::format("- `{}`\n", markdown_escape(u.name));
    out += "\n";
  };
  list(c.only_baseline, c.baseline_label);
  list(c.only_candidate, c.candidate_label);
  std::string flags;
  for (const pair_result* p : ordered(c)) {
    if (p->environment_differs)
      flags += fmt::format(
          "- `{}`: environment differs ({})\n", markdown_escape(p->name),
          p->environment_differences.empty()
              ? std::string("fingerprint only")
              : printable(fmt::format("{}", fmt::join(p->environment_differences, ", "))));
    for (const auto& n : p->notes)
      flags += fmt::format("- `{}`: {}\n", markdown_escape(p->name), markdown_escape(n));
  }
  if (!flags.empty())
    out += "Flags:\n\n" + flags + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
namespace {

// JUnit's timestamp is xs:dateTime without a zone (the Ant/Jenkins schema); ours are UTC, which
// the suite's properties say. "2026-12-02T10:13:01.123Z" -> "2026-12-02T10:13:01".
std::string junit_timestamp(const std::string& iso) { return iso.substr(0, 19); }

std::string suite_timestamp(const set_comparison& c) {
  std::string first;
  for (const auto& p : c.pairs)
    if (!p.candidate_started_at.empty() && (first.empty() || p.candidate_started_at < first))
      first = p.candidate_started_at;
  return junit_timestamp(first);
}

std::string suite_hostname(const set_comparison& c) {
  for (const auto& p : c.pairs)
    if (!p.candidate_host.empty())
      return p.candidate_host;
  return "unknown";
}

double suite_time(const set_comparison& c) {
  double t = 0;
  for (const auto& p : c.pairs)
    t += p.candidate_wall_s;
  return t;
}

std::string junit_testcase(const pair_result& p) {
  const auto& m = p.cmp;
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n",
                                xml_escape(p.workload), xml_escape(p.name), p.candidate_wall_s);
  const std::string method = method_text(m);
  const std::string numbers = fmt::format(
      "{} -> {}, change {} ({} {}), p = {}{}, threshold {:g}%",
      median_text(m.baseline_median, m.n_baseline, p.unit),
      median_text(m.candidate_median, m.n_candidate, p.unit), change_text(m), ci_label(m.alpha),
      ci_text(m), p_text(m), method.empty() ? "" : " (" + method + ")", m.threshold_pct);
  if (m.result == verdict::regressed)
    out +=
        fmt::format("      <failure type=\"regression\" message=\"regressed: {}\">{}</failure>\n",
                    xml_escape(numbers), xml_escape(reason_text(m)));
  else if (m.result == verdict::inconclusive || m.result == verdict::skipped)
    out += fmt::format("      <skipped message=\"{}: {}\"/>\n", to_string(m.result),
                       xml_escape(reason_text(m)));
  else
    out += fmt::format("      <system-out>{}: {}</system-out>\n", to_string(m.result),
                       xml_escape(numbers));
  return out + "    </testcase>\n";
}

} // namespace

// Every pair is a test case, --only-changed or not: CI test reports track cases across builds.
std::string format_junit(const set_comparison& c, const std::string& suite_name) {
  const size_t tests = c.pairs.size() + c.only_baseline.size() + c.only_candidate.size();
  const size_t failures = c.count(verdict::regressed);
  const size_t skipped = c.count(verdict::inconclusive) + c.count(verdict::skipped) +
                         c.only_baseline.size() + c.only_candidate.size();
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\"", tests,
                  failures, skipped, suite_time(c));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" {}>\n", xml_escape(suite_name), counts);
  const std::string ts = suite_timestamp(c);
  out += fmt::format("  <testsuite name=\"{}\" {}{} hostname=\"{}\">\n", xml_escape(suite_name),
                     counts, ts.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(ts)),
                     xml_escape(suite_hostname(c)));
  out += fmt::format("    <properties>\n      <property name=\"baseline\" value=\"{}\"/>\n"
                     "      <property name=\"candidate\" value=\"{}\"/>\n"
                     "      <property name=\"alpha\" value=\"{:g}\"/>\n"
                     "      <property name=\"timestamp_zone\" value=\"UTC\"/>\n",
                     xml_escape(c.baseline_label), xml_escape(c.candidate_label), c.alpha);
  for (const auto& n : c.notes)
    out += fmt::format("      <property name=\"note\" value=\"{}\"/>\n", xml_escape(n));
  out += "    </properties>\n";
  for (const auto& p : c.pairs) // sorted by name: a stable order for CI history
    out += junit_testcase(p);
  auto unpaired = [&](const std::vector<unpaired_run>& v, const std::string& label) {
    for (const auto& u : v)
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <skipped "
                         "message=\"only in {}\"/>\n    </testcase>\n",
                         xml_escape(u.workload), xml_escape(u.name), xml_escape(label));
  };
  unpaired(c.only_baseline, c.baseline_label);
  unpaired(c.only_candidate, c.candidate_label);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
namespace {

json number_or_null(double v, bool defined) { return defined ? json(v) : json(nullptr); }

json summary_json(const workload_summary& s) {
  const bool ci = s.geomean_has_ci && s.geomean_speedup > 0;
  return {{"workload", s.workload},
          {"pairs", s.pairs},
          {"geomean_speedup", number_or_null(s.geomean_speedup, s.geomean_speedup > 0)},
          {"geomean_ci", ci ? json::array({s.geomean_ci_low, s.geomean_ci_high}) : json(nullptr)},
          {"geomean_p", number_or_null(s.geomean_p, ci)},
          {"geomean_verdict", ci ? json(to_string(s.geomean_verdict)) : json(nullptr)},
          {"geomean_reason", s.geomean_reason},
          {"regressed", s.regressed},
          {"inconclusive", s.inconclusive},
          {"improved", s.improved},
          {"unchanged", s.unchanged},
          {"skipped", s.skipped}};
}

json metrics_json(const std::vector<metric_summary>& ms) {
  json out = json::array();
  for (const auto& m : ms)
    out.push_back({{"name", m.name},
                   {"unit", m.unit},
                   {"direction", to_string(m.dir)},
                   {"median", m.median},
                   {"min", m.min},
                   {"max", m.max},
                   {"runs", m.runs}});
  return out;
}

json pair_json(const pair_result& p) {
  const auto& m = p.cmp;
  const bool def = ratio_defined(m);
  auto side = [](size_t n, double med, double lo, double hi, size_t runs) {
    return json{{"n", n}, {"median", med}, {"min", lo}, {"max", hi}, {"runs", runs}};
  };
  return {
      {"name", p.name},
      {"key", p.key},
      {"ruleset", p.ruleset},
      {"workload", p.workload},
      {"backend", p.backend},
      {"unit", p.unit},
      {"direction", to_string(m.dir)},
      {"threshold_pct", m.threshold_pct},
      {"baseline",
       side(m.n_baseline, m.baseline_median, m.baseline_min, m.baseline_max, p.baseline_runs)},
      {"candidate",
       side(m.n_candidate, m.candidate_median, m.candidate_min, m.candidate_max, p.candidate_runs)},
      {"ratio", number_or_null(m.ratio, def)},
      {"ratio_ci", def && m.has_ci && has_test(m) ? json::array({m.ratio_ci_low, m.ratio_ci_high})
                                                  : json(nullptr)},
      {"speedup", number_or_null(m.speedup(), def)},
      {"p_value", number_or_null(m.p_value, has_test(m))},
      {"tested", has_test(m)},
      {"paired", m.paired},
      {"detectable_pct", number_or_null(m.detectable_pct, has_test(m) && m.detectable_pct > 0)},
      {"test",
       {{"method", m.method},
        {"df", m.df},
        {"between_run_pct", m.between_run_pct},
        {"between_job_pct", m.between_job_pct},
        {"paired_rounds", m.paired_rounds},
        {"accounts_for", m.accounts_for}}},
      {"verdict", to_string(m.result)},
      {"reason", reason_text(m)},
      {"environment_differs", p.environment_differs},
      {"environment_differences", p.environment_differences},
      {"notes", p.notes},
      {"candidate_metrics", metrics_json(p.candidate_metrics)},
  };
}

json unpaired_json(const unpaired_run& u) {
  return {{"name", u.name},
          {"key", u.key},
          {"ruleset", u.ruleset},
          {"workload", u.workload},
          {"runs", u.runs}};
}

} // namespace

json to_json(const set_comparison& c) {
  json j;
  j["schema_version"] = compare_schema_version;
  j["kind"] = "accelbench.compare";
  j["baseline"] = c.baseline_label;
  j["candidate"] = c.candidate_label;
  j["alpha"] = c.alpha;
  j["summary"] = {{"pairs", c.pairs.size()},
                  {"regressed", c.count(verdict::regressed)},
                  {"inconclusive", c.count(verdict::inconclusive)},
                  {"improved", c.count(verdict::improved)},
                  {"unchanged", c.count(verdict::unchanged)},
                  {"skipped", c.count(verdict::skipped)},
                  {"only_baseline", c.only_baseline.size()},
                  {"only_candidate", c.only_candidate.size()}};
  json pairs = json::array();
  for (const pair_result* p : listed(c))
    pairs.push_back(pair_json(*p));
  j["pairs"] = std::move(pairs);
  json ob = json::array(), oc = json::array();
  for (const auto& u : c.only_baseline)
    ob.push_back(unpaired_json(u));
  for (const auto& u : c.only_candidate)
    oc.push_back(unpaired_json(u));
  j["only_baseline"] = std::move(ob);
  j["only_candidate"] = std::move(oc);
  json ws = json::array();
  for (const auto& s : c.workloads)
    ws.push_back(summary_json(s));
  j["workloads"] = std::move(ws);
  j["overall"] = summary_json(c.overall);
  j["only_changed"] = c.only_changed;
  j["not_shown"] = not_shown(c);
  j["notes"] = c.notes;
  return j;
}

std::string format_json(const set_comparison& c) { return dump_json(to_json(c), 2) + "\n"; }

// ---------------------------------------------------------------------------------------------
namespace {

// Bencher's measure for the samples: times (lower is better) go to its built-in "latency" in
// nanoseconds, higher-is-better samples to "throughput", anything else to a measure named after
// its unit. Sets the factor that converts a sample into the measure's unit.
std::string sample_measure(const pair_result& p, double& scale) {
  scale = 1;
  if (const double ts = time_scale(p.unit); ts > 0 && p.cmp.dir == direction::lower_is_better) {
    scale = ts * 1e9;
    return "latency";
  }
  if (p.cmp.dir == direction::higher_is_better)
    return "throughput";
  return p.unit.empty() ? "value" : p.unit;
}

// A metric's measure: its name with the unit, as Bencher shows measure names ("tflops (TFLOP/s)").
std::string metric_measure(const metric_summary& m) {
  return m.unit.empty() ? m.name : m.name + " (" + m.unit + ")";
}

} // namespace

json to_bmf(const set_comparison& c) {
  json j = json::object();
  for (const auto& p : c.pairs) {
    const auto& m = p.cmp;
    if (m.n_candidate == 0)
      continue; // nothing measured: Bencher has no value to track
    double scale = 1;
    const std::string measure = sample_measure(p, scale);
    j[p.name][measure] = {{"value", m.candidate_median * scale},
                          {"lower_value", m.candidate_min * scale},
                          {"upper_value", m.candidate_max * scale}};
    for (const auto& x : p.candidate_metrics)
      if (!j[p.name].contains(metric_measure(x)))
        j[p.name][metric_measure(x)] = {
            {"value", x.median}, {"lower_value", x.min}, {"upper_value", x.max}};
  }
  return j;
}

std::string format_bmf(const set_comparison& c) { return dump_json(to_bmf(c), 2) + "\n"; }

} // namespace accelbench::compare
