// The plugin interface through the command line, as a user runs it: the example SAXPY plugin
// (examples/plugin) measured by the built-in kernels' sequence and stored; plugins with another
// interface version, no entry symbol or a bad axis, and paths that are no plugin, refused with one
// line naming the problem and the value, exit 2, nothing stored.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/run_json.hpp"

using nlohmann::json;
using test_cli::ab;
using test_cli::metric_of;

namespace {

const std::string k_dir = ACCELBENCH_PLUGIN_DIR;
const std::string k_good = k_dir + "/libaccelbench_example_saxpy.so";
const std::string k_fast = test_support::k_fast_rules;

std::string plugin(const std::string& variant) {
  return k_dir + "/libaccelbench_example_" + variant + ".so";
}

size_t lines_of(const std::string& s) {
  size_t n = 0;
  for (char c : s)
    n += c == '\n';
  return n;
}

// A refusal: exit 2, one line on stderr naming `word`, and no database created.
void check_refused(const std::string& args, const std::string& word) {
  test_cli::temp_dir t;
  auto r = ab("run " + args + k_fast + "--db " + t.db());
  INFO(args << "\n" << r.err);
  CHECK(r.rc == 2);
  CHECK(lines_of(r.err) == 1);
  CHECK(r.err.find(word) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t.db()));
}

} // namespace

TEST_CASE("the example plugin is measured, checked and stored like a built-in kernel", "[timing]") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + k_good + " example.saxpy --set n=4096 --set a=0.5 --json" + k_fast +
              "--db " + t.db());
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = json::parse(r.out)["runs"][0];
  INFO(run.dump());
  CHECK(run["workload"] == "example.saxpy");
  CHECK(run["config"]["n"] == 4096);
  CHECK(run["status"] == "ok");
  CHECK(run["validity"] == "VALID");
  CHECK(run["samples"].size() == 3);
  CHECK(run["extra"]["plugin"]["path"] == k_good);
  CHECK(run["extra"]["plugin"]["api_version"] == 1);
  CHECK(run["extra"]["correctness"]["passed"] == true);
  CHECK(run["extra"]["flops_per_iteration"] == 2.0 * 4096);
  CHECK(run["extra"]["bytes_per_iteration"] == 12.0 * 4096);
  // The rates agree with the median time and the plugin's work per iteration.
  const json* time = metric_of(run, "time");
  const json* gbs = metric_of(run, "gb_per_s");
  const json* items = metric_of(run, "items_per_s");
  REQUIRE(time);
  REQUIRE(gbs);
  REQUIRE(items);
  CHECK((*gbs)["value"].get<double>() ==
        Approx(12.0 * 4096 / (*time)["value"].get<double>() / 1e9));
  CHECK((*items)["value"].get<double>() == Approx(4096 / (*time)["value"].get<double>()));
  REQUIRE(metric_of(run, "tflops"));
}

TEST_CASE("a suite file of the user's loads the plugins it names, as --plugin does", "[timing]") {
  test_cli::temp_dir t;
  const auto suite = [&](const std::string& plugin_path) {
    const json doc = {{"schema_version", 1},
                      {"name", "mine"},
                      {"plugins", {plugin_path}},
                      {"entries", {{{"workload", "example.saxpy"}, {"set", {{"n", 1024}}}}}}};
    const auto p = t.path / "suite.json";
    std::ofstream(p) << doc.dump();
    return p.string();
  };
  auto r = ab("run --suite " + suite(k_good) + " --json" + k_fast + "--db " + t.db());
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = json::parse(r.out)["runs"][0];
  CHECK(run["workload"] == "example.saxpy");
  CHECK(run["extra"]["plugin"]["path"] == k_good);
  CHECK(run["tags"].dump().find("suite:mine") != std::string::npos);
  // A plugin the suite names that is not there: refused before anything runs, naming it.
  const std::string missing = (t.path / "libnothere.so").string();
  auto bad = ab("run --suite " + suite(missing) + k_fast + "--db " + (t.path / "2.db").string());
  CHECK(bad.rc == 2);
  CHECK(bad.err.find(missing) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t.path / "2.db"));
}

TEST_CASE("plugins are loaded only from --plugin: without it the name is unknown") {
  check_refused("example.saxpy", "unknown workload");
}

TEST_CASE("a plugin of another interface version is refused before its fields are read") {
  check_refused("--plugin " + plugin("bad_version") + " example.saxpy", "interface version 99");
}

TEST_CASE("a plugin without the entry symbol is refused") {
  check_refused("--plugin " + plugin("no_entry") + " example.saxpy",
                "missing symbol accelbench_plugin");
}

TEST_CASE("a plugin declaring an axis of an unknown type is refused, naming it") {
  check_refused("--plugin " + plugin("bad_axis") + " example.saxpy", "axis n has the bad type");
  check_refused("--plugin " + plugin("bad_axis") + " example.saxpy", "float32");
}

TEST_CASE("a path that is no plugin is refused, naming it") {
  check_refused("--plugin ./no-such-plugin.so example.saxpy", "no-such-plugin.so: no such file");
  check_refused("--plugin " + std::string(ACCELBENCH_SOURCE_DIR) + "/README.md example.saxpy",
                "cannot be loaded");
  check_refused("--plugin " + k_dir + " example.saxpy", "is not a regular file");
}

TEST_CASE("a plugin name already taken is refused") {
  check_refused("--plugin " + k_good + " --plugin " + k_good + " example.saxpy",
                "example.saxpy is already taken");
}

TEST_CASE("a plugin's axes and its own validate refuse bad values before anything runs") {
  check_refused("--plugin " + k_good + " example.saxpy --set n=0", "n");
  check_refused("--plugin " + k_good + " example.saxpy --set n=2000000000", "n = 2000000000");
  check_refused("--plugin " + k_good + " example.saxpy --set m=3", "m");
}

TEST_CASE("a plugin's failed check makes the run INVALID with its reason, stored") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + plugin("wrong_result") + " example.saxpy --set n=64 --json" +
              k_fast + "--db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1);
  const json run = json::parse(r.out)["runs"][0];
  INFO(run.dump());
  CHECK(run["validity"] == "INVALID");
  CHECK(run["extra"]["correctness"]["passed"] == false);
  CHECK(run["invalid_reasons"].dump().find("z[32]") != std::string::npos);
}

TEST_CASE("a plugin's failing run is a failed run with its message, stored") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + plugin("run_fails") + " example.saxpy --set n=64 --json" + k_fast +
              "--db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1);
  const json run = json::parse(r.out)["runs"][0];
  INFO(run.dump());
  CHECK(run["status"] == "failed");
  CHECK(run["status_reason"].get<std::string>().find("built to fail") != std::string::npos);
}

TEST_CASE("the CPU peak a plugin's worker probes is kept for the runs after it, not probed per run",
          "[timing]") {
  test_cli::temp_dir t;
  // No peak can be cached (the cache folder cannot be made): each resolution in a fresh process
  // probes. The first worker probes, accelbench once more after it; the workers after inherit it.
  auto r = ab("run --plugin " + k_good + " example.saxpy --sweep n=1024,2048,4096,8192" + k_fast +
                  "--db " + t.db(),
              "ACCELBENCH_CACHE_DIR=/dev/null/none");
  INFO(r.err);
  REQUIRE(ab("export --db " + t.db()).rc == 0);
  const json runs = json::parse(ab("export --db " + t.db()).out)["runs"];
  REQUIRE(runs.size() == 4);
  std::set<std::string> probes;
  for (const auto& run : runs) {
    INFO(run.dump());
    REQUIRE(run["extra"]["peak"]["probe"].contains("measured_at"));
    probes.insert(run["extra"]["peak"]["probe"]["measured_at"].get<std::string>());
  }
  CHECK(probes.size() <= 2);
}
