#include "harness/core/headline_metric.hpp"

#include <array>

namespace accelbench {

namespace {

// The figures each kind of run is known by, for a run whose workload's primary metric is unknown
// (the server has no registry; an imported run's workload may not be registered) or absent. A
// time to train comes first: a run that has one is a time-to-train set, and any throughput beside
// it is a side figure. `time` comes last: a kernel run has it beside its TFLOP/s, and an external
// program's or a Google Benchmark run's median time is its figure when nothing better is there.
constexpr std::array<const char*, 5> k_known_figures = {"time_to_train_min", "tflops",
                                                        "tokens_per_s", "busbw", "time"};

const metric* first_known_figure(const run& r) {
  for (const char* name : k_known_figures)
    if (const metric* m = r.find_metric(name))
      return m;
  return nullptr;
}

// The store reads a run's metrics back in the order of their names, so its first metric may be
// "cv", a bare number; a metric with a unit is a figure a reader can place.
const metric* first_with_unit(const run& r) {
  for (const auto& m : r.metrics)
    if (!m.unit.empty())
      return &m;
  return nullptr;
}

} // namespace

const metric* headline_metric(const run& r, const std::string& primary_metric) {
  if (!primary_metric.empty())
    if (const metric* m = r.find_metric(primary_metric))
      return m;
  if (const metric* m = first_known_figure(r))
    return m;
  if (const metric* m = first_with_unit(r))
    return m;
  return r.metrics.empty() ? nullptr : &r.metrics.front();
}

} // namespace accelbench
