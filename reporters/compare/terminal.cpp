// The aligned plain-text table: what `accelbench compare` prints on a terminal.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/compare/listing.hpp"

namespace accelbench::compare {

namespace {

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
      out +=
          fmt::format("environment differs for {}: {}\n", printable(p->name), environment_text(*p));
    for (const auto& n : p->notes)
      out += fmt::format("note for {}: {}\n", printable(p->name), printable(n));
  }
  return out;
}

} // namespace accelbench::compare
