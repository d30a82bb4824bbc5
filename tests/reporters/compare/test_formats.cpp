// Output formats: golden files (table, markdown, JUnit) byte for byte, the JSON against its schema,
// BMF. Set ACCELBENCH_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/compare/format.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"

using namespace accelbench;
using namespace accelbench::compare;

namespace {

const std::string golden_dir =
    std::string(ACCELBENCH_SOURCE_DIR) + "/tests/reporters/compare/golden/";

void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_dir + name;
  const char* update = std::getenv("ACCELBENCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  INFO("golden file " << path << " (ACCELBENCH_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(ss.str() == actual);
}

pair_result make_pair_result(const std::string& key, const std::string& workload, verdict v,
                             double base, double cand, double lo, double hi, double p) {
  pair_result r;
  r.key = key;
  r.ruleset = "kernel-v1";
  r.workload = workload;
  r.backend = "cpu";
  r.name = key + " [kernel-v1]";
  r.unit = "s";
  r.baseline_runs = r.candidate_runs = 1;
  auto& c = r.cmp;
  c.n_baseline = c.n_candidate = 10;
  c.baseline_median = base;
  c.candidate_median = cand;
  c.baseline_min = base * 0.99;
  c.baseline_max = base * 1.01;
  c.candidate_min = cand * 0.99;
  c.candidate_max = cand * 1.01;
  c.ratio = cand / base;
  c.ratio_ci_low = lo;
  c.ratio_ci_high = hi;
  c.has_ci = true;
  c.p_value = p;
  c.df = 4;
  c.runs_baseline = c.runs_candidate = 3;
  c.method = "t on log run medians";
  c.between_run_pct = 1.5;
  c.between_job_pct = 3;
  c.detectable_pct = 9.1;
  c.accounts_for = "variance between runs (3 + 3 runs: 1.5%; floor 2%)";
  c.result = v;
  c.reason = "planted " + to_string(v);
  r.candidate_wall_s = 12.5;
  r.candidate_started_at = "2026-01-02T02:17:03.250Z";
  r.candidate_host = "node-7";
  return r;
}

struct geomean_test {
  double low, high, p;
};
struct verdict_counts {
  size_t regressed, inconclusive, improved, unchanged;
};

workload_summary summary(const std::string& name, size_t pairs, double geomean, geomean_test t,
                         verdict v, verdict_counts n) {
  workload_summary s;
  s.workload = name;
  s.pairs = pairs;
  s.geomean_speedup = geomean;
  s.geomean_has_ci = true;
  s.geomean_ci_low = t.low;
  s.geomean_ci_high = t.high;
  s.geomean_p = t.p;
  s.geomean_verdict = v;
  s.geomean_reason = "planted geomean " + to_string(v);
  s.regressed = n.regressed;
  s.inconclusive = n.inconclusive;
  s.improved = n.improved;
  s.unchanged = n.unchanged;
  return s;
}

// A fixed comparison: the formats are pure functions of it, so the goldens pin only formatting.
set_comparison sample_set() {
  set_comparison c;
  c.baseline_label = "nightly-2026-01-01";
  c.candidate_label = "nightly-2026-01-02";
  c.alpha = 0.01;
  c.pairs.push_back(make_pair_result("attention/cpu/L=512,d=64", "attention", verdict::unchanged,
                                     2.5e-3, 2.51e-3, 0.99, 1.02, 0.52));
  c.pairs.push_back(make_pair_result("gemm/cpu/M=1024,dtype=fp32", "gemm", verdict::regressed,
                                     1.2e-3, 1.32e-3, 1.08, 1.12, 0.00018));
  c.pairs.back().environment_differs = true;
  c.pairs.back().environment_differences = {"libraries.onednn"};
  c.pairs.push_back(make_pair_result("gemm/cpu/M=2048,dtype=bf16", "gemm", verdict::improved,
                                     9.6e-3, 8.4e-3, 0.85, 0.9, 0.00018));
  c.pairs.push_back(make_pair_result("gemm/cpu/M=64,dtype=<fp8>&\"x\"", "gemm",
                                     verdict::inconclusive, 2e-6, 2.1e-6, 1.03, 1.07, 0.004));
  c.pairs.back().notes.push_back("candidate: pools runs with 2 different environment fingerprints");
  c.only_baseline.push_back({"gemm/cpu/M=4096,dtype=fp32", "kernel-v1", "gemm",
                             "gemm/cpu/M=4096,dtype=fp32 [kernel-v1]", 1});
  c.only_candidate.push_back({"gemm/cpu/M=8192,dtype=fp32", "kernel-v1", "gemm",
                              "gemm/cpu/M=8192,dtype=fp32 [kernel-v1]", 2});
  c.workloads.push_back(
      summary("attention", 1, 2.5 / 2.51, {0.98, 1.01, 0.52}, verdict::unchanged, {0, 0, 1, 0}));
  c.workloads.push_back(
      summary("gemm", 3, 1.0123, {0.95, 1.08, 0.6}, verdict::inconclusive, {1, 1, 0, 1}));
  c.overall =
      summary("OVERALL_GEOMEAN", 4, 1.0067, {1.002, 1.011, 0.004}, verdict::improved, {1, 1, 1, 1});
  c.notes.push_back("verdicts account for the variance between runs: planted");
  c.pairs[1].candidate_metrics.push_back(
      {"tflops", "TFLOP/s", direction::higher_is_better, 1.63, 1.6, 1.65, 2});
  c.pairs[1].candidate_metrics.push_back(
      {"pct_of_peak", "%", direction::higher_is_better, 41, 40, 42, 2});
  return c;
}

} // namespace

TEST_CASE("format: markdown golden", "[compare][format]") {
  const auto md = format_markdown(sample_set());
  // Regressions first, headline with counts.
  CHECK(md.find("**Regression**: 1 regressed, 1 inconclusive, 1 improved, 1 unchanged") !=
        std::string::npos);
  CHECK(md.find("regressed") < md.find("| improved |"));
  check_golden("compare.md", md);
}

TEST_CASE("format: JUnit golden", "[compare][format]") {
  const auto xml = format_junit(sample_set());
  CHECK(xml.find("tests=\"6\" failures=\"1\" errors=\"0\" skipped=\"3\"") != std::string::npos);
  CHECK(xml.find("<failure type=\"regression\" message=\"regressed: 1.200 ms -&gt; 1.320 ms") !=
        std::string::npos);
  // Names are escaped.
  CHECK(xml.find("M=64,dtype=&lt;fp8&gt;&amp;&quot;x&quot;") != std::string::npos);
  CHECK(xml.find("<fp8>") == std::string::npos);
  check_golden("compare.junit.xml", xml);
}

TEST_CASE("format: JUnit carries time, timestamp and hostname", "[compare][format]") {
  const auto xml = format_junit(sample_set());
  // The suite: the candidate's summed wall time, its earliest start (no zone, as the JUnit schema
  // wants; a property says it is UTC) and its host.
  CHECK(xml.find("<testsuite name=\"accelbench.compare\" tests=\"6\" failures=\"1\" errors=\"0\" "
                 "skipped=\"3\" time=\"50.000\" timestamp=\"2026-01-02T02:17:03\" "
                 "hostname=\"node-7\">") != std::string::npos);
  CHECK(xml.find("<property name=\"timestamp_zone\" value=\"UTC\"/>") != std::string::npos);
  CHECK(xml.find("name=\"gemm/cpu/M=1024,dtype=fp32 [kernel-v1]\" time=\"12.500\">") !=
        std::string::npos);
  // The regression's message has the numbers: medians, change, CI, p and the threshold.
  CHECK(xml.find("message=\"regressed: 1.200 ms -&gt; 1.320 ms, change +10.0% (99% CI +8.0% .. "
                 "+12.0%), p = 0.00018 (t on log run medians, 3 + 3 run(s)), threshold 5%\"") !=
        std::string::npos);
  // No candidate time known: no timestamp attribute rather than an empty one; host "unknown".
  auto s = sample_set();
  for (auto& p : s.pairs) {
    p.candidate_started_at.clear();
    p.candidate_host.clear();
  }
  const auto bare = format_junit(s);
  CHECK(bare.find("timestamp=") == std::string::npos);
  CHECK(bare.find("hostname=\"unknown\"") != std::string::npos);
}

TEST_CASE("format: OVERALL_GEOMEAN in text, markdown and JSON", "[compare][format]") {
  const auto s = sample_set();
  CHECK(format_terminal(s).find("OVERALL_GEOMEAN: 1.007x (+0.7% better) over 4 configs, 99% CI "
                                "1.002x..1.011x, improved: planted geomean improved\n") !=
        std::string::npos);
  CHECK(format_markdown(s).find("| **OVERALL_GEOMEAN** | 4 | 1.007x (+0.7% better) | "
                                "1.002x..1.011x | improved: planted geomean improved | 1 | 1 | 1 "
                                "| 1 |") != std::string::npos);
  const auto j = to_json(s);
  CHECK(j["overall"]["workload"] == "OVERALL_GEOMEAN");
  CHECK(j["overall"]["geomean_speedup"].get<double>() == Approx(1.0067));
  CHECK(j["overall"]["pairs"] == 4);
  CHECK(j["overall"]["geomean_ci"][0].get<double>() == Approx(1.002));
  CHECK(j["overall"]["geomean_verdict"] == "improved");
}

TEST_CASE("format: a geomean says worse or better only with its verdict", "[compare][format]") {
  // gemm's geomean is above 1 but inconclusive: its line carries the CI and the verdict, and
  // neither "worse" nor "better".
  const auto text = format_terminal(sample_set());
  CHECK(text.find("geomean speed-up gemm: 1.012x (+1.2%) over 3 configs, 99% CI 0.950x..1.080x, "
                  "inconclusive: planted geomean inconclusive\n") != std::string::npos);
  CHECK(text.find("geomean speed-up attention: 0.996x (-0.4%) over 1 configs") !=
        std::string::npos);
  // No pair of the workload tested (one figure a side): no CI, and no verdict in words.
  auto s = sample_set();
  s.workloads[1].geomean_has_ci = false;
  s.workloads[1].geomean_verdict = verdict::regressed;
  CHECK(format_terminal(s).find("geomean speed-up gemm: 1.012x (+1.2%) over 3 configs, no CI, "
                                "not tested\n") != std::string::npos);
  CHECK(to_json(s)["workloads"][1]["geomean_ci"].is_null());
  CHECK(to_json(s)["workloads"][1]["geomean_verdict"].is_null());
}

TEST_CASE("format: the CI is labelled at the comparison's own level", "[compare][format]") {
  auto s = sample_set();
  CHECK(format_terminal(s).find("99% CI") != std::string::npos);
  CHECK(format_markdown(s).find("| 99% CI | p | sees ≥ |") != std::string::npos);
  s.alpha = 0.05;
  for (auto& p : s.pairs)
    p.cmp.alpha = 0.05;
  for (const auto& out : {format_terminal(s), format_markdown(s), format_junit(s)}) {
    CHECK(out.find("95% CI") != std::string::npos);
    CHECK(out.find("99% CI") == std::string::npos);
  }
  CHECK(ci_label(0.001) == "99.9% CI");
}

TEST_CASE("format: one figure a side shows no CI and no p", "[compare][format]") {
  auto s = sample_set();
  auto& m = s.pairs[0].cmp; // attention
  m.tested = false;
  m.result = verdict::inconclusive;
  m.reason = untested_wording; // compare's reason for one figure a side
  const auto text = format_terminal(s);
  std::string row = text.substr(text.find("attention/cpu"));
  row = row.substr(0, row.find('\n'));
  CHECK(row.find("..") == std::string::npos);   // no CI
  CHECK(row.find("0.52") == std::string::npos); // no p
  CHECK(row.find("9.1%") == std::string::npos); // nothing it could see
  CHECK(row.back() == '-');
  CHECK(text.find("note: 1 config(s) with one figure per side: no CI, no test\n") !=
        std::string::npos);
  const auto j = to_json(s);
  const auto& pj = j["pairs"][0];
  CHECK(pj["p_value"].is_null());
  CHECK(pj["ratio_ci"].is_null());
  CHECK(pj["detectable_pct"].is_null());
  CHECK(pj["tested"] == false);
  CHECK(pj["reason"] == untested_wording);
  CHECK(format_junit(s).find("<skipped message=\"inconclusive: one figure per side: no CI, no "
                             "test\"/>") != std::string::npos);
  m.result = verdict::unchanged; // a verdict without a test: its numbers say so
  CHECK(format_junit(s).find("change +0.4% (99% CI -), p = -") != std::string::npos);
  m.result = verdict::inconclusive;
  const auto schema =
      json_schema::load(std::string(ACCELBENCH_SOURCE_DIR) + "/schemas/compare.schema.json");
  CHECK(schema.validate(j).empty());
  // Another reason for no test (no samples on a side) is kept, and is not counted as one figure.
  m.reason = "no baseline samples";
  CHECK(to_json(s)["pairs"][0]["reason"] == "no baseline samples");
  CHECK(format_terminal(s).find("one figure per side") == std::string::npos);
}

TEST_CASE("format: what an inconclusive pair could see", "[compare][format]") {
  const auto s = sample_set();
  // The column, the line under the table, and the reason's end (JSON, JUnit).
  const auto text = format_terminal(s);
  CHECK(text.find("sees ≥") != std::string::npos);
  CHECK(text.find("note: 1 inconclusive config(s): this comparison could only see changes above "
                  "9.1% (column 'sees ≥'): run more rounds, or use `accelbench ab`\n") !=
        std::string::npos);
  const auto j = to_json(s);
  CHECK(j["pairs"][3]["verdict"] == "inconclusive");
  CHECK(j["pairs"][3]["reason"] ==
        "planted inconclusive; this comparison could only see changes above 9.1%: run more "
        "rounds, or use `accelbench ab`");
  CHECK(j["pairs"][3]["detectable_pct"].get<double>() == Approx(9.1));
  CHECK(j["pairs"][3]["test"]["between_job_pct"].get<double>() == Approx(3));
  CHECK(j["pairs"][0]["reason"] == "planted unchanged"); // not inconclusive: as compare said
  CHECK(format_junit(s).find("planted inconclusive; this comparison could only see changes "
                             "above 9.1%") != std::string::npos);
}

TEST_CASE("format: an A/B of one job says it is paired by round", "[compare][format]") {
  auto s = sample_set();
  CHECK(format_terminal(s).find("paired by round") == std::string::npos);
  for (auto& p : s.pairs) {
    p.cmp.paired = true;
    p.cmp.paired_rounds = 5;
  }
  CHECK(format_terminal(s).rfind(
            "accelbench compare: nightly-2026-01-01 -> nightly-2026-01-02 (alpha 0.01), paired by "
            "round (A/B of one job)\n",
            0) == 0);
  CHECK(format_markdown(s).find("(A/B of one job)") != std::string::npos);
  // Already paired: more rounds is the only advice.
  const auto j = to_json(s);
  CHECK(j["pairs"][3]["reason"].get<std::string>().find("accelbench ab") == std::string::npos);
  CHECK(j["pairs"][3]["paired"] == true);
  CHECK(j["pairs"][3]["test"]["paired_rounds"] == 5);
  s.pairs[0].cmp.paired = false;
  CHECK(format_terminal(s).find("paired by round") == std::string::npos);
}

TEST_CASE("format: --only-changed lists regressed and improved pairs only", "[compare][format]") {
  auto s = sample_set();
  s.only_changed = true;
  const auto text = format_terminal(s);
  CHECK(text.find("gemm/cpu/M=1024") != std::string::npos);                        // regressed
  CHECK(text.find("gemm/cpu/M=2048") != std::string::npos);                        // improved
  CHECK(text.find("attention/cpu/L=512,d=64 [kernel-v1]  ") == std::string::npos); // unchanged
  CHECK(text.find("inconclusive  gemm/cpu/M=64") == std::string::npos);
  CHECK(text.find("2 unchanged or inconclusive config(s) not shown (--only-changed)") !=
        std::string::npos);
  // The counts and geomeans still cover every pair.
  CHECK(text.find("1 regressed, 1 inconclusive, 1 improved, 1 unchanged") != std::string::npos);
  const auto md = format_markdown(s);
  CHECK(md.find("| unchanged | `attention") == std::string::npos);
  CHECK(md.find("not shown (--only-changed)") != std::string::npos);
  const auto j = to_json(s);
  CHECK(j["pairs"].size() == 2);
  CHECK(j["not_shown"] == 2);
  CHECK(j["summary"]["pairs"] == 4);
  const auto schema =
      json_schema::load(std::string(ACCELBENCH_SOURCE_DIR) + "/schemas/compare.schema.json");
  CHECK(schema.validate(j).empty());
  // JUnit keeps every case: CI test reports follow cases from build to build.
  CHECK(format_junit(s) == format_junit(sample_set()));
}

TEST_CASE("format: JSON validates against schemas/compare.schema.json", "[compare][format]") {
  const auto schema =
      json_schema::load(std::string(ACCELBENCH_SOURCE_DIR) + "/schemas/compare.schema.json");
  auto j = to_json(sample_set());
  CHECK(j["schema_version"] == compare_schema_version);
  CHECK(schema.validate(j).empty());
  CHECK(json::parse(format_json(sample_set())) == j);
  // An undefined ratio is null, still valid.
  auto s = sample_set();
  s.pairs[0].cmp.ratio = 0;
  CHECK(to_json(s)["pairs"][0]["ratio"].is_null());
  CHECK(schema.validate(to_json(s)).empty());
  // The schema is strict: a wrong verdict, a missing field or an extra field is refused.
  auto bad = j;
  bad["pairs"][0]["verdict"] = "faster";
  CHECK_FALSE(schema.validate(bad).empty());
  bad = j;
  bad["pairs"][0].erase("p_value");
  CHECK_FALSE(schema.validate(bad).empty());
  bad = j;
  bad["summary"]["extra"] = 1;
  CHECK_FALSE(schema.validate(bad).empty());
}

TEST_CASE("format: Bencher Metric Format", "[compare][format]") {
  auto s = sample_set();
  s.pairs[0].unit = "tokens/s";
  s.pairs[0].cmp.dir = direction::higher_is_better;
  const auto b = to_bmf(s);
  const auto& gemm = b.at("gemm/cpu/M=1024,dtype=fp32 [kernel-v1]");
  // Seconds -> Bencher's latency measure in nanoseconds.
  CHECK(gemm.at("latency").at("value").get<double>() == Approx(1.32e6));
  CHECK(gemm.at("latency").at("lower_value").get<double>() == Approx(1.32e6 * 0.99));
  CHECK(gemm.at("latency").at("upper_value").get<double>() == Approx(1.32e6 * 1.01));
  CHECK(b.at("attention/cpu/L=512,d=64 [kernel-v1]").at("throughput").at("value") == 2.51e-3);
  CHECK(b.size() == 4);
  // Throughput measures of the runs beside the latency: median, smallest and largest run.
  const auto& tf = gemm.at("tflops (TFLOP/s)");
  CHECK(tf.at("value") == 1.63);
  CHECK(tf.at("lower_value") == 1.6);
  CHECK(tf.at("upper_value") == 1.65);
  CHECK(gemm.at("pct_of_peak (%)").at("value") == 41);
  CHECK(json::parse(format_bmf(s)) == b);
}

TEST_CASE("format: terminal table is aligned, colour only when asked", "[compare][format]") {
  const auto plain = format_terminal(sample_set());
  check_golden("compare.txt", plain);
  CHECK(plain.find("\x1b[") == std::string::npos);
  const auto colour = format_terminal(sample_set(), {true});
  CHECK(colour.find("\x1b[1;31mregressed") != std::string::npos);
  // The "config" column starts at the same offset on the header and every row; rows are sorted
  // regressions first.
  std::istringstream in(plain);
  std::string line;
  std::getline(in, line); // title
  std::getline(in, line); // header
  const size_t col = line.find("config");
  REQUIRE(col != std::string::npos);
  std::vector<std::string> rows;
  for (int i = 0; i < 4 && std::getline(in, line); ++i)
    rows.push_back(line);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].rfind("regressed", 0) == 0);
  CHECK(rows[1].rfind("inconclusive", 0) == 0);
  for (const auto& r : rows) {
    CHECK(r.substr(col - 2, 2) == "  ");
    CHECK(r[col] != ' ');
  }
  CHECK(plain.find("1 regressed, 1 inconclusive, 1 improved, 1 unchanged") != std::string::npos);
  CHECK(plain.find(
            "environment differs for gemm/cpu/M=1024,dtype=fp32 [kernel-v1]: libraries.onednn") !=
        std::string::npos);
}

namespace {

// Splits one CSV line as RFC 4180 reads it (quoted fields, doubled quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
      out.back() += '"', ++i;
    else if (ch == '"')
      quoted = !quoted;
    else if (ch == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}

} // namespace

TEST_CASE("format: CSV has one row per listed pair that reads back to the figures",
          "[compare][format]") {
  auto s = sample_set();
  s.pairs[0].cmp.ratio = 0; // an undefined ratio: empty fields, not 0
  s.pairs[2].name = "=cmd|' /C calc'!A0";
  std::istringstream in(format_csv(s));
  std::string line;
  std::getline(in, line);
  const auto head = csv_fields(line);
  REQUIRE(head.size() == 18);
  CHECK(head[0] == "name");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line))
    rows.push_back(csv_fields(line));
  REQUIRE(rows.size() == 4);
  for (const auto& r : rows)
    CHECK(r.size() == head.size());
  // By name as the comparison holds them; the name with a comma and quotes is one field.
  CHECK(rows[0][0] == "attention/cpu/L=512,d=64 [kernel-v1]");
  CHECK(rows[0][11].empty());
  CHECK(rows[0][12].empty());
  CHECK(rows[1][6] == "regressed");
  CHECK(std::stod(rows[1][7]) == 1.2e-3);
  CHECK(std::stod(rows[1][8]) == 1.32e-3);
  CHECK(std::stod(rows[1][12]) == 1.08);
  CHECK(rows[1][16] == "true");
  CHECK(rows[2][0] == "'=cmd|' /C calc'!A0"); // no formula for a spreadsheet to run
  CHECK(rows[3][0] == "gemm/cpu/M=64,dtype=<fp8>&\"x\" [kernel-v1]");
  CHECK(rows[3][17].find("could only see changes above") != std::string::npos);
  // --only-changed lists the regressed and improved pairs only.
  s.only_changed = true;
  const std::string changed = format_csv(s);
  CHECK(std::count(changed.begin(), changed.end(), '\n') == 3);
}

TEST_CASE("format: helpers", "[compare][format]") {
  CHECK(xml_escape("a<b>&\"c'\x01") == "a&lt;b&gt;&amp;&quot;c&apos;?");
  CHECK(markdown_escape("a|b\nc") == "a\\|b c");
  CHECK(format_value(1.234e-3, "s") == "1.234 ms");
  CHECK(format_value(2e-6, "s") == "2.000 us");
  CHECK(format_value(12345, "s") == "12345 s");
  CHECK(format_value(512, "ns") == "512.0 ns");
  CHECK(format_value(412.5, "TFLOP/s") == "412.5 TFLOP/s");
}

TEST_CASE("format: JUnit stays valid XML for stored text that is not UTF-8", "[compare][format]") {
  // Latin-1, a stray continuation byte and U+FFFF (UTF-8, but not an XML character).
  const std::string out = xml_escape("caf\xE9 \x80 \xEF\xBF\xBF <ok>");
  CHECK(out == "caf\xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD &lt;ok&gt;");
  CHECK(valid_utf8(out));
}
