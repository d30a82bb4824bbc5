#include <catch2/catch.hpp>

#include <set>

#include "harness/core/error.hpp"
#include "test_helpers.hpp"
#include "workloads/mlperf/ingest.hpp"
#include "workloads/mlperf/synthetic.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

TEST_CASE("ingest: the published folder gives systems and one run per result file",
          "[mlperf][ingest]") {
  ingest_result res = ingest(mlperf_test::shared_data());
  CHECK(res.diagnostics.empty());
  for (const auto& d : res.diagnostics)
    UNSCOPED_INFO(d.to_string());
  REQUIRE(res.systems.size() == 4);
  REQUIRE(res.runs.size() == 26);

  std::map<std::string, const system_description*> sys;
  for (const auto& s : res.systems)
    sys[s.name] = &s;
  REQUIRE(sys.count("tyche_ngpu512_ngc25.04_nemo"));
  const auto& tyche = *sys["tyche_ngpu512_ngc25.04_nemo"];
  CHECK(tyche.org == "NVIDIA");
  CHECK(tyche.round == "5.0");
  CHECK(tyche.nodes == 128);
  CHECK(tyche.accelerators_per_node == 4);
  CHECK(tyche.total_accelerators == 512);
  CHECK(tyche.accelerator_model == "NVIDIA Blackwell GPU (GB200)");
  CHECK(tyche.framework == "NVIDIA NeMo Framework Release 25.04");
  CHECK(tyche.software_stack["nccl_version"] == "2.26.3");
  CHECK(tyche.fields["host_memory_capacity"] == "1.7 TB");
  CHECK(tyche.to_json()["derived"]["total_accelerators"] == 512);
  CHECK(sys["eos-dfw_n64_ngc25.01_nemo"]->total_accelerators == 512);
  CHECK(sys["nyx_n1_ngc25.04_nemo"]->total_accelerators == 8);
  CHECK(sys["eos_ngc24.04_nemo"]->round == "4.0");

  std::set<std::string> uuids;
  const run* nyx0 = nullptr;
  for (const run& r : res.runs) {
    uuids.insert(r.uuid);
    INFO(r.extra["result_file"]);
    CHECK(r.source == "published");
    CHECK(r.cfg.backend == "mlperf");
    CHECK(r.status == run_status::ok);
    CHECK(r.valid);
    CHECK(r.extra["converged"] == true);
    CHECK(r.extra["status"] == "success");
    CHECK(r.extra.contains("seed"));
    CHECK(!r.extra["eval_curve"].empty());
    CHECK(r.samples.size() == 1);
    CHECK(r.sample_unit == "min");
    CHECK(r.find_metric("time_to_train_min") != nullptr);
    CHECK(!r.mllog.empty());
    CHECK(r.uuid.size() == 36);
    if (r.extra["result_file"] ==
        "NVIDIA/results/nyx_n1_ngc25.04_nemo/llama2_70b_lora/result_0.txt")
      nyx0 = &r;
  }
  CHECK(uuids.size() == 26);
  REQUIRE(nyx0);
  CHECK(nyx0->cfg.workload == "mlperf.llama2_70b_lora");
  CHECK(nyx0->cfg.values.at("benchmark") == "llama2_70b_lora");
  CHECK(nyx0->cfg.values.at("division") == "closed");
  CHECK(nyx0->cfg.values.at("accelerators") == "8");
  CHECK(nyx0->system == "nyx_n1_ngc25.04_nemo");
  CHECK(nyx0->ruleset == "mlperf-training-v5.0");
  // (1745155634013 - 1745154970117) / 60000
  CHECK(nyx0->samples[0].value == Approx(11.0649333333).epsilon(1e-9));
  CHECK(nyx0->extra["seed"] == 5930);
  CHECK(nyx0->extra["hyperparameters"]["lora_rank"] == 16);
  CHECK(nyx0->extra["hyperparameters"]["global_batch_size"] == 8);
  CHECK(nyx0->extra["eval_curve"].size() == 5);
  CHECK(nyx0->extra["eval_curve"][0]["samples_count"] == 1536);
  CHECK(nyx0->extra["target"]["target"] == 0.925);
  CHECK(nyx0->extra["scaling_factor"].get<double>() == Approx(1.0033670033670032));
  CHECK(nyx0->environment["accelerator"]["model"] == "NVIDIA Blackwell GPU (B200-SXM-180GB)");
  CHECK(nyx0->started_at == "2025-04-20T13:16:10.117Z");
  CHECK(nyx0->mllog == mlperf_test::read(mlperf_test::shared_data() / "training_v5.0" /
                                         nyx0->extra["result_file"].get<std::string>()));

  // A re-import gives the same uuids (idempotent).
  ingest_result again = ingest(mlperf_test::shared_data() / "training_v5.0" / "NVIDIA");
  std::set<std::string> again_uuids;
  for (const run& r : again.runs)
    again_uuids.insert(r.uuid);
  CHECK(again.runs.size() == 16);
  for (const auto& u : again_uuids)
    CHECK(uuids.count(u) == 1);
}

TEST_CASE("ingest: name_uuid is a deterministic RFC 4122 version-5 UUID", "[mlperf][ingest]") {
  const std::string a = name_uuid("x/y"), b = name_uuid("x/y"), c = name_uuid("x/z");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a[14] == '5');
  CHECK((a[19] == '8' || a[19] == '9' || a[19] == 'a' || a[19] == 'b'));
  CHECK(iso8601_from_ms(0) == "1970-01-01T00:00:00.000Z");
}

namespace {

std::string remove_lines_with(const std::string& text, const std::string& needle) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(pos, end - pos);
    if (line.find(needle) == std::string::npos)
      out += line;
    pos = end;
  }
  return out;
}

} // namespace

TEST_CASE("ingest: bad input is reported per file and line, the rest is still ingested",
          "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = tmp.path / "training_v5.0" / "TestOrg";
  mlperf_test::write(org / "systems" / "sys.json",
                     mlperf_test::read(mlperf_test::shared_data() /
                                       "training_v5.0/NVIDIA/systems/nyx_n1_ngc25.04_nemo.json"));
  const fs::path bench = org / "results" / "sys" / "llama2_70b_lora";
  std::vector<std::string> logs;
  for (int i = 0; i < 10; ++i) {
    synthetic_log_options o;
    o.org = "TestOrg";
    o.seed = 100 + i;
    o.train_min = 10 + i;
    logs.push_back(synthetic_training_log(o));
  }
  // result_0: cut off in the middle of its last line.
  std::string truncated = logs[0].substr(0, logs[0].size() - 40);
  // result_1: a line that is not JSON in the middle.
  std::string garbage = logs[1];
  garbage.insert(garbage.find(":::MLLOG", 200), ":::MLLOG {this is not json\n");
  // result_2: no run_stop.
  std::string no_stop = remove_lines_with(logs[2], "\"run_stop\"");
  // result_3: an EXACTLY_ONE key logged again with another value.
  std::string repeated = logs[3];
  repeated.insert(repeated.find(":::MLLOG", repeated.find("\"init_stop\"") - 120),
                  ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000000, \"event_type\": "
                  "\"POINT_IN_TIME\", "
                  "\"key\": \"global_batch_size\", \"value\": 16, \"metadata\": {\"file\": "
                  "\"t.py\", \"lineno\": 9}}\n");
  mlperf_test::write(bench / "result_0.txt", truncated);
  mlperf_test::write(bench / "result_1.txt", garbage);
  mlperf_test::write(bench / "result_2.txt", no_stop);
  mlperf_test::write(bench / "result_3.txt", repeated);
  for (int i = 4; i < 10; ++i)
    mlperf_test::write(bench / fmt::format("result_{}.txt", i), logs[i]);
  // An unknown benchmark.
  mlperf_test::write(org / "results" / "sys" / "mystery_bench" / "result_0.txt", logs[4]);
  // A results folder without a system description.
  mlperf_test::write(org / "results" / "ghost" / "llama2_70b_lora" / "result_0.txt", logs[5]);

  ingest_result res = ingest(tmp.path);
  REQUIRE(res.runs.size() == 12);
  auto diag_with = [&](const std::string& file, const std::string& text) {
    for (const auto& d : res.diagnostics)
      if (d.file.find(file) != std::string::npos && d.message.find(text) != std::string::npos)
        return &d;
    return static_cast<const diagnostic*>(nullptr);
  };
  const auto* d0 = diag_with("llama2_70b_lora/result_0.txt", "truncated final line");
  REQUIRE(d0);
  CHECK(d0->line > 10);
  const auto* d1 = diag_with("result_1.txt", "not valid JSON");
  REQUIRE(d1);
  CHECK(d1->line > 1);
  CHECK(diag_with("result_2.txt", "no run_stop"));
  const auto* d3 = diag_with("result_3.txt", "EXACTLY_ONE key 'global_batch_size'");
  REQUIRE(d3);
  CHECK(d3->line > 1);
  CHECK(diag_with("mystery_bench/result_0.txt", "unknown benchmark 'mystery_bench'"));
  CHECK(diag_with("results/ghost", "no system description"));

  auto find_run = [&](const std::string& suffix) -> const run& {
    for (const run& r : res.runs)
      if (r.extra["result_file"].get<std::string>().find(suffix) != std::string::npos)
        return r;
    FAIL("no run for " << suffix);
    return res.runs.front();
  };
  const run& r2 = find_run("sys/llama2_70b_lora/result_2.txt");
  CHECK(r2.status == run_status::failed);
  CHECK(r2.status_reason == "log has no run_stop");
  CHECK(r2.samples.empty());
  const run& r3 = find_run("sys/llama2_70b_lora/result_3.txt");
  CHECK_FALSE(r3.valid);
  CHECK(r3.status == run_status::ok);
  const run& r1 = find_run("sys/llama2_70b_lora/result_1.txt");
  CHECK_FALSE(r1.valid);
  CHECK(r1.samples.size() == 1); // the rest of the log still gives the time
  const run& unknown = find_run("mystery_bench/result_0.txt");
  CHECK(unknown.cfg.workload == "mlperf.mystery_bench");
  CHECK(unknown.extra["target"].is_null());
  CHECK(unknown.extra["known_benchmark"] == false);
  CHECK(unknown.samples.size() == 1);
  for (int i = 4; i < 10; ++i) {
    const run& r = find_run(fmt::format("sys/llama2_70b_lora/result_{}.txt", i));
    CHECK(r.valid);
    CHECK(r.extra["converged"] == true);
    CHECK(r.samples[0].value == Approx(10 + i));
    CHECK(r.ruleset == "mlperf-training-v5.0");
  }
}

TEST_CASE("ingest: a folder without results is refused", "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  CHECK_THROWS_AS(ingest(tmp.path), input_error);
  CHECK_THROWS_AS(ingest(tmp.path / "missing"), input_error);
}
