// The report's writers: the JSON document (schemas/report.schema.json) and the terminal summary
// (the HTML page is report_html.cpp). They format the report model and decide nothing.
#include "reporters/report/report_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/compare/format.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/model_flops.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/score.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report_internal.hpp"

namespace accelbench::report {

using namespace detail;

namespace {

// The inputs and result of a time to train's implied utilisation, and the formula as printed.
json ttt_json(const ttt_utilisation& u) {
  return {{"model", u.model},
          {"samples", u.samples},
          {"sequence_length", u.sequence_length},
          {"tokens", u.tokens},
          {"flop_per_token", u.flop_per_token},
          {"model_flops", u.model_flops},
          {"minutes", u.minutes},
          {"runs", u.runs},
          {"accelerators", u.accelerators},
          {"peak_tflops", u.peak_tflops > 0 ? json(u.peak_tflops) : json(nullptr)},
          {"peak_dtype", u.peak_dtype},
          {"peak_why", u.peak_why},
          {"utilisation_pct", u.peak_tflops > 0 ? json(u.utilisation_pct) : json(nullptr)},
          {"bf16_peak_tflops", u.bf16_peak_tflops > 0 ? json(u.bf16_peak_tflops) : json(nullptr)},
          {"bf16_utilisation_pct", optional_number(u.bf16_utilisation_pct)},
          {"formula", u.peak_tflops > 0 ? ttt_formula_text(u) : std::string()}};
}

json plausibility_json(const plausibility_check& c) {
  json likely = nullptr;
  if (!c.likely_reading.empty())
    likely = {{"reading", c.likely_reading},
              {"value", c.likely_value},
              {"unit", c.likely_unit},
              {"utilisation_pct", optional_number(c.likely_utilisation_pct)}};
  json out = {{"status", c.status},
              {"basis", c.basis},
              {"implied_tflops_per_accelerator", c.implied_tflops},
              {"peak_tflops", c.peak_tflops},
              {"peak_dtype", c.peak_dtype},
              {"peak_source", c.peak_source},
              {"utilisation_pct", optional_number(c.utilisation_pct)},
              {"margin_pct", 100 * k_peak_margin},
              {"flop_per_token", c.flop_per_token > 0 ? json(c.flop_per_token) : json(nullptr)},
              {"flop_per_token_formula", c.flop_per_token_formula},
              {"lower_bound", c.lower_bound},
              {"reason", c.reason},
              {"likely_reading", likely}};
  // Only time-to-train figures carry it: every other figure's JSON stays as it was.
  if (c.ttt)
    out["time_to_train"] = ttt_json(*c.ttt);
  return out;
}

json side_json(const side_score& s) {
  json rv = json::array();
  for (const auto& r : s.run_values)
    rv.push_back({{"run", r.uuid}, {"value", r.value}, {"used", r.used}});
  json sp = json::array();
  for (const auto& [x, y] : s.size_points)
    sp.push_back(json::array({x, y}));
  json j = {{"system", s.system},
            {"display", s.display},
            {"accelerator_model", s.accelerator_model},
            {"device", s.device_id.empty() ? json(nullptr) : json(s.device_id)},
            {"accelerators", s.accelerators},
            {"runs", s.runs},
            {"samples", s.samples},
            {"source", s.source},
            {"quantity", s.quantity},
            {"unit", s.unit},
            {"direction", to_string(s.dir)},
            {"value", s.value},
            {"ci", {{"low", s.ci_low}, {"high", s.ci_high}, {"degenerate", s.ci_degenerate}}},
            {"per_accelerator", {{"value", s.per_accelerator}, {"unit", s.per_accelerator_unit}}},
            {"pct_of_peak", optional_number(s.pct_of_peak)},
            {"pct_of_peak_kind", s.pct_of_peak_kind},
            {"peak_tflops", s.peak_tflops},
            {"peak_source", s.peak_source},
            {"cost_usd", optional_number(s.cost_usd)},
            {"cost_source", s.cost_source},
            {"energy_kwh", optional_number(s.energy_kwh)},
            {"energy_source", s.energy_source},
            {"run_values", rv},
            {"uuids", s.uuids},
            {"harness_revisions", s.revisions},
            {"provenance", s.provenance},
            {"sample_values", s.sample_values},
            {"eval_curves", s.eval_curves},
            {"size_points", sp},
            {"arithmetic_intensity", optional_number(s.intensity)},
            {"bandwidth_tb_s", s.bandwidth_tb_s},
            {"plausibility", plausibility_json(s.plausibility)},
            {"assumed", s.assumed}};
  if (s.mlperf)
    j["mlperf"] = {{"score_min", s.value},
                   {"valid", s.score_valid},
                   {"scaling_factor", s.scaling_factor},
                   {"reasons", s.score_reasons}};
  return j;
}

json pair_json(const pair_result& p) {
  return {
      {"id", p.id},
      {"family", p.family},
      {"workload", p.workload},
      {"key", p.key},
      {"label", p.label},
      {"result_unit", p.result_unit},
      {"baseline", side_json(p.baseline)},
      {"candidate", side_json(p.candidate)},
      {"speedup", p.speedup},
      {"speedup_ci",
       {{"low", p.speedup_ci_low}, {"high", p.speedup_ci_high}, {"degenerate", p.ci_degenerate}}},
      {"per_accelerator_speedup", optional_number(p.per_accelerator_speedup)},
      {"verdict", p.verdict},
      {"verdict_reason", p.verdict_reason},
      {"p_value", optional_number(p.p_value)},
      {"detectable_pct", optional_number(p.detectable_pct)},
      {"test", {{"method", p.test_method}, {"accounts_for", p.accounts_for}}},
      {"official_verdict", p.official_verdict.empty() ? json(nullptr) : json(p.official_verdict)},
      {"statement", p.statement},
      {"qualifier", p.qualifier},
      {"like_for_like", p.like_for_like},
      {"not_like_for_like", p.not_like_for_like},
      {"in_summary", p.in_summary},
      {"excluded_because", p.excluded_because},
      {"flags", p.flags},
      {"environment_differences", p.environment_differences},
      {"notes", p.notes}};
}

json unpaired_json(const unpaired_group& u) {
  return {{"side", u.side},   {"workload", u.workload}, {"key", u.key},      {"system", u.system},
          {"label", u.label}, {"runs", u.runs},         {"reason", u.reason}};
}

json summary_json(const family_summary& f) {
  return {{"family", f.family},
          {"pairs", f.pairs},
          {"baselines", f.baselines},
          {"excluded_pairs", f.excluded},
          {"verdicts",
           {{"faster", f.faster},
            {"slower", f.slower},
            {"no_difference", f.no_difference},
            {"inconclusive", f.inconclusive},
            {"not_tested", f.not_tested}}},
          {"geomean_speedup", f.geomean_speedup},
          {"geomean_per_accelerator_speedup", optional_number(f.geomean_per_accelerator_speedup)},
          {"workloads", f.workloads}};
}

json figure_json(const figure_entry& f) {
  return {{"side", f.side},
          {"system", f.system},
          {"display", f.display},
          {"workload", f.workload},
          {"key", f.key},
          {"label", f.label},
          {"source", f.source},
          {"value", f.value},
          {"unit", f.unit},
          {"dtype", f.dtype},
          {"provenance", f.provenance},
          {"assumed", f.assumed},
          {"plausibility", plausibility_json(f.plausibility)}};
}

json scaling_json(const scaling_series& s) {
  json pts = json::array();
  for (const auto& p : s.points)
    pts.push_back({{"system", p.system},
                   {"accelerators", p.accelerators},
                   {"score_min", p.score_min},
                   {"efficiency", p.efficiency}});
  return {{"benchmark", s.benchmark},
          {"device", s.device_id},
          {"device_name", s.device_name},
          {"points", pts}};
}

// One JSON array of the report's items, each written by its writer.
template <class T, class F> json array_of(const std::vector<T>& items, F&& write) {
  json out = json::array();
  for (const auto& x : items)
    out.push_back(write(x));
  return out;
}

} // namespace

json to_json(const report_model& r) {
  json doc = {{"schema_version", r.schema_version},
              {"generator",
               {{"name", "accelbench"},
                {"version", r.harness_version},
                {"git_revision", r.harness_revision}}},
              {"generated_at", r.generated_at},
              {"baseline", r.baseline_label},
              {"candidate", r.candidate_label},
              {"ci_level", r.ci_level},
              {"headline", r.headline},
              {"pairs", array_of(r.pairs, pair_json)},
              {"unpaired", array_of(r.unpaired, unpaired_json)},
              {"summaries", array_of(r.summaries, summary_json)},
              {"scaling", array_of(r.scaling, scaling_json)},
              {"figures", array_of(r.figures, figure_json)},
              {"devices", r.devices},
              {"prices", r.prices},
              {"notes", r.notes}};
  if (!r.dp_scaling.empty()) // report_scaling.cpp
    doc["data_parallel_scaling"] = dp_scaling_json(r.dp_scaling);
  return doc;
}

// Names and labels come from the database: each line is made safe for a terminal (control
// characters, including a newline inside a name, printed as escapes).
static std::string printable_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    out += printable(std::string_view(text).substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out;
}

// "1.52x [1.40, 1.65]"; one figure per side has no CI: "1.52x".
static std::string speedup_cell(const pair_result& p) {
  if (!(p.speedup > 0))
    return "-";
  if (p.verdict == "not tested")
    return fmt::format("{:.2f}x", p.speedup);
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", p.speedup, p.speedup_ci_low, p.speedup_ci_high);
}

std::string summary_text(const report_model& r) {
  std::ostringstream os;
  os << printable(r.headline) << "\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"pair", "workload", "config", "baseline", "candidate",
       fmt::format("speed-up [{}]", compare::ci_label(1 - r.ci_level)), "verdict", "per accel",
       "summary", "flags"}};
  for (const auto& p : r.pairs) {
    auto side = [](const side_score& s) {
      return fmt::format("{}: {} {}", s.display, fmt_num(s.value), s.unit);
    };
    rows.push_back(
        {p.id, p.workload, p.label.substr(0, 60), side(p.baseline), side(p.candidate),
         speedup_cell(p), p.statement,
         p.per_accelerator_speedup ? fmt::format("{:.2f}x", *p.per_accelerator_speedup) : "",
         p.in_summary ? "yes" : (p.like_for_like ? "left out" : "not like-for-like"),
         p.flags.empty() ? "" : fmt::format("{}", p.flags.size())});
  }
  // Names come from the database: a newline or an escape sequence inside one is shown escaped.
  for (auto& row : rows)
    for (auto& cell : row)
      cell = printable(cell);
  std::vector<size_t> w(rows[0].size(), 0);
  auto width = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
      n += (c & 0xc0) != 0x80;
    return n;
  };
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      w[i] = std::max(w[i], width(row[i]));
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) {
      line += rows[k][i];
      if (i + 1 < rows[k].size())
        line += std::string(w[i] - width(rows[k][i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    os << line << "\n";
    if (k == 0) {
      std::string rule;
      for (size_t i = 0; i < w.size(); ++i)
        rule += std::string(w[i], '-') + (i + 1 < w.size() ? "  " : "");
      os << rule << "\n";
    }
  }
  for (const auto& f : r.summaries)
    if (f.pairs)
      os << fmt::format("geomean {}: {:.2f}x over {} like-for-like pair(s), {} baseline(s) each "
                        "counted once ({} left out)\n",
                        f.family, f.geomean_speedup, f.pairs, f.baselines, f.excluded);
  for (const auto& f : r.figures)
    if (f.plausibility.implausible())
      os << fmt::format(
          "implausible as stated: {} {} {} {} ({:.0f}% of the {} peak){}\n", f.display, f.label,
          fmt_num(f.value), f.unit, f.plausibility.utilisation_pct.value_or(0),
          f.plausibility.peak_dtype,
          f.plausibility.likely_reading.empty()
              ? std::string()
              : fmt::format("; most likely {}: {} {} ({:.0f}%)", f.plausibility.likely_reading,
                            fmt_num(f.plausibility.likely_value), f.plausibility.likely_unit,
                            f.plausibility.likely_utilisation_pct.value_or(0)));
  if (!r.unpaired.empty())
    os << fmt::format("{} unpaired group(s) (listed in the JSON and HTML)\n", r.unpaired.size());
  return printable_lines(os.str());
}

} // namespace accelbench::report
