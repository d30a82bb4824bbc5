// End-to-end tests of the accelbench executable on a temporary database.
#include <catch2/catch.hpp>

#include "harness/core/json_schema.hpp"
#include "harness/store/store.hpp"
#include "tests/cli/cli_helpers.hpp"

#include <algorithm>
#include <fstream>

using namespace accelbench;
using test_cli::ab;

namespace {
// Small and fast: 3 samples, no minimum sample time.
const std::string k_fast = " --rules kernel-quick --rule repetitions=3 --rule min_time_s=0 --rule min_warmup_time_s=0 --quiet ";

int64_t runs_in(const std::string& db) {
  if (!std::filesystem::exists(db)) return -1;
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

TEST_CASE("run → show → export; the export validates against the schema", "[cli]") {
  test_cli::temp_dir t;
  auto r = ab("run gemm --set M=64 --set N=48 --set K=32 --set dtype=fp32 --tag e2e --system box1 --db " + t.db() + k_fast);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("VALID") && Catch::Contains("TFLOP/s"));
  auto r2 = ab("run gemm --set M=64 --set N=48 --set K=32 --set dtype=bf16 --json --db " + t.db() + k_fast);
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
  for (const auto& v : violations) FAIL_CHECK(v.path << ": " << v.message);
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

TEST_CASE("bad input: one line, exit 2, nothing stored", "[cli]") {
  test_cli::temp_dir t;
  ab("run gemm --set M=8 --set N=8 --set K=8 --db " + t.db() + k_fast);  // one good run
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
      {"run gemm --sweep M=1,2,3,4,5,6,7,8,9,10,11 --sweep N=1,2,3,4,5,6,7,8,9,10,11 --sweep K=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85", "more than 10,000"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = ab(c.args + " --db " + t.db() + " --quiet");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    CHECK(runs_in(t.db()) == 1);
  }
  // A schema-invalid ruleset file.
  std::string rules = (t.path / "bad-rules.json").string();
  std::ofstream(rules) << R"({"schema_version": 1, "id": "bad", "version": "1", "applies_to": ["kernel"], "measurement": {"repetitions": -1}})";
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
  CHECK(test_cli::slurp(corrupt) == std::string(4096, 'x'));  // untouched
  auto u = ab("run gemm --set M=8 --set N=8 --set K=8 --db " + corrupt + "/sub/x.db" + k_fast);
  CHECK(u.rc == 2);
}

TEST_CASE("sweeps, suites and skipped configs", "[cli]") {
  test_cli::temp_dir t;
  auto r = ab("run gemm --set M=16 --set K=16 --sweep N=8,16,24 --db " + t.db() + k_fast);
  REQUIRE(r.rc == 0);
  CHECK(runs_in(t.db()) == 3);
  // A suite with a config that cannot run here: recorded as skipped with the reason, others run.
  std::string suite = (t.path / "s.json").string();
  std::ofstream(suite) << R"({"schema_version": 1, "name": "tiny", "rules": "kernel-quick", "entries": [
      {"workload": "gemm", "set": {"M": 8, "N": 8, "K": 8}},
      {"workload": "gemm", "backend": "cuda", "set": {"M": 8, "N": 8, "K": 8}},
      {"workload": "gemm", "set": {"M": 200000, "N": 200000, "K": 200000}}]})";
  auto s = ab("run --suite " + suite + " --tag nightly-x --db " + t.db() + " --rule repetitions=3 --rule min_time_s=0 --json --quiet");
  INFO(s.err);
  REQUIRE(s.rc == 0);
  auto j = json::parse(s.out);
  REQUIRE(j["runs"].size() == 3);
  CHECK(j["runs"][0]["status"] == "ok");
  CHECK(j["runs"][1]["status"] == "skipped");
  CHECK_THAT(j["runs"][1]["status_reason"].get<std::string>(), Catch::Contains("cuda", Catch::CaseSensitive::No));
  CHECK(j["runs"][2]["status"] == "skipped");
  CHECK_THAT(j["runs"][2]["status_reason"].get<std::string>(), Catch::Contains("memory"));
  CHECK(j["runs"][0]["tags"].size() == 2);
  CHECK(ab("run --suite no-such-suite --db " + t.db()).rc == 2);
}

TEST_CASE("an INVALID run exits 1 and is stored", "[cli]") {
  test_cli::temp_dir t;
  // A ruleset whose fp32 tolerance no real GEMM can meet makes any run INVALID.
  std::string rules = (t.path / "strict.json").string();
  std::ofstream(rules) << R"({"schema_version": 1, "id": "strict", "version": "1", "applies_to": ["kernel"],
    "measurement": {"repetitions": 3, "min_time_s": 0},
    "correctness": {"sample_points": 64, "tolerance": {"fp32": 1e-300}}})";
  auto r = ab("run gemm --set M=64 --set N=64 --set K=512 --rules " + rules + " --db " + t.db() + " --quiet");
  CHECK(r.rc == 1);
  CHECK_THAT(r.out, Catch::Contains("INVALID"));
  CHECK(runs_in(t.db()) == 1);
}
