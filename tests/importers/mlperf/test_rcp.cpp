// The RCP rule (importers/mlperf/rcp.hpp) against the numbers MLCommons' own checker computes.
//
// Every expected constant below was printed by MLCommons' Python (mlperf_logging at commit
// 7bbf792, Debian's python3 with numpy 1.24.2 and scipy 1.10.1), from an exported copy of the
// logging repository:
//   c = RCP_Checker('training', '5.0.0', 'llama2_70b_lora', False)
//   c.rcp_data[name]['RCP Mean'], ['RCP Stdev'], ['Min Epochs'], ['Max Speedup'];
//   name in c.pruned_rcp_data; c._create_interp_rcp(bs, low, high) for the interpolated records;
//   scipy.stats.t.cdf(t, df); and check_directory(folder, 'training', '5.0.0', False, False,
//   rcp_pass='pruned_rcps'[, rcp_bypass=True]) on the variants of the published llama2_70b_lora
//   folder that rcp_variant() below writes (the same edit made with json.loads / json.dumps).
#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <sstream>

#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/package.hpp"
#include "importers/mlperf/rcp.hpp"
#include "importers/mlperf/score.hpp"
#include "importers/mlperf/synthetic.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

namespace {

// Within 1e-12 relative: the same formulas in the same order give the same doubles; the t CDF
// (ours, by the incomplete beta) may differ from scipy's in the last bits only.
Approx same(double v) { return Approx(v).epsilon(1e-12); }

const rcp_record& record(const std::vector<rcp_record>& rs, double bs) {
  for (const auto& r : rs)
    if (r.batch_size == bs)
      return r;
  FAIL("no record with batch size " << bs);
  throw;
}

bool has_batch(const std::vector<rcp_record>& rs, double bs) {
  for (const auto& r : rs)
    if (r.batch_size == bs)
      return true;
  return false;
}

const fs::path& published_lora() {
  static const fs::path p = mlperf_test::shared_data() /
                            "training_v5.0/NVIDIA/results/nyx_n1_ngc25.04_nemo/llama2_70b_lora";
  return p;
}

// Rewrites every MLLOG line of `text` whose key is `key` with `edit` (the JSON after the marker).
std::string edit_lines(const std::string& text, const std::string& key,
                       const std::function<void(json&)>& edit) {
  std::istringstream in(text);
  std::string out, line;
  const std::string marker(mllog::mllog_marker);
  while (std::getline(in, line)) {
    const size_t at = line.find(marker);
    if (at != std::string::npos) {
      json j = json::parse(line.substr(at + marker.size()));
      if (j["key"] == key) {
        edit(j);
        line = line.substr(0, at + marker.size()) + j.dump();
      }
    }
    out += line + "\n";
  }
  return out;
}

// The published llama2_70b_lora logs (10 runs, batch size 8) with every eval_accuracy's
// samples_count multiplied by `factor` and, when given, another global_batch_size.
std::vector<std::string> rcp_variant(double factor, std::optional<int> batch_size = {}) {
  std::vector<std::string> logs;
  for (int i = 0; i < 10; ++i) {
    std::string text = mlperf_test::read(published_lora() / fmt::format("result_{}.txt", i));
    if (factor != 1.0)
      text = edit_lines(text, "eval_accuracy", [&](json& j) {
        j["metadata"]["samples_count"] = j["metadata"]["samples_count"].get<double>() * factor;
      });
    if (batch_size)
      text = edit_lines(text, "global_batch_size", [&](json& j) { j["value"] = *batch_size; });
    logs.push_back(std::move(text));
  }
  return logs;
}

rcp_verdict check_texts(const std::vector<std::string>& texts, bool bypass = false,
                        const std::string& round = "5.0") {
  std::vector<mllog::parsed_log> logs;
  logs.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    logs.push_back(mllog::parse_mllog(texts[i], fmt::format("result_{}.txt", i)));
  std::vector<const mllog::parsed_log*> ptrs;
  ptrs.reserve(logs.size());
  for (const auto& l : logs)
    ptrs.push_back(&l);
  return check_rcp(ptrs, round, bypass);
}

} // namespace

TEST_CASE("rcp: Student's t CDF agrees with scipy.stats.t.cdf", "[mlperf][rcp]") {
  CHECK(student_t_cdf(-2.5, 10) == same(0.015723422118304388));
  CHECK(student_t_cdf(-1.7, 26) == same(0.050532623904841825));
  CHECK(student_t_cdf(0.3, 8) == same(0.6140877591587506));
  CHECK(student_t_cdf(1.96, 100) == same(0.9736105493168852));
  CHECK(student_t_cdf(-0.01, 3) == same(0.496324555706426));
  CHECK(student_t_cdf(4.0, 26) == same(0.9997662474467706));
  CHECK(student_t_cdf(0.0, 5) == 0.5);
  // _find_p_value(3000.0, s, 18, mean, s, 8) of the batch-size-8 reference.
  CHECK(one_sided_p_value(3000.0, 299.91358755481554, 18, 3178.6666666666665, 299.91358755481554,
                          8) == same(0.08686140556129136));
}

TEST_CASE("rcp: the llama2_70b_lora 5.0 records as RCP_Checker computes them", "[mlperf][rcp]") {
  const auto set = rcp_set::builtin("5.0", "llama2_70b_lora");
  REQUIRE(set);
  REQUIRE(set->records().size() == 4);
  const auto& r8 = record(set->records(), 8);
  CHECK(r8.mean == same(3178.6666666666665));
  CHECK(r8.stdev == same(299.91358755481554));
  CHECK(r8.min_epochs == same(2960.6339616775513));
  CHECK(r8.max_speedup == same(1.0736439248523562));
  const auto& r16 = record(set->records(), 16);
  CHECK(r16.mean == same(4032.0));
  CHECK(r16.stdev == same(411.3462774840682));
  CHECK(r16.min_epochs == same(3732.957371234894));
  const auto& r32 = record(set->records(), 32);
  CHECK(r32.mean == same(6037.333333333333));
  CHECK(r32.min_epochs == same(5802.107027212778));
  const auto& r128 = record(set->records(), 128);
  CHECK(r128.stdev == same(844.8000000000001));
  CHECK(r128.min_epochs == same(10649.842998504639));
  // Pruning drops 32 (slower than the line from 16 to 128).
  CHECK(has_batch(set->pruned(), 8));
  CHECK(has_batch(set->pruned(), 16));
  CHECK_FALSE(has_batch(set->pruned(), 32));
  CHECK(has_batch(set->pruned(), 128));
  // Interpolated records between the pruned neighbours.
  const rcp_record i24 = set->interpolate(24, r16, r128);
  CHECK(i24.mean == same(4548.571428571428));
  CHECK(i24.stdev == same(442.3072576637776));
  CHECK(i24.min_epochs == same(4232.980256591523));
  CHECK(i24.max_speedup == same(1.0745553139513164));
  const rcp_record i64 = set->interpolate(64, r16, r128);
  CHECK(i64.mean == same(7131.428571428572));
  CHECK(i64.min_epochs == same(6705.382394109453));
}

TEST_CASE("rcp: records of other benchmarks (samples, unet3d's 4 dropped, stdev 0)",
          "[mlperf][rcp]") {
  const auto l405 = rcp_set::builtin("5.0", "llama31_405b");
  REQUIRE(l405);
  CHECK(record(l405->records(), 1152).min_epochs == 322560.0); // stdev 0: the mean itself
  CHECK(record(l405->records(), 2304).min_epochs == same(323005.52746608853));
  CHECK(record(l405->records(), 9216).stdev == same(37624.16244914962));
  CHECK(record(l405->records(), 9216).min_epochs == same(592205.5496647954));
  std::vector<double> pruned;
  for (const auto& r : l405->pruned())
    pruned.push_back(r.batch_size);
  CHECK(pruned == std::vector<double>{1152, 2304, 9216});

  const auto unet = rcp_set::builtin("4.0", "unet3d");
  REQUIRE(unet);
  CHECK(record(unet->records(), 28).mean == same(345166.95652173914));
  CHECK(record(unet->records(), 28).stdev == same(84448.84593740758));
  CHECK(record(unet->records(), 28).min_epochs == same(318185.7339482028));
  CHECK(record(unet->records(), 84).min_epochs == same(389597.60022841394));
  CHECK_FALSE(has_batch(unet->pruned(), 64));

  const auto sd = rcp_set::builtin("5.0", "stable_diffusion");
  REQUIRE(sd);
  CHECK(record(sd->records(), 2048).mean == same(4002909.090909091));
  CHECK(record(sd->records(), 2048).min_epochs == same(3729048.8340725955));
  std::vector<double> sd_pruned;
  for (const auto& r : sd->pruned())
    sd_pruned.push_back(r.batch_size);
  CHECK(sd_pruned == std::vector<double>{256, 2048});

  CHECK_FALSE(rcp_set::builtin("5.0", "train.llama"));
  CHECK_FALSE(rcp_set::builtin("3.1", "llama2_70b_lora"));
  CHECK(rcp_rounds() == std::vector<std::string>{"4.0", "4.1", "5.0", "5.1"});
}

TEST_CASE("rcp: check_directory's cases on the published llama2_70b_lora logs", "[mlperf][rcp]") {
  SECTION("as published: RCP found, passed, scaled by 3178.67 / 3168") {
    const rcp_verdict v = check_texts(rcp_variant(1.0));
    CHECK(v.pass);
    CHECK(v.message == "RCP found");
    CHECK(v.benchmark == "llama2_70b_lora");
    CHECK(*v.batch_size == 8);
    CHECK(*v.submission_mean == same(3168.0));
    CHECK(*v.rcp_mean == same(3178.6666666666665));
    CHECK(*v.min_mean == same(2960.6339616775513));
    CHECK(*v.norm_factor == same(1.0033670033670032));
  }
  SECTION("converging in 0.75 of the samples fails") {
    const rcp_verdict v = check_texts(rcp_variant(0.75));
    CHECK_FALSE(v.pass);
    CHECK(v.message == "RCP found");
    CHECK(*v.submission_mean == same(2376.0));
    CHECK(*v.norm_factor == same(1.3378226711560044));
    CHECK(v.summary().rfind("RCP Test Failed: RCP found (batch size 8, submission mean "
                            "2376.0000 samples, reference mean 3178.6667, minimum accepted "
                            "2960.6340",
                            0) == 0);
  }
  SECTION("0.93 fails just below the minimum, 0.94 passes just above it") {
    const rcp_verdict below = check_texts(rcp_variant(0.93));
    CHECK_FALSE(below.pass);
    CHECK(*below.submission_mean == same(2946.2400000000002));
    const rcp_verdict above = check_texts(rcp_variant(0.94));
    CHECK(above.pass);
    CHECK(*above.submission_mean == same(2977.92));
    CHECK(*above.norm_factor == same(1.067411705709578));
  }
  SECTION("a batch size above every reference: Missing RCP") {
    const rcp_verdict v = check_texts(rcp_variant(1.0, 256));
    CHECK_FALSE(v.pass);
    CHECK(v.message == "Missing RCP, please submit RCP with BS = 256");
    CHECK_FALSE(v.submission_mean);
  }
  SECTION("a batch size between references: interpolation, failed then passed") {
    const rcp_verdict slow = check_texts(rcp_variant(1.0, 64));
    CHECK_FALSE(slow.pass);
    CHECK(slow.message == "RCP Interpolation");
    CHECK(*slow.rcp_mean == same(7131.428571428572));
    CHECK(*slow.norm_factor == same(2.2510822510822512));
    const rcp_verdict ok = check_texts(rcp_variant(2.4, 64));
    CHECK(ok.pass);
    CHECK(ok.message == "RCP Interpolation");
    CHECK(*ok.submission_mean == same(7603.199999999999));
    CHECK(*ok.norm_factor == 1.0);
  }
  SECTION("a batch size below every reference: compared with the smallest") {
    const rcp_verdict v = check_texts(rcp_variant(1.0, 4));
    CHECK(v.pass);
    CHECK(v.message == "RCP not found but slower convergence on smaller batch size");
    CHECK(*v.norm_factor == same(1.0033670033670032));
    const rcp_verdict fast = check_texts(rcp_variant(0.75, 4));
    CHECK_FALSE(fast.pass);
    CHECK(fast.message == "Missing RCP, please submit RCP with BS = 4");
  }
  SECTION("the bypass passes the three failures it applies to, and only those") {
    const rcp_verdict found = check_texts(rcp_variant(0.75), true);
    CHECK(found.pass);
    CHECK(found.bypassed);
    CHECK(found.message == "RCP found passed using rcp_bypass");
    CHECK(check_texts(rcp_variant(1.0, 256), true).message ==
          "Missing RCP, please submit RCP with BS = 256 passed using rcp_bypass");
    CHECK(check_texts(rcp_variant(1.0, 64), true).message ==
          "RCP Interpolation passed using rcp_bypass");
    const rcp_verdict passed = check_texts(rcp_variant(1.0), true);
    CHECK(passed.message == "RCP found");
    CHECK_FALSE(passed.bypassed);
  }
}

TEST_CASE("rcp: the summary names what each benchmark's convergence point counts",
          "[mlperf][rcp]") {
  // MLCommons prints "Submission mean epochs" for all; bert's epoch_num counts samples (3,017,784
  // for tinycorp's v5.0 folder) and gpt3's tokens, so "epochs" would misname them.
  rcp_verdict v;
  v.pass = true;
  v.message = "RCP found";
  v.batch_size = 96;
  v.submission_mean = 3017784;
  v.rcp_mean = 2414421.3333;
  v.min_mean = 2274732.029;
  const std::vector<std::pair<std::string, std::string>> units = {
      {"bert", "samples"},     {"llama2_70b_lora", "samples"}, {"stable_diffusion", "samples"},
      {"gpt3", "tokens"},      {"retinanet", "epochs"},        {"resnet", "epochs"},
      {"dlrm_dcnv2", "epochs"}};
  for (const auto& [benchmark, unit] : units) {
    v.benchmark = benchmark;
    INFO(benchmark << ": " << v.summary());
    CHECK(v.summary().find("submission mean 3017784.0000 " + unit + ",") != std::string::npos);
  }
}

TEST_CASE("rcp: convergence and batch size across the files", "[mlperf][rcp]") {
  std::vector<std::string> logs = rcp_variant(1.0);
  auto not_converged = [](const std::string& text) {
    return edit_lines(text, "run_stop", [](json& j) { j["metadata"]["status"] = "aborted"; });
  };
  SECTION("one run that did not converge counts as the slowest and is dropped") {
    logs[3] = not_converged(logs[3]);
    const rcp_verdict v = check_texts(logs);
    CHECK(v.pass);
    CHECK(v.message == "RCP found");
  }
  SECTION("two make it Insufficient convergence") {
    logs[3] = not_converged(logs[3]);
    logs[7] = not_converged(logs[7]);
    const rcp_verdict v = check_texts(logs);
    CHECK_FALSE(v.pass);
    CHECK(v.message == "Insufficient convergence");
    CHECK_FALSE(check_texts(logs, true).pass); // the bypass does not apply to it
  }
  SECTION("a file without global_batch_size fails, wherever it is listed") {
    for (size_t i : {size_t{0}, size_t{5}}) {
      std::vector<std::string> v = logs;
      std::string out;
      std::istringstream in(v[i]);
      for (std::string line; std::getline(in, line);)
        if (line.find("\"global_batch_size\"") == std::string::npos)
          out += line + "\n";
      v[i] = out;
      const rcp_verdict r = check_texts(v);
      CHECK_FALSE(r.pass);
      CHECK(r.message == "Could not detect global_batch_size");
      CHECK(r.detail == fmt::format("result_{}.txt logs no global_batch_size", i));
    }
  }
  SECTION("batch sizes that differ between files") {
    logs[2] = edit_lines(logs[2], "global_batch_size", [](json& j) { j["value"] = 16; });
    const rcp_verdict r = check_texts(logs);
    CHECK_FALSE(r.pass);
    CHECK(r.message == "Could not detect global_batch_size");
  }
}

TEST_CASE("rcp: where MLCommons' checker stops with an exception, a verdict naming the file",
          "[mlperf][rcp]") {
  std::vector<std::string> logs = rcp_variant(1.0);
  SECTION("an eval_accuracy without samples_count") {
    logs[4] =
        edit_lines(logs[4], "eval_accuracy", [](json& j) { j["metadata"].erase("samples_count"); });
    const rcp_verdict v = check_texts(logs);
    CHECK_FALSE(v.pass);
    CHECK(v.message.find("result_4.txt:") == 0);
    CHECK(v.message.find("eval_accuracy has no samples_count") != std::string::npos);
  }
  SECTION("a run_stop without status") {
    logs[1] = edit_lines(logs[1], "run_stop", [](json& j) { j["metadata"].erase("status"); });
    const rcp_verdict v = check_texts(logs);
    CHECK_FALSE(v.pass);
    CHECK(v.message.find("result_1.txt:") == 0);
    CHECK(v.message.find("run_stop has no status") != std::string::npos);
  }
  SECTION("a converged run without eval_accuracy") {
    logs[6] = edit_lines(logs[6], "eval_accuracy", [](json& j) { j["key"] = "eval_result"; });
    const rcp_verdict v = check_texts(logs);
    CHECK_FALSE(v.pass);
    CHECK(v.message.find("result_6.txt:") == 0);
    CHECK(v.message.find("follows no eval_accuracy") != std::string::npos);
  }
  SECTION("no submission_benchmark") {
    logs[0] = edit_lines(logs[0], "submission_benchmark", [](json& j) { j["key"] = "benchmark"; });
    const rcp_verdict v = check_texts(logs);
    CHECK_FALSE(v.pass);
    // Without it the epoch_num branch is taken, and these evals have none.
    CHECK(v.message.find("result_0.txt:") == 0);
    CHECK(v.message.find("eval_accuracy has no epoch_num") != std::string::npos);
  }
}

namespace {

// A closed v5.0 package DIR/training_v5.0/NVIDIA with the published nyx system and its
// llama2_70b_lora folder, the logs replaced by `logs` (no scaling.json).
fs::path rcp_package(const fs::path& dir, const std::vector<std::string>& logs) {
  const fs::path src = mlperf_test::shared_data() / "training_v5.0/NVIDIA";
  fs::path org = dir / "training_v5.0/NVIDIA";
  fs::create_directories(org / "systems");
  fs::copy(src / "systems/nyx_n1_ngc25.04_nemo.json", org / "systems/");
  for (size_t i = 0; i < logs.size(); ++i)
    mlperf_test::write(org / "results/nyx_n1_ngc25.04_nemo/llama2_70b_lora" /
                           fmt::format("result_{}.txt", i),
                       logs[i]);
  return org;
}

bool any_has(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("rcp: check-package fails a closed folder that converges too fast, and records why",
          "[mlperf][rcp][check]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = rcp_package(tmp.path, rcp_variant(0.75));
  const fs::path bench = org / "results/nyx_n1_ngc25.04_nemo/llama2_70b_lora";
  check_result r = check_package(org);
  INFO(fmt::format("{}", fmt::join(r.reasons, "\n")));
  CHECK_FALSE(r.valid);
  CHECK(any_has(r.reasons, "llama2_70b_lora: RCP Test Failed: RCP found (batch size 8, "
                           "submission mean 2376.0000 samples"));
  REQUIRE(r.rcp.size() == 1);
  CHECK(r.rcp[0].folder == bench.string());
  CHECK_FALSE(r.rcp[0].pass);
  const json j = r.to_json()["rcp"][0];
  CHECK(j["message"] == "RCP found");
  CHECK(j["min_mean"].get<double>() == same(2960.6339616775513));
  CHECK(j["bypassed"] == false);

  SECTION("--rcp-bypass lets it pass, with a warning") {
    check_options o;
    o.rcp_bypass = true;
    check_result b = check_package(org, o);
    INFO(fmt::format("{}", fmt::join(b.reasons, "\n")));
    CHECK(b.valid);
    CHECK(b.rcp.at(0).message == "RCP found passed using rcp_bypass");
    CHECK(any_has(b.warnings, "by --rcp-bypass"));
  }
  SECTION("package_checker_params: a last line 'rcp-bypass' bypasses, in either folder") {
    for (const fs::path& folder : {bench.parent_path(), bench}) {
      mlperf_test::write(folder / "package_checker_params", "seed-checker-bypass\nrcp-bypass");
      check_result b = check_package(org);
      INFO(fmt::format("{}", fmt::join(b.reasons, "\n")));
      CHECK(b.valid);
      CHECK(b.rcp.at(0).bypassed);
      fs::remove(folder / "package_checker_params");
    }
  }
  SECTION("package_checker_params: 'rcp-bypass' and its newline bypasses nothing, and says so") {
    mlperf_test::write(bench / "package_checker_params", "rcp-bypass\n");
    check_result b = check_package(org);
    CHECK_FALSE(b.valid);
    CHECK_FALSE(b.rcp.at(0).bypassed);
    CHECK(any_has(b.warnings, "package_checker_params: the line 'rcp-bypass' ends in a line "
                              "break, so it bypasses nothing"));
  }
  SECTION("the same logs as published pass, scaled by the norm factor") {
    const fs::path ok = rcp_package(tmp.path / "ok", rcp_variant(1.0));
    check_result p = check_package(ok);
    CHECK(p.valid);
    REQUIRE(p.rcp.size() == 1);
    CHECK(p.rcp[0].pass);
    CHECK(any_has(p.warnings, "the score is scaled by 1.0034"));
  }
  SECTION("an open division has no RCP check") {
    json desc = json::parse(mlperf_test::read(org / "systems/nyx_n1_ngc25.04_nemo.json"));
    desc["division"] = "open";
    mlperf_test::write(org / "systems/nyx_n1_ngc25.04_nemo.json", desc.dump());
    CHECK(check_package(org).rcp.empty());
  }
}

TEST_CASE("rcp: every published folder in the repository passes", "[mlperf][rcp][check]") {
  size_t checked = 0;
  for (const char* org : {"training_v4.0/NVIDIA", "training_v5.0/NVIDIA"}) {
    check_result r = check_package(mlperf_test::shared_data() / org);
    for (const auto& v : r.rcp) {
      INFO(v.folder << ": " << v.summary());
      CHECK(v.pass);
      CHECK_FALSE(v.bypassed);
      ++checked;
    }
  }
  CHECK(checked == 4);
}

TEST_CASE("rcp: the import flags a folder whose RCP check fails and scales one that passes fast",
          "[mlperf][rcp][ingest]") {
  mlperf_test::temp_dir tmp;
  SECTION("0.75: not scored") {
    const fs::path org = rcp_package(tmp.path, rcp_variant(0.75));
    ingest_result res = ingest_org(org);
    REQUIRE(res.runs.size() == 10);
    CHECK(res.runs[0].extra["rcp"]["pass"] == false);
    auto scores = score_groups(res.runs);
    REQUIRE(scores.size() == 1);
    CHECK_FALSE(scores[0].valid);
    CHECK(any_has(scores[0].reasons, "RCP Test Failed: RCP found"));
  }
  SECTION("0.94: scored, scaled by RCP mean / submission mean (no scaling.json)") {
    const fs::path org = rcp_package(tmp.path, rcp_variant(0.94));
    ingest_result res = ingest_org(org);
    auto scores = score_groups(res.runs);
    REQUIRE(scores.size() == 1);
    INFO(fmt::format("{}", fmt::join(scores[0].reasons, "\n")));
    CHECK(scores[0].valid);
    CHECK(scores[0].scaling_factor == same(1.067411705709578));
    CHECK(scores[0].score_min == same(scores[0].olympic_mean_min * 1.067411705709578));
  }
  SECTION("a path that names no round: not checked, and said on every run") {
    const fs::path org = rcp_package(tmp.path, rcp_variant(0.75));
    const fs::path moved = tmp.path / "pkg/NVIDIA";
    fs::create_directories(moved.parent_path());
    fs::rename(org, moved);
    ingest_result res = ingest_org(moved);
    REQUIRE(res.runs.size() == 10);
    for (const auto& r : res.runs) {
      CHECK_FALSE(r.extra.contains("rcp"));
      CHECK(r.extra.value("rcp_not_checked", "").find("the round is unknown") == 0);
    }
  }
}

TEST_CASE("rcp: package refuses closed runs that fail the RCP check", "[mlperf][rcp][package]") {
  mlperf_test::temp_dir tmp;
  auto runs_of = [](double factor) {
    std::vector<run> runs;
    for (int i = 0; i < 10; ++i) {
      synthetic_log_options o;
      o.org = "Acme";
      o.seed = 1000 + i;
      o.start_ms = 1'700'000'000'000 + i * 3'600'000LL;
      run r;
      r.uuid = fmt::format("00000000-0000-4000-8000-{:012}", i);
      r.cfg.workload = "train.llama";
      r.ruleset = "mlperf-training-v5.0";
      r.started_at = iso8601_from_ms(o.start_ms);
      r.mllog = edit_lines(synthetic_training_log(o), "eval_accuracy", [&](json& j) {
        j["metadata"]["samples_count"] = j["metadata"]["samples_count"].get<double>() * factor;
      });
      runs.push_back(std::move(r));
    }
    return runs;
  };
  package_options po;
  po.org = "Acme";
  po.system = "testbox";
  po.division = "closed";
  po.out_dir = tmp.path / "fast";
  CHECK_THROWS_WITH(write_package(runs_of(0.75), po),
                    Catch::Contains("fail MLCommons' RCP check for round 5.0") &&
                        Catch::Contains("RCP Test Failed: RCP found (batch size 8"));
  CHECK_FALSE(fs::exists(tmp.path / "fast"));
  // The synthetic logs converge where the reference does: written, and the verdict returned.
  po.out_dir = tmp.path / "ok";
  const package_result p = write_package(runs_of(1.0), po);
  REQUIRE(p.rcp);
  CHECK(p.rcp->pass);
  CHECK(p.rcp->message == "RCP found");
}
