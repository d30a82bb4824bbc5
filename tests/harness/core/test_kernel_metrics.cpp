// The metrics every kernel backend records (harness/core/kernel_metrics): the figures, and the
// peaks that may not give a % of peak (a CPU probe below what the run achieved, a probe taken on
// a loaded machine, no datasheet figure): then the metric is absent and the run says why.
#include <catch2/catch.hpp>

#include "harness/core/kernel_metrics.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"

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

int g_probes = 0; // calls of a test's reprobe (a plain function: it cannot capture)

kernel_peak probe_of(double tflops) {
  kernel_peak pk;
  pk.tflops = tflops;
  pk.record = {{"tflops", tflops}};
  return pk;
}

kernel_peak datasheet_of(double tflops) {
  kernel_peak pk;
  pk.source = peak_source::datasheet;
  pk.tflops = tflops;
  if (tflops > 0)
    pk.record = {{"tflops", tflops}};
  pk.what = "datasheet";
  return pk;
}

cpu_peak probe_with_load(double fp32, double other_load) {
  cpu_peak p;
  p.fp32_tflops = fp32;
  p.threads = 2;
  p.isa = "avx2";
  p.cpu_model = "Example CPU";
  p.other_load = other_load;
  return p;
}

} // namespace

TEST_CASE("kernel metrics: TFLOP/s at the median and % of the CPU probe's peak") {
  run r = timed_run(1e-3);
  auto f = add_kernel_metrics(r, 1e9, probe_of(2.0)); // 1 TFLOP/s
  CHECK(f.tflops == Approx(1.0));
  CHECK(metric_value(r, "pct_of_peak") == Approx(50.0));
  CHECK_FALSE(r.extra["peak"].contains("below_achieved"));
  CHECK_FALSE(r.extra.contains("pct_of_peak_unknown"));
  CHECK_FALSE(r.extra.contains("warnings"));
  CHECK(r.valid);
}

TEST_CASE("kernel metrics: a CPU probe below what the run achieved gives no % of peak (absent, not "
          "0) and says why") {
  run r = timed_run(1e-3);
  add_kernel_metrics(r, 1e9, probe_of(0.044)); // 1 TFLOP/s: 23x the probe, which ran loaded
  CHECK(r.find_metric("pct_of_peak") == nullptr);
  CHECK(r.find_metric("cv") != nullptr);
  CHECK(r.extra["peak"]["below_achieved"] == true);
  CHECK_THAT(r.extra["pct_of_peak_unknown"].get<std::string>(), Catch::Contains("below this run"));
  CHECK_THAT(pct_of_peak_unknown(r), Catch::Contains("below this run"));
  REQUIRE(r.extra["warnings"].is_array());
  CHECK(r.extra["warnings"][0].get<std::string>().find("--reprobe") != std::string::npos);
  CHECK(r.valid); // the run is right; the probe is what was wrong
  // Above the peak within the 5% margin: still no % of peak, since one above 100 is no result.
  run near = timed_run(1e-3);
  add_kernel_metrics(near, 1e9, probe_of(0.97));
  CHECK(near.find_metric("pct_of_peak") == nullptr);
  CHECK_THAT(pct_of_peak_unknown(near), Catch::Contains("103%"));
  CHECK(near.valid);
  // At the peak exactly: 100%.
  run at = timed_run(1e-3);
  add_kernel_metrics(at, 1e9, probe_of(1.0));
  CHECK(metric_value(at, "pct_of_peak") == Approx(100.0));
}

TEST_CASE("kernel metrics: a GPU above its datasheet peak by less than the margin stays VALID "
          "with no % of peak above 100") {
  run r = timed_run(1e-3);
  add_kernel_metrics(r, 1e12, datasheet_of(980.0)); // 1,000 TFLOP/s: 2% above, a boost clock
  CHECK(r.valid);
  CHECK(r.find_metric("pct_of_peak") == nullptr);
  CHECK_THAT(pct_of_peak_unknown(r), Catch::Contains("by less than 5%"));
  REQUIRE(r.extra["warnings"].is_array());
  CHECK_THAT(r.extra["warnings"][0].get<std::string>(), Catch::Contains("980"));
  // Beyond the margin: INVALID, and no figure either.
  run far = timed_run(1e-3);
  add_kernel_metrics(far, 1e12, datasheet_of(500.0));
  CHECK_FALSE(far.valid);
  CHECK(far.find_metric("pct_of_peak") == nullptr);
}

TEST_CASE("kernel metrics: a run faster than the peak on record has it probed again, and the new "
          "peak gives the % of peak") {
  g_probes = 0;
  kernel_peak low = probe_of(0.268); // the cached probe was taken on a busy machine
  low.reprobe = [](dtype t) {
    ++g_probes;
    return probe_peak_of(probe_with_load(1.25, 0.01), t);
  };
  run r = timed_run(1e-3);
  add_kernel_metrics(r, 1e9, low); // 1 TFLOP/s
  CHECK(g_probes == 1);
  CHECK(metric_value(r, "pct_of_peak") == Approx(80.0));
  CHECK(r.extra["peak"]["tflops"] == 1.25);
  CHECK_THAT(r.extra["peak"]["probed_again_after"].get<std::string>(), Catch::Contains("0.268"));
  CHECK_FALSE(r.extra.contains("warnings"));
  // A run within the peak on record probes nothing.
  run slow = timed_run(1e-2);
  add_kernel_metrics(slow, 1e9, low);
  CHECK(g_probes == 1);
  // A run faster than the new probe too (matrix units): no % of peak, and says why.
  kernel_peak still_low = probe_of(0.268);
  still_low.reprobe = [](dtype t) { return probe_peak_of(probe_with_load(0.46, 0.0), t); };
  run amx = timed_run(1e-3);
  add_kernel_metrics(amx, 1e9, still_low);
  CHECK(amx.find_metric("pct_of_peak") == nullptr);
  CHECK_THAT(pct_of_peak_unknown(amx), Catch::Contains("0.46"));
}

TEST_CASE("kernel metrics: a CPU peak probed while other processes used the cores gives no % of "
          "peak") {
  const kernel_peak loaded = probe_peak_of(probe_with_load(0.268, 0.40), dtype::fp32);
  CHECK_THAT(loaded.unusable, Catch::Contains("40%"));
  CHECK(loaded.record["probe"]["other_processes_cpu_share"] == 0.40);
  CHECK(loaded.record["probe"]["quiet"] == false);
  run r = timed_run(1e-2); // 0.1 TFLOP/s: below the probe, still no honest % of it
  add_kernel_metrics(r, 1e9, loaded);
  CHECK(r.find_metric("pct_of_peak") == nullptr);
  CHECK_THAT(pct_of_peak_unknown(r), Catch::Contains("other processes used 40%"));
  CHECK(r.valid);
  // A cache entry from before the load was recorded is not trusted either.
  const kernel_peak legacy = probe_peak_of(probe_with_load(0.268, -1), dtype::fp32);
  CHECK_FALSE(legacy.unusable.empty());
  CHECK_FALSE(legacy.record["probe"].contains("other_processes_cpu_share"));
  // A quiet one is.
  const kernel_peak quiet = probe_peak_of(probe_with_load(0.46, 0.02), dtype::fp32);
  CHECK(quiet.unusable.empty());
  run q = timed_run(1e-2);
  add_kernel_metrics(q, 1e9, quiet);
  CHECK(metric_value(q, "pct_of_peak") == Approx(100 * 0.1 / 0.46));
}

TEST_CASE("kernel metrics: a GPU above its datasheet peak is INVALID, and without one there is no "
          "% of peak") {
  run r = timed_run(1e-3);
  add_kernel_metrics(r, 1e12, datasheet_of(500.0));
  CHECK_FALSE(r.valid); // 1,000 TFLOP/s on a 500 TFLOP/s device: a measurement bug
  run unknown = timed_run(1e-3);
  add_kernel_metrics(unknown, 1e12, datasheet_of(0.0));
  CHECK(unknown.find_metric("pct_of_peak") == nullptr);
  CHECK_FALSE(unknown.extra.contains("peak"));
  CHECK_THAT(pct_of_peak_unknown(unknown), Catch::Contains("no datasheet peak"));
  CHECK(unknown.valid);
}

TEST_CASE("kernel metrics: a CPU kernel without a peak (a plugin naming no dtype) records none, "
          "so its run exports and imports") {
  run r = timed_run(1e-3);
  kernel_peak none; // what the plugin workload passes for a plugin that names no dtype
  none.unusable = "the plugin names no dtype";
  add_kernel_metrics(r, 1e9, none);
  CHECK(r.find_metric("pct_of_peak") == nullptr);
  CHECK_FALSE(r.extra.contains("peak")); // was null, which the results schema refuses
  CHECK(pct_of_peak_unknown(r) == "the plugin names no dtype");
  r.cfg = {"example", "cpu", {}};
  r.uuid = "0e48e28b-c8e5-4eae-bc8a-fe47b9c9527c";
  r.system = "host";
  r.ruleset = "kernel-v1";
  const std::string doc = dump_json(results_document({r}, nlohmann::json::array(), {}));
  CHECK(read_results_document(doc, "export").size() == 1);
}

TEST_CASE("a stored 0 % of peak is no measurement, other zeros are") {
  CHECK(unknown_figure({"pct_of_peak", 0.0, "%", direction::higher_is_better}));
  CHECK_FALSE(unknown_figure({"pct_of_peak", 41.0, "%", direction::higher_is_better}));
  CHECK_FALSE(unknown_figure({"cv", 0.0, "", direction::lower_is_better}));
}
