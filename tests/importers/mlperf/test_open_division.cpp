// The open division as MLCommons' compliance checker applies it (mlp_compliance.py: common.yaml,
// then open_common.yaml and open_<benchmark>.yaml by the log's own submission_division), and the
// log-level warnings MLCommons does not give (time going backwards, a run_start repeated at another
// time). The package cases are copies of the published folders in results/published/mlperf; the
// verdict each expects is the one MLCommons' package checker (mlperf_logging 7bbf792) gave on the
// same copy, written beside it.
#include <catch2/catch.hpp>

#include <regex>

#include "harness/core/error.hpp"
#include "importers/mlperf/check_log.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/synthetic.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += "  " + s + "\n";
  return out;
}

bool any_contains(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

std::vector<std::string> messages(const std::vector<mllog::diagnostic>& ds) {
  std::vector<std::string> out;
  out.reserve(ds.size());
  for (const auto& d : ds)
    out.push_back(d.to_string());
  return out;
}

// A copy of one published organisation folder under its round's name (the round is read from the
// path).
fs::path copy_org(const mlperf_test::temp_dir& tmp, const std::string& round_org) {
  const fs::path to = tmp.path / round_org;
  fs::create_directories(to.parent_path());
  fs::copy(mlperf_test::shared_data() / round_org, to, fs::copy_options::recursive);
  return to;
}

std::vector<fs::path> result_files(const fs::path& org, const std::string& benchmark) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(org / "results"))
    if (e.is_regular_file() && e.path().parent_path().filename() == benchmark &&
        e.path().filename().string().rfind("result_", 0) == 0)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

using line_edit = std::function<std::string(const std::string&)>;

// `text` with every line of `key` rewritten by `fn`.
std::string edit_lines(const std::string& text, const std::string& key, const line_edit& fn) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(pos, end - pos);
    out += line.find("\"key\": \"" + key + "\"") != std::string::npos ? fn(line) : line;
    pos = end;
  }
  return out;
}

void edit_key(const fs::path& file, const std::string& key, const line_edit& fn) {
  mlperf_test::write(file, edit_lines(mlperf_test::read(file), key, fn));
}

line_edit set_value(const std::string& v) {
  return [v](const std::string& l) {
    return std::regex_replace(l, std::regex("\"value\": [^,]*,"), "\"value\": " + v + ",");
  };
}

std::string add_epoch_num(const std::string& line) {
  return std::regex_replace(line, std::regex("\"metadata\": \\{"),
                            "\"metadata\": {\"epoch_num\": 1, ");
}

// The first n result files of `benchmark` say submission_division "open"; `epoch`: their
// eval_accuracy lines carry epoch_num too (what open_<benchmark>.yaml requires).
void make_open(const fs::path& org, const std::string& benchmark, size_t n, bool epoch) {
  const auto files = result_files(org, benchmark);
  REQUIRE(files.size() >= n);
  for (size_t i = 0; i < n; ++i) {
    edit_key(files[i], "submission_division", set_value("\"open\""));
    if (epoch)
      edit_key(files[i], "eval_accuracy", add_epoch_num);
  }
}

// A log given as text, checked for `round` (benchmark and division from the log).
log_check check_text(const std::string& text, const std::string& round) {
  return check_log(mllog::parse_mllog(text, "result_0.txt"), "", "", round);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

// A synthetic open llama2_70b_lora log whose eval lines carry epoch_num: compliant in the open
// division.
std::string open_lora_log() {
  synthetic_log_options o;
  o.division = "open";
  return edit_lines(synthetic_training_log(o), "eval_accuracy", add_epoch_num);
}

} // namespace

TEST_CASE("MLPerf open division: the table has each round's open list and open files",
          "[mlperf][rules][open]") {
  const auto& t = benchmark_table::builtin();
  // open_common.yaml of 4.0 lists gnn and resnet and not llama2_70b_lora; 5.0's is the closed list.
  const auto* v4 = t.open_round_benchmarks("4.0");
  REQUIRE(v4 != nullptr);
  CHECK(std::count(v4->begin(), v4->end(), "gnn") == 1);
  CHECK(std::count(v4->begin(), v4->end(), "llama2_70b_lora") == 0);
  const auto* v5 = t.open_round_benchmarks("5.0");
  REQUIRE(v5 != nullptr);
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(*v5) == sorted(*t.round_benchmarks("5.0")));
  // open_resnet.yaml exists in 4.0 only, though 4.1's open list names resnet.
  CHECK(t.find("resnet")->open_quality_in("4.0") != nullptr);
  CHECK(t.find("resnet")->open_quality_in("4.1") == nullptr);
  const quality_spec* lora = t.find("llama2_70b_lora")->open_quality_in("5.0");
  REQUIRE(lora != nullptr);
  CHECK(lora->eval_metadata == "epoch_num");
  CHECK(lora->describe() == "value < 1");
  CHECK(t.find("dlrm_dcnv2")->open_quality_in("5.0")->describe() == "value <= 1");
  CHECK(t.find("llama31_405b")->open_quality_in("5.0")->describe() == "0 < value <= 5.6");
  CHECK(t.find("flux1")->open_quality_in("5.1")->key == "averaged_validation_loss");
  CHECK(t.find("stable_diffusion")->open_quality_in("5.0")->describe() == "0 <= FID and CLIP <= 1");
  CHECK(t.find("llama31_405b")->open_rules.size() == 16);
  CHECK(t.find("bert")->open_rules.empty());
}

TEST_CASE("MLPerf open division: the table refuses a malformed open entry",
          "[mlperf][rules][open]") {
  json doc = benchmark_table::builtin().doc();
  json bad = doc;
  bad["benchmarks"]["bert"]["open_quality"] = {{"metric", "x"}, {"direction", "higher"}};
  CHECK_THROWS_WITH(benchmark_table::from_json(bad),
                    Catch::Contains("neither 'target' nor 'limit' in bert open_quality"));
  bad = doc;
  bad["benchmarks"]["bert"]["open_rules"] = {{{"key", "opt_name"}, {"req", "SOMETIMES"}}};
  CHECK_THROWS_WITH(benchmark_table::from_json(bad),
                    Catch::Contains("unknown req 'SOMETIMES' for 'opt_name' in bert open_rules"));
  // A closed target stays required.
  bad = doc;
  bad["benchmarks"]["bert"]["quality"].erase("target");
  CHECK_THROWS_AS(benchmark_table::from_json(bad), input_error);
}

TEST_CASE("MLPerf open division: real closed llama2_70b_lora logs said open are rejected, as "
          "MLCommons rejects them (eval_accuracy without epoch_num)",
          "[mlperf][rules][open]") {
  // MLCommons on the same copies: FOUND ERRORS, "CHECK for 'eval_accuracy' failed ... failed
  // test: 'epoch_num' in v['metadata']" (open_llama2_70b_lora.yaml), 2 and 10 files do not comply.
  // Was VALID: the open division had no rules of its own.
  for (size_t n : {2, 10}) {
    mlperf_test::temp_dir tmp;
    const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
    make_open(org, "llama2_70b_lora", n, false);
    check_result r = check_package(org);
    INFO(n << " files open\n" << joined(r.reasons));
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "open-division rule: eval_accuracy has no epoch_num in its "
                                  "metadata"));
  }
}

TEST_CASE("MLPerf open division: open logs MLCommons accepts are accepted, its closed-only rules "
          "not applied",
          "[mlperf][rules][open]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
  // MLCommons: FOUND NO ERRORS for each of these.
  make_open(org, "llama2_70b_lora", 10, true);
  make_open(org, "llama31_405b", 6, true);
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  // opt_adamw_beta_1 == 0.9 is a closed rule only (open_llama31_405b.yaml requires the key once).
  for (const auto& f : result_files(org, "llama31_405b"))
    edit_key(f, "opt_adamw_beta_1", set_value("0.8"));
  r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
}

TEST_CASE("MLPerf open division: the open files' own rules and sanity bound are errors",
          "[mlperf][rules][open]") {
  SECTION("open_llama31_405b.yaml: eval_samples == 5760") {
    // MLCommons: FOUND ERRORS, "CHECK for 'eval_samples' failed ... v['value'] == 5760".
    mlperf_test::temp_dir tmp;
    const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
    make_open(org, "llama31_405b", 6, true);
    for (const auto& f : result_files(org, "llama31_405b"))
      edit_key(f, "eval_samples", set_value("5000"));
    check_result r = check_package(org);
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "open-division rule: eval_samples = 5000 must be == 5760"));
  }
  SECTION("open_llama2_70b_lora.yaml: at least one eval_accuracy < 1.0") {
    // MLCommons: FOUND ERRORS, "Failed checks for eval_accuracy : v['value'] < 1.0".
    mlperf_test::temp_dir tmp;
    const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
    make_open(org, "llama2_70b_lora", 10, true);
    for (const auto& f : result_files(org, "llama2_70b_lora"))
      edit_key(f, "eval_accuracy", set_value("1.5"));
    check_result r = check_package(org);
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "open-division rule: no eval_accuracy meets value < 1"));
  }
}

TEST_CASE("MLPerf open division: round-specific open lists and files", "[mlperf][rules][open]") {
  SECTION("4.0's open list has no llama2_70b_lora") {
    // MLCommons (ruleset 4.0.0) on the copy with epoch_num added: FOUND ERRORS, "CHECK for
    // 'submission_benchmark' failed ... in ['resnet', 'ssd', ...]" in all 10 files.
    mlperf_test::temp_dir tmp;
    const fs::path org = copy_org(tmp, "training_v4.0/NVIDIA");
    make_open(org, "llama2_70b_lora", 10, true);
    check_result r = check_package(org);
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "open-division rule: submission_benchmark 'llama2_70b_lora' is "
                                  "not an open benchmark of round 4.0"));
  }
  SECTION("the same log passes in 5.0 and 5.1, is refused in 4.1") {
    const std::string text = open_lora_log();
    for (const char* round : {"5.0", "5.1"}) {
      const log_check c = check_text(text, round);
      INFO(round << "\n" << joined(messages(c.errors)));
      CHECK(c.compliant());
    }
    CHECK_FALSE(check_text(text, "4.1").compliant());
  }
  SECTION("4.1 lists resnet but has no open_resnet.yaml") {
    // MLCommons: "Could not find config file: .../training_4.1.0/open_resnet.yaml".
    const std::string text =
        replace_all(open_lora_log(), "\"value\": \"llama2_70b_lora\"", "\"value\": \"resnet\"");
    const log_check c41 = check_text(text, "4.1");
    CHECK(any_contains(messages(c41.errors),
                       "open-division rule: round 4.1 has no open rules for 'resnet'"));
    const log_check c40 = check_text(text, "4.0");
    INFO(joined(messages(c40.errors)));
    CHECK(c40.compliant());
  }
  SECTION("the closed division of the same logs is unchanged") {
    synthetic_log_options o;
    const log_check c = check_text(synthetic_training_log(o), "5.0");
    INFO(joined(messages(c.errors)));
    CHECK(c.compliant());
    CHECK(c.converged);
  }
}

TEST_CASE("MLPerf open division: stable_diffusion aggregates FID and CLIP per eval point",
          "[mlperf][rules][open]") {
  // open_stable_diffusion.yaml: AT_LEAST(2) aggregated evals, each with FID and CLIP, one with
  // FID >= 0 and CLIP <= 1.
  synthetic_log_options o;
  o.division = "open";
  std::string text = replace_all(synthetic_training_log(o), "\"value\": \"llama2_70b_lora\"",
                                 "\"value\": \"stable_diffusion\"");
  // Each eval_accuracy line becomes two: FID and CLIP at the same samples_count.
  std::string two;
  for (size_t pos = 0, end; pos < text.size(); pos = end) {
    end = text.find('\n', pos) + 1;
    const std::string line = text.substr(pos, end - pos);
    if (line.find("\"eval_accuracy\"") == std::string::npos) {
      two += line;
      continue;
    }
    two += std::regex_replace(line, std::regex("\"metadata\": \\{"),
                              "\"metadata\": {\"metric\": \"FID\", ");
    two += std::regex_replace(set_value("0.2")(line), std::regex("\"metadata\": \\{"),
                              "\"metadata\": {\"metric\": \"CLIP\", ");
  }
  const log_check ok = check_text(two, "5.0");
  INFO(joined(messages(ok.errors)));
  CHECK(ok.compliant());
  // One eval point with FID only: MLCommons' CHECK "'CLIP' in v['value']" fails.
  const size_t clip = two.rfind("\"metric\": \"CLIP\"");
  const size_t from = two.rfind('\n', clip) + 1;
  const std::string missing = two.substr(0, from) + two.substr(two.find('\n', clip) + 1);
  CHECK(any_contains(messages(check_text(missing, "5.0").errors),
                     "open-division rule: the evaluation at samples_count"));
}

// ---------------------------------------------------------------------------------------------
// Warnings that MLCommons does not give.

TEST_CASE("MLPerf log warnings: time going backwards between phases names file and line",
          "[mlperf][rules][warnings]") {
  synthetic_log_options o;
  const std::string text = synthetic_training_log(o);
  // run_start logged 60 s before init_stop (init_stop is 5 min after init_start).
  const int64_t init_stop = o.start_ms + 5 * 60000;
  const std::string back = replace_all(
      text,
      fmt::format("\"time_ms\": {}, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\"",
                  init_stop + 1),
      fmt::format("\"time_ms\": {}, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\"",
                  init_stop - 60000));
  REQUIRE(back != text);
  const log_check c = check_text(back, "5.0");
  const auto w = messages(c.warnings);
  INFO(joined(w));
  CHECK(std::regex_search(
      joined(w),
      std::regex("result_0\\.txt:\\d+: time goes backwards: run_start \\(time_ms \\d+\\) "
                 "is 60\\.0 s earlier than init_stop at line \\d+")));
  CHECK(c.compliant());
  // Not said of the original, nor of evaluations timed after the run_stop logged after them
  // (stable_diffusion evaluates offline: its run_stop is timed at the end of training).
  CHECK_FALSE(any_contains(messages(check_text(text, "5.0").warnings), "time goes backwards"));
  const std::string offline = std::regex_replace(
      text,
      std::regex("\"time_ms\": \\d+(, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\")"),
      fmt::format("\"time_ms\": {}$1", init_stop + 1000));
  REQUIRE(offline != text);
  CHECK_FALSE(any_contains(messages(check_text(offline, "5.0").warnings), "time goes backwards"));
}

TEST_CASE("MLPerf log warnings: a run_start repeated at another time says which one is timed",
          "[mlperf][rules][warnings]") {
  synthetic_log_options o;
  const std::string text = synthetic_training_log(o);
  const size_t at = text.find("\"key\": \"run_start\"");
  const size_t begin = text.rfind('\n', at) + 1;
  const std::string line = text.substr(begin, text.find('\n', at) + 1 - begin);
  std::smatch m;
  REQUIRE(std::regex_search(line, m, std::regex("\"time_ms\": (\\d+)")));
  const int64_t t = std::stoll(m[1]);
  // The same event again, 60 s later, right after the first (its line number is the next).
  const std::string later = std::regex_replace(line, std::regex("\"time_ms\": \\d+"),
                                               fmt::format("\"time_ms\": {}", t + 60000));
  std::string twice = text;
  twice.insert(begin + line.size(), later);
  const log_check c = check_text(twice, "5.0");
  const auto w = messages(c.warnings);
  INFO(joined(w));
  CHECK(c.compliant());
  // MLCommons' own warning stays; ours says which start the score counts from.
  CHECK(any_contains(w, "EXACTLY_ONE key 'run_start' logged 2 times (same value)"));
  const int64_t line_no = std::count(twice.begin(), twice.begin() + begin, '\n') + 2;
  CHECK(any_contains(
      w, fmt::format("result_0.txt:{}: run_start logged 2 times at different times", line_no)));
  CHECK(any_contains(w, fmt::format("the score is timed from the one at line {}, the last before "
                                    "the first run_stop (+1.00 min from the first)",
                                    line_no)));
  // Two run_starts at one time: MLCommons' warning only.
  std::string same = text;
  same.insert(begin + line.size(), line);
  CHECK_FALSE(any_contains(messages(check_text(same, "5.0").warnings), "at different times"));
}

TEST_CASE("MLPerf log warnings: the published logs give none of the new warnings",
          "[mlperf][rules][warnings]") {
  // The published logs step back in time where it is harmless (init_start from several ranks, up
  // to 17 ms apart here): a rule comparing neighbouring lines would warn on them.
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(mlperf_test::shared_data())) {
    if (!e.is_regular_file() || e.path().filename().string().rfind("result_", 0) != 0)
      continue;
    ++files;
    const log_check c =
        check_log(mllog::parse_mllog_file(e.path()), "", "", round_from_path(e.path()));
    const auto w = messages(c.warnings);
    INFO(e.path().string() << "\n" << joined(w));
    CHECK_FALSE(any_contains(w, "time goes backwards"));
    CHECK_FALSE(any_contains(w, "at different times"));
  }
  CHECK(files >= 26);
}
