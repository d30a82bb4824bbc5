// Tests of reporters/report: catalogue and prices, exact bootstrap intervals, pairing and scores,
// the golden JSON, schema validity, HTML escaping, the MLPerf report from the shared data, the
// published reference results and the report command.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>
#include <tuple>

#include "harness/app/cli/report_command.hpp"
#include "harness/compare/format.hpp"
#include "harness/core/error.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "report_test_helpers.hpp"
#include "reporters/report/report_internal.hpp"
#include "reporters/report/report_parts.hpp"

using namespace accelbench;
using namespace report_test;

namespace {

const report::pair_result* find_pair(const report::report_model& r, const std::string& key_part,
                                     const std::string& cand_system = "") {
  for (const auto& p : r.pairs)
    if (p.key.find(key_part) != std::string::npos &&
        (cand_system.empty() || p.candidate.system == cand_system))
      return &p;
  return nullptr;
}

report::report_model synthetic_report(store::store& db, const std::string& b = "h100-box",
                                      const std::string& c = "b200-box") {
  auto sb = query::select_runs(db, "system=" + b);
  auto sc = query::select_runs(db, "system=" + c);
  return report::build_report(side_of(sb), side_of(sc), fixed_options());
}

} // namespace

TEST_CASE("report: exact bootstrap CI of the median agrees with Monte-Carlo resampling",
          "[report]") {
  stats::rng g(7);
  for (size_t n : {5u, 21u, 100u, 101u}) {
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i)
      v.push_back(10 + g.normal());
    std::sort(v.begin(), v.end());
    auto [lo, hi] = report::exact_bootstrap_median_ci(v, 0.95);
    auto [mlo, mhi] = stats::bootstrap_median_ci(v, 0.95, 40000, 3);
    // The Monte-Carlo interval interpolates between order statistics; the exact one picks one.
    const double tol = (v.back() - v.front()) / double(n) * 4;
    INFO("n = " << n << " exact [" << lo << ", " << hi << "] mc [" << mlo << ", " << mhi << "]");
    CHECK(std::fabs(lo - mlo) <= tol);
    CHECK(std::fabs(hi - mhi) <= tol);
    CHECK(lo <= stats::median(v));
    CHECK(hi >= stats::median(v));
  }
  std::vector<double> one = {3.5};
  CHECK(report::exact_bootstrap_median_ci(one, 0.95) == std::make_pair(3.5, 3.5));
}

TEST_CASE("report: exact bootstrap CI of a ratio of medians agrees with Monte-Carlo resampling",
          "[report]") {
  stats::rng g(11);
  std::vector<double> a, b;
  for (int i = 0; i < 31; ++i)
    a.push_back(100 + 5 * g.normal());
  for (int i = 0; i < 25; ++i)
    b.push_back(210 + 8 * g.normal());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  auto [lo, hi] = report::exact_bootstrap_ratio_ci(a, b, 0.95);
  auto [mlo, mhi] = stats::bootstrap_ratio_ci(a, b, 0.95, 40000, 5);
  const double point = stats::median(b) / stats::median(a);
  CHECK(lo < point);
  CHECK(hi > point);
  CHECK(lo == Approx(mlo).epsilon(0.01));
  CHECK(hi == Approx(mhi).epsilon(0.01));
  // Degenerate sides: the interval is the point.
  auto [dlo, dhi] = report::exact_bootstrap_ratio_ci({2.0}, {5.0}, 0.95);
  CHECK(dlo == Approx(2.5));
  CHECK(dhi == Approx(2.5));
}

TEST_CASE("report: the device catalogue matches the accelerator names of MLPerf systems",
          "[report]") {
  auto cat = report::device_catalogue::builtin();
  REQUIRE(cat.match("NVIDIA H100-SXM5-80GB"));
  CHECK(cat.match("NVIDIA H100-SXM5-80GB")->id == "h100-sxm");
  CHECK(cat.match("NVIDIA Blackwell GPU (B200-SXM-180GB)")->id == "b200");
  CHECK(cat.match("NVIDIA Blackwell GPU (GB200)")->id == "gb200");
  CHECK(cat.match("NVIDIA H100 PCIe")->id == "h100-pcie");
  CHECK(cat.match("NVIDIA H200 141GB")->id == "h200");
  CHECK(cat.match("CPU: AMD EPYC 9654")->id == "cpu");
  CHECK(cat.match("Some FPGA") == nullptr);
  CHECK(cat.find("h100-sxm")->peak_for("bf16") == 989);
  CHECK(cat.find("h100-sxm")->peak_for("fp8-cs") == 1979);
  CHECK(cat.find("b200")->peak_for("fp4") == 9000);
  CHECK(cat.find("gb200")->tdp_w == 1200);
  // Every NVIDIA system description in the shared data maps to a GPU of the catalogue; AMD's
  // MI300X and tinycorp's RTX 4090 (the differential test's folders) are not in it, and match
  // nothing rather than a wrong device.
  size_t seen = 0, unknown = 0;
  for (const auto& e : fs::recursive_directory_iterator(mlperf_data())) {
    if (e.path().extension() != ".json" || e.path().parent_path().filename() != "systems")
      continue;
    json d = json::parse(slurp(e.path()));
    const std::string model = d.value("accelerator_model_name", "");
    const auto* dev = cat.match(model);
    INFO(e.path().string() << ": " << model);
    if (d.value("submitter", "") != "NVIDIA") {
      CHECK(dev == nullptr);
      ++unknown;
      continue;
    }
    REQUIRE(dev);
    CHECK(dev->id != "cpu");
    ++seen;
  }
  CHECK(seen == 4);
  CHECK(unknown == 2);
}

TEST_CASE("report: price overrides name a device and reject bad values", "[report]") {
  auto cat = report::device_catalogue::builtin();
  auto prices = report::price_table::builtin();
  REQUIRE(prices.find("h100-sxm"));
  CHECK(prices.find("h100-sxm")->usd_per_hour > 0);
  CHECK(prices.find("gb200") == nullptr);
  prices.apply_override("GB200=6.5", cat);
  REQUIRE(prices.find("gb200"));
  CHECK(prices.find("gb200")->usd_per_hour == 6.5);
  prices.apply_override("NVIDIA Blackwell GPU (B200-SXM-180GB)=4", cat);
  CHECK(prices.find("b200")->usd_per_hour == 4);
  CHECK_THROWS_AS(prices.apply_override("B200", cat), input_error);
  CHECK_THROWS_AS(prices.apply_override("B200=cheap", cat), input_error);
  CHECK_THROWS_AS(prices.apply_override("B200=-1", cat), input_error);
  CHECK_THROWS_WITH(prices.apply_override("TPUv5=2", cat), Catch::Contains("TPUv5"));
}

TEST_CASE("report: every CI is at the level of compare's test, 1 - alpha", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  auto opt = fixed_options();
  CHECK(report::ci_level(opt) == Approx(0.99)); // alpha 0.01
  opt.verdict_rule.alpha = 0.05;
  const auto rep = report::build_report(side_of(query::select_runs(db, "system=h100-box")),
                                        side_of(query::select_runs(db, "system=b200-box")), opt);
  CHECK(rep.ci_level == Approx(0.95));
  CHECK(report::to_json(rep)["ci_level"] == Approx(0.95));
  for (const std::string& text : {report::summary_text(rep), report::to_html(rep)}) {
    CHECK(text.find("95% CI") != std::string::npos);
    CHECK(text.find("99% CI") == std::string::npos);
  }
  for (const auto& p : rep.pairs)
    if (p.verdict != "not tested")
      CHECK(p.qualifier.find("95% CI") != std::string::npos);
  // The page says which level and why: the test's own.
  bool said = false;
  for (const auto& n : rep.notes)
    said =
        said || n.find("95% CI, the level of compare's test (1 - alpha 0.05)") != std::string::npos;
  CHECK(said);
}

TEST_CASE("report: an inconclusive pair says what its test could see", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  auto rep = synthetic_report(db);
  for (const auto& p : rep.pairs) {
    INFO(p.id << " " << p.verdict << ": " << p.qualifier);
    // Filled by compare's test (harness/compare detectable_pct) where it tested the pair.
    if (p.detectable_pct && p.verdict == "inconclusive")
      CHECK(p.qualifier.find(fmt::format("could only see changes above {:.1f}%",
                                         *p.detectable_pct)) != std::string::npos);
    if (!p.p_value)
      CHECK_FALSE(p.detectable_pct);
  }
  const auto j = report::to_json(rep);
  for (const auto& p : j["pairs"])
    CHECK(p.contains("detectable_pct"));
  // The words, on a pair whose test could see changes above 9.1% only.
  report::pair_result p;
  p.verdict = "inconclusive";
  p.speedup = 1.05;
  p.speedup_ci_low = 0.95;
  p.speedup_ci_high = 1.16;
  p.p_value = 0.3;
  p.detectable_pct = 9.1;
  p.baseline.samples = p.candidate.samples = 10;
  report::detail::describe_pair(p, fixed_options());
  CHECK(p.statement == "no significant difference");
  CHECK(p.qualifier == "speed-up 1.05x, 99% CI 0.95-1.16; could only see changes above 9.1%");
}

TEST_CASE("report: synthetic store pairs by config and scores each side", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  auto rep = synthetic_report(db);
  REQUIRE(rep.pairs.size() == 3); // two GEMM sizes and one training config
  const auto* g = find_pair(rep, "M=8192");
  REQUIRE(g);
  CHECK(g->family == "kernel");
  CHECK(g->baseline.quantity == "tflops");
  CHECK(g->baseline.value == Approx(700).epsilon(0.03));
  CHECK(g->candidate.value == Approx(1500).epsilon(0.03));
  CHECK(g->speedup == Approx(g->candidate.value / g->baseline.value));
  CHECK(g->speedup_ci_low < g->speedup);
  CHECK(g->speedup_ci_high > g->speedup);
  CHECK_FALSE(g->ci_degenerate);
  REQUIRE(g->baseline.pct_of_peak);
  CHECK(*g->baseline.pct_of_peak == Approx(100 * g->baseline.value / 989));
  CHECK(*g->candidate.pct_of_peak == Approx(100 * g->candidate.value / 2250));
  // The last GEMM pair's cuBLAS versions differ: flagged.
  bool flagged = false;
  for (const auto& f : g->flags)
    flagged = flagged || f == "environment: libraries.cublas";
  CHECK(flagged);
  CHECK(find_pair(rep, "M=4096")->flags.empty());
  // cost per EFLOP: price x hours; energy: TDP x hours.
  REQUIRE(g->baseline.cost_usd);
  const double hours = 1e6 / g->baseline.value / 3600;
  CHECK(*g->baseline.cost_usd == Approx(2.69 * hours));
  CHECK(*g->baseline.energy_kwh == Approx(0.7 * hours));

  const auto* tr = find_pair(rep, "train.llama");
  REQUIRE(tr);
  CHECK(tr->family == "training");
  CHECK(tr->speedup == Approx(19000.0 / 9000).epsilon(0.05));
  CHECK(*tr->baseline.pct_of_peak == Approx(42));
  CHECK(tr->baseline.per_accelerator == Approx(tr->baseline.value / 8));
  CHECK(tr->baseline.eval_curves.size() == 1);
  // The failed candidate run is noted, not used.
  CHECK(tr->candidate.runs == 2);
  CHECK(tr->candidate.samples == 12);
  bool noted = false;
  for (const auto& n : tr->notes)
    noted = noted || n.find("out of memory") != std::string::npos;
  CHECK(noted);
  // The attention run has no baseline: listed, not dropped.
  REQUIRE(rep.unpaired.size() == 1);
  CHECK(rep.unpaired[0].side == "candidate");
  CHECK(rep.unpaired[0].workload == "attention");
  REQUIRE(rep.summaries.size() == 2);
  CHECK(rep.summaries[1].family == "kernel");
  CHECK(rep.summaries[1].geomean_speedup ==
        Approx(std::sqrt(find_pair(rep, "M=4096")->speedup * find_pair(rep, "M=8192")->speedup)));
  CHECK(rep.headline.find("B200 (8) vs H100 (8) training llama3-8b: 2.") == 0);
  CHECK(tr->verdict == "improved");
  CHECK(tr->statement.find("x faster") != std::string::npos);
}

TEST_CASE("report: golden JSON of the synthetic store", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  auto rep = synthetic_report(db);
  const std::string text = report::to_json(rep).dump(2) + "\n";
  const fs::path golden =
      fs::path(ACCELBENCH_SOURCE_DIR) / "tests/reporters/report/golden/report.json";
  if (const char* u = std::getenv("ACCELBENCH_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    fs::create_directories(golden.parent_path());
    write_file_atomic(golden, text);
    WARN("golden file rewritten: " << golden.string());
  }
  REQUIRE(fs::exists(golden));
  CHECK(text == slurp(golden));
  // Same inputs, same bytes (no hidden randomness or clock).
  CHECK(report::to_json(synthetic_report(db)).dump(2) + "\n" == text);
}

TEST_CASE("report: the roofline puts each GEMM at its FLOP per byte under its device's roofs",
          "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  auto rep = synthetic_report(db);
  int seen = 0;
  for (const auto& p : rep.pairs) {
    if (p.workload != "gemm")
      continue;
    const double m = std::stod(p.key.substr(p.key.find("M=") + 2));
    const double expect = 2 * m * m * m / (4 * m * m + 4 * m * m); // 2MNK / (2(MK+KN) + 4MN)
    REQUIRE(p.baseline.intensity);
    CHECK(*p.baseline.intensity == Approx(expect));
    CHECK(*p.candidate.intensity == Approx(expect));
    CHECK(p.baseline.bandwidth_tb_s == 3.35); // H100 SXM in results/devices.json
    CHECK(p.candidate.bandwidth_tb_s == 8.0); // B200 SXM
    ++seen;
  }
  CHECK(seen == 2);
  // Attention runs record no bytes: no intensity, and the JSON says null.
  const json j = report::to_json(rep);
  bool null_seen = false;
  for (const auto& p : j["pairs"])
    null_seen |= p["baseline"]["arithmetic_intensity"].is_null();
  CHECK(null_seen);
  const std::string html = report::to_html(rep);
  CHECK(html.find("Roofline: attainable TFLOP/s vs arithmetic intensity") != std::string::npos);
  CHECK(html.find("roof: H100 SXM (989 TFLOP/s, 3.35 TB/s)") != std::string::npos);
  CHECK(html.find("roof: B200 SXM (2250 TFLOP/s, 8 TB/s)") != std::string::npos);
}

TEST_CASE("report: the JSON validates against schemas/report.schema.json", "[report]") {
  auto schema = load_builtin_schema("report.schema.json");
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  import_mlperf(db);
  auto j = report::to_json(synthetic_report(db));
  auto v = schema.validate(j);
  for (const auto& x : v)
    INFO(x.path << ": " << x.message);
  CHECK(v.empty());
  auto ml = report::to_json(report::build_report(
      side_of(query::select_runs(db, "accelerator=H100&workload=mlperf.*")),
      side_of(query::select_runs(db, "accelerator=Blackwell")), fixed_options()));
  CHECK(schema.validate(ml).empty());
  // The schema is not a rubber stamp.
  json bad = j;
  bad["pairs"][0]["speedup"] = "fast";
  CHECK_FALSE(schema.validate(bad).empty());
  json bad2 = j;
  bad2.erase("schema_version");
  CHECK_FALSE(schema.validate(bad2).empty());
}

TEST_CASE("report: hostile system names and tags come out inert in the HTML", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  const std::string evil_b = "<script>alert(1)</script>";
  const std::string evil_c = "\"quoted\" 'single' </svg><img src=x onerror=alert(2)> &amp;";
  fill_synthetic(db, evil_b, evil_c, "</script><b>tag</b>");
  // Sides straight from the store: the selector syntax itself uses '&'.
  auto side_for = [&](const std::string& sys) {
    report::side s;
    s.label = "system=" + sys;
    store::run_filter f;
    f.systems = {sys};
    s.runs = db.query(f);
    s.systems[sys] = *db.get_system(sys);
    query::score_mlperf_groups(s);
    return s;
  };
  auto rep = report::build_report(side_for(evil_b), side_for(evil_c), fixed_options());
  REQUIRE(rep.pairs.size() == 3);
  const std::string html = report::to_html(rep);
  CHECK(html.find("<script>alert(1)") == std::string::npos);
  CHECK(html.find("</svg><img") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<img src=x onerror") == std::string::npos);
  CHECK(html.find("<b>tag</b>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&amp;amp;") != std::string::npos);
  CHECK(html.find("&quot;quoted&quot; &#39;single&#39;") != std::string::npos);
  // Exactly our two script elements: the JSON data block and the table script.
  size_t scripts = 0;
  for (size_t p = html.find("<script"); p != std::string::npos; p = html.find("<script", p + 1))
    ++scripts;
  CHECK(scripts == 2);
  size_t closes = 0;
  for (size_t p = html.find("</script"); p != std::string::npos; p = html.find("</script", p + 1))
    ++closes;
  CHECK(closes == 2);
  // The embedded JSON still holds the names exactly (escaped as \u003c inside the script).
  auto a = html.find("id=\"report-data\">");
  REQUIRE(a != std::string::npos);
  a += 17;
  auto e = html.find("</script>", a);
  json data = json::parse(html.substr(a, e - a));
  CHECK(data["baseline"] == "system=" + evil_b);
  CHECK(data["pairs"][0]["baseline"]["system"] == evil_b);
  CHECK(report::json_for_script(json("</script>")) == "\"\\u003c/script\\u003e\"");
}

TEST_CASE("report: control characters in names come out as U+FFFD, never raw in the page",
          "[report]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(report::html_escape(std::string("BM_a\0b", 6)) == "BM_a" + fffd + "b");
  CHECK(report::html_escape("\x1b[31mred\x7f") == fffd + "[31mred" + fffd);
  CHECK(report::html_escape("x\xC2\x9b"
                            "1m") == "x" + fffd + "1m"); // C1 CSI
  CHECK(report::html_escape("tab\tnew\nline") == "tab\tnew\nline");
  CHECK(report::html_escape("caf\xC3\xA9 \xE2\x86\x92 <") == "caf\xC3\xA9 \xE2\x86\x92 &lt;");
  CHECK(report::json_for_script(json("a\x7f"
                                     "b\xC2\x85")) == "\"a\\u007fb\\u0085\"");
  // A whole page of names with ESC, BEL, DEL and a C1 control: none of them raw.
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db, "base\x1b]0;pwned\x07", "cand\x7f\xC2\x9b", "tag\x1b[2J");
  auto side_for = [&](const std::string& sys) {
    report::side s;
    s.label = "system=" + sys;
    store::run_filter f;
    f.systems = {sys};
    s.runs = db.query(f);
    s.systems[sys] = *db.get_system(sys);
    query::score_mlperf_groups(s);
    return s;
  };
  auto rep = report::build_report(side_for("base\x1b]0;pwned\x07"), side_for("cand\x7f\xC2\x9b"),
                                  fixed_options());
  REQUIRE(rep.pairs.size() == 3);
  const std::string html = report::to_html(rep);
  size_t raw = 0;
  for (size_t i = 0; i < html.size(); ++i) {
    const auto c = static_cast<unsigned char>(html[i]);
    raw += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ||
           (c == 0xC2 && i + 1 < html.size() && static_cast<unsigned char>(html[i + 1]) >= 0x80 &&
            static_cast<unsigned char>(html[i + 1]) <= 0x9F);
  }
  CHECK(raw == 0);
  CHECK(html.find("base" + fffd + "]0;pwned" + fffd) != std::string::npos);
}

TEST_CASE("report: MLPerf report from the shared data shows the official scores", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  auto opt = fixed_options();
  {
    auto rep =
        report::build_report(side_of(query::select_runs(db, "eos-dfw_n64_ngc25.01_nemo")),
                             side_of(query::select_runs(db, "tyche_ngpu512_ngc25.04_nemo")), opt);
    REQUIRE(rep.pairs.size() == 1);
    const auto& p = rep.pairs[0];
    CHECK(p.family == "mlperf");
    CHECK(p.key == "mlperf/llama31_405b");
    CHECK(p.baseline.value == Approx(269.1216).margin(5e-5));
    CHECK(p.candidate.value == Approx(121.7573).margin(5e-5));
    CHECK(p.baseline.accelerators == 512);
    CHECK(p.candidate.accelerators == 512);
    CHECK(p.speedup == Approx(269.1216 / 121.7573).epsilon(1e-6));
    CHECK_FALSE(p.per_accelerator_speedup); // same count
    CHECK(p.baseline.run_values.size() == 3);
    CHECK(p.speedup_ci_low < p.speedup); // three runs per side: a real, wide interval
    CHECK(p.speedup_ci_high > p.speedup);
    CHECK_FALSE(p.ci_degenerate);
    CHECK(p.baseline.ci_low < p.baseline.value);
    CHECK(p.baseline.ci_high > p.baseline.value);
    // Three runs a side, MLPerf's own count for this benchmark: Welch's t on the log run times
    // decides where a rank test could not (its smallest p at 3 and 3 is 0.1), and the method is
    // stated. Before, this was "2.21x, inconclusive (...; a test needs 5 per side)".
    CHECK(p.verdict == "improved");
    CHECK(p.test_method == "t on log run medians, 3 + 3 run(s)");
    CHECK(rep.headline.rfind("GB200 (512) vs H100 (512) on MLPerf llama31_405b: 2.21x faster", 0) ==
          0);
    CHECK(rep.headline.find("t on log run medians, 3 + 3 run(s)") != std::string::npos);
    CHECK(rep.headline.find("a test needs") == std::string::npos);
    // And the official scores, as MLPerf compares them.
    CHECK(p.official_verdict ==
          "by MLPerf's official scores (269.12 vs 121.76 min): the candidate is 2.21x faster "
          "(MLPerf compares scores as published, with no test)");
    REQUIRE(p.candidate.cost_usd.has_value() == false); // no default GB200 price
    REQUIRE(p.baseline.cost_usd);
    CHECK(*p.baseline.cost_usd == Approx(2.69 * 512 * 269.1216 / 60).epsilon(1e-6));
    CHECK(*p.candidate.energy_kwh == Approx(1.2 * 512 * 121.7573 / 60).epsilon(1e-6));
    CHECK_FALSE(p.candidate.eval_curves.empty());
  }
  {
    auto rep = report::build_report(side_of(query::select_runs(db, "eos_ngc24.04_nemo")),
                                    side_of(query::select_runs(db, "nyx_n1_ngc25.04_nemo")), opt);
    REQUIRE(rep.pairs.size() == 1);
    const auto& p = rep.pairs[0];
    CHECK(p.baseline.value == Approx(28.1628).margin(5e-5));
    CHECK(p.candidate.value == Approx(11.2749).margin(5e-5));
    CHECK(p.baseline.run_values.size() == 10);
    size_t used = 0;
    for (const auto& v : p.baseline.run_values)
      used += v.used;
    CHECK(used == 8); // the olympic mean drops the fastest and the slowest of the 10 runs
    // Different MLPerf rounds and NeMo releases: flagged, not hidden.
    bool ruleset = false, framework = false;
    for (const auto& f : p.flags) {
      ruleset = ruleset || f.rfind("ruleset:", 0) == 0;
      framework = framework || f.rfind("framework:", 0) == 0;
    }
    CHECK(ruleset);
    CHECK(framework);
    // Ten runs a side, every B200 run faster than every H100 run: a significant change.
    CHECK(p.verdict == "improved");
    CHECK(rep.headline.find("B200 (8) vs H100 (8) on MLPerf llama2_70b_lora: 2.50x faster") == 0);
  }
  {
    // Both benchmarks at once: two pairs, the headline leads with the larger scale.
    auto rep = report::build_report(side_of(query::select_runs(db, "accelerator=H100")),
                                    side_of(query::select_runs(db, "accelerator=Blackwell")), opt);
    REQUIRE(rep.pairs.size() == 2);
    CHECK(rep.headline.rfind("GB200 (512) vs H100 (512) on MLPerf llama31_405b", 0) == 0);
    const std::string html = report::to_html(rep);
    CHECK(html.find("269.1") != std::string::npos);
    CHECK(html.find("121.8") != std::string::npos);
    CHECK(html.find("28.16") != std::string::npos);
    CHECK(html.find("11.27") != std::string::npos);
  }
}

TEST_CASE("report: scaling efficiency across accelerator counts of one device", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  // A second GB200 scale made from the 512-GPU runs: 2,496 GPUs at 27 minutes.
  store::run_filter f;
  f.systems = {"tyche_ngpu512_ngc25.04_nemo"};
  auto runs = db.query(f);
  REQUIRE(runs.size() == 3);
  db.upsert_system(
      system_rec("tyche_ngpu2496", "NVIDIA Blackwell GPU (GB200)", 4, 624, "published"));
  int i = 0;
  for (auto& r : runs) {
    r.id = 0;
    r.uuid = fmt::format("00000000-0000-4000-8000-{:012x}", 900 + i);
    r.system = "tyche_ngpu2496";
    r.cfg.values["accelerators"] = "2496";
    r.samples[0].value = 27.0 + i++;
  }
  db.insert_runs(runs);
  auto rep =
      report::build_report(side_of(query::select_runs(db, "eos-dfw_n64_ngc25.01_nemo")),
                           side_of(query::select_runs(db, "accelerator=GB200")), fixed_options());
  REQUIRE(rep.pairs.size() == 2); // one baseline system pairs with each candidate scale
  const auto* big = find_pair(rep, "llama31_405b", "tyche_ngpu2496");
  REQUIRE(big);
  REQUIRE(big->per_accelerator_speedup);
  // Olympic mean of 27, 28 and 29 minutes times the scaling factor of the copied runs.
  CHECK(big->candidate.value == Approx(28.0 * 1.1538461538461537).epsilon(1e-9));
  CHECK(*big->per_accelerator_speedup ==
        Approx(269.1216 * 512 / (big->candidate.value * 2496)).epsilon(1e-6));
  REQUIRE(rep.scaling.size() == 1);
  const auto& s = rep.scaling[0];
  CHECK(s.device_id == "gb200");
  REQUIRE(s.points.size() == 2);
  CHECK(s.points[0].accelerators == 512);
  CHECK(s.points[0].efficiency == 1);
  CHECK(s.points[1].efficiency ==
        Approx(121.7573 * 512 / (big->candidate.value * 2496)).epsilon(1e-6));
}

TEST_CASE("report: published reference results load and compare as published", "[report]") {
  auto schema = load_builtin_schema("results.schema.json");
  std::vector<run> all;
  std::map<std::string, store::system_record> systems;
  size_t files = 0;
  for (const auto& e :
       fs::directory_iterator(fs::path(ACCELBENCH_SOURCE_DIR) / "results/published")) {
    if (e.path().extension() != ".json")
      continue;
    ++files;
    json sys;
    auto runs = read_results_document(slurp(e.path()), e.path().string(), &sys);
    REQUIRE_FALSE(runs.empty());
    for (const auto& r : runs) {
      INFO(e.path().filename().string() << ": " << r.uuid);
      CHECK(r.source == "published");
      REQUIRE(r.extra.contains("provenance"));
      for (const char* k : {"source", "url", "date", "conditions"}) {
        REQUIRE(r.extra["provenance"].contains(k));
        CHECK_FALSE(r.extra["provenance"][k].get<std::string>().empty());
      }
      CHECK(r.samples.size() == 1);
      all.push_back(r);
    }
    for (const auto& s : sys)
      systems[s["name"]] = system_rec(s["name"], s["accelerator_model"], s["accelerators_per_node"],
                                      s["nodes"], "published");
  }
  CHECK(files >= 2);
  auto pick = [&](std::initializer_list<const char*> names) {
    report::side s;
    s.label = "published";
    for (const auto& r : all)
      for (const char* n : names)
        if (r.system == n)
          s.runs.push_back(r);
    s.systems = systems;
    query::score_mlperf_groups(s);
    return s;
  };
  auto rep = report::build_report(pick({"published-h100-sxm", "published-dgx-h100-8",
                                        "published-dgx-h100-64", "together-hgx-h100"}),
                                  pick({"published-b200", "published-dgx-b200-8",
                                        "published-dgx-gb200-64", "together-hgx-b200"}),
                                  fixed_options());
  const auto* fa = find_pair(rep, "head_dim=128");
  REQUIRE(fa);
  CHECK(fa->speedup == Approx(1613.0 / 648));
  CHECK(fa->ci_degenerate);
  CHECK(fa->baseline.source == "published");
  CHECK(*fa->baseline.pct_of_peak == Approx(100.0 * 648 / 989));
  const auto* tg = find_pair(rep, "llama-70b-arch");
  REQUIRE(tg);
  CHECK(tg->speedup == Approx(15264.0 / 8080));
  CHECK(tg->baseline.per_accelerator == 8080); // already a per-GPU figure
  const auto* l70 = find_pair(rep, "llama3-70b");
  REQUIRE(l70);
  CHECK(l70->speedup == Approx(4312.0 / 1602));
  CHECK(*l70->baseline.pct_of_peak == Approx(100.0 * 719 / 1979)); // MFU against the FP8 peak
  CHECK(find_pair(rep, "llama3-8b"));
  bool unpaired_cublas = false;
  for (const auto& u : rep.unpaired)
    unpaired_cublas = unpaired_cublas || u.key.find("library=cublas") != std::string::npos;
  CHECK(unpaired_cublas);
  bool note = false;
  for (const auto& n : rep.notes)
    note = note || n.find("degenerate") != std::string::npos;
  CHECK(note);
}

TEST_CASE("report command: writes JSON and HTML and prints the answer", "[report][cli]") {
  temp_dir t;
  const std::string dbp = (t.path / "r.db").string();
  {
    auto db = store::store::open(dbp);
    fill_synthetic(db);
  }
  cli::report_cli_options o;
  o.baseline = "system=h100-box";
  o.candidate = "system=b200-box";
  o.db = dbp;
  o.json_path = (t.path / "out.json").string();
  o.html_path = (t.path / "out.html").string();
  o.prices = {"B200=4.5"};
  std::stringstream cap;
  auto* old = std::cout.rdbuf(cap.rdbuf());
  int rc = cli::cmd_report(o);
  std::cout.rdbuf(old);
  CHECK(rc == exit_ok);
  CHECK(cap.str().find("B200 (8) vs H100 (8) training") == 0);
  CHECK(cap.str().find("speed-up [99% CI]") != std::string::npos); // 1 - alpha 0.01
  json j = json::parse(slurp(o.json_path));
  CHECK(j["schema_version"] == 1);
  CHECK(load_builtin_schema("report.schema.json").validate(j).empty());
  bool priced = false;
  for (const auto& p : j["prices"])
    priced = priced || (p["device"] == "b200" && p["usd_per_accelerator_hour"] == 4.5);
  CHECK(priced);
  CHECK(slurp(o.html_path).rfind("<!DOCTYPE html>", 0) == 0);
}

TEST_CASE("report command: a selector that matches nothing is an input error listing what exists",
          "[report][cli]") {
  temp_dir t;
  const std::string dbp = (t.path / "r.db").string();
  {
    auto db = store::store::open(dbp);
    fill_synthetic(db);
  }
  cli::report_cli_options o;
  o.baseline = "system=nope";
  o.candidate = "system=b200-box";
  o.db = dbp;
  try {
    cli::cmd_report(o);
    FAIL("no exception");
  } catch (const input_error& e) {
    CHECK(e.exit_code() == exit_usage);
    CHECK(std::string(e.what()).find("h100-box") != std::string::npos);
    CHECK(std::string(e.what()).find("nightly") != std::string::npos);
  }
  o.baseline = "system=h100-box";
  o.prices = {"B200=free"};
  CHECK_THROWS_AS(cli::cmd_report(o), input_error);
}

TEST_CASE("report command: no pairs gives exit 1 and still a valid HTML page", "[report][cli]") {
  temp_dir t;
  const std::string dbp = (t.path / "r.db").string();
  {
    auto db = store::store::open(dbp);
    fill_synthetic(db);
  }
  cli::report_cli_options o;
  o.baseline = "system=h100-box&workload=gemm";
  o.candidate = "system=b200-box&workload=attention";
  o.db = dbp;
  o.html_path = (t.path / "none.html").string();
  o.json_path = (t.path / "none.json").string();
  o.quiet = true;
  std::stringstream cap, err;
  auto* old = std::cout.rdbuf(cap.rdbuf());
  auto* olde = std::cerr.rdbuf(err.rdbuf());
  int rc = cli::cmd_report(o);
  std::cout.rdbuf(old);
  std::cerr.rdbuf(olde);
  CHECK(rc == exit_failed);
  CHECK(err.str().find("no pairs") != std::string::npos);
  CHECK(cap.str().find("No comparable runs") == 0);
  const std::string html = slurp(o.html_path);
  CHECK(html.find("</html>") != std::string::npos);
  CHECK(html.find("Unpaired runs") != std::string::npos);
  json j = json::parse(slurp(o.json_path));
  CHECK(j["pairs"].empty());
  CHECK(j["unpaired"].size() == 3);
  CHECK(load_builtin_schema("report.schema.json").validate(j).empty());
}

TEST_CASE("report: a run selected twice on one side counts once", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  auto b = query::select_runs(db, "eos-dfw_n64_ngc25.01_nemo");
  auto c = query::select_runs(db, "tyche_ngpu512_ngc25.04_nemo");
  auto twice = c;
  for (const auto& r : c.runs)
    twice.runs.push_back(r);
  auto once = report::build_report(side_of(b), side_of(c), fixed_options());
  auto dup = report::build_report(side_of(b), side_of(twice), fixed_options());
  REQUIRE(dup.pairs.size() == 1);
  CHECK(dup.pairs[0].candidate.runs == 3);
  CHECK(dup.pairs[0].candidate.value == once.pairs[0].candidate.value);
}

// ---------------------------------------------------------------------------------------------
// The report agrees with compare; published figures are checked for physical plausibility and
// compared like for like.

namespace {

struct published_set {
  std::vector<run> runs;
  std::map<std::string, store::system_record> systems;
};

published_set load_published() {
  published_set p;
  for (const auto& e :
       fs::directory_iterator(fs::path(ACCELBENCH_SOURCE_DIR) / "results/published")) {
    if (e.path().extension() != ".json")
      continue;
    json sys;
    auto runs = read_results_document(slurp(e.path()), e.path().string(), &sys);
    p.runs.insert(p.runs.end(), runs.begin(), runs.end());
    for (const auto& s : sys)
      p.systems[s["name"]] = system_rec(s["name"], s["accelerator_model"],
                                        s["accelerators_per_node"], s["nodes"], "published");
  }
  return p;
}

report::side pick(const published_set& p, std::initializer_list<const char*> names) {
  report::side s;
  s.label = "published";
  for (const auto& r : p.runs)
    for (const char* n : names)
      if (r.system == n)
        s.runs.push_back(r);
  s.systems = p.systems;
  query::score_mlperf_groups(s);
  return s;
}

report::report_model published_report() {
  const auto p = load_published();
  return report::build_report(
      pick(p, {"published-h100-sxm", "published-dgx-h100-8", "published-dgx-h100-64",
               "together-hgx-h100"}),
      pick(p, {"published-b200", "published-dgx-b200-8", "published-dgx-gb200-8",
               "published-dgx-gb200-64", "together-hgx-b200"}),
      fixed_options());
}

const report::figure_entry* find_figure(const report::report_model& r, const std::string& system,
                                        const std::string& key_part) {
  for (const auto& f : r.figures)
    if (f.system == system && f.key.find(key_part) != std::string::npos)
      return &f;
  return nullptr;
}

const report::pair_result* pair_of(const report::report_model& r, const std::string& key_part,
                                   const std::string& cand) {
  for (const auto& p : r.pairs)
    if (p.key.find(key_part) != std::string::npos && p.candidate.system == cand)
      return &p;
  return nullptr;
}

// Model FLOPs per token of a Llama-style model, written out here (6N + 12 L H Q T; 6N when seq 0).
double llama_flops_per_token(double dim, double layers, double heads, double kv_heads, double ffn,
                             double vocab, double seq) {
  const double hd = dim / heads;
  const double block = 2 * dim + dim * dim + 2 * kv_heads * hd * dim + dim * dim + 3 * ffn * dim;
  const double n = layers * block + vocab * dim + dim;
  return 6 * n + 12 * layers * heads * hd * seq;
}

} // namespace

TEST_CASE(
    "report agrees with compare: a speed-up whose CI contains 1 is never called faster or slower",
    "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("h100-box", "NVIDIA H100-SXM5-80GB", 8, 1));
  db.upsert_system(system_rec("b200-box", "NVIDIA B200-SXM-180GB", 8, 1));
  std::map<std::string, std::string> v = {
      {"M", "4096"},         {"N", "4096"},    {"K", "4096"},   {"dtype", "bf16"},
      {"library", "cublas"}, {"trans_a", "0"}, {"trans_b", "0"}};
  // Ten noisy samples a side, the candidate's median 10% faster: the CI reaches far across 1.
  run b =
      make_run(1, "h100-box", "gemm", v, "s", direction::lower_is_better, 1.0e-3, 0.45e-3, 10, 101);
  run c =
      make_run(2, "b200-box", "gemm", v, "s", direction::lower_is_better, 0.9e-3, 0.45e-3, 10, 102);
  for (run* r : {&b, &c})
    r->extra["flops_per_iteration"] = 2.0 * 4096 * 4096 * 4096;
  std::vector<run> both = {b, c};
  db.insert_runs(both);
  auto rep = synthetic_report(db);
  REQUIRE(rep.pairs.size() == 1);
  const auto& p = rep.pairs[0];
  INFO(p.speedup << " [" << p.speedup_ci_low << ", " << p.speedup_ci_high << "] "
                 << p.verdict_reason);
  REQUIRE(p.speedup_ci_low < 1);
  REQUIRE(p.speedup_ci_high > 1);
  // compare judges the same samples the same way.
  std::vector<double> sb, sc;
  for (const auto& x : b.samples)
    sb.push_back(x.value);
  for (const auto& x : c.samples)
    sc.push_back(x.value);
  compare::sample_options so;
  so.dir = direction::lower_is_better;
  CHECK(compare::to_string(compare::compare_samples(sb, sc, so).result) == p.verdict);
  CHECK(p.verdict == "inconclusive");
  CHECK(p.statement == "no significant difference");
  CHECK(p.qualifier.find("99% CI") != std::string::npos); // the test's own level, 1 - alpha
  // Nowhere: headline, table, HTML, JSON.
  INFO(rep.headline);
  CHECK(rep.headline.find("no significant difference") != std::string::npos);
  for (const std::string& text : {rep.headline, report::summary_text(rep), report::to_html(rep),
                                  report::to_json(rep).dump()}) {
    // A claim reads "1.69x slower" (the column of verdict counts is named "faster / slower").
    std::smatch m;
    const bool claim = std::regex_search(text, m, std::regex("[0-9]x (faster|slower)"));
    INFO("claim: " << (claim ? m.str() : std::string()));
    CHECK_FALSE(claim);
  }
  const std::string html = report::to_html(rep);
  CHECK(html.find("class=\"good\"") == std::string::npos);
  CHECK(html.find("class=\"bad\"") == std::string::npos);
  json j = report::to_json(rep);
  CHECK(j["pairs"][0]["statement"] == "no significant difference");
  CHECK(j["pairs"][0]["verdict"] == "inconclusive");
}

TEST_CASE("report: runs that are INVALID give no samples, as in compare", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  // A broken but fast kernel: INVALID (its correctness check failed).
  std::map<std::string, std::string> v = {
      {"M", "4096"},         {"N", "4096"},    {"K", "4096"},   {"dtype", "bf16"},
      {"library", "cublas"}, {"trans_a", "0"}, {"trans_b", "0"}};
  run broken =
      make_run(70, "b200-box", "gemm", v, "s", direction::lower_is_better, 1e-5, 1e-7, 15, 70);
  broken.mark_invalid("correctness: max error 1.0 above the tolerance");
  std::vector<run> one = {broken};
  db.insert_runs(one);
  auto rep = synthetic_report(db);
  const auto* g = find_pair(rep, "M=4096");
  REQUIRE(g);
  CHECK(g->candidate.samples == 15); // only the VALID run's
  CHECK(g->candidate.value == Approx(1500).epsilon(0.03));
  bool noted = false;
  for (const auto& n : g->notes)
    noted = noted || n.find("is INVALID (correctness") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("report: a side measured under unreliable conditions carries them as flags", "[report]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  // The latest candidate run was measured on a loaded machine (a warning of its ruleset).
  std::map<std::string, std::string> v = {
      {"M", "4096"},         {"N", "4096"},    {"K", "4096"},   {"dtype", "bf16"},
      {"library", "cublas"}, {"trans_a", "0"}, {"trans_b", "0"}};
  const double flops = 2.0 * 4096 * 4096 * 4096;
  run loaded = make_run(59, "b200-box", "gemm", v, "s", direction::lower_is_better, flops / 1500e12,
                        flops / 1500e12 * 0.02, 15, 71);
  loaded.extra["warnings"] = json::array({"loaded machine: other processes used 80% of the cores"});
  std::vector<run> one = {loaded};
  db.insert_runs(one);
  auto rep = synthetic_report(db);
  const auto* g = find_pair(rep, "M=4096");
  REQUIRE(g);
  CHECK(std::find(g->flags.begin(), g->flags.end(),
                  "candidate conditions: loaded machine: other processes used 80% of the cores") !=
        g->flags.end());
  for (const auto& f : g->flags)
    CHECK(f.rfind("baseline conditions", 0) != 0);
  CHECK(report::to_json(rep).dump().find("candidate conditions: loaded machine") !=
        std::string::npos);
}

TEST_CASE("report: every published figure gets its implied utilisation, and Together's per-GPU "
          "figures are implausible as stated",
          "[report][plausibility]") {
  auto rep = published_report();
  // Every published figure is in the table and assessed.
  size_t published = load_published().runs.size();
  CHECK(rep.figures.size() == published);
  for (const auto& f : rep.figures) {
    INFO(f.system << " " << f.label << ": " << f.plausibility.reason);
    CHECK(f.plausibility.status != "not assessed");
    REQUIRE(f.plausibility.utilisation_pct);
  }
  // Kernels: TFLOP/s over the dense BF16 peak of the catalogue.
  const std::vector<std::tuple<const char*, const char*, double, double>> kernels = {
      {"published-h100-sxm", "library=pyptx", 815, 989},
      {"published-b200", "library=pyptx", 1240, 2250},
      {"published-b200", "library=cublas", 1610, 2250},
      {"published-h100-sxm", "head_dim=64", 497, 989},
      {"published-h100-sxm", "head_dim=128", 648, 989},
      {"published-h100-sxm", "head_dim=256", 756, 989},
      {"published-b200", "head_dim=128", 1613, 2250}};
  for (const auto& [sys, key, tflops, peak] : kernels) {
    const auto* f = find_figure(rep, sys, key);
    INFO(sys << " " << key);
    REQUIRE(f);
    CHECK(f->plausibility.status == "plausible");
    CHECK(*f->plausibility.utilisation_pct == Approx(100 * tflops / peak));
  }
  // Training: tokens/s per GPU x model FLOPs per token / peak for the precision.
  const double f8b = llama_flops_per_token(4096, 32, 32, 8, 14336, 128256, 8192);
  const double f70b = llama_flops_per_token(8192, 80, 64, 8, 28672, 128256, 8192);
  const double f70b_6n = llama_flops_per_token(8192, 80, 64, 8, 28672, 128256, 0);
  const std::vector<std::tuple<const char*, const char*, double, double, double>> training = {
      {"published-dgx-h100-8", "llama3-8b", 14451, f8b, 1979},
      {"published-dgx-b200-8", "llama3-8b", 30624, f8b, 4500},
      {"published-dgx-gb200-8", "llama3-8b", 31508, f8b, 5000},
      {"published-dgx-h100-64", "llama3-70b", 1602, f70b, 1979},
      {"published-dgx-gb200-64", "llama3-70b", 4312, f70b, 5000}};
  for (const auto& [sys, key, tps, fpt, peak] : training) {
    const auto* f = find_figure(rep, sys, key);
    INFO(sys << " " << key);
    REQUIRE(f);
    CHECK(f->plausibility.status == "plausible");
    CHECK(f->plausibility.flop_per_token == Approx(fpt));
    CHECK(*f->plausibility.utilisation_pct == Approx(100 * tps * fpt / 1e12 / peak));
  }
  // Together AI: 8,080 and 15,264 tokens/s "per GPU" on a 70B model imply about 340% and 280% of
  // the BF16 peak even at 6N (the sequence length is not published): impossible as stated.
  const std::vector<std::tuple<const char*, double, double>> together = {
      {"together-hgx-h100", 8080, 989}, {"together-hgx-b200", 15264, 2250}};
  for (const auto& [sys, tps, peak] : together) {
    const auto* f = find_figure(rep, sys, "llama-70b-arch");
    INFO(sys);
    REQUIRE(f);
    const auto& c = f->plausibility;
    CHECK(c.implausible());
    CHECK(c.lower_bound);
    CHECK(f->value == tps); // kept as the source states it
    CHECK(*c.utilisation_pct == Approx(100 * tps * f70b_6n / 1e12 / peak));
    CHECK(*c.utilisation_pct > 250);
    CHECK(c.likely_reading == "per 8-GPU node");
    CHECK(c.likely_value == Approx(tps / 8));
    CHECK(*c.likely_utilisation_pct == Approx(*c.utilisation_pct / 8));
    CHECK(*c.likely_utilisation_pct < 50);
  }
  // Shown, but out of the headline and the geometric means.
  const auto* tg = pair_of(rep, "llama-70b-arch", "together-hgx-b200");
  REQUIRE(tg);
  CHECK_FALSE(tg->in_summary);
  bool why = false;
  for (const auto& e : tg->excluded_because)
    why = why || e.find("implausible as stated") != std::string::npos;
  CHECK(why);
  CHECK(rep.headline.find("llama-70b-arch") == std::string::npos);
  CHECK(rep.headline.find("15264") == std::string::npos);
  // Visible in the JSON (valid against the schema) and the HTML.
  json j = report::to_json(rep);
  auto problems = load_builtin_schema("report.schema.json").validate(j);
  for (const auto& x : problems)
    INFO(x.path << ": " << x.message);
  CHECK(problems.empty());
  size_t implausible = 0;
  for (const auto& f : j["figures"])
    implausible += f["plausibility"]["status"] == "implausible as stated";
  CHECK(implausible == 2);
  CHECK(j["pairs"][0]["baseline"]["plausibility"]["utilisation_pct"].is_number());
  const std::string html = report::to_html(rep);
  CHECK(html.find("Plausibility of every figure") != std::string::npos);
  CHECK(html.find("implausible as stated") != std::string::npos);
  CHECK(html.find("per 8-GPU node") != std::string::npos);
}

TEST_CASE(
    "report: headline and geometric means combine like-for-like pairs only, a shared baseline once",
    "[report][plausibility]") {
  auto rep = published_report();
  // A Hopper-only kernel against a Blackwell one: shown, not summarised.
  const auto* gemm = pair_of(rep, "library=pyptx", "published-b200");
  REQUIRE(gemm);
  CHECK_FALSE(gemm->like_for_like);
  REQUIRE_FALSE(gemm->not_like_for_like.empty());
  CHECK(gemm->not_like_for_like[0].find("different kernels or software") != std::string::npos);
  CHECK_FALSE(gemm->in_summary);
  // FlashAttention-3 against FlashAttention-4, on a shape the FA4 source does not give: both
  // not like-for-like and visibly assumed.
  const auto* fa = pair_of(rep, "head_dim=128", "published-b200");
  REQUIRE(fa);
  CHECK_FALSE(fa->like_for_like);
  bool assumed = false;
  for (const auto& f : fa->flags)
    assumed = assumed || f.rfind("assumed: ", 0) == 0;
  CHECK(assumed);
  const auto* fa4 = find_figure(rep, "published-b200", "head_dim=128");
  REQUIRE(fa4);
  CHECK_FALSE(fa4->assumed.empty());
  // No kernel pair is like for like here: the kernel family has no geometric mean.
  const report::family_summary* kernel = nullptr;
  const report::family_summary* training = nullptr;
  for (const auto& f : rep.summaries) {
    if (f.family == "kernel")
      kernel = &f;
    if (f.family == "training")
      training = &f;
  }
  REQUIRE(kernel);
  CHECK(kernel->pairs == 0);
  CHECK(kernel->excluded == 2);
  // Training: the H100 8B figure is the baseline of two pairs (B200 and GB200): one entry.
  REQUIRE(training);
  CHECK(training->pairs == 3);
  CHECK(training->baselines == 2);
  CHECK(training->excluded == 1); // Together's
  const double e8b = std::sqrt((30624.0 / 14451) * (31508.0 / 14451));
  CHECK(training->geomean_speedup == Approx(std::sqrt(e8b * (4312.0 / 1602))));
  CHECK(rep.headline.find("over 3 like-for-like training pairs (2 baselines, each counted once)") !=
        std::string::npos);
  // Published single figures are not tested: stated as published, not called faster.
  const auto* l70 = pair_of(rep, "llama3-70b", "published-dgx-gb200-64");
  REQUIRE(l70);
  CHECK(l70->verdict == "not tested");
  CHECK(l70->statement == fmt::format("{:.2f}x as published", 4312.0 / 1602));
  // compare's words for one figure per side, and no p-value, no CI and nothing it could see.
  CHECK(l70->qualifier == compare::untested_wording);
  CHECK(l70->verdict_reason == compare::untested_wording);
  CHECK_FALSE(l70->p_value);
  CHECK_FALSE(l70->detectable_pct);
  CHECK(rep.headline.find("faster") == std::string::npos);
}

TEST_CASE("report: a measured kernel above the device's peak is flagged as a measurement bug",
          "[report][plausibility]") {
  // The rule the CUDA workloads apply to mark such a run INVALID (harness/core/peak.hpp).
  CHECK(above_peak_reason(1030, 989, "bf16").empty());       // 4% over: clocks
  CHECK_FALSE(above_peak_reason(1040, 989, "bf16").empty()); // 5.2% over: no clock does that
  CHECK(above_peak_reason(1040, 989, "bf16").find("105%") != std::string::npos);
  CHECK(above_peak_reason(5000, 0, "unknown").empty()); // unknown peak: nothing to say
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("h100-box", "NVIDIA H100-SXM5-80GB", 8, 1));
  db.upsert_system(system_rec("b200-box", "NVIDIA B200-SXM-180GB", 8, 1));
  std::map<std::string, std::string> v = {
      {"M", "8192"},         {"N", "8192"},    {"K", "8192"},   {"dtype", "bf16"},
      {"library", "cublas"}, {"trans_a", "0"}, {"trans_b", "0"}};
  run b = make_run(1, "h100-box", "gemm", v, "TFLOP/s", direction::higher_is_better, 1200, 10, 10,
                   1); // 121% of 989
  run c =
      make_run(2, "b200-box", "gemm", v, "TFLOP/s", direction::higher_is_better, 1500, 10, 10, 2);
  std::vector<run> both = {b, c};
  db.insert_runs(both);
  auto rep = synthetic_report(db);
  REQUIRE(rep.pairs.size() == 1);
  CHECK(rep.pairs[0].baseline.plausibility.implausible());
  CHECK(*rep.pairs[0].baseline.plausibility.utilisation_pct ==
        Approx(100 * rep.pairs[0].baseline.value / 989));
  CHECK(rep.pairs[0].candidate.plausibility.status == "plausible");
  CHECK_FALSE(rep.pairs[0].in_summary);
  // A CPU's peak is our own FMA probe, which matrix units (AMX) can exceed: not flagged, and no
  // % of peak given (it would read 200%).
  db.upsert_system(system_rec("cpu-a", "CPU: Example Xeon", 1, 1));
  db.upsert_system(system_rec("cpu-b", "CPU: Example Xeon 2", 1, 1));
  run ca =
      make_run(3, "cpu-a", "gemm", v, "TFLOP/s", direction::higher_is_better, 2.0, 0.01, 10, 3);
  run cb =
      make_run(4, "cpu-b", "gemm", v, "TFLOP/s", direction::higher_is_better, 2.1, 0.01, 10, 4);
  for (run* r : {&ca, &cb})
    r->extra["peak"] = {{"tflops", 1.0}, {"source", "FMA probe"}};
  std::vector<run> cpus = {ca, cb};
  db.insert_runs(cpus);
  auto cpu_rep = synthetic_report(db, "cpu-a", "cpu-b");
  REQUIRE(cpu_rep.pairs.size() == 1);
  CHECK(cpu_rep.pairs[0].baseline.plausibility.status == "not assessed");
  CHECK_FALSE(cpu_rep.pairs[0].baseline.pct_of_peak);
  CHECK(cpu_rep.pairs[0].baseline.peak_tflops == 0);
  CHECK(cpu_rep.pairs[0].baseline.peak_source.find("below the achieved") != std::string::npos);
  CHECK(cpu_rep.pairs[0].in_summary);
}

TEST_CASE("report: a training run's stored MFU above 100% is no % of peak",
          "[report][plausibility]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("cpu-a", "CPU: Example Xeon", 1, 1));
  db.upsert_system(system_rec("cpu-b", "CPU: Example Xeon 2", 1, 1));
  std::map<std::string, std::string> v = {{"model", "tiny"}, {"dtype", "bf16"}, {"seq", "64"}};
  run a = make_run(1, "cpu-a", "train.llama", v, "tokens/s", direction::higher_is_better, 13945,
                   100, 10, 1);
  run b = make_run(2, "cpu-b", "train.llama", v, "tokens/s", direction::higher_is_better, 9000, 100,
                   10, 2);
  a.ruleset = b.ruleset = "train-v1";
  // a: stored before the above-peak rule, against the AVX-512 BF16 probe where AMX ran the GEMMs.
  a.add_metric("mfu", 128.8, "%", direction::higher_is_better);
  b.add_metric("mfu", 41.0, "%", direction::higher_is_better);
  std::vector<run> both = {a, b};
  db.insert_runs(both);
  auto rep = synthetic_report(db, "cpu-a", "cpu-b");
  REQUIRE(rep.pairs.size() == 1);
  CHECK_FALSE(rep.pairs[0].baseline.pct_of_peak);
  REQUIRE(rep.pairs[0].candidate.pct_of_peak);
  CHECK(*rep.pairs[0].candidate.pct_of_peak == Approx(41.0));
}

TEST_CASE("report: a CPU peak probed on a loaded machine gives no % of peak, and a stored 0 % of "
          "peak is not read",
          "[report][plausibility]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("cpu-a", "CPU: Example Xeon", 1, 1));
  db.upsert_system(system_rec("cpu-b", "CPU: Example Xeon 2", 1, 1));
  std::map<std::string, std::string> v = {
      {"M", "1024"},         {"N", "1024"},    {"K", "1024"},   {"dtype", "fp32"},
      {"library", "onednn"}, {"trans_a", "0"}, {"trans_b", "0"}};
  run a = make_run(1, "cpu-a", "gemm", v, "TFLOP/s", direction::higher_is_better, 0.2, 0.01, 10, 1);
  run b = make_run(2, "cpu-b", "gemm", v, "TFLOP/s", direction::higher_is_better, 0.2, 0.01, 10, 2);
  // a: its probe ran while other processes used 40% of the cores (a 0.268 peak, not 0.462), so
  // its % of peak is unknown; b: an older version's record of an unknown peak, a metric of 0.
  a.extra["peak"] = {{"tflops", 0.268}, {"source", "accelbench FMA probe"}};
  a.extra["pct_of_peak_unknown"] = "the CPU peak was probed while other processes used 40% of "
                                   "the cores (more than 5%), so it reads low";
  b.extra["peak"] = {{"tflops", 0.1}, {"source", "FMA probe"}, {"below_achieved", true}};
  b.add_metric("pct_of_peak", 0.0, "%", direction::higher_is_better);
  std::vector<run> both = {a, b};
  db.insert_runs(both);
  auto rep = synthetic_report(db, "cpu-a", "cpu-b");
  REQUIRE(rep.pairs.size() == 1);
  CHECK_FALSE(rep.pairs[0].baseline.pct_of_peak); // not 75% of a peak that read 42% low
  CHECK(rep.pairs[0].baseline.peak_source.find("other processes used 40%") != std::string::npos);
  CHECK_FALSE(rep.pairs[0].candidate.pct_of_peak);
  const json j = report::to_json(rep);
  CHECK(j.dump().find("\"pct_of_peak\":0") == std::string::npos);
  // Read back, the stored 0 is gone: nothing downstream can average or chart it.
  for (const run& r : db.query({}))
    CHECK(r.find_metric("pct_of_peak") == nullptr);
}

TEST_CASE(
    "selector: accelerator=B200 matches the B200 only, accelerator~B200 any model containing it",
    "[report][cli]") {
  CHECK(query::accelerator_matches("NVIDIA B200-SXM-180GB", "B200", false));
  CHECK(query::accelerator_matches("NVIDIA Blackwell GPU (B200-SXM-180GB)", "b200", false));
  CHECK_FALSE(query::accelerator_matches("NVIDIA Blackwell GPU (GB200)", "B200", false));
  CHECK(query::accelerator_matches("NVIDIA Blackwell GPU (GB200)", "B200", true));
  CHECK(query::accelerator_matches("NVIDIA H100 PCIe", "H100 PCIe", false));
  CHECK(query::accelerator_matches("NVIDIA H100-SXM5-80GB", "h100-sxm5", false));
  CHECK_FALSE(query::accelerator_matches("NVIDIA H100-SXM5-80GB", "SXM5-80", false));
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  auto exact = query::select_runs(db, "accelerator=B200");
  std::set<std::string> systems;
  for (const auto& r : exact.runs)
    systems.insert(r.system);
  CHECK(systems == std::set<std::string>{"nyx_n1_ngc25.04_nemo"});
  CHECK(exact.systems.size() == 1);
  auto sub = query::select_runs(db, "accelerator~B200");
  systems.clear();
  for (const auto& r : sub.runs)
    systems.insert(r.system);
  CHECK(systems == std::set<std::string>{"nyx_n1_ngc25.04_nemo", "tyche_ngpu512_ngc25.04_nemo"});
  CHECK_THROWS_AS(query::select_runs(db, "accelerator=B20"), input_error); // a token, not a prefix
}

TEST_CASE("report: MLPerf energy from the submission's power logs, as the result summarizer",
          "[report][mlperf]") {
  temp_dir t;
  const fs::path org = t.path / "training_v4.0" / "NVIDIA";
  fs::create_directories(org.parent_path());
  fs::copy(mlperf_data() / "training_v4.0/NVIDIA", org, fs::copy_options::recursive);
  const fs::path bench = org / "results/eos_ngc24.04_nemo/llama2_70b_lora";
  // 8 nodes at 5 kW each for the whole run (power logs in mlperf_logging's documented format).
  for (int i = 0; i < 10; ++i)
    for (int k = 0; k < 8; ++k) {
      std::string log;
      auto line = [&](int64_t ms, const char* key, const char* value, const char* type) {
        log += fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": "
                           "\"{}\", \"key\": \"{}\", "
                           "\"value\": {}, \"metadata\": {{}}}}\n",
                           ms, type, key, value);
      };
      line(0, "power_measurement_start", "null", "INTERVAL_START");
      for (int s = 1; s <= 20; ++s)
        line(1000 * s, "power_reading", "5000", "POINT_IN_TIME");
      line(20000, "power_measurement_stop", "null", "INTERVAL_END");
      fs::create_directories(bench / fmt::format("power/result_{}", i));
      std::ofstream(bench / fmt::format("power/result_{}/node_{}.txt", i, k)) << log;
    }
  auto db = store::store::open(t.path / "r.db");
  auto add = [&](mlperf::ingest_result res) {
    for (const auto& s : res.systems)
      db.upsert_system(cli::published_system_record(s));
    db.insert_runs(res.runs);
  };
  add(mlperf::ingest(org));
  add(mlperf::ingest(mlperf_data() / "training_v5.0/NVIDIA")); // the candidate side, as published
  auto rep = report::build_report(side_of(query::select_runs(db, "eos_ngc24.04_nemo")),
                                  side_of(query::select_runs(db, "nyx_n1_ngc25.04_nemo")),
                                  fixed_options());
  REQUIRE(rep.pairs.size() == 1);
  const auto& b = rep.pairs[0].baseline;
  REQUIRE(b.energy_kwh);
  // 40 kW for the olympic-mean time to train (scaled), in kWh.
  CHECK(*b.energy_kwh == Approx(40.0 * b.value / 60).epsilon(1e-6));
  CHECK(b.energy_source.rfind("MLPerf power logs", 0) == 0);
  CHECK(rep.pairs[0].candidate.energy_source.rfind("TDP", 0) == 0); // nyx publishes no power logs
}

TEST_CASE("report on one machine: sides named by their selectors, labels without the config every "
          "pair shares, the evidence folded below the charts",
          "[report][html]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("box", "NVIDIA H100-SXM5-80GB", 1, 1));
  std::vector<run> runs;
  int n = 0;
  for (const char* tag : {"before", "after"})
    for (const char* m : {"1024", "2048"}) {
      std::map<std::string, std::string> v = {
          {"M", m}, {"N", "1024"}, {"K", "1024"}, {"dtype", "bf16"}, {"library", "cublaslt"}};
      ++n;
      runs.push_back(make_run(n, "box", "gemm", v, "s", direction::lower_is_better, 1e-3, 1e-5, 8,
                              static_cast<uint64_t>(n)));
      runs.back().tags = {tag};
    }
  db.insert_runs(runs);
  auto rep = report::build_report(side_of(query::select_runs(db, "tag=before")),
                                  side_of(query::select_runs(db, "tag=after")), fixed_options());
  REQUIRE(rep.pairs.size() == 2);
  for (const auto& p : rep.pairs) { // one system: the host name would not tell the sides apart
    CHECK(p.baseline.display == "'tag=before'");
    CHECK(p.candidate.display == "'tag=after'");
  }
  const std::string html = report::to_html(rep);
  // The shared values are said once; each label keeps what differs (M) and the workload.
  CHECK(html.find("Every pair: <code>K=1024 N=1024 dtype=bf16 library=cublaslt</code>") !=
        std::string::npos);
  CHECK(html.find("\">gemm M=1024</td>") != std::string::npos);
  CHECK(html.find("\">gemm M=2048</td>") != std::string::npos);
  // Charts lead, open; the evidence follows folded under its title.
  const auto charts = html.find("<h2>Charts</h2>");
  const auto details = html.find("<details class=\"fold\"><summary><h2>Pairs in detail</h2>");
  REQUIRE(charts != std::string::npos);
  REQUIRE(details != std::string::npos);
  CHECK(charts < details);
  CHECK(html.find("<summary><h2>Provenance</h2>") != std::string::npos);
  CHECK(html.find("<h2>Pairs in detail</h2>\n<table") == std::string::npos); // no open copy
}

// ---------------------------------------------------------------------------------------------
// Same inputs, same bytes: every writer (JSON, HTML, the terminal text) over the synthetic store,
// the published figures (plausibility, model FLOPs) and the shared MLPerf data (time to train),
// against golden files written by the report before it was split by concept.

namespace {

void check_golden(const std::string& name, const std::string& text) {
  const fs::path golden = fs::path(ACCELBENCH_SOURCE_DIR) / "tests/reporters/report/golden" / name;
  if (const char* u = std::getenv("ACCELBENCH_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    fs::create_directories(golden.parent_path());
    write_file_atomic(golden, text);
    WARN("golden file rewritten: " << golden.string());
  }
  INFO(golden.string());
  REQUIRE(fs::exists(golden));
  CHECK(text == slurp(golden));
}

// `json_name`: the synthetic store's JSON is report.json, the older golden file.
void check_golden_report(const std::string& stem, const report::report_model& rep,
                         const std::string& json_name = "") {
  check_golden(json_name.empty() ? stem + ".json" : json_name, report::to_json(rep).dump(2) + "\n");
  check_golden(stem + ".html", report::to_html(rep));
  check_golden(stem + ".txt", report::summary_text(rep));
}

} // namespace

TEST_CASE("report: golden JSON, HTML and text of the synthetic, published and MLPerf reports",
          "[report][golden]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  import_mlperf(db);
  check_golden_report("synthetic", synthetic_report(db), "report.json");
  check_golden_report("published", published_report());
  check_golden_report(
      "mlperf", report::build_report(
                    side_of(query::select_runs(db, "accelerator=H100&workload=mlperf.*")),
                    side_of(query::select_runs(db, "accelerator=Blackwell")), fixed_options()));
}

TEST_CASE("report: a CPU run without its own peak takes the machine's peak from the options, and "
          "the report never probes",
          "[report][plausibility]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  db.upsert_system(system_rec("cpu-a", "CPU: Example Xeon", 1, 1));
  db.upsert_system(system_rec("cpu-b", "CPU: Example Xeon 2", 1, 1));
  std::map<std::string, std::string> v = {
      {"M", "1024"}, {"N", "1024"}, {"K", "1024"}, {"dtype", "fp32"}, {"library", "onednn"}};
  run a = make_run(1, "cpu-a", "gemm", v, "TFLOP/s", direction::higher_is_better, 0.2, 0.01, 10, 1);
  run b = make_run(2, "cpu-b", "gemm", v, "TFLOP/s", direction::higher_is_better, 0.3, 0.01, 10, 2);
  b.extra["peak"] = {{"tflops", 0.6}, {"source", "FMA probe"}};
  std::vector<run> both = {a, b};
  db.insert_runs(both);
  auto sa = side_of(query::select_runs(db, "system=cpu-a"));
  auto sb = side_of(query::select_runs(db, "system=cpu-b"));
  auto opt = fixed_options();
  // a carries no extra.peak: the caller is asked for the machine's; b alone needs none.
  CHECK(report::needs_machine_cpu_peak(sa, sb, opt.devices));
  CHECK_FALSE(report::needs_machine_cpu_peak(sb, sb, opt.devices));
  auto without = report::build_report(sa, sb, opt);
  REQUIRE(without.pairs.size() == 1);
  CHECK_FALSE(without.pairs[0].baseline.pct_of_peak); // no peak given, none measured
  REQUIRE(without.pairs[0].candidate.pct_of_peak);
  CHECK(*without.pairs[0].candidate.pct_of_peak == Approx(50).epsilon(0.05));
  cpu_peak here;
  here.fp32_tflops = 0.4;
  here.other_load = 0; // quiet
  opt.machine_cpu_peak = here;
  auto with = report::build_report(sa, sb, opt);
  REQUIRE(with.pairs[0].baseline.pct_of_peak);
  CHECK(*with.pairs[0].baseline.pct_of_peak == Approx(50).epsilon(0.05));
  CHECK(with.pairs[0].baseline.peak_source.find("this machine") != std::string::npos);
  // A loaded probe gives no % of peak.
  here.other_load = 0.4;
  opt.machine_cpu_peak = here;
  CHECK_FALSE(report::build_report(sa, sb, opt).pairs[0].baseline.pct_of_peak);
}
