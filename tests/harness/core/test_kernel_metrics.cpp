// The metrics every kernel backend records (harness/core/kernel_metrics): the figures, and the
// peaks that may not give a % of peak (a CPU probe below what the run achieved).
#include <catch2/catch.hpp>

#include "harness/core/kernel_metrics.hpp"

using namespace accelbench;

namespace {

// A run whose samples all take `seconds` per iteration.
run timed_run(double seconds, int n = 9) {
  run r;
  for (int i = 0; i < n; ++i)
    r.samples.push_back({i, seconds, 1, nlohmann::json::object()});
  return r;
}

double metric_value(const run& r, const char* name) {
  const metric* m = r.find_metric(name);
  REQUIRE(m);
  return m->value;
}

} // namespace

TEST_CASE("kernel metrics: TFLOP/s at the median and % of the CPU probe's peak") {
  run r = timed_run(1e-3);
  kernel_peak p{peak_source::cpu_probe, 2.0, {{"tflops", 2.0}}, ""};
  auto f = add_kernel_metrics(r, 1e9, p); // 1 TFLOP/s
  CHECK(f.tflops == Approx(1.0));
  CHECK(metric_value(r, "pct_of_peak") == Approx(50.0));
  CHECK_FALSE(r.extra["peak"].contains("below_achieved"));
  CHECK_FALSE(r.extra.contains("warnings"));
  CHECK(r.valid);
}

TEST_CASE("kernel metrics: a CPU probe below what the run achieved gives no % of peak and says "
          "why") {
  run r = timed_run(1e-3);
  kernel_peak p{peak_source::cpu_probe, 0.044, {{"tflops", 0.044}}, ""};
  add_kernel_metrics(r, 1e9, p); // 1 TFLOP/s: 23x the probe, which ran on a loaded machine
  CHECK(metric_value(r, "pct_of_peak") == 0.0);
  CHECK(r.extra["peak"]["below_achieved"] == true);
  REQUIRE(r.extra["warnings"].is_array());
  CHECK(r.extra["warnings"][0].get<std::string>().find("--reprobe") != std::string::npos);
  CHECK(r.valid); // the run is right; the probe is what was wrong
  // Within the 5% margin it is still a % of peak (clocks vary).
  run near = timed_run(1e-3);
  add_kernel_metrics(near, 1e9, {peak_source::cpu_probe, 0.97, {{"tflops", 0.97}}, ""});
  CHECK(metric_value(near, "pct_of_peak") == Approx(100.0 / 0.97));
}

TEST_CASE("kernel metrics: a GPU above its datasheet peak is INVALID") {
  run r = timed_run(1e-3);
  add_kernel_metrics(r, 1e12, {peak_source::datasheet, 500.0, {{"tflops", 500.0}}, "datasheet"});
  CHECK_FALSE(r.valid); // 1,000 TFLOP/s on a 500 TFLOP/s device: a measurement bug
}
