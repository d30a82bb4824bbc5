// End-to-end tests of the accelbench executable on a temporary database.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <fmt/format.h>

#include "harness/app/cli/register_all.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/synthetic_run.hpp"

#include <algorithm>
#include <fstream>

using namespace accelbench;
using test_cli::ab;

namespace {
const std::string k_fast = test_support::k_fast_rules;

int64_t runs_in(const std::string& db) {
  if (!std::filesystem::exists(db))
    return -1;
  return store::store::open(db, store::access::read_only).count_runs();
}
} // namespace

TEST_CASE("version and help flags and per-command help", "[cli]") {
  auto v = ab("--version");
  CHECK(v.rc == 0);
  CHECK_THAT(v.out, Catch::StartsWith("accelbench "));
  auto h = ab("--help");
  CHECK(h.rc == 0);
  CHECK_THAT(h.out, Catch::Contains("run") && Catch::Contains("export"));
  auto rh = ab("run --help");
  CHECK(rh.rc == 0);
  CHECK_THAT(rh.out, Catch::Contains("--set") && Catch::Contains("--suite"));
  CHECK(ab("").rc == 2);
  CHECK(ab("frobnicate").rc == 2);
}

TEST_CASE("env and list work with and without --json", "[cli]") {
  auto e = ab("env --json");
  REQUIRE(e.rc == 0);
  auto j = json::parse(e.out);
  CHECK(j["peak"]["fp32_tflops"].get<double>() > 0);
  CHECK(j["backends"][0]["name"] == "cpu");
  CHECK(j["backends"][1]["name"] == "cuda");
  auto l = ab("list workloads --json");
  REQUIRE(l.rc == 0);
  CHECK(json::parse(l.out)[0]["name"].is_string());
  CHECK(ab("list rulesets").rc == 0);
  CHECK(ab("list suites").rc == 0);
}

TEST_CASE("env lists the backends of the registered workloads, each with its detail", "[cli]") {
  registry reg;
  cli::register_all(reg);
  const auto statuses = reg.backend_statuses();
  auto e = ab("env --json");
  REQUIRE(e.rc == 0);
  const json rows = json::parse(e.out)["backends"];
  REQUIRE(rows.size() == statuses.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO(statuses[i].name);
    CHECK(rows[i]["name"] == statuses[i].name);
    CHECK(rows[i]["available"] == statuses[i].available);
    CHECK(!rows[i]["detail"].get<std::string>().empty());
  }
  // The text form has the same rows.
  auto t = ab("env");
  REQUIRE(t.rc == 0);
  for (const auto& s : statuses)
    CHECK_THAT(t.out, Catch::Contains(fmt::format("backend    {:<5} {} — ", s.name,
                                                  s.available ? "available" : "unavailable")));
}

TEST_CASE("a run faster than the cached CPU peak has it probed again, and the cache keeps the "
          "highest quiet probe",
          "[cli][peak][timing]") {
  test_cli::temp_dir t;
  // A cache entry far below any rate (1 kFLOP/s, so that even a run slowed down by a loaded
  // machine beats it) for this very CPU, recorded as quiet: only the rule "a run that beats the
  // peak has it probed again" can replace it.
  const json env = capture_environment();
  const json low = {{"fp32_tflops", 1e-9},
                    {"bf16_tflops", 1e-9},
                    {"threads", env["cpu"]["logical_cores"]},
                    {"isa", "avx2"},
                    {"cpu_model", env["cpu"]["model"]},
                    {"measured_at", "2026-01-01T00:00:00.000Z"},
                    {"other_processes_cpu_share", 0.0}};
  const auto cache = t.path / "peak.json";
  std::ofstream(cache) << low.dump();
  const std::string in_cache = "ACCELBENCH_CACHE_DIR=" + t.path.string();
  auto r = ab("run gemm --set M=64 --set N=64 --set K=64 --set dtype=fp32 --json --db " + t.db() +
                  k_fast,
              in_cache);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = json::parse(r.out)["runs"][0];
  INFO(run["extra"].dump());
  CHECK(run["extra"]["peak"].contains("probed_again_after"));
  CHECK(run["extra"]["peak"]["tflops"].get<double>() > 1e-9);
  // A % of peak from the new probe when it was quiet, else none with the reason; never a 0.
  bool pct = false;
  for (const auto& m : run["metrics"])
    if (m["name"] == "pct_of_peak") {
      pct = true;
      CHECK(m["value"].get<double>() > 0);
    }
  CHECK(pct != run["extra"].contains("pct_of_peak_unknown"));
  // The cache never goes down, and only a quiet probe replaces it.
  const json after = json::parse(test_cli::slurp(cache));
  CHECK(after["fp32_tflops"].get<double>() >= 1e-9);
  if (after["fp32_tflops"].get<double>() > 1e-9)
    CHECK(after["other_processes_cpu_share"].get<double>() <= k_probe_max_other_load);
}

TEST_CASE("run → show → export, and the export validates against the schema", "[cli][timing]") {
  test_cli::temp_dir t;
  auto r = ab(
      "run gemm --set M=64 --set N=48 --set K=32 --set dtype=fp32 --tag e2e --system box1 --db " +
      t.db() + k_fast);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out,
             Catch::Contains("VALID") && Catch::Contains("FLOP/s") && !Catch::Contains("e-0"));
  auto r2 = ab("run gemm --set M=64 --set N=48 --set K=32 --set dtype=bf16 --json --db " + t.db() +
               k_fast);
  REQUIRE(r2.rc == 0);
  auto j2 = json::parse(r2.out);
  CHECK(j2["runs"][0]["validity"] == "VALID");
  CHECK(runs_in(t.db()) == 2);

  auto s = ab("show --db " + t.db());
  CHECK(s.rc == 0);
  CHECK_THAT(s.out, Catch::Contains("box1"));
  auto s1 = ab("show 1 --json --db " + t.db());
  REQUIRE(s1.rc == 0);
  CHECK(json::parse(s1.out)["samples"].size() == 3);
  CHECK(ab("show 99 --db " + t.db()).rc == 2);

  std::string out = (t.path / "export.json").string();
  auto x = ab("export --db " + t.db() + " -o " + out);
  REQUIRE(x.rc == 0);
  json doc = json::parse(test_cli::slurp(out));
  auto violations = load_builtin_schema("results.schema.json").validate(doc);
  for (const auto& v : violations)
    FAIL_CHECK(v.path << ": " << v.message);
  CHECK(doc["schema_version"] == 1);
  CHECK(doc["runs"].size() == 2);
  CHECK(doc["runs"][0]["samples"].size() == 3);
  CHECK(doc["runs"][0]["environment"]["cpu"].contains("model"));
  CHECK(doc["runs"][0]["tags"][0] == "e2e");
  auto only = ab("export --db " + t.db() + " --system box1");
  CHECK(json::parse(only.out)["runs"].size() == 1);

  // The export imports into another database unchanged, and a second import adds nothing.
  test_cli::temp_dir t2;
  auto imp = ab("import " + out + " --db " + t2.db());
  REQUIRE(imp.rc == 0);
  CHECK(runs_in(t2.db()) == 2);
  ab("import " + out + " --db " + t2.db());
  CHECK(runs_in(t2.db()) == 2);
}

TEST_CASE("run and show print the config as it ran, and the stored config keeps what was asked",
          "[cli][timing]") {
  test_cli::temp_dir t;
  // train.llama at its defaults (batch, seq, layers and threads 0: the ruleset's, the model's, all
  // cores), one timed step: the smallest run of the training tests that leaves them unset.
  auto r = ab("run train.llama --set steps=1 --quiet --db " + t.db());
  INFO(r.out << r.err);
  REQUIRE((r.rc == 0 || r.rc == 1)); // 1: INVALID on a loaded machine, the table still printed
  // train-v1's micro batch and sequence, the tiny model's 4 blocks, this machine's threads.
  const std::string ran = "batch=0\u219216";
  CHECK_THAT(r.out, Catch::Contains(ran) && Catch::Contains("seq=0\u2192128") &&
                        Catch::Contains("layers=0\u21924") && Catch::Contains("threads=0\u2192") &&
                        Catch::Contains("steps=1 "));
  auto listing = ab("show --db " + t.db());
  CHECK_THAT(listing.out, Catch::Contains(ran) && Catch::Contains("layers=0\u21924"));
  auto detail = ab("show 1 --db " + t.db());
  CHECK_THAT(detail.out, Catch::Contains("config     ") && Catch::Contains(ran));

  auto stored = json::parse(ab("show 1 --json --db " + t.db()).out);
  for (const char* key : {"batch", "seq", "layers", "threads"}) {
    INFO(key);
    CHECK(stored["config"][key] == 0);
    CHECK(stored["extra"]["resolved"][key].get<int64_t>() > 0);
  }
  CHECK(stored["extra"]["resolved"]["batch"] == 16);
  const json resolved = stored["extra"]["resolved"];
  CHECK(resolved["threads"] == stored["effective_settings"]["training"]["threads"]);
}

TEST_CASE("bad input: one line, exit 2, nothing stored", "[cli]") {
  test_cli::temp_dir t;
  ab("run gemm --set M=8 --set N=8 --set K=8 --db " + t.db() + k_fast); // one good run
  REQUIRE(runs_in(t.db()) == 1);
  struct bad {
    std::string args, expect;
  };
  std::vector<bad> cases = {
      {"run nosuch", "unknown workload 'nosuch'"},
      {"run gemm --backend tpu", "unknown backend 'tpu'"},
      {"run gemm --backend cuda", "cuda"},
      {"run gemm --set Q=1", "unknown parameter 'Q'"},
      {"run gemm --set dtype=fp64", "unknown dtype 'fp64'"},
      {"run gemm --set M=abc", "'abc'"},
      {"run gemm --set M=0", "M must be >= 1, got 0"},
      {"run gemm --set M=-5", "-5"},
      {"run gemm --set M=1000000 --set N=1000000 --set K=1000000", "host memory"},
      {"run gemm --rules no-such-rules", "unknown ruleset 'no-such-rules'"},
      {"run gemm --set M", "KEY=VALUE"},
      {"run gemm --sweep M=1,2,3,4,5,6,7,8,9,10,11 --sweep N=1,2,3,4,5,6,7,8,9,10,11 --sweep "
       "K=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,"
       "33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,"
       "63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85",
       "more than 10,000"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = ab(c.args + " --db " + t.db() + " --quiet");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1); // one line
    CHECK(runs_in(t.db()) == 1);
  }
  // A schema-invalid ruleset file.
  std::string rules = (t.path / "bad-rules.json").string();
  std::ofstream(rules)
      << R"({"schema_version": 1, "id": "bad", "version": "1", "applies_to": ["kernel"], "measurement": {"repetitions": -1}})";
  auto r = ab("run gemm --rules " + rules + " --db " + t.db());
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("repetitions"));
  CHECK(runs_in(t.db()) == 1);
  // A corrupt database file, and one that cannot be created.
  std::string corrupt = (t.path / "corrupt.db").string();
  std::ofstream(corrupt) << std::string(4096, 'x');
  auto c = ab("run gemm --set M=8 --set N=8 --set K=8 --db " + corrupt + k_fast);
  CHECK(c.rc == 2);
  CHECK_THAT(c.err, Catch::Contains("not a valid accelbench database"));
  CHECK(test_cli::slurp(corrupt) == std::string(4096, 'x')); // untouched
  auto u = ab("run gemm --set M=8 --set N=8 --set K=8 --db " + corrupt + "/sub/x.db" + k_fast);
  CHECK(u.rc == 2);
}

TEST_CASE("sweeps, suites and skipped configs", "[cli][timing]") {
  test_cli::temp_dir t;
  auto r = ab("run gemm --set M=16 --set K=16 --sweep N=8,16,24 --db " + t.db() + k_fast);
  REQUIRE(r.rc == 0);
  CHECK(runs_in(t.db()) == 3);
  // A suite with a config that cannot run here: recorded as skipped with the reason, others run.
  std::string suite = (t.path / "s.json").string();
  std::ofstream(suite)
      << R"({"schema_version": 1, "name": "tiny", "rules": "kernel-quick", "entries": [
      {"workload": "gemm", "set": {"M": 8, "N": 8, "K": 8}},
      {"workload": "gemm", "backend": "cuda", "set": {"M": 8, "N": 8, "K": 8}},
      {"workload": "gemm", "set": {"M": 200000, "N": 200000, "K": 200000}}]})";
  auto s = ab("run --suite " + suite + " --tag nightly-x --db " + t.db() +
              " --rule repetitions=3 --rule min_time_s=0 --json --quiet");
  INFO(s.err);
  REQUIRE(s.rc == 0);
  auto j = json::parse(s.out);
  REQUIRE(j["runs"].size() == 3);
  CHECK(j["runs"][0]["status"] == "ok");
  CHECK(j["runs"][1]["status"] == "skipped");
  CHECK_THAT(j["runs"][1]["status_reason"].get<std::string>(),
             Catch::Contains("cuda", Catch::CaseSensitive::No));
  CHECK(j["runs"][2]["status"] == "skipped");
  CHECK_THAT(j["runs"][2]["status_reason"].get<std::string>(), Catch::Contains("memory"));
  CHECK(j["runs"][0]["tags"].size() == 2);
  CHECK(ab("run --suite no-such-suite --db " + t.db()).rc == 2);
}

TEST_CASE("an INVALID run exits 1 and is stored", "[cli][timing]") {
  test_cli::temp_dir t;
  // A ruleset whose samples (at least 50 ms each) cannot fit in its max_time_s (10 ms) makes any
  // run INVALID, whatever the machine's load: samples of 50 ms pass max_time_s after the first, so
  // the later ones are not taken; on a busy machine the calibration may instead end with samples
  // under min_time_s. Either way the reason names one of the two bounds that cannot both hold.
  std::string rules = (t.path / "strict.json").string();
  std::ofstream(rules)
      << R"({"schema_version": 1, "id": "strict", "version": "1", "applies_to": ["kernel"],
    "measurement": {"repetitions": 3, "min_time_s": 0.05, "max_time_s": 0.01},
    "correctness": {"sample_points": 64, "tolerance": {"fp32": 1e-4}}})";
  auto r = ab("run gemm --set M=64 --set N=64 --set K=512 --rules " + rules + " --db " + t.db());
  CHECK(r.rc == 1);
  CHECK_THAT(r.out, Catch::Contains("INVALID"));
  CHECK_THAT(r.err, Catch::Contains("max_time_s=0.01 s reached") ||
                        Catch::Contains("lasted less than min_time_s=0.05"));
  CHECK(runs_in(t.db()) == 1);
  // The last line says why the job exits 1: the reasons said while it ran have scrolled away.
  std::string err = r.err;
  while (!err.empty() && err.back() == '\n')
    err.pop_back();
  const std::string last = err.substr(err.rfind('\n') + 1);
  CHECK_THAT(last, Catch::StartsWith("accelbench: exit 1: 1 of 1 run(s) failed or INVALID (run ") &&
                       Catch::Contains(", gemm/cpu/") && Catch::Contains(": INVALID: "));
}

namespace {

// A results document of two runs of one config (tags a and b) on system `box`.
json two_run_doc() {
  std::vector<run> runs;
  for (const char* tag : {"a", "b"}) {
    run r = test_support::gemm_run(test_support::gemm_fp32("64", "64", "64"), "box");
    r.source = "imported";
    r.tags = {tag};
    r.started_at =
        std::string(tag) == "a" ? "2026-01-01T00:00:00.000Z" : "2026-01-02T00:00:00.000Z";
    for (int i = 0; i < 5; ++i)
      r.samples.push_back({i, 1e-3 * (1 + 0.01 * i), 10, json::object()});
    r.add_metric("time", 1e-3, "s", direction::lower_is_better);
    runs.push_back(r);
  }
  return results_document(runs, json::array(), json::array());
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

} // namespace

TEST_CASE("JSON inputs: hostile files are exit 2 and create no database", "[cli][json]") {
  test_cli::temp_dir t;
  const auto deep = t.path / "deep.json";
  write_text(deep, std::string(100000, '[') + std::string(100000, ']'));
  const std::string fresh = (t.path / "fresh.db").string();
  struct bad {
    std::string args, expect;
  };
  json doc = two_run_doc();
  auto variant = [&](const std::string& name, const std::string& text) {
    write_text(t.path / name, text);
    return (t.path / name).string();
  };
  json wrong_mllogs = doc;
  wrong_mllogs["runs"][0]["extra"]["mllogs"] = "not a list";
  std::string huge_iterations = dump_json(doc);
  huge_iterations.replace(huge_iterations.find("\"iterations\":10"), 15, "\"iterations\":1e19");
  std::string inf_sample = dump_json(doc);
  inf_sample.replace(inf_sample.find("\"value\":0.001"), 13, "\"value\":1e400");
  for (const auto& c : std::vector<bad>{
           {"import " + deep.string(), "nesting too deep"},
           {"import " + deep.string() + " --format gbench", "nesting too deep"},
           {"import " + t.path.string(), "is a directory"},
           {"import " + variant("mllogs.json", dump_json(wrong_mllogs)), "/runs/0/extra/mllogs"},
           {"import " + variant("iter.json", huge_iterations), "outside the 64-bit integer range"},
           {"import " + variant("inf.json", inf_sample), "out of range"},
           {"import " + variant("latin1.json", "{\"schema_version\": 1, \"x\": \"caf\xE9\"}"),
            "not valid UTF-8"},
       }) {
    INFO(c.args);
    auto r = ab(c.args + " --db " + fresh);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(fresh)); // nothing created for a failed import
  }
  // A selector that is an exported file is read with the same bounds.
  write_text(t.path / "good.json", dump_json(doc));
  REQUIRE(ab("import " + (t.path / "good.json").string() + " --db " + t.db()).rc == 0);
  for (const std::string& cmd : {std::string("compare"), std::string("report")}) {
    auto r = ab(cmd + " --baseline " + deep.string() + " --candidate tag=b --db " + t.db());
    INFO(cmd << ": " << r.err);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("nesting too deep"));
  }
}

TEST_CASE("JSON outputs: stored text that is not UTF-8 never breaks a writer", "[cli][json]") {
  test_cli::temp_dir t;
  write_text(t.path / "good.json", dump_json(two_run_doc()));
  REQUIRE(ab("import " + (t.path / "good.json").string() + " --db " + t.db()).rc == 0);
  {
    // As an older version (or another tool) could have stored it: latin-1 and stray bytes.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(t.db().c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "UPDATE runs SET status_reason = 'caf' || CAST(X'E9' AS TEXT), "
                         "harness_revision = CAST(X'FF' AS TEXT) || 'rev', "
                         "config_key = config_key || CAST(X'C0' AS TEXT)",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string db = " --db " + t.db();
  const std::string junit = (t.path / "c.xml").string(), rjson = (t.path / "r.json").string();
  for (const std::string& args :
       {"export" + db, "show --json" + db, "show 1 --json" + db,
        "compare --baseline tag=a --candidate tag=b --format json" + db,
        "compare --baseline tag=a --candidate tag=b --format junit -o " + junit + db,
        "history gemm --format json" + db,
        "report --baseline tag=a --candidate tag=b --quiet --json " + rjson + db}) {
    INFO(args);
    auto r = ab(args);
    INFO(r.err);
    CHECK((r.rc == 0 || r.rc == 1));
    CHECK(valid_utf8(r.out));
    if (!r.out.empty() && args.find("--format junit") == std::string::npos &&
        args.find("report") != 0)
      CHECK_NOTHROW(json::parse(r.out));
  }
  CHECK(valid_utf8(test_cli::slurp(junit)));
  CHECK(test_cli::slurp(junit).find("<?xml") == 0);
  CHECK_NOTHROW(json::parse(test_cli::slurp(rjson)));
  auto x = ab("export" + db);
  CHECK_THAT(x.out, Catch::Contains("caf\xEF\xBF\xBD"));
  // And the export, repaired, imports again.
  write_text(t.path / "again.json", x.out);
  CHECK(
      ab("import " + (t.path / "again.json").string() + " --db " + (t.path / "b.db").string()).rc ==
      0);
}
