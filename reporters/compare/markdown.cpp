// GitHub-flavoured markdown for a job summary.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/compare/listing.hpp"

namespace accelbench::compare {

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
      flags += fmt::format("- `{}`: environment differs ({})\n", markdown_escape(p->name),
                           environment_text(*p));
    for (const auto& n : p->notes)
      flags += fmt::format("- `{}`: {}\n", markdown_escape(p->name), markdown_escape(n));
  }
  if (!flags.empty())
    out += "Flags:\n\n" + flags + "\n";
  return out;
}

} // namespace accelbench::compare
