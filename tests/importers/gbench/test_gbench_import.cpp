// Google Benchmark JSON → runs (importers/gbench). Two inputs: fixtures/gbench_1_7_1.json (the
// real output of a small program run with libbenchmark 1.7.1 --benchmark_format=json; only the
// date, host, executable and the cache list — empty on the VM that produced it — were edited),
// and the output of the installed Google Benchmark produced in-process by the last test.
#include <catch2/catch.hpp>

#include <ctime>
#include <fstream>
#include <sstream>

#include <benchmark/benchmark.h>

#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "importers/gbench/gbench_import.hpp"

using namespace accelbench;
using Catch::Matchers::Contains;

namespace {
std::string fixture() {
  std::ifstream in(std::string(ACCELBENCH_SOURCE_DIR) +
                   "/tests/importers/gbench/fixtures/gbench_1_7_1.json");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
const run& find(const std::vector<run>& runs, const std::string& bench) {
  for (const auto& r : runs)
    if (r.cfg.values.at("benchmark") == bench)
      return r;
  FAIL("no run for " << bench);
  throw 0;
}
} // namespace

TEST_CASE("gbench import: one run per benchmark, one sample per repetition, aggregates skipped",
          "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "fixture.json", "");
  REQUIRE(runs.size() == 3); // BM_axpy, BM_sleepish, BM_err; the 8 aggregate entries are not runs
  CHECK(runs[0].cfg.values.at("benchmark") == "BM_axpy/256/iterations:1000/repeats:3");
  CHECK(runs[1].cfg.values.at("benchmark") == "BM_sleepish/iterations:10/repeats:2/threads:2");
  CHECK(runs[2].cfg.values.at("benchmark") == "BM_err/iterations:5");

  const run& axpy = runs[0];
  CHECK(axpy.cfg.workload == "gbench.BM_axpy");
  CHECK(axpy.cfg.backend == "cpu");
  CHECK(axpy.cfg.values.at("threads") == "1");
  CHECK(axpy.system == "bench-host-01");
  CHECK(axpy.source == "imported");
  CHECK(axpy.ruleset == "gbench-import");
  CHECK(axpy.sample_unit == "s");
  CHECK(axpy.status == run_status::ok);
  REQUIRE(axpy.samples.size() == 3);
  // time_unit "us": 1.0081200025524595e-01 us per iteration is 1.0081200025524595e-07 s.
  CHECK(axpy.samples[1].index == 1);
  CHECK(axpy.samples[1].value == Approx(1.0081200025524595e-07).epsilon(1e-12));
  CHECK(axpy.samples[1].iterations == 1000);
  CHECK(axpy.samples[1].extra.at("cpu_time_s").get<double>() ==
        Approx(1.0043099999999978e-07).epsilon(1e-12));
  CHECK(axpy.samples[1].extra.at("counters").at("flops").get<double>() ==
        Approx(5.0980275014686804e+09));
  CHECK(axpy.samples[1].extra.at("label") == "fp32");
  // Metrics are recomputed from the samples: the median of the three repetitions.
  REQUIRE(axpy.find_metric("time"));
  CHECK(axpy.find_metric("time")->value == Approx(1.0494999969523633e-07).epsilon(1e-12));
  REQUIRE(axpy.find_metric("items_per_second"));
  CHECK(axpy.find_metric("items_per_second")->value == Approx(2.5025905722720957e+09));
  CHECK(axpy.effective_settings.at("repetitions") == 3);

  const run& sleepish = runs[1];
  CHECK(sleepish.cfg.workload == "gbench.BM_sleepish");
  CHECK(sleepish.cfg.values.at("threads") == "2");
  REQUIRE(sleepish.samples.size() == 2);
  // time_unit "ms"
  CHECK(sleepish.samples[0].value == Approx(3.8961749964983028e-06).epsilon(1e-12));
  CHECK(sleepish.samples[1].value == Approx(2.8541999995468359e-06).epsilon(1e-12));
  CHECK_FALSE(sleepish.find_metric("items_per_second"));
}

TEST_CASE("gbench import: a benchmark that reported an error is a failed run", "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "fixture.json", "lab-A");
  const run& err = find(runs, "BM_err/iterations:5");
  CHECK(err.status == run_status::failed);
  CHECK_THAT(err.status_reason, Contains("device not found"));
  CHECK_FALSE(err.valid);
  CHECK(err.samples.empty());
  CHECK(err.system == "lab-A");
}

TEST_CASE("gbench import: uuids are deterministic, so a re-import is idempotent", "[gbench]") {
  std::string text = fixture();
  auto a = importers::runs_from_gbench_json(text, "a.json", "");
  auto b = importers::runs_from_gbench_json(text, "copy/of/a.json", "other-system-name");
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(a[i].uuid == b[i].uuid);
  CHECK(a[0].uuid != a[1].uuid);
  // uuid text form, version 8 (RFC 9562 custom), variant 10
  CHECK(a[0].uuid.size() == 36);
  CHECK(a[0].uuid[14] == '8');
  CHECK(std::string("89ab").find(a[0].uuid[19]) != std::string::npos);

  // Another invocation (another date) of the same benchmarks is another set of runs.
  std::string later = text;
  later.replace(later.find("2026-12-02T12:46:48"), 19, "2026-12-03T12:46:48");
  auto c = importers::runs_from_gbench_json(later, "b.json", "");
  CHECK(c[0].uuid != a[0].uuid);
  // And another host.
  std::string elsewhere = text;
  elsewhere.replace(elsewhere.find("bench-host-01"), 13, "bench-host-02");
  CHECK(importers::runs_from_gbench_json(elsewhere, "c.json", "")[0].uuid != a[0].uuid);
}

TEST_CASE("gbench import: the environment comes from the context", "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "fixture.json", "");
  const json& env = runs[0].environment;
  CHECK(env.at("hostname") == "bench-host-01");
  CHECK(env.at("cpu").at("logical_cores") == 2);
  CHECK(env.at("cpu").at("mhz").get<double>() == 2096);
  CHECK(env.at("cpu").at("scaling_enabled") == false);
  REQUIRE(env.at("caches").size() == 4);
  CHECK(env.at("caches")[3].at("size") == 110100480);
  CHECK(env.at("gbench_library_build_type") == "debug");
  CHECK(env.at("gbench").at("executable") == "./bench_axpy");
  CHECK(env.at("load_avg").size() == 3);
  CHECK(runs[0].fingerprint.size() == 16);
  CHECK(runs[0].fingerprint == runs[1].fingerprint);
  // The local date with its offset becomes UTC.
  CHECK(runs[0].started_at == "2026-12-02T10:46:48.000Z");
}

namespace {
// The fixture with its context date replaced.
std::string dated(const std::string& date) {
  std::string text = fixture();
  const std::string old = "2026-12-02T12:46:48+02:00";
  text.replace(text.find(old), old.size(), date);
  return text;
}
// Google Benchmark's form of a date `ahead_s` seconds from now, in UTC.
std::string date_from_now(std::time_t ahead_s) {
  const std::time_t t = std::time(nullptr) + ahead_s;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}
} // namespace

TEST_CASE("gbench import: a file dated in the future is refused, a clock a little ahead is not",
          "[gbench]") {
  // 2099 would keep the runs from ever ageing out of gc --keep-days.
  CHECK_THROWS_WITH(
      importers::runs_from_gbench_json(dated("2099-01-01T00:00:00+00:00"), "f.json", ""),
      Contains("f.json: Google Benchmark JSON: context.date: "
               "'2099-01-01T00:00:00+00:00' is in the future"));
  CHECK_THROWS_AS(
      importers::runs_from_gbench_json(dated(date_from_now(3 * 24 * 3600)), "f.json", ""),
      input_error);
  CHECK(importers::runs_from_gbench_json(dated(date_from_now(3600)), "f.json", "").size() == 3);
  // An old file keeps its own date: it was not measured here.
  CHECK(importers::runs_from_gbench_json(dated("1970-01-02T00:00:00+00:00"), "f.json", "")[0]
            .started_at == "1970-01-02T00:00:00.000Z");
}

TEST_CASE("gbench import: a run accelbench measured has its clock's times, the file's date only "
          "as a claim",
          "[gbench]") {
  importers::gbench_import_options o;
  o.measured = importers::measured_times{"2026-12-06T08:00:00.000Z", "2026-12-06T08:00:05.250Z"};
  for (const std::string claimed : {"1970-01-01T00:00:00+00:00", "2099-01-01T00:00:00+00:00"}) {
    auto runs = importers::runs_from_gbench_json(dated(claimed), "./bench", o);
    REQUIRE(runs.size() == 3);
    for (const run& r : runs) {
      CHECK(r.started_at == "2026-12-06T08:00:00.000Z");
      CHECK(r.finished_at == "2026-12-06T08:00:05.250Z");
      CHECK(r.extra["gbench"]["claimed_date"] == claimed);
    }
  }
  // Without it (import), no claim is recorded: the date is the run's.
  CHECK_FALSE(importers::runs_from_gbench_json(fixture(), "f.json", "")[0].extra["gbench"].contains(
      "claimed_date"));
}

TEST_CASE("gbench import: runs pass the results document schema", "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "fixture.json", "");
  std::string doc = results_document(runs, json::array(), json::array()).dump();
  auto back = read_results_document(doc, "round trip");
  REQUIRE(back.size() == runs.size());
  CHECK(back[0].uuid == runs[0].uuid);
  CHECK(back[0].samples.size() == 3);
  CHECK(back[0].cfg.key() == runs[0].cfg.key());
}

TEST_CASE("gbench import: malformed input names its position", "[gbench]") {
  SECTION("a JSON syntax error gives line and column") {
    std::string text = "{\n  \"context\": {\n    \"date\": oops\n  }\n}";
    CHECK_THROWS_AS(importers::runs_from_gbench_json(text, "bad.json", ""), input_error);
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(text, "bad.json", ""),
                      Contains("bad.json") && Contains("line 3, column"));
  }
  SECTION("a missing field gives its path") {
    std::string text = fixture();
    auto p = text.find("\"time_unit\": \"us\",");
    text.replace(p, std::string("\"time_unit\": \"us\",").size(), "");
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(text, "f.json", ""),
                      Contains("f.json") && Contains("benchmarks[0].time_unit") &&
                          Contains("missing"));
  }
  SECTION("a wrong value is quoted") {
    std::string text = fixture();
    auto p = text.find("\"time_unit\": \"ms\"");
    text.replace(p, std::string("\"time_unit\": \"ms\"").size(), "\"time_unit\": \"fortnights\"");
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(text, "f.json", ""),
                      Contains("benchmarks[7].time_unit") && Contains("'fortnights'"));
    std::string t2 = fixture();
    auto q = t2.find("\"iterations\": 1000");
    t2.replace(q, std::string("\"iterations\": 1000").size(), "\"iterations\": \"many\"");
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(t2, "f.json", ""),
                      Contains("benchmarks[0].iterations") && Contains("\"many\""));
  }
  SECTION("not Google Benchmark output at all") {
    CHECK_THROWS_WITH(importers::runs_from_gbench_json("[1,2]", "x.json", ""),
                      Contains("expected an object"));
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(R"({"runs": []})", "x.json", ""),
                      Contains("context") && Contains("missing"));
    CHECK_FALSE(importers::looks_like_gbench_json(R"({"schema_version": 1, "runs": []})"));
    CHECK(importers::looks_like_gbench_json(fixture()));
  }
  SECTION("a repetition seen twice") {
    std::string text = fixture();
    auto p = text.find("\"repetition_index\": 1,");
    text.replace(p, std::string("\"repetition_index\": 1,").size(), "\"repetition_index\": 0,");
    CHECK_THROWS_WITH(importers::runs_from_gbench_json(text, "f.json", ""),
                      Contains("benchmarks[1].repetition_index") && Contains("appears twice"));
  }
}

namespace {
// `text` with the first occurrence of `from` replaced by `to`.
std::string edited(std::string text, const std::string& from, const std::string& to) {
  auto p = text.find(from);
  REQUIRE(p != std::string::npos);
  return text.replace(p, from.size(), to);
}

std::string gbench_error(const std::string& text) {
  try {
    importers::runs_from_gbench_json(text, "g.json", "");
  } catch (const input_error& e) {
    return e.what();
  }
  return "(accepted)";
}
} // namespace

TEST_CASE("gbench import: hostile input is an input error, never a crash", "[gbench]") {
  SECTION("100,000 levels of nesting") {
    CHECK_THAT(gbench_error(std::string(100000, '[') + std::string(100000, ']')),
               Contains("g.json") && Contains("nesting too deep"));
    CHECK_FALSE(importers::looks_like_gbench_json(std::string(100000, '{')));
  }
  SECTION("negative times") {
    CHECK_THAT(gbench_error(edited(fixture(), "\"real_time\": ", "\"real_time\": -")),
               Contains("benchmarks[0].real_time") && Contains("must be >= 0"));
    CHECK_THAT(gbench_error(edited(fixture(), "\"cpu_time\": ", "\"cpu_time\": -")),
               Contains("benchmarks[0].cpu_time") && Contains("must be >= 0"));
    CHECK_THAT(gbench_error(edited(fixture(), "\"mhz_per_cpu\": ", "\"mhz_per_cpu\": -")),
               Contains("context.mhz_per_cpu"));
  }
  SECTION("numbers beyond a double, anywhere") {
    CHECK_THAT(gbench_error(edited(fixture(), "\"real_time\": ", "\"real_time\": 1e400, \"x\": ")),
               Contains("g.json") && Contains("1e400") && Contains("out of range"));
    CHECK_THAT(gbench_error(edited(fixture(), "\"context\": {", "\"context\": {\"odd\": -1e999,")),
               Contains("-1e999") && Contains("out of range"));
  }
  SECTION("integers beyond int64") {
    CHECK_THAT(gbench_error(edited(fixture(), "\"iterations\": 1000",
                                   "\"iterations\": 18446744073709551615")),
               Contains("benchmarks[0].iterations") && Contains("64-bit integer range"));
    CHECK_THAT(gbench_error(edited(fixture(), "\"iterations\": 1000", "\"iterations\": 1e19")),
               Contains("benchmarks[0].iterations") && Contains("expected an integer"));
  }
  SECTION("bytes that are not UTF-8 are repaired and counted, and the runs export") {
    std::string text = edited(fixture(), "\"label\": \"fp32\"", "\"label\": \"caf\xE9 \xFF\"");
    size_t repaired = 0;
    auto runs = importers::runs_from_gbench_json(text, "g.json", "", &repaired);
    CHECK(repaired == 2);
    CHECK(runs[0].samples[0].extra.at("label") == "caf\xEF\xBF\xBD \xEF\xBF\xBD");
    std::string doc = results_document(runs, json::array(), json::array()).dump();
    CHECK(read_results_document(doc, "round trip").size() == runs.size());
  }
}

TEST_CASE("gbench import: the installed Google Benchmark's own JSON output imports", "[gbench]") {
  // Registered here, run once, written by Google Benchmark's JSONReporter into a string.
  benchmark::RegisterBenchmark("BM_import_probe",
                               [](benchmark::State& st) {
                                 int64_t x = 0;
                                 for (auto _ : st)
                                   for (int i = 0; i < st.range(0); ++i)
                                     benchmark::DoNotOptimize(x += i);
                               })
      ->Arg(64)
      ->Iterations(200)
      ->Repetitions(3)
      ->Unit(benchmark::kMicrosecond);
  std::ostringstream out, err;
  benchmark::JSONReporter reporter;
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  REQUIRE(ran >= 1);
  auto runs = importers::runs_from_gbench_json(out.str(), "in-process", "");
  REQUIRE(runs.size() == 1);
  const run& r = runs[0];
  CHECK(r.cfg.workload == "gbench.BM_import_probe");
  CHECK(r.cfg.values.at("benchmark") == "BM_import_probe/64/iterations:200/repeats:3");
  REQUIRE(r.samples.size() == 3);
  auto raw = json::parse(out.str());
  for (size_t i = 0; i < 3; ++i) {
    const json& b = raw["benchmarks"][i];
    REQUIRE(b["run_type"] == "iteration");
    CHECK(r.samples[i].index == b["repetition_index"].get<int64_t>());
    CHECK(r.samples[i].value == Approx(b["real_time"].get<double>() * 1e-6).epsilon(1e-12));
    CHECK(r.samples[i].iterations == 200);
    CHECK(r.samples[i].value > 0);
    CHECK(r.samples[i].value < 1e-3); // 64 additions take well under a millisecond
  }
  CHECK(r.system == raw["context"]["host_name"].get<std::string>());
  CHECK(importers::runs_from_gbench_json(out.str(), "again", "")[0].uuid == r.uuid);
}

TEST_CASE("gbench import: aggregates only or no benchmarks is an input error that says why",
          "[gbench]") {
  json doc = json::parse(fixture());
  json aggregates = json::array();
  for (const auto& b : doc["benchmarks"])
    if (b.value("run_type", "") == "aggregate")
      aggregates.push_back(b);
  REQUIRE(!aggregates.empty());
  doc["benchmarks"] = aggregates;
  CHECK_THROWS_WITH(importers::runs_from_gbench_json(doc.dump(), "agg.json", ""),
                    Contains("agg.json") && Contains("only aggregates") &&
                        Contains("--benchmark_display_aggregates_only=true"));
  doc["benchmarks"] = json::array();
  CHECK_THROWS_WITH(importers::runs_from_gbench_json(doc.dump(), "empty.json", ""),
                    Contains("no benchmark results"));
}

TEST_CASE("gbench import: a debug build of the library and a high CV are warnings on the runs",
          "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "f.json", "");
  REQUIRE(!runs.empty());
  for (const auto& r : runs) {
    if (r.samples.empty())
      continue;
    CHECK(r.extra.value("library_build_type", "") == "debug"); // the fixture's context says so
    bool warned = false;
    for (const auto& w : r.extra.value("warnings", json::array()))
      warned |=
          w.get<std::string>().find("debug build of the benchmark library") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("gbench import: CPU time and user counters become metrics with their direction",
          "[gbench]") {
  auto runs = importers::runs_from_gbench_json(fixture(), "fixture.json", "");
  const run& axpy = runs[0];
  REQUIRE(axpy.find_metric("cpu_time"));
  CHECK(axpy.find_metric("cpu_time")->unit == "s");
  CHECK(axpy.find_metric("cpu_time")->dir == direction::lower_is_better);
  std::vector<double> cpu;
  for (const auto& s : axpy.samples)
    cpu.push_back(s.extra.at("cpu_time_s").get<double>());
  CHECK(axpy.find_metric("cpu_time")->value == Approx(stats::median(cpu)).epsilon(1e-12));
  REQUIRE(axpy.find_metric("flops"));
  CHECK(axpy.find_metric("flops")->unit == "FLOP/s");
  CHECK(axpy.find_metric("flops")->dir == direction::higher_is_better);

  using importers::gbench_counter_kind;
  CHECK(gbench_counter_kind("bytes_per_second").unit == "B/s");
  CHECK(gbench_counter_kind("bytes_per_second").dir == direction::higher_is_better);
  CHECK(gbench_counter_kind("tokens_per_second").unit == "/s");
  CHECK(gbench_counter_kind("GFLOPS").known);
  CHECK(gbench_counter_kind("p99_latency_ns").dir == direction::lower_is_better);
  CHECK(gbench_counter_kind("cache_misses").dir == direction::lower_is_better);
  CHECK_FALSE(gbench_counter_kind("widgets").known);
  importers::gbench_import_options o;
  o.counter_directions["widgets"] = direction::lower_is_better;
  CHECK(gbench_counter_kind("widgets", o).known);
  CHECK(gbench_counter_kind("widgets", o).dir == direction::lower_is_better);
  // A user-given direction wins over the name.
  o.counter_directions["bytes_per_second"] = direction::lower_is_better;
  CHECK(gbench_counter_kind("bytes_per_second", o).dir == direction::lower_is_better);
}
