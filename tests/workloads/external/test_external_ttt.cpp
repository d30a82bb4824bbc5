// accelbench run external --set mode=time_to_train as an MLPerf submitter runs it: a real trainer
// (mlperf_trainer.py: a softmax classifier trained by SGD, printing its MLPerf log) run to its
// target N times with a seed each, the set scored, packaged and checked; and the trainer made to
// fail on purpose in each of the ways the rules care about. A fake trainer (lora_log_trainer.py)
// logs closed llama2_70b_lora runs converging where each test says, for the RCP check of the set.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/run_json.hpp"
#include "tests/support/skip.hpp"

using nlohmann::json;
using test_cli::metric_of;
namespace fs = std::filesystem;

namespace {

const std::string k_trainer = ACCELBENCH_SOURCE_DIR "/tests/workloads/external/mlperf_trainer.py";
const std::string k_lora = ACCELBENCH_SOURCE_DIR "/tests/workloads/external/lora_log_trainer.py";

bool have_python() { return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

// `accelbench run external` of the trainer in time-to-train mode, with its options after the
// script and accelbench's (rules, seed) before the --.
test_cli::result train(const test_cli::temp_dir& d, const std::string& ab_args,
                       const std::string& trainer_args = "") {
  return test_cli::ab(
      "run external --name rgat-open --set mode=time_to_train --quiet --json --db " + d.db() + " " +
      ab_args + " -- python3 " + k_trainer + " " + trainer_args);
}

json run_of(const test_cli::result& r) {
  INFO(r.err);
  REQUIRE_FALSE(r.out.empty());
  const json runs = json::parse(r.out)["runs"];
  REQUIRE(runs.size() == 1);
  return runs[0];
}

bool has_reason(const json& run, const std::string& part) {
  for (const auto& r : run["invalid_reasons"])
    if (r.get<std::string>().find(part) != std::string::npos)
      return true;
  return false;
}

// A set of the fake llama2_70b_lora trainer: run i converges at the i-th of `samples` (a
// comma-separated list; the last for the runs after it), at global batch size `batch`. Round 5.0
// unless `ab_args` names one. Without --quiet, so that the messages beside the run are in err.
test_cli::result train_lora(const test_cli::temp_dir& d, const std::string& samples,
                            const std::string& ab_args = "", int batch = 8,
                            const std::string& trainer_args = "") {
  const std::string round =
      ab_args.find("training.round") == std::string::npos ? "--rule 'training.round=\"5.0\"' " : "";
  return test_cli::ab("run external --name lora --set mode=time_to_train --json --db " + d.db() +
                      " " + round + ab_args + " -- python3 " + k_lora + " --counter " +
                      (d.path / "count").string() + " --samples " + samples + " --batch " +
                      std::to_string(batch) + " " + trainer_args);
}

// The olympic mean of the set's run times (one dropped at each end), as the tests compute it.
double olympic_minutes(const json& run) {
  std::vector<double> t;
  for (const auto& one : run["extra"]["runs"])
    t.push_back(one["minutes"].get<double>());
  std::sort(t.begin(), t.end());
  double sum = 0;
  for (size_t i = 1; i + 1 < t.size(); ++i)
    sum += t[i];
  return sum / double(t.size() - 2);
}

bool has_warning(const json& run, const std::string& part) {
  if (!run["extra"].contains("warnings"))
    return false;
  for (const auto& w : run["extra"]["warnings"])
    if (w.get<std::string>().find(part) != std::string::npos)
      return true;
  return false;
}

// The seed event of an MLPerf log.
int64_t logged_seed(const std::string& log) {
  const auto at = log.find("\"key\": \"seed\"");
  REQUIRE(at != std::string::npos);
  const auto v = log.find("\"value\": ", at);
  return std::stoll(log.substr(v + 9));
}

} // namespace

TEST_CASE("external time to train: 10 runs of a converging trainer are scored, packaged and VALID",
          "[external][ttt][timing]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  const auto r = train(d, "");
  REQUIRE(r.rc == 0);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["status"] == "ok");
  CHECK(run["validity"] == "VALID");
  CHECK(run["ruleset"] == "external-ttt-v1");
  // rgat asks for 10 runs (MLPerf's benchmark table); each is a sample in minutes with its seed.
  REQUIRE(run["samples"].size() == 10);
  CHECK(run["sample_unit"] == "min");
  const json& runs = run["extra"]["runs"];
  const json& logs = run["extra"]["mllogs"];
  REQUIRE(runs.size() == 10);
  REQUIRE(logs.size() == 10);
  std::set<int64_t> seeds;
  for (size_t i = 0; i < 10; ++i) {
    CHECK(runs[i]["converged"] == true);
    CHECK(runs[i]["status"] == "success");
    // The trainer logged the very seed accelbench gave it in SEED; every seed differs.
    CHECK(logged_seed(logs[i]) == runs[i]["seed"].get<int64_t>());
    seeds.insert(runs[i]["seed"].get<int64_t>());
    CHECK(runs[i]["eval_curve"].size() >= 1);
  }
  CHECK(seeds.size() == 10);
  CHECK(run["extra"]["benchmark"] == "rgat");
  // An open-division set: MLPerf's RCP check is the closed division's.
  CHECK_FALSE(run["extra"].contains("rcp"));
  CHECK(run["extra"]["rcp_not_checked"].get<std::string>().find("division 'open'") !=
        std::string::npos);
  const json* score = metric_of(run, "time_to_train_min");
  REQUIRE(score != nullptr);
  CHECK((*score)["value"].get<double>() > 0);
  // The logs are stored verbatim: every line of each is an MLLOG line of the trainer's stdout.
  CHECK(logs[0].get<std::string>().rfind(":::MLLOG {\"namespace\": \"\"", 0) == 0);

  // The package MLCommons' checker expects, built from the stored runs, and checked.
  const auto pkg = test_cli::ab("package --org acme --division open --system " +
                                run["system"].get<std::string>() + " --out " +
                                (d.path / "pkg").string() + " --db " + d.db());
  INFO(pkg.err);
  REQUIRE(pkg.rc == 0);
  CHECK(fs::exists(d.path / "pkg/acme/results" / run["system"].get<std::string>() /
                   "rgat/result_9.txt"));
  // The package's path names no round: check-package refuses without one. package prints the
  // command, with a placeholder where the runs' ruleset is not an MLPerf round's.
  CHECK(pkg.out.find("check it: accelbench check-package " + (d.path / "pkg/acme").string() +
                     " --round ROUND") != std::string::npos);
  const auto no_round = test_cli::ab("check-package " + (d.path / "pkg/acme").string());
  CHECK(no_round.rc == 2);
  CHECK(no_round.err.find("is unknown: give --round") != std::string::npos);
  const auto chk =
      test_cli::ab("check-package " + (d.path / "pkg/acme").string() + " --round 5.0 --json");
  INFO(chk.out);
  CHECK(chk.rc == 0);
  CHECK(json::parse(chk.out)["verdict"] == "VALID");
}

TEST_CASE("external time to train: one run that does not converge counts as the slowest",
          "[external][ttt][timing]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  const auto r =
      train(d, "--rule training.runs=5 --rule training.target.eval_accuracy=0.72",
            "--benchmark my_classifier --abort-run 2 --counter " + (d.path / "count").string());
  REQUIRE(r.rc == 0);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["validity"] == "VALID");
  const json& runs = run["extra"]["runs"];
  REQUIRE(runs.size() == 5);
  CHECK(runs[1]["converged"] == false);
  CHECK(runs[1]["reasons"].dump().find("run_stop status is 'aborted'") != std::string::npos);
  CHECK(runs[1]["reasons"].dump().find("ruleset's target") != std::string::npos);
  // The olympic mean: the non-converged run is the one dropped at the slow end, the fastest is
  // dropped too, the middle three are averaged.
  std::vector<double> t;
  for (size_t i : {0, 2, 3, 4})
    t.push_back(runs[i]["minutes"].get<double>());
  std::sort(t.begin(), t.end());
  const json* score = metric_of(run, "time_to_train_min");
  REQUIRE(score != nullptr);
  CHECK((*score)["value"].get<double>() == Approx((t[1] + t[2] + t[3]) / 3).epsilon(1e-9));
}

TEST_CASE("external time to train: a trainer that never reaches the target is INVALID",
          "[external][ttt]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  // Half of the labels at random: no classifier reaches 0.72 on the held-out set.
  const auto r = train(d, "--rule training.runs=3", "--label-noise 0.5 --max-epochs 2");
  CHECK(r.rc == 1);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["status"] == "ok");
  CHECK(run["validity"] == "INVALID");
  CHECK(metric_of(run, "time_to_train_min") == nullptr);
  for (const auto& one : run["extra"]["runs"])
    CHECK(one["converged"] == false);
  CHECK(has_reason(run, "did not converge"));
  // rgat needs 10 runs: a set of 3 is not a result MLPerf would count.
  CHECK(has_reason(run, "MLPerf's rgat needs 10 runs, this set has 3"));
}

TEST_CASE("external time to train: the rules the set must keep", "[external][ttt]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  SECTION("a trainer that logs another seed than the one it was given") {
    const json run = run_of(train(d, "--rule training.runs=3", "--seed-offset 1"));
    CHECK(run["validity"] == "INVALID");
    CHECK(has_reason(run, "training run 1 logged seed"));
  }
  SECTION("a benchmark MLPerf does not define, and no target in the ruleset") {
    const json run = run_of(train(d, "--rule training.runs=3", "--benchmark my_classifier"));
    CHECK(run["validity"] == "INVALID");
    CHECK(has_reason(run, "no quality target: benchmark 'my_classifier'"));
  }
  SECTION("the ruleset's own target, above what the trainer reaches") {
    const json run = run_of(train(d,
                                  "--rule training.runs=3 --rule "
                                  "training.target.eval_accuracy=0.99",
                                  "--benchmark my_classifier --max-epochs 2"));
    CHECK(run["validity"] == "INVALID");
    CHECK(run["extra"]["runs"][0]["reasons"].dump().find("ruleset's target (>= 0.99)") !=
          std::string::npos);
  }
  SECTION("the same --seed gives the same seeds") {
    const json a = run_of(train(d, "--seed 7 --rule training.runs=3", "--benchmark x"));
    const json b = run_of(train(d, "--seed 7 --rule training.runs=3", "--benchmark x"));
    for (size_t i = 0; i < 3; ++i)
      CHECK(a["extra"]["runs"][i]["seed"] == b["extra"]["runs"][i]["seed"]);
  }
  SECTION("the measuring ruleset is refused") {
    const json run = run_of(train(d, "--rules external-v1"));
    CHECK(run["status"] == "failed");
    CHECK(run["status_reason"].get<std::string>().find("needs a time-to-train ruleset") !=
          std::string::npos);
  }
}

TEST_CASE("external time to train: a trainer that fails ends the set as failed, with its stderr",
          "[external][ttt]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  SECTION("a non-zero exit after its log") {
    const json run = run_of(train(d, "", "--exit-code 3"));
    CHECK(run["status"] == "failed");
    CHECK(run["status_reason"] == "training run 1 of the program: exit code 3");
    CHECK(run["extra"]["stderr_tail"].get<std::string>().find("eval accuracy") !=
          std::string::npos);
  }
  SECTION("no SEED handling at all: a program that prints no MLPerf log") {
    const auto r = test_cli::ab("run external --name quiet --set mode=time_to_train --quiet "
                                "--json --db " +
                                d.db() + " -- sh -c 'echo training'");
    const json run = run_of(r);
    CHECK(run["status"] == "failed");
    CHECK(run["status_reason"] == "training run 1 printed no MLPerf log line (:::MLLOG) on stdout");
  }
}

TEST_CASE("external time to train: a closed set converging at MLPerf's reference passes the RCP "
          "check unscaled",
          "[external][ttt][rcp]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  // 3184 samples at batch size 8: above the reference mean of round 5.0 (3178.67), so the norm
  // factor is 1.
  const auto r = train_lora(d, "3184");
  REQUIRE(r.rc == 0);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["validity"] == "VALID");
  REQUIRE(run["extra"]["runs"].size() == 10);
  const json& v = run["extra"]["rcp"];
  CHECK(v["pass"] == true);
  CHECK(v["message"] == "RCP found");
  CHECK(v["benchmark"] == "llama2_70b_lora");
  CHECK(v["round"] == "5.0");
  CHECK(v["batch_size"].get<double>() == 8);
  CHECK(v["submission_mean"].get<double>() == 3184);
  CHECK(v["rcp_mean"].get<double>() == Approx(3178.6667).epsilon(1e-6));
  CHECK(v["norm_factor"].get<double>() == 1);
  CHECK(v["summary"].get<std::string>().rfind("RCP Test Passed: RCP found", 0) == 0);
  CHECK_FALSE(run["extra"].contains("scaling_factor"));
  CHECK_FALSE(run["extra"].contains("rcp_not_checked"));
  const json* score = metric_of(run, "time_to_train_min");
  REQUIRE(score != nullptr);
  CHECK((*score)["value"].get<double>() == Approx(olympic_minutes(run)).epsilon(1e-12));
  // The verdict is printed beside the result.
  CHECK(r.err.find("accelbench: run " + std::to_string(run["id"].get<int64_t>()) +
                   " RCP Test Passed: RCP found (batch size 8") != std::string::npos);
  // Packaged, the set keeps the round its RCP check used: package checks it again and prints the
  // check-package command with that round, which check-package then finds VALID.
  const std::string org = (d.path / "pkg/acme").string();
  const auto pkg = test_cli::ab("package --org acme --division closed --system " +
                                run["system"].get<std::string>() + " --out " +
                                (d.path / "pkg").string() + " --db " + d.db());
  INFO(pkg.err);
  REQUIRE(pkg.rc == 0);
  CHECK(pkg.out.find("  RCP Test Passed: RCP found (batch size 8, submission mean 3184.0000") !=
        std::string::npos);
  CHECK(pkg.out.find("check it: accelbench check-package " + org + " --round 5.0") !=
        std::string::npos);
  const auto chk = test_cli::ab("check-package " + org + " --round 5.0");
  INFO(chk.out);
  CHECK(chk.rc == 0);
}

TEST_CASE("external time to train: a closed set faster than MLPerf's reference allows is INVALID",
          "[external][ttt][rcp]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  // 0.75 of 3184: below the smallest mean the reference accepts (2960.63).
  const auto r = train_lora(d, "2388");
  CHECK(r.rc == 1);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["validity"] == "INVALID");
  CHECK(has_reason(run, "RCP Test Failed: RCP found (batch size 8, submission mean 2388.0000"));
  CHECK(run["extra"]["rcp"]["pass"] == false);
  CHECK(run["extra"]["rcp"]["min_mean"].get<double>() > 2388);
  // Every run converged: the RCP verdict is the only reason.
  CHECK(run["invalid_reasons"].size() == 1);
  CHECK_FALSE(run["extra"].contains("scaling_factor"));
}

TEST_CASE("external time to train: a closed set faster than the reference mean but within it is "
          "scaled by the norm factor",
          "[external][ttt][rcp]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  // Ten runs, each its own convergence point: the olympic mean drops one 2688 and one 3456,
  // (2688 + 5 x 3072 + 2 x 3456) / 8 = 3120 samples, within the reference (>= 2960.63) and
  // faster than its mean 3178.67.
  const auto r = train_lora(d, "3072,2688,3456,3072,3072,3072,3456,3456,3072,2688");
  REQUIRE(r.rc == 0);
  const json run = run_of(r);
  INFO(run.dump(1).substr(0, 3000));
  CHECK(run["validity"] == "VALID");
  const json& v = run["extra"]["rcp"];
  CHECK(v["pass"] == true);
  CHECK(v["submission_mean"].get<double>() == 3120);
  const double norm = v["norm_factor"].get<double>();
  CHECK(norm == Approx(v["rcp_mean"].get<double>() / 3120).epsilon(1e-12));
  CHECK(norm > 1);
  CHECK(run["extra"]["scaling_factor"].get<double>() == norm);
  CHECK(run["extra"]["scoring"].get<std::string>().find("RCP norm factor") != std::string::npos);
  // The score is the olympic mean of the run times times the norm factor, as MLCommons'
  // scaling.json scales it; the samples stay the runs' own times.
  const json* score = metric_of(run, "time_to_train_min");
  REQUIRE(score != nullptr);
  CHECK((*score)["value"].get<double>() == Approx(olympic_minutes(run) * norm).epsilon(1e-12));
}

TEST_CASE("external time to train: a batch size without reference data, and the bypass",
          "[external][ttt][rcp]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  SECTION("no reference at batch size 256 (the largest is 128): INVALID") {
    const json run = run_of(train_lora(d, "3184", "", 256));
    INFO(run.dump(1).substr(0, 3000));
    CHECK(run["validity"] == "INVALID");
    CHECK(has_reason(run, "RCP Test Failed: Missing RCP, please submit RCP with BS = 256"));
  }
  SECTION("the same with training.rcp_bypass: passes, with a warning") {
    const json run = run_of(train_lora(d, "3184", "--rule training.rcp_bypass=true", 256));
    INFO(run.dump(1).substr(0, 3000));
    CHECK(run["validity"] == "VALID");
    CHECK(run["extra"]["rcp"]["bypassed"] == true);
    CHECK(run["extra"]["rcp"]["message"] ==
          "Missing RCP, please submit RCP with BS = 256 passed using rcp_bypass");
    CHECK(has_warning(run, "training.rcp_bypass let it pass"));
  }
  SECTION("a set too fast for the reference, bypassed: passes unscaled, with a warning") {
    // MLCommons writes no scaling.json for a bypassed failure: the score is the set's own.
    const auto r = train_lora(d, "2388", "--rule training.rcp_bypass=true");
    const json run = run_of(r);
    INFO(run.dump(1).substr(0, 3000));
    CHECK(run["validity"] == "VALID");
    CHECK(run["extra"]["rcp"]["message"] == "RCP found passed using rcp_bypass");
    CHECK(has_warning(run, "RCP Test Passed: RCP found passed using rcp_bypass"));
    CHECK(r.err.find("warning: RCP Test Passed: RCP found passed using rcp_bypass") !=
          std::string::npos);
    CHECK_FALSE(run["extra"].contains("scaling_factor"));
    const json* score = metric_of(run, "time_to_train_min");
    REQUIRE(score != nullptr);
    CHECK((*score)["value"].get<double>() == Approx(olympic_minutes(run)).epsilon(1e-12));
  }
}

TEST_CASE("external time to train: sets the RCP check does not apply to say why",
          "[external][ttt][rcp]") {
  if (!have_python())
    ACCELBENCH_SKIP("python3 is not installed: the test trainer is a Python script");
  test_cli::temp_dir d;
  SECTION("a benchmark MLPerf does not define") {
    // Converging at 0.75 of the reference: no RCP check fails it.
    const json run = run_of(train_lora(d, "2388",
                                       "--rule training.runs=3 --rule "
                                       "training.target.eval_accuracy=0.93 --rule "
                                       "training.target.direction=lower",
                                       8, "--benchmark my_lora"));
    INFO(run.dump(1).substr(0, 3000));
    // (INVALID: the closed division has no benchmark of that name; the RCP check is not why.)
    CHECK_FALSE(has_reason(run, "RCP"));
    CHECK_FALSE(run["extra"].contains("rcp"));
    CHECK(run["extra"]["rcp_not_checked"] == "benchmark 'my_lora' is not one MLPerf defines");
  }
  SECTION("the open division") {
    const json run = run_of(train_lora(d, "2388", "", 8, "--division open"));
    INFO(run.dump(1).substr(0, 3000));
    CHECK(run["validity"] == "VALID");
    CHECK_FALSE(run["extra"].contains("rcp"));
    CHECK(run["extra"]["rcp_not_checked"].get<std::string>().find("division 'open'") !=
          std::string::npos);
  }
  SECTION("a round without reference data") {
    const json run = run_of(train_lora(d, "2388",
                                       "--rule training.round=3.0 --rule "
                                       "training.runs=10"));
    INFO(run.dump(1).substr(0, 3000));
    CHECK_FALSE(run["extra"].contains("rcp"));
    CHECK(run["extra"]["rcp_not_checked"] ==
          "MLPerf round 3.0 has no reference convergence points for 'llama2_70b_lora'");
  }
  SECTION("fewer runs than the benchmark needs") {
    const json run = run_of(train_lora(d, "2388", "--rule training.runs=3"));
    INFO(run.dump(1).substr(0, 3000));
    CHECK(run["validity"] == "INVALID");
    CHECK(has_reason(run, "MLPerf's llama2_70b_lora needs 10 runs, this set has 3"));
    CHECK_FALSE(run["extra"].contains("rcp"));
    CHECK(run["extra"]["rcp_not_checked"] ==
          "the RCP check takes the 10 runs MLPerf's llama2_70b_lora needs, this set has 3");
  }
}
