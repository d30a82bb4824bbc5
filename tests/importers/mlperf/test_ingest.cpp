#include <catch2/catch.hpp>

#include <set>
#include <sys/stat.h>
#include <tuple>

#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/synthetic.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

TEST_CASE("ingest: the published folder gives systems and one run per result file",
          "[mlperf][ingest]") {
  ingest_result res = ingest(mlperf_test::shared_data());
  // Two published runs break the closed rules, as MLCommons' checker finds too (it accepts one
  // non-compliant file per benchmark folder): tinycorp's bert result_2 initialised for 32.3 min
  // (30 allowed), its retinanet result_4 ends without run_stop, below the mAP target. Every
  // diagnostic names one of the two.
  const std::string long_init = "tinycorp/results/tinybox_green/bert/result_2.txt";
  const std::string unfinished = "tinycorp/results/tinybox_green/retinanet/result_4.txt";
  CHECK_FALSE(res.diagnostics.empty());
  for (const auto& d : res.diagnostics) {
    INFO(d.to_string());
    CHECK((d.file == long_init || d.file == unfinished));
  }
  REQUIRE(res.systems.size() == 6);
  REQUIRE(res.runs.size() == 51);

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
    CHECK(r.extra.contains("seed"));
    CHECK(!r.extra["eval_curve"].empty());
    CHECK(r.sample_unit == "min");
    if (r.extra["result_file"] == unfinished) {
      CHECK(r.status == run_status::failed);
      CHECK(r.extra["converged"] == false);
      CHECK(r.samples.empty());
      continue;
    }
    CHECK(r.status == run_status::ok);
    CHECK(r.valid == (r.extra["result_file"] != long_init));
    CHECK(r.extra["converged"] == true);
    CHECK(r.extra["status"] == "success");
    CHECK(r.samples.size() == 1);
    CHECK(r.find_metric("time_to_train_min") != nullptr);
    CHECK(!r.mllog.empty());
    CHECK(r.uuid.size() == 36);
    if (r.extra["result_file"] ==
        "NVIDIA/results/nyx_n1_ngc25.04_nemo/llama2_70b_lora/result_0.txt")
      nyx0 = &r;
  }
  CHECK(uuids.size() == 51);
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
    return static_cast<const mllog::diagnostic*>(nullptr);
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

namespace {

const fs::path nyx_desc =
    mlperf_test::shared_data() / "training_v5.0/NVIDIA/systems/nyx_n1_ngc25.04_nemo.json";

std::vector<std::string> synthetic_logs(int n) {
  std::vector<std::string> logs;
  for (int i = 0; i < n; ++i) {
    synthetic_log_options o;
    o.org = "TestOrg";
    o.seed = 100 + i;
    o.train_min = 10 + i;
    logs.push_back(synthetic_training_log(o));
  }
  return logs;
}

// training_v5.0/TestOrg: systems/sys.json (text as given) and
// results/sys/llama2_70b_lora/result_<i>.txt, one per log.
fs::path make_org(const fs::path& root, const std::string& desc,
                  const std::vector<std::string>& logs) {
  const fs::path org = root / "training_v5.0" / "TestOrg";
  mlperf_test::write(org / "systems" / "sys.json", desc);
  for (size_t i = 0; i < logs.size(); ++i)
    mlperf_test::write(org / "results/sys/llama2_70b_lora" / fmt::format("result_{}.txt", i),
                       logs[i]);
  return org;
}

const mllog::diagnostic* find_diag(const ingest_result& res, const std::string& file,
                                   const std::string& text) {
  for (const auto& d : res.diagnostics)
    if (d.file.find(file) != std::string::npos && d.message.find(text) != std::string::npos)
      return &d;
  return nullptr;
}

bool any_reason(const run& r, const std::string& text) {
  for (const auto& s : r.invalid_reasons)
    if (s.find(text) != std::string::npos)
      return true;
  return false;
}

// The run's time_ms of `key` replaced by `t`.
std::string with_time(const std::string& log, const std::string& key, const std::string& t) {
  std::string out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    end = end == std::string::npos ? log.size() : end + 1;
    std::string line = log.substr(pos, end - pos);
    if (line.find("\"key\": \"" + key + "\"") != std::string::npos) {
      const size_t a = line.find("\"time_ms\": ") + 11;
      line.replace(a, line.find(',', a) - a, t);
    }
    out += line;
    pos = end;
  }
  return out;
}

int64_t time_of(const std::string& log, const std::string& key) {
  mllog::parsed_log p = mllog::parse_mllog(log);
  return p.first(key)->time_ms;
}

} // namespace

TEST_CASE("ingest: counts of a system description that are not sane are diagnosed, its runs "
          "INVALID",
          "[mlperf][ingest]") {
  // number_of_nodes "abc" used to give 0 accelerators and negative counts were stored, the
  // runs VALID.
  const json published = json::parse(mlperf_test::read(nyx_desc));
  struct bad {
    const char* field;
    json value;
    const char* shown;
  };
  for (const bad& b : std::vector<bad>{{"number_of_nodes", "abc", "\"abc\""},
                                       {"number_of_nodes", "-4", "\"-4\""},
                                       {"number_of_nodes", -4, "-4"},
                                       {"number_of_nodes", "0", "\"0\""},
                                       {"number_of_nodes", "8 nodes", "\"8 nodes\""},
                                       {"number_of_nodes", 1.5, "1.5"},
                                       {"accelerators_per_node", "-8", "\"-8\""},
                                       {"accelerators_per_node", "99999999999", "\"99999999999\""},
                                       {"number_of_nodes", "200000", "more than 1000000"},
                                       {"number_of_nodes", nullptr, "null"}}) {
    INFO(b.field << " = " << b.value.dump());
    mlperf_test::temp_dir tmp;
    json desc = published;
    desc[b.field] = b.value;
    make_org(tmp.path, desc.dump(4), synthetic_logs(2));
    ingest_result res = ingest(tmp.path);
    REQUIRE(res.systems.size() == 1);
    const auto& s = res.systems[0];
    CHECK(s.nodes == 0);
    CHECK(s.accelerators_per_node == 0);
    CHECK(s.total_accelerators == 0);
    CHECK(s.problems.size() == 1);
    const mllog::diagnostic* d = find_diag(res, "TestOrg/systems/sys.json", b.shown);
    CHECK(d);
    REQUIRE(res.runs.size() == 2);
    for (const run& r : res.runs) {
      CHECK_FALSE(r.valid);
      CHECK(any_reason(r, "TestOrg/systems/sys.json"));
      CHECK(r.cfg.values.count("accelerators") == 0);
      CHECK(r.environment["accelerator"]["count"] == 0);
    }
  }
  {
    mlperf_test::temp_dir tmp;
    json desc = published;
    desc.erase("number_of_nodes");
    make_org(tmp.path, desc.dump(4), synthetic_logs(1));
    ingest_result res = ingest(tmp.path);
    CHECK(find_diag(res, "sys.json", "number_of_nodes is missing"));
    CHECK_FALSE(res.runs.at(0).valid);
  }
  // Sane values (also as JSON numbers, and a CPU-only system) are kept, the runs VALID.
  for (const auto& [nodes, per_node, total] : std::vector<std::tuple<json, json, int64_t>>{
           {"3", "8", 24}, {125000, 8, 1000000}, {"2", "0", 2}}) {
    mlperf_test::temp_dir tmp;
    json desc = published;
    desc["number_of_nodes"] = nodes;
    desc["accelerators_per_node"] = per_node;
    make_org(tmp.path, desc.dump(4), synthetic_logs(1));
    ingest_result res = ingest(tmp.path);
    INFO(nodes.dump() << " x " << per_node.dump());
    CHECK(res.diagnostics.empty());
    CHECK(res.systems.at(0).total_accelerators == total);
    CHECK(res.runs.at(0).valid);
    CHECK(res.runs.at(0).cfg.values.at("accelerators") == std::to_string(total));
  }
}

TEST_CASE("ingest: JSON nested 100,000 levels deep is a diagnostic naming the file",
          "[mlperf][ingest]") {
  // A system description, scaling.json or one log line like this used to exhaust the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  mlperf_test::temp_dir tmp;
  auto logs = synthetic_logs(3);
  logs[1].insert(logs[1].find(":::MLLOG", 300), ":::MLLOG " + deep + "\n");
  const fs::path org = make_org(tmp.path, "{\"system_name\": " + deep + "}", logs);
  mlperf_test::write(org / "results/sys/llama2_70b_lora/scaling.json", deep);
  ingest_result res;
  REQUIRE_NOTHROW(res = ingest(tmp.path));
  CHECK(find_diag(res, "TestOrg/systems/sys.json", "nesting too deep"));
  CHECK(find_diag(res, "llama2_70b_lora/scaling.json", "nesting too deep"));
  const mllog::diagnostic* line =
      find_diag(res, "llama2_70b_lora/result_1.txt", "nesting too deep");
  REQUIRE(line);
  CHECK(line->line > 1);
  CHECK(res.systems.empty());
  REQUIRE(res.runs.size() == 3);
  for (const run& r : res.runs) {
    CHECK_FALSE(r.valid); // the system description cannot be used
    CHECK(any_reason(r, "system description TestOrg/systems/sys.json"));
    CHECK(r.extra["scaling_factor"] == 1.0);
  }
  CHECK(any_reason(res.runs[1], "nesting too deep"));
}

TEST_CASE("ingest: invalid UTF-8 in logs and system descriptions is replaced, with a diagnostic",
          "[mlperf][ingest]") {
  // Stored as it was, it made every later JSON output of the database fail (exit 3).
  mlperf_test::temp_dir tmp;
  auto logs = synthetic_logs(2);
  logs[0] = "NCCL INFO caf\xE9 \xFF\xFE\n" + logs[0];
  const std::string platform = "\"key\": \"submission_platform\", \"value\": \"";
  logs[0].insert(logs[0].find(platform) + platform.size(), "Z\xFCrich ");
  std::string desc = mlperf_test::read(nyx_desc);
  desc.insert(desc.find("\"hw_notes\": \"") + 13, "M\xFCnchen ");
  make_org(tmp.path, desc, logs);
  ingest_result res = ingest(tmp.path);
  const mllog::diagnostic* d = find_diag(res, "llama2_70b_lora/result_0.txt", "invalid UTF-8");
  REQUIRE(d);
  CHECK(d->line == 1);
  CHECK(d->message.find("4 byte(s)") != std::string::npos);
  CHECK(d->message.find("2 line(s)") != std::string::npos);
  const mllog::diagnostic* ds = find_diag(res, "TestOrg/systems/sys.json", "invalid UTF-8");
  REQUIRE(ds);
  CHECK(ds->message.find("1 byte(s)") != std::string::npos);
  REQUIRE(res.runs.size() == 2);
  REQUIRE(res.systems.size() == 1);
  CHECK(res.systems[0].fields["hw_notes"].get<std::string>().rfind("M\xEF\xBF\xBDnchen ", 0) == 0);
  for (const run& r : res.runs) {
    CHECK(accelbench::valid_utf8(r.mllog));
    CHECK(r.valid); // a repaired byte in a log does not make the run invalid
    CHECK_NOTHROW(r.environment.dump());
    CHECK_NOTHROW(r.extra.dump());
  }
  CHECK(res.runs[0].extra["submission"]["platform"].get<std::string>().rfind("Z\xEF\xBF\xBDrich",
                                                                             0) == 0);
}

TEST_CASE("ingest: a time to train must be more than 0 and less than a year to be VALID",
          "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  auto logs = synthetic_logs(4);
  const int64_t start = time_of(logs[1], "run_start");
  logs[0] = with_time(logs[0], "run_stop", "1e300"); // 1.5e14 min
  logs[1] = with_time(logs[1], "run_stop", std::to_string(start + 2 * 365LL * 86400000)); // 2 years
  logs[2] = with_time(logs[2], "run_stop", std::to_string(time_of(logs[2], "run_start") - 1));
  make_org(tmp.path, mlperf_test::read(nyx_desc), logs);
  ingest_result res = ingest(tmp.path);
  REQUIRE(res.runs.size() == 4);
  const run& huge = res.runs[0];
  CHECK_FALSE(huge.valid);
  CHECK(huge.status == run_status::failed); // its run_stop is not a time: no run_stop
  CHECK(huge.samples.empty());
  CHECK(find_diag(res, "result_0.txt", "has time_ms"));
  const run& years = res.runs[1];
  CHECK_FALSE(years.valid);
  CHECK(any_reason(years, "less than a year"));
  const mllog::diagnostic* d = find_diag(res, "result_1.txt", "less than a year");
  REQUIRE(d);
  CHECK(d->line > 1);
  CHECK_FALSE(res.runs[2].valid);
  CHECK(any_reason(res.runs[2], "must be more than 0"));
  // No sample and no metric: a time that is not more than 0 is not stored as a measurement (the
  // store refuses it), and the run stays storable.
  CHECK(res.runs[2].samples.empty());
  CHECK(res.runs[2].metrics.empty());
  CHECK(storable_run_problem(res.runs[2]).empty());
  CHECK(res.runs[2].extra.contains("run_stop_ms"));
  CHECK(res.runs[3].valid);
}

TEST_CASE("ingest: entries that are not log files are diagnostics, the rest is imported",
          "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  auto logs = synthetic_logs(2);
  const fs::path org = make_org(tmp.path, mlperf_test::read(nyx_desc), logs);
  const fs::path bench = org / "results/sys/llama2_70b_lora";
  fs::create_directories(bench / "result_2.txt");             // a folder
  fs::create_symlink("result_3.txt", bench / "result_3.txt"); // a symlink loop
  mlperf_test::write(bench / "result_4.txt", "");
  fs::resize_file(bench / "result_4.txt", mllog::k_max_log_bytes + 1); // too large (sparse)
  mlperf_test::write(bench / "result_5.txt", "");                      // empty
  mlperf_test::write(bench / "result_6.txt", std::string("\x7f"
                                                         "ELF\x02\x01\x01\0\0\xff\xfe",
                                                         12));
  fs::create_symlink("loop", org / "results" / "loop");                    // a system folder loop
  fs::create_directories(org / "results" / "sys\xff" / "llama2_70b_lora"); // not UTF-8
  mlperf_test::write(org / "results" / "sys\xff" / "llama2_70b_lora" / "result_0.txt", logs[0]);
  fs::create_symlink("scaling.json", bench / "scaling.json");     // a scaling.json loop
  REQUIRE(::mkfifo((bench / "result_7.txt").c_str(), 0600) == 0); // would block a read
  fs::create_symlink("/dev/zero", bench / "result_8.txt");        // would never end

  ingest_result res;
  REQUIRE_NOTHROW(res = ingest(tmp.path.string() + "/")); // a trailing slash too
  CHECK(find_diag(res, "llama2_70b_lora/result_2.txt", "is a directory"));
  CHECK(find_diag(res, "llama2_70b_lora/result_3.txt",
                  "a symbolic link to 'result_3.txt': not followed; skipped"));
  CHECK(find_diag(res, "llama2_70b_lora/result_4.txt", "larger than 64 MiB"));
  CHECK(find_diag(res, "llama2_70b_lora/result_7.txt", "not a regular file (a FIFO)"));
  CHECK(find_diag(res, "llama2_70b_lora/result_8.txt", "a symbolic link to '/dev/zero'"));
  CHECK(find_diag(res, "llama2_70b_lora/scaling.json", "symbolic link to 'scaling.json'"));
  CHECK(find_diag(res, "TestOrg/results/loop", "a symbolic link to 'loop'"));
  CHECK(find_diag(res, "TestOrg/results/sys\xEF\xBF\xBD", "not valid UTF-8"));
  // Good logs, the empty and the binary file are runs (the last two failed); nothing else.
  REQUIRE(res.runs.size() == 4);
  for (const run& r : res.runs) {
    CHECK(accelbench::valid_utf8(r.mllog));
    CHECK(r.system == "sys");
    CHECK(r.extra["org"] == "TestOrg");
  }
  CHECK(res.runs[0].valid);
  CHECK(res.runs[1].valid);
  CHECK(res.runs[2].status == run_status::failed);
  CHECK(res.runs[3].status == run_status::failed);
}

TEST_CASE("ingest: a symbolic link is never followed, and nothing of its target is stored",
          "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  auto logs = synthetic_logs(3);
  const fs::path org = make_org(tmp.path / "tree", mlperf_test::read(nyx_desc), {logs[0], logs[1]});
  const fs::path bench = org / "results/sys/llama2_70b_lora";
  // Outside the folder: a log that would import (with a secret in it), a system with results,
  // a system description and power logs.
  const fs::path out = tmp.path / "outside";
  mlperf_test::write(out / "log.txt", logs[2] + "TOKEN=hunter2\n");
  mlperf_test::write(out / "sys2/llama2_70b_lora/result_0.txt", logs[2] + "TOKEN=hunter2\n");
  mlperf_test::write(out / "sys2.json", mlperf_test::read(nyx_desc));
  mlperf_test::write(out / "power/result_0/node_0.txt", "TOKEN=hunter2\n");
  fs::create_symlink(out / "log.txt", bench / "result_2.txt");
  ::setenv("ACCELBENCH_TEST_SECRET", "tok-8f1d2c", 1);
  fs::create_symlink("/proc/self/environ", bench / "result_3.txt");
  fs::create_symlink(out / "sys2", org / "results/sys2");
  fs::create_symlink(out / "sys2.json", org / "systems/sys2.json");
  fs::create_symlink(out / "power", bench / "power");

  ingest_result res;
  REQUIRE_NOTHROW(res = ingest(tmp.path / "tree"));
  // The two logs inside, and nothing else.
  REQUIRE(res.runs.size() == 2);
  for (const run& r : res.runs) {
    CHECK(r.mllog.find("hunter2") == std::string::npos);
    CHECK(r.mllog.find("tok-8f1d2c") == std::string::npos);
    CHECK(r.system == "sys");
    CHECK_FALSE(r.extra.contains("energy"));
  }
  REQUIRE(res.systems.size() == 1);
  CHECK(res.systems[0].name == "sys");
  // Each link is named with its target.
  const std::string target = "a symbolic link to '" + (out / "log.txt").string() + "'";
  CHECK(find_diag(res, "llama2_70b_lora/result_2.txt", target));
  CHECK(find_diag(res, "llama2_70b_lora/result_3.txt", "a symbolic link to '/proc/self/environ'"));
  CHECK(find_diag(res, "TestOrg/results/sys2", "a symbolic link to"));
  CHECK(find_diag(res, "TestOrg/systems/sys2.json", "a symbolic link to"));
  CHECK(find_diag(res, "llama2_70b_lora/power", "not followed; no energy for this run"));
  for (const auto& d : res.diagnostics)
    CHECK(d.message.find("hunter2") == std::string::npos);
}

TEST_CASE("ingest: the folder the user named may be a link but its results/ folder may not",
          "[mlperf][ingest]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = make_org(tmp.path / "real", mlperf_test::read(nyx_desc), synthetic_logs(1));
  fs::create_symlink(tmp.path / "real", tmp.path / "named");
  CHECK(ingest(tmp.path / "named").runs.size() == 1);
  // An organisation whose results/ is a link: not an organisation here, and the link is named.
  const fs::path other = tmp.path / "other/training_v5.0/TestOrg";
  fs::create_directories(other / "systems");
  fs::create_symlink(org / "results", other / "results");
  try {
    ingest(tmp.path / "other");
    FAIL("a results/ link was followed");
  } catch (const input_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no MLPerf organisation folder") &&
                             Catch::Contains("TestOrg/results: a symbolic link to"));
  }
}

TEST_CASE("ingest: a run records what it trained: samples to run_stop, sequence length, model",
          "[mlperf][ingest]") {
  ingest_result res = ingest(mlperf_test::shared_data());
  size_t checked_405b = 0, checked_lora = 0, checked_epochs = 0;
  for (const run& r : res.runs) {
    INFO(r.extra["result_file"].get<std::string>());
    const std::string benchmark = r.cfg.values.at("benchmark");
    if (benchmark == "bert" || benchmark == "retinanet") {
      // tinycorp's logs count progress in epoch_num, not samples_count: no sample count to take.
      const json t = r.extra.value("trained", json::object());
      CHECK_FALSE(t.contains("samples"));
      if (benchmark == "bert")
        CHECK(t["sequence_length"] == 512);
      ++checked_epochs;
      continue;
    }
    REQUIRE(r.extra.contains("trained"));
    const json& t = r.extra["trained"];
    if (benchmark == "llama31_405b") {
      // Every published 405B run stops at the eval that reached the target: 6 evals of 46,080
      // samples (H100, global batch 1152) or of 46,592 (GB200, global batch 896).
      CHECK(t["samples"] == (r.system == "tyche_ngpu512_ngc25.04_nemo" ? 279552 : 276480));
      CHECK(t["sequence_length"] == 8192);
      CHECK(t["model"] == "llama3-405b");
      ++checked_405b;
    } else {
      // LoRA logs state no max_sequence_length, and the table names no model for LoRA.
      CHECK(t["samples"].get<int64_t>() > 0);
      CHECK_FALSE(t.contains("sequence_length"));
      CHECK_FALSE(t.contains("model"));
      ++checked_lora;
    }
  }
  CHECK(checked_405b == 6);
  CHECK(checked_lora == 30);
  CHECK(checked_epochs == 15);

  // Counts the log states badly are left out, not turned into FLOPs; the fallback for samples is
  // the last eval's samples_count.
  auto log = [](const std::string& stop_meta, const std::string& seq) {
    auto line = [](int64_t ms, const char* type, const char* key, const std::string& value,
                   const std::string& meta) {
      return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": "
                         "\"{}\", \"key\": \"{}\", \"value\": {}, \"metadata\": {{{}}}}}\n",
                         ms, type, key, value, meta);
    };
    return line(1000, "POINT_IN_TIME", "max_sequence_length", seq, "") +
           line(2000, "INTERVAL_START", "run_start", "null", "") +
           line(3000, "POINT_IN_TIME", "eval_accuracy", "5.5", "\"samples_count\": 4608") +
           line(62000, "INTERVAL_END", "run_stop", "null", stop_meta);
  };
  result_context ctx;
  ctx.benchmark = "llama31_405b";
  ctx.relative_path = "x/results/s/llama31_405b/result_0.txt";
  std::vector<mllog::diagnostic> diags;
  const run good =
      run_from_log(log("\"samples_count\": 4608, \"status\": \"success\"", "8192"), ctx, diags);
  CHECK(good.extra["trained"] ==
        json({{"samples", 4608}, {"sequence_length", 8192}, {"model", "llama3-405b"}}));
  for (const char* bad : {"-1", "0.5", "1e300", "\"8192\""}) {
    INFO(bad);
    const run r = run_from_log(
        log(fmt::format("\"samples_count\": {}, \"status\": \"success\"", bad), bad), ctx, diags);
    CHECK_FALSE(r.extra["trained"].contains("sequence_length"));
    CHECK(r.extra["trained"]["samples"] == 4608); // the eval's, run_stop's being unusable
  }
}
