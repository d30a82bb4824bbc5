// Data-parallel scaling in the report (reporters/report/report_scaling.cpp): measured
// efficiency of one training family at several world sizes, the in-job efficiency of baseline=1,
// and the alpha-beta projection with its error on the measured world sizes, labelled as one.
#include <catch2/catch.hpp>

#include "harness/core/json_schema.hpp"
#include "reporters/report/report.hpp"
#include "tests/reporters/report/report_test_helpers.hpp"

using namespace accelbench;

namespace {

run train_run(int n, int64_t world, double tps, double backward_ms, const std::string& overlap) {
  run r;
  r.uuid = fmt::format("00000000-0000-4000-8000-{:012x}", 900 + n);
  r.cfg.workload = "train.llama";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"mode", "throughput"}, {"model", "tiny"}, {"batch", "2"},
                  {"seq", "16"},          {"threads", "1"},  {"steps", std::to_string(4 + n)},
                  {"overlap", overlap},   {"baseline", "0"}, {"bucket_kib", "1000"}};
  r.system = "box";
  r.add_metric("tokens_per_s", tps, "tokens/s", direction::higher_is_better);
  r.add_metric("backward_ms", backward_ms, "ms", direction::lower_is_better);
  r.extra["tokens_per_step"] = 32 * world;
  r.extra["parameters"] = 1000000;
  if (world > 1) {
    r.environment["distributed"] = {{"world_size", world}};
    r.extra["data_parallel"] = {{"gradient_bytes", 4000000}, {"bucket_bytes", 1024000}};
  }
  return r;
}

run allreduce_run(int n, int64_t bytes, double time_s, double busbw) {
  run r;
  r.uuid = fmt::format("00000000-0000-4000-8000-{:012x}", 950 + n);
  r.cfg.workload = "collective";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"op", "allreduce"}, {"bytes", std::to_string(bytes)}, {"dtype", "fp32"}};
  r.system = "box";
  r.environment["distributed"] = {{"world_size", 2}};
  r.add_metric("time", time_s, "s", direction::lower_is_better);
  r.add_metric("busbw", busbw, "GB/s", direction::higher_is_better);
  return r;
}

std::vector<run> family_runs() {
  return {train_run(1, 1, 1000, 20, "1"),       train_run(2, 2, 1800, 21, "1"),
          train_run(3, 2, 1500, 21, "0"),       allreduce_run(1, 8, 1e-5, 0.0016),
          allreduce_run(2, 1 << 20, 1e-3, 2.0), allreduce_run(3, 64 << 20, 0.1, 1.3)};
}

std::vector<const run*> ptrs(const std::vector<run>& v) {
  std::vector<const run*> p;
  for (const auto& r : v)
    p.push_back(&r);
  return p;
}

} // namespace

TEST_CASE("dp scaling: measured efficiency against the one-rank run, projection and its error",
          "[report][scaling]") {
  const auto runs = family_runs();
  const auto all = report::build_dp_scaling(ptrs(runs));
  REQUIRE(all.size() == 1);
  const auto& s = all[0];
  CHECK(s.system == "box");
  REQUIRE(s.measured.size() == 3); // (1, ""), (2, "0"), (2, "1")
  CHECK(s.measured[0].world_size == 1);
  CHECK(s.measured[0].efficiency == Approx(1.0));
  CHECK(s.measured[1].overlap == "0");
  CHECK(s.measured[1].efficiency == Approx(1500.0 / 2000.0));
  CHECK(s.measured[2].efficiency == Approx(1800.0 / 2000.0));
  // The inputs, by hand: t_c = 32 tokens / 1000 tokens/s, t_b = the one-rank backward, G and the
  // bucket from the data-parallel record (4 buckets), alpha = 1e-5 s / (2 (2-1)) from the
  // smallest all-reduce, busbw at the size nearest the bucket (1 MiB: 2 GB/s).
  CHECK(s.projection_missing.empty());
  CHECK(s.compute_s == Approx(0.032));
  CHECK(s.backward_s == Approx(0.020));
  CHECK(s.buckets == 4);
  CHECK(s.alpha_s == Approx(5e-6));
  CHECK(s.busbw_gb_s == Approx(2.0));
  CHECK(s.busbw_at_bytes == (1 << 20));
  // N = 2 with overlap: t_ar = 4 * 2 * 5e-6 + 1 * 4e6 / 2e9 = 2.04e-3 s; the backward (20 ms)
  // hides all but the last bucket: exposed = 2.04e-3 / 4.
  const double t_ar = 4 * 2 * 5e-6 + 4e6 / 2e9;
  const double step_overlap = 0.032 + t_ar / 4, step_serial = 0.032 + t_ar;
  REQUIRE(s.measured[2].projected_tokens_per_s);
  CHECK(*s.measured[2].projected_tokens_per_s == Approx(64 / step_overlap));
  CHECK(*s.measured[2].projection_error_pct == Approx(100.0 * (64 / step_overlap - 1800) / 1800));
  CHECK(*s.measured[1].projected_tokens_per_s == Approx(64 / step_serial));
  // The projected series: powers of two to 1024, efficiency falling with N.
  REQUIRE(s.projection.size() == 11);
  CHECK(s.projection[0].world_size == 1);
  CHECK(s.projection[0].efficiency == Approx(1.0));
  CHECK(s.projection[10].world_size == 1024);
  for (size_t i = 1; i < s.projection.size(); i++)
    CHECK(s.projection[i].efficiency <= s.projection[i - 1].efficiency);
  const double t_ar_1024 = 4 * 2 * 1023 * 5e-6 + 2.0 * 1023 / 1024 * 4e6 / 2e9;
  CHECK(s.projection[10].step_s == Approx(0.032 + std::max(t_ar_1024 / 4, t_ar_1024 - 0.020)));
}

TEST_CASE("dp scaling: in-job baseline, missing inputs, nothing to show", "[report][scaling]") {
  SECTION("one world size with baseline=1 is a family; no all-reduce runs: no projection") {
    run r = train_run(1, 2, 1800, 21, "1");
    r.add_metric("baseline_tokens_per_s", 1000, "tokens/s", direction::higher_is_better);
    r.add_metric("scaling_efficiency", 90, "%", direction::higher_is_better);
    const auto all = report::build_dp_scaling({&r});
    REQUIRE(all.size() == 1);
    REQUIRE(all[0].measured.size() == 1);
    CHECK(all[0].measured[0].efficiency == Approx(0.9));
    CHECK(*all[0].measured[0].in_job_efficiency == Approx(0.9));
    CHECK(all[0].measured[0].reference.find("baseline=1") != std::string::npos);
    CHECK(all[0].projection_missing.find("no all-reduce measurement") != std::string::npos);
    CHECK(all[0].projection.empty());
    CHECK(report::dp_scaling_html(all).find("No projection") != std::string::npos);
  }
  SECTION("world size 1 alone is no scaling") {
    run r = train_run(1, 1, 1000, 20, "1");
    CHECK(report::build_dp_scaling({&r}).empty());
    CHECK(report::dp_scaling_html({}).empty());
  }
}

TEST_CASE("dp scaling in the report: labelled projection in the HTML, valid JSON",
          "[report][scaling]") {
  report::side a, b;
  a.label = "system=box";
  b.label = "system=box";
  a.runs = family_runs();
  const auto rep = report::build_report(a, b, report_test::fixed_options());
  REQUIRE(rep.dp_scaling.size() == 1);
  const std::string html = report::to_html(rep);
  CHECK(html.find("Data-parallel scaling (measured) and projection") != std::string::npos);
  CHECK(html.find("PROJECTION (alpha-beta model with overlap") != std::string::npos);
  CHECK(html.find("tokens/s (projection)") != std::string::npos);
  const json j = report::to_json(rep);
  REQUIRE(j.contains("data_parallel_scaling"));
  CHECK(j["data_parallel_scaling"][0]["projection"]["label"] == "projection");
  auto v = load_builtin_schema("report.schema.json").validate(j);
  for (const auto& x : v)
    INFO(x.path << ": " << x.message);
  CHECK(v.empty());
}
