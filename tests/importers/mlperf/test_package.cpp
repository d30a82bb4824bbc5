#include <catch2/catch.hpp>

#include <functional>
#include <regex>
#include <set>

#include "harness/core/error.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/package.hpp"
#include "importers/mlperf/score.hpp"
#include "importers/mlperf/synthetic.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

namespace {

// Runs as accelbench's training workload records them: an MLPerf log plus the environment.
std::vector<run> training_runs(int n, const std::string& benchmark = "llama2_70b_lora") {
  std::vector<run> runs;
  for (int i = 0; i < n; ++i) {
    synthetic_log_options o;
    o.benchmark = benchmark;
    o.org = "Acme";
    o.seed = 1000 + i;
    o.start_ms = 1'700'000'000'000 + i * 3'600'000LL;
    o.train_min = 20 + (i % 4);
    run r;
    r.uuid = fmt::format("00000000-0000-4000-8000-{:012}", i);
    r.cfg.workload = "train.llama";
    r.cfg.backend = "cpu";
    r.ruleset = "mlperf-training-v5.0";
    r.started_at = iso8601_from_ms(o.start_ms);
    r.mllog = synthetic_training_log(o);
    r.add_metric("time_to_train_min", o.train_min, "min", direction::lower_is_better);
    r.environment = {{"cpu", {{"model", "Test CPU 9000"}, {"logical_cores", 2}, {"mhz", 2400}}},
                     {"memory", {{"total_bytes", 8LL << 30}}},
                     {"os", "Debian GNU/Linux 12"},
                     {"compiler", "GNU 12.2.0"},
                     {"libraries", {{"onednn", "2.6.3"}}}};
    runs.push_back(std::move(r));
  }
  return runs;
}

package_options options(const fs::path& dir) {
  package_options o;
  o.out_dir = dir;
  o.org = "Acme";
  o.system = "testbox";
  o.command_line = "accelbench run train.llama --rules mlperf-training-v5.0";
  return o;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += x + "\n";
  return s;
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& x : v)
    if (x.find(needle) != std::string::npos)
      return true;
  return false;
}

std::string edit_lines(const std::string& text, const std::string& key,
                       const std::function<std::string(const std::string&)>& fn) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(pos, end - pos);
    out += line.find("\"key\": \"" + key + "\"") != std::string::npos ? fn(line) : line;
    pos = end;
  }
  return out;
}

} // namespace

TEST_CASE("check: the published results are VALID packages", "[mlperf][check]") {
  for (const char* org : {"training_v4.0/NVIDIA", "training_v5.0/NVIDIA"}) {
    check_result r = check_package(mlperf_test::shared_data() / org);
    INFO(org << "\n" << joined(r.reasons) << joined(r.warnings));
    CHECK(r.valid);
    CHECK(r.reasons.empty());
    CHECK(r.round == std::string(org).substr(10, 3));
  }
  // The v4.0 system says status "onprem": accepted in v4.0, refused from v4.1.
  check_options strict;
  strict.round = "5.0";
  check_result r = check_package(mlperf_test::shared_data() / "training_v4.0/NVIDIA", strict);
  CHECK_FALSE(r.valid);
  CHECK(any_contains(r.reasons, "field 'status' is 'onprem'"));
}

TEST_CASE("package: written packages check VALID and ingest back", "[mlperf][package]") {
  mlperf_test::temp_dir tmp;
  const fs::path dir = tmp.path / "training_v5.0";
  auto runs = training_runs(12); // two more than needed: the first ten by start time are used
  std::reverse(runs.begin(), runs.end());
  package_result p = write_package(runs, options(dir));
  CHECK(p.benchmark == "llama2_70b_lora");
  REQUIRE(p.result_files.size() == 10);
  CHECK(p.runs_used.front() == "00000000-0000-4000-8000-000000000000");
  CHECK(p.runs_used.back() == "00000000-0000-4000-8000-000000000009");
  CHECK(fs::exists(dir / "Acme/results/testbox/llama2_70b_lora/result_9.txt"));
  CHECK_FALSE(fs::exists(dir / "Acme/results/testbox/llama2_70b_lora/result_10.txt"));
  CHECK(fs::exists(p.readme));
  const std::string readme = mlperf_test::read(p.readme);
  CHECK(readme.find("accelbench run train.llama --rules mlperf-training-v5.0") !=
        std::string::npos);
  CHECK(readme.find("mlperf-training-v5.0") != std::string::npos);

  json desc = json::parse(mlperf_test::read(p.system_file));
  for (const auto& f : required_system_fields()) {
    INFO(f);
    REQUIRE(desc.contains(f));
    CHECK((desc[f].is_string() || f == "other_software_stack"));
  }
  CHECK(desc["submitter"] == "Acme");
  CHECK(desc["host_processor_model_name"] == "Test CPU 9000");
  CHECK(desc["host_processor_vcpu_count"] == "2");
  CHECK(desc["host_memory_capacity"] == "8.0 GiB");
  CHECK(desc["accelerators_per_node"] == "0");
  CHECK(desc["status"] == "Available on-premise");
  CHECK(desc["other_software_stack"]["onednn_version"] == "2.6.3");
  // No temporary folders are left behind.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++entries;
  CHECK(entries == 1);

  check_result c = check_package(dir / "Acme");
  INFO(joined(c.reasons) << joined(c.warnings));
  CHECK(c.valid);
  CHECK(c.result_files == 10);

  ingest_result back = ingest(dir);
  CHECK(back.diagnostics.empty());
  auto scores = score_groups(back.runs);
  REQUIRE(scores.size() == 1);
  CHECK(scores[0].valid);
  // 20,20,20,21,21,21,22,22,23,23 minutes: the middle eight average 21.25.
  CHECK(scores[0].score_min == Approx(21.25));
}

TEST_CASE("package: a user system JSON fills what cannot be detected", "[mlperf][package]") {
  mlperf_test::temp_dir tmp;
  mlperf_test::write(
      tmp.path / "sys.json",
      R"js({"system_name": "Testbox (1x CPU)", "cooling": "air", "number_of_nodes": 2,
                         "status": "Available cloud"})js");
  package_options o = options(tmp.path / "out");
  o.system_json = tmp.path / "sys.json";
  package_result p = write_package(training_runs(10), o);
  CHECK(p.system_description["system_name"] == "Testbox (1x CPU)");
  CHECK(p.system_description["cooling"] == "air");
  CHECK(p.system_description["number_of_nodes"] == "2"); // counts are strings
  CHECK(p.system_description["status"] == "Available cloud");
  CHECK(check_package(tmp.path / "out/Acme").valid);

  mlperf_test::write(tmp.path / "bad.json", R"({"status": "whenever"})");
  o.system_json = tmp.path / "bad.json";
  o.org = "Other";
  CHECK_THROWS_AS(write_package(training_runs(10), o), input_error);
  CHECK_FALSE(fs::exists(tmp.path / "out/Other"));
}

TEST_CASE("package: refusals", "[mlperf][package]") {
  mlperf_test::temp_dir tmp;
  const auto runs = training_runs(10);

  SECTION("not enough runs") {
    CHECK_THROWS_WITH(write_package(training_runs(9), options(tmp.path)),
                      Catch::Contains("9 runs") && Catch::Contains("exactly 10"));
    std::vector<run> no_logs = runs;
    for (auto& r : no_logs)
      r.mllog.clear();
    CHECK_THROWS_AS(write_package(no_logs, options(tmp.path)), input_error);
    CHECK_FALSE(fs::exists(tmp.path / "Acme"));
  }
  SECTION("names that would leave the output folder") {
    for (const std::string& bad : std::vector<std::string>{"../evil", "a/b", "..", ".", "", "x\ny",
                                                           "tab\there", "a\\b", "x..y"}) {
      INFO(bad);
      package_options o = options(tmp.path / "out");
      o.org = bad;
      CHECK_THROWS_AS(write_package(runs, o), input_error);
      o = options(tmp.path / "out");
      o.system = bad;
      CHECK_THROWS_AS(write_package(runs, o), input_error);
      o = options(tmp.path / "out");
      o.implementation = bad;
      CHECK_THROWS_AS(write_package(runs, o), input_error);
    }
    CHECK_FALSE(fs::exists(tmp.path / "evil"));
    CHECK_FALSE(fs::exists(tmp.path / "out"));
  }
  SECTION("no overwrite without force") {
    write_package(runs, options(tmp.path));
    const fs::path f = tmp.path / "Acme/results/testbox/llama2_70b_lora/result_0.txt";
    const std::string before = mlperf_test::read(f);
    auto other = training_runs(10);
    for (auto& r : other)
      r.mllog = edit_lines(r.mllog, "seed", [](const std::string& l) {
        return std::regex_replace(l, std::regex("\"value\": 10"), "\"value\": 20");
      });
    CHECK_THROWS_WITH(write_package(other, options(tmp.path)), Catch::Contains("already exists"));
    CHECK(mlperf_test::read(f) == before);
    package_options o = options(tmp.path);
    o.force = true;
    write_package(other, o);
    CHECK(mlperf_test::read(f) != before);
    CHECK(check_package(tmp.path / "Acme").valid);
    // Another system is added beside the first without force.
    o.force = false;
    o.system = "otherbox";
    write_package(runs, o);
    CHECK(fs::exists(tmp.path / "Acme/results/testbox/llama2_70b_lora/result_0.txt"));
    CHECK(fs::exists(tmp.path / "Acme/results/otherbox/llama2_70b_lora/result_0.txt"));
    // The implementation README describes the runs of both systems.
    const std::string readme = mlperf_test::read(
        tmp.path / "Acme/benchmarks/llama2_70b_lora/implementations/accelbench/README.md");
    CHECK(readme.find("Runs on testbox") != std::string::npos);
    CHECK(readme.find("Runs on otherbox") != std::string::npos);
    CHECK(check_package(tmp.path / "Acme").valid);
  }
  SECTION("an existing package that holds a link is not updated through it") {
    write_package(runs, options(tmp.path));
    const fs::path readme =
        tmp.path / "Acme/benchmarks/llama2_70b_lora/implementations/accelbench/README.md";
    mlperf_test::write(tmp.path / "victim.txt", "keep me\n");
    fs::remove(readme);
    fs::create_symlink(tmp.path / "victim.txt", readme);
    package_options o = options(tmp.path);
    o.force = true;
    CHECK_THROWS_WITH(write_package(runs, o),
                      Catch::Contains("README.md' is a symbolic link to '" +
                                      (tmp.path / "victim.txt").string()) &&
                          Catch::Contains("a package that holds a link is not updated"));
    CHECK(mlperf_test::read(tmp.path / "victim.txt") == "keep me\n");
    CHECK(fs::is_symlink(readme)); // the package is as it was
  }
  SECTION("runs of different benchmarks") {
    auto mixed = training_runs(10);
    auto other = training_runs(3, "llama31_405b");
    mixed.insert(mixed.end(), other.begin(), other.end());
    CHECK_THROWS_WITH(write_package(mixed, options(tmp.path)),
                      Catch::Contains("different benchmarks"));
  }
}

namespace {

struct tamper_case {
  std::string name;
  std::function<void(const fs::path& org)> apply;
  std::string reason; // expected in the reasons
};

void edit_result(const fs::path& org, int i, const std::function<std::string(std::string)>& fn,
                 const std::string& bench = "llama2_70b_lora",
                 const std::string& system = "testbox") {
  const fs::path f = org / fmt::format("results/{}/{}/result_{}.txt", system, bench, i);
  mlperf_test::write(f, fn(mlperf_test::read(f)));
}

// Applies a log edit to two result files (one non-compliant file is tolerated).
std::function<void(const fs::path&)> in_two(std::function<std::string(std::string)> fn) {
  return [fn](const fs::path& org) {
    edit_result(org, 0, fn);
    edit_result(org, 1, fn);
  };
}

std::function<std::string(std::string)> drop_key(const std::string& key) {
  return [key](std::string t) {
    return edit_lines(t, key, [](const std::string&) { return std::string(); });
  };
}

std::function<std::string(std::string)> regex_on(const std::string& key, const std::string& re,
                                                 const std::string& with) {
  return [=](std::string t) {
    return edit_lines(
        t, key, [&](const std::string& l) { return std::regex_replace(l, std::regex(re), with); });
  };
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::recursive);
}

} // namespace

TEST_CASE("check: every rule fires on a tampered package", "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  write_package(training_runs(10), options(tmp.path / "clean"));
  const fs::path clean = tmp.path / "clean" / "Acme";
  REQUIRE(check_package(clean).valid);

  synthetic_log_options slow;
  slow.org = "Acme";
  slow.init_min = 31;
  synthetic_log_options diverged;
  diverged.org = "Acme";
  diverged.converged = false;
  const std::string foreign_line = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000000, "
                                   "\"event_type\": \"POINT_IN_TIME\", "
                                   "\"key\": \"global_batch_size\", \"value\": 16, \"metadata\": "
                                   "{\"file\": \"t.py\", \"lineno\": 9}}\n";

  std::vector<tamper_case> cases = {
      {"missing submission_platform", in_two(drop_key("submission_platform")),
       "required key 'submission_platform' (EXACTLY_ONE) is not logged"},
      {"missing cache_clear", in_two(drop_key("cache_clear")), "'cache_clear' (AT_LEAST_ONE)"},
      {"missing init_stop", in_two(drop_key("init_stop")), "run_start before init_stop"},
      // The same run_start twice is only a warning (mlp_compliance.py); with another value an
      // error.
      {"two run_start with different values", in_two([](std::string t) {
         return edit_lines(t, "run_start", [](const std::string& l) {
           return l + std::regex_replace(l, std::regex("\"value\": null"), "\"value\": 1");
         });
       }),
       "EXACTLY_ONE key 'run_start' logged 2 times with different values"},
      {"run_stop without status", in_two(regex_on("run_stop", "\"status\"", "\"state\"")),
       "run_stop has no status"},
      {"train_samples missing", in_two(drop_key("train_samples")), "'train_samples'"},
      {"eval without samples_count",
       in_two(regex_on("eval_accuracy", ", \"samples_count\": \\d+", "")),
       "eval_accuracy has neither epoch_num nor samples_count"},
      {"block_start before run_start", in_two([](std::string t) {
         // Move the first block_start above run_start.
         std::string block;
         std::string rest = edit_lines(t, "block_start", [&](const std::string& l) {
           if (!block.empty())
             return l;
           block = l;
           return std::string();
         });
         const size_t at = rest.find(":::MLLOG", rest.find("\"run_start\"") - 120);
         return rest.insert(at, block);
       }),
       "block_start before run_start"},
      {"line without metadata", in_two([](std::string t) {
         return t + ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": "
                    "\"POINT_IN_TIME\", \"key\": \"x\", \"value\": 1}\n";
       }),
       "has no metadata object"},
      {"line that is not JSON", in_two([](std::string t) { return t + ":::MLLOG {oops\n"; }),
       "not valid JSON"},
      {"lora_rank not 16", in_two(regex_on("lora_rank", "\"value\": 16", "\"value\": 8")),
       "closed-division rule: lora_rank = 8 must be == 16"},
      {"gradient_accumulation_steps 0",
       in_two(regex_on("gradient_accumulation_steps", "\"value\": 1", "\"value\": 0")),
       "gradient_accumulation_steps = 0 must be > 0"},
      {"EXACTLY_ONE repeated with another value", in_two([&](std::string t) {
         return t.insert(t.find(":::MLLOG", t.find("\"init_stop\"") - 120), foreign_line);
       }),
       "EXACTLY_ONE key 'global_batch_size' logged 2 times with different values"},
      {"initialisation over 30 minutes",
       [&](const fs::path& org) {
         for (int i : {0, 1}) {
           slow.seed = 500 + i;
           edit_result(org, i, [&](std::string) { return synthetic_training_log(slow); });
         }
       },
       "initialisation took 31.00 min"},
      {"two non-converged runs",
       [&](const fs::path& org) {
         for (int i : {0, 1}) {
           diverged.seed = 600 + i;
           edit_result(org, i, [&](std::string) { return synthetic_training_log(diverged); });
         }
       },
       "quality target not reached"},
      {"seed missing", [](const fs::path& org) { edit_result(org, 3, drop_key("seed")); },
       "logs no seed"},
      {"same seed at the same file and line",
       [](const fs::path& org) {
         edit_result(org, 4, regex_on("seed", "\"value\": \\d+", "\"value\": 1003"));
       },
       "seed 1003 logged at synthetic_train.py:42 was already logged there by result_3.txt"},
      {"seed not an integer",
       [](const fs::path& org) {
         edit_result(org, 4, regex_on("seed", "\"value\": \\d+", "\"value\": \"abc\""));
       },
       "is not an integer"},
      {"a result file missing",
       [](const fs::path& org) {
         fs::remove(org / "results/testbox/llama2_70b_lora/result_9.txt");
       },
       "9 result files, llama2_70b_lora requires exactly 10"},
      {"system field missing",
       [](const fs::path& org) {
         json d = json::parse(mlperf_test::read(org / "systems/testbox.json"));
         d.erase("cooling");
         mlperf_test::write(org / "systems/testbox.json", d.dump(4));
       },
       "missing field 'cooling'"},
      // Other fields may be numbers or lists (MLCommons checks presence); the status may not.
      {"status not a string",
       [](const fs::path& org) {
         json d = json::parse(mlperf_test::read(org / "systems/testbox.json"));
         d["status"] = 1;
         mlperf_test::write(org / "systems/testbox.json", d.dump(4));
       },
       "field 'status' is 1"},
      {"status not allowed",
       [](const fs::path& org) {
         json d = json::parse(mlperf_test::read(org / "systems/testbox.json"));
         d["status"] = "onprem";
         mlperf_test::write(org / "systems/testbox.json", d.dump(4));
       },
       "field 'status' is 'onprem'"},
      {"no system description",
       [](const fs::path& org) { fs::remove(org / "systems/testbox.json"); },
       "no system description systems/testbox.json"},
      {"no results folder", [](const fs::path& org) { fs::remove_all(org / "results"); },
       "missing results/ folder"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const fs::path copy = tmp.path / fmt::format("t{}", n++) / "Acme";
    copy_tree(clean, copy);
    c.apply(copy);
    check_result r = check_package(copy);
    INFO(c.name << "\nreasons:\n" << joined(r.reasons) << "warnings:\n" << joined(r.warnings));
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, c.reason));
  }
}

TEST_CASE("check: one non-compliant run is tolerated, with a warning", "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  write_package(training_runs(10), options(tmp.path));
  const fs::path org = tmp.path / "Acme";
  edit_result(org, 2, regex_on("lora_rank", "\"value\": 16", "\"value\": 8"));
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "1 result file does not comply"));
  CHECK(any_contains(r.warnings, "lora_rank = 8"));
  CHECK(r.to_json()["verdict"] == "VALID");
}

TEST_CASE("check: a 405B package generated from synthetic logs is VALID in v5.0 and v5.1",
          "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  package_result p = write_package(training_runs(3, "llama31_405b"), options(tmp.path));
  CHECK(p.result_files.size() == 3);
  for (const char* round : {"5.0", "5.1"}) {
    check_options o;
    o.round = round;
    check_result r = check_package(tmp.path / "Acme", o);
    INFO(round << "\n" << joined(r.reasons));
    CHECK(r.valid);
  }
  // v5.1's decay-steps formula: ceil(1200000*1152/gbs) - ceil(8000*1152/gbs).
  edit_result(tmp.path / "Acme", 0, regex_on("opt_learning_rate_decay_steps", "1192000", "1000"),
              "llama31_405b");
  edit_result(tmp.path / "Acme", 1, regex_on("opt_learning_rate_decay_steps", "1192000", "1000"),
              "llama31_405b");
  check_options o51;
  o51.round = "5.1";
  CHECK_FALSE(check_package(tmp.path / "Acme", o51).valid);
  check_options o50;
  o50.round = "5.0";
  CHECK(check_package(tmp.path / "Acme", o50).valid);
}

TEST_CASE("check: closed-division rules are applied to the published 405B logs",
          "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  const fs::path src = mlperf_test::shared_data() / "training_v5.0/NVIDIA";
  const fs::path org = tmp.path / "training_v5.0" / "NVIDIA";
  fs::create_directories(org / "systems");
  fs::copy(src / "systems/tyche_ngpu512_ngc25.04_nemo.json", org / "systems/");
  fs::create_directories(org / "results/tyche_ngpu512_ngc25.04_nemo");
  fs::copy(src / "results/tyche_ngpu512_ngc25.04_nemo", org / "results/tyche_ngpu512_ngc25.04_nemo",
           fs::copy_options::recursive);
  check_result clean = check_package(org);
  INFO(joined(clean.reasons) << joined(clean.warnings));
  REQUIRE(clean.valid);
  CHECK(clean.round == "5.0");
  // Only: no benchmarks/ folder in the published copy, and the RCP check's norm factor (1.1538)
  // that scales the score.
  CHECK(clean.warnings.size() == 2);
  CHECK(any_contains(clean.warnings, "the score is scaled by 1.1538"));
  // Change the learning rate in two logs: v * 1152 == global_batch_size * 8e-5 no longer holds.
  for (int i : {0, 1})
    edit_result(org, i,
                regex_on("opt_base_learning_rate", "\"value\": [0-9.e-]+", "\"value\": 0.5"),
                "llama31_405b", "tyche_ngpu512_ngc25.04_nemo");
  check_result r = check_package(org);
  CHECK_FALSE(r.valid);
  CHECK(any_contains(r.reasons, "closed-division rule: opt_base_learning_rate = 0.5 must be value "
                                "* 1152 == global_batch_size"));
}

namespace {

// Every entry under `dir`, as relative paths (to show that a failure left nothing behind).
std::set<std::string> tree(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

} // namespace

TEST_CASE("package: a division other than the logs' is refused, nothing is written",
          "[mlperf][package]") {
  // --division open --force from closed-division logs used to write a package that our own
  // check-package rejects (submission_division differs from the system's division).
  mlperf_test::temp_dir tmp;
  package_options o = options(tmp.path / "out");
  o.division = "open";
  o.force = true;
  CHECK_THROWS_WITH(write_package(training_runs(10), o),
                    Catch::Contains("division 'open'") && Catch::Contains("'closed'") &&
                        Catch::Contains("a package must state the division its logs declare"));
  CHECK_FALSE(fs::exists(tmp.path / "out"));
  CHECK(tree(tmp.path).empty());
  // Open-division logs package as open, and check VALID (their eval_accuracy lines carry
  // epoch_num, as open_llama2_70b_lora.yaml requires).
  auto open_runs = training_runs(10);
  for (auto& r : open_runs) {
    r.mllog = regex_on("submission_division", "\"closed\"", "\"open\"")(r.mllog);
    r.mllog = regex_on("eval_accuracy", "\"metadata\": \\{",
                       "\"metadata\": {\"epoch_num\": 1, ")(r.mllog);
  }
  package_result p = write_package(open_runs, o);
  CHECK(p.system_description["division"] == "open");
  check_result c = check_package(tmp.path / "out/Acme");
  INFO(joined(c.reasons));
  CHECK(c.valid);
  // Logs that disagree among themselves are refused too.
  auto mixed = training_runs(10);
  mixed[3].mllog = open_runs[3].mllog;
  package_options any = options(tmp.path / "mixed");
  CHECK_THROWS_WITH(write_package(mixed, any), Catch::Contains("different divisions"));
  CHECK_FALSE(fs::exists(tmp.path / "mixed"));
}

TEST_CASE("package: an output folder that is a file, or cannot be made, is refused",
          "[mlperf][package]") {
  mlperf_test::temp_dir tmp;
  mlperf_test::write(tmp.path / "afile", "keep me");
  // It used to be a std::filesystem error (an internal error, exit 3).
  CHECK_THROWS_AS(write_package(training_runs(10), options(tmp.path / "afile")), input_error);
  CHECK_THROWS_WITH(write_package(training_runs(10), options(tmp.path / "afile")),
                    Catch::Contains("afile") && Catch::Contains("not a folder"));
  CHECK_THROWS_WITH(write_package(training_runs(10), options(tmp.path / "afile" / "sub")),
                    Catch::Contains("not a folder"));
  CHECK(mlperf_test::read(tmp.path / "afile") == "keep me");
  CHECK(tree(tmp.path) == std::set<std::string>{"afile"});
}

TEST_CASE("package: a missing output folder is created whole or not at all", "[mlperf][package]") {
  mlperf_test::temp_dir tmp;
  // Two benchmarks whose system descriptions differ: the second part is refused without --force
  // after the first was staged, and nothing (not even the output folders) is left.
  auto lora = training_runs(10);
  auto big = training_runs(3, "llama31_405b");
  for (auto& r : big)
    r.environment["cpu"]["model"] = "Another CPU";
  const fs::path out = tmp.path / "a" / "b" / "pkg";
  CHECK_THROWS_WITH(write_packages({lora, big}, options(out)),
                    Catch::Contains("already exists with other content"));
  CHECK(tree(tmp.path).empty());
  // Same environment: both benchmarks in one package, the nested folders created.
  auto big_same = training_runs(3, "llama31_405b");
  auto res = write_packages({lora, big_same}, options(out));
  REQUIRE(res.size() == 2);
  CHECK(fs::exists(out / "Acme/results/testbox/llama2_70b_lora/result_9.txt"));
  CHECK(fs::exists(out / "Acme/results/testbox/llama31_405b/result_2.txt"));
  for (const auto& e : fs::directory_iterator(tmp.path / "a"))
    CHECK(e.path().filename() == "b"); // no temporary folder left beside it
  CHECK(check_package(out / "Acme").valid);
  // The same benchmark twice is refused.
  CHECK_THROWS_WITH(write_packages({lora, lora}, options(tmp.path / "twice")),
                    Catch::Contains("given twice"));
}

TEST_CASE("check: unreadable entries and nesting too deep are reasons, not crashes",
          "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  write_package(training_runs(10), options(tmp.path / "clean"));
  const fs::path clean = tmp.path / "clean" / "Acme";
  const std::string deep = std::string(100000, '{') + std::string(100000, '}');
  struct bad_case {
    std::string name;
    std::function<void(const fs::path&)> apply;
    std::string reason;
  };
  const fs::path bench = fs::path("results/testbox/llama2_70b_lora");
  std::vector<bad_case> cases = {
      {"system description nested too deep",
       [&](const fs::path& org) { mlperf_test::write(org / "systems/testbox.json", deep); },
       "nesting too deep"},
      {"a folder in place of a result",
       [&](const fs::path& org) {
         fs::remove(org / bench / "result_2.txt");
         fs::create_directory(org / bench / "result_2.txt");
       },
       "result_2.txt: MLPerf log"},
      {"a symlink loop in place of a result",
       [&](const fs::path& org) {
         fs::remove(org / bench / "result_2.txt");
         fs::create_symlink("result_2.txt", org / bench / "result_2.txt");
       },
       "result_2.txt: a symbolic link to 'result_2.txt': not followed"},
      {"a link out of the package in place of a result",
       [&](const fs::path& org) {
         fs::rename(org / bench / "result_2.txt", org.parent_path() / "elsewhere.txt");
         fs::create_symlink(org.parent_path() / "elsewhere.txt", org / bench / "result_2.txt");
       },
       "elsewhere.txt': not followed"},
      {"a link in place of the results folder",
       [&](const fs::path& org) {
         fs::rename(org / "results", org.parent_path() / "results");
         fs::create_symlink(org.parent_path() / "results", org / "results");
       },
       "results: a symbolic link to"},
      {"a link in place of the system description",
       [&](const fs::path& org) {
         fs::rename(org / "systems/testbox.json", org.parent_path() / "testbox.json");
         fs::create_symlink(org.parent_path() / "testbox.json", org / "systems/testbox.json");
       },
       "testbox.json: a symbolic link to"},
      {"a result larger than the cap",
       [&](const fs::path& org) {
         fs::resize_file(org / bench / "result_2.txt", mllog::k_max_log_bytes + 1);
       },
       "larger than 64 MiB"},
      {"a folder in place of the system description",
       [&](const fs::path& org) {
         fs::remove(org / "systems/testbox.json");
         fs::create_directory(org / "systems/testbox.json");
       },
       "is a directory"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const fs::path copy = tmp.path / fmt::format("t{}", n++) / "Acme";
    copy_tree(clean, copy);
    c.apply(copy);
    check_result r;
    REQUIRE_NOTHROW(r = check_package(copy));
    INFO(c.name << "\nreasons:\n" << joined(r.reasons));
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, c.reason));
  }
  // One deep line in one log: the compliance stage would tolerate the file as the dropped run,
  // but MLCommons' seed checker cannot parse it (Python's json raises RecursionError, which its
  // seed checker reports as an error), so the package is rejected, naming file and line.
  const fs::path copy = tmp.path / "deep-line" / "Acme";
  copy_tree(clean, copy);
  edit_result(copy, 4, [&](std::string t) { return t + ":::MLLOG " + deep + "\n"; });
  check_result r = check_package(copy);
  INFO(joined(r.reasons));
  CHECK_FALSE(r.valid);
  CHECK(any_contains(r.reasons, "result_4.txt"));
  CHECK(any_contains(r.warnings, "nesting too deep"));
}

TEST_CASE("check: a key twice in a system description keeps its last value, as MLCommons does",
          "[mlperf][check]") {
  // Dell's v5.0 description repeats accelerator_frequency; MLCommons' Python reads the last value
  // and accepts the package. A refusal here made check-package reject a package MLCommons takes.
  mlperf_test::temp_dir tmp;
  write_package(training_runs(10), options(tmp.path));
  const fs::path desc = tmp.path / "Acme/systems/testbox.json";
  std::string text = mlperf_test::read(desc);
  const auto brace = text.find('{');
  REQUIRE(brace != std::string::npos);
  text.insert(brace + 1, "\"hw_notes\": \"first\", ");
  mlperf_test::write(desc, text);
  check_result r = check_package(tmp.path / "Acme");
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "duplicate key 'hw_notes'"));
  CHECK(any_contains(r.warnings, "the last value is used"));
  // Still refused: a syntax error after the repeated key.
  mlperf_test::write(desc, text.substr(0, text.size() - 3));
  check_result broken = check_package(tmp.path / "Acme");
  CHECK_FALSE(broken.valid);
  CHECK(any_contains(broken.reasons, "testbox.json: system description: not valid JSON"));
}

TEST_CASE("check: latin-1 in a log is repaired with a warning", "[mlperf][check]") {
  mlperf_test::temp_dir tmp;
  write_package(training_runs(10), options(tmp.path));
  edit_result(tmp.path / "Acme", 0, [](std::string t) { return "caf\xE9\n" + t; });
  check_result r = check_package(tmp.path / "Acme");
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "result_0.txt:1: 1 byte(s) of invalid UTF-8"));
  CHECK_NOTHROW(r.to_json().dump());
}
