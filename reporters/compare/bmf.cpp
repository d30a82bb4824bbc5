// Bencher Metric Format: the candidate's figures for Bencher's tracking.
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "reporters/compare/formats.hpp"

namespace accelbench::compare {

namespace {

// Bencher's measure for the samples: times (lower is better) go to its built-in "latency" in
// nanoseconds, higher-is-better samples to "throughput", anything else to a measure named after
// its unit. Sets the factor that converts a sample into the measure's unit.
std::string sample_measure(const pair_result& p, double& scale) {
  scale = 1;
  if (const double ts = seconds_per(p.unit); ts > 0 && p.cmp.dir == direction::lower_is_better) {
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
