// A plugin cannot take accelbench down: the hostile plugin (hostile_plugin.c) crashes, exits,
// hangs, fails its first call or lies about its work, through the command line as a user runs it.
// Each is a failed run stored with its reason, accelbench exits 1 (a failed run, never 0 and never
// a crash), and the job goes on to the next run. Ctrl-C and a killed accelbench end the worker.
#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/run_json.hpp"

using nlohmann::json;
using test_cli::ab;
using namespace std::chrono_literals;

namespace {

const std::string k_hostile = ACCELBENCH_HOSTILE_PLUGIN;
const std::string k_good = std::string(ACCELBENCH_PLUGIN_DIR) + "/libaccelbench_example_saxpy.so";
const std::string k_fast = test_support::k_fast_rules;

// The runs a database holds, as export writes them.
json stored_runs(const test_cli::temp_dir& t) {
  const auto e = ab("export --db " + t.db());
  REQUIRE(e.rc == 0);
  return json::parse(e.out)["runs"];
}

const json* run_with(const json& runs, const std::string& how) {
  for (const auto& r : runs)
    if (r["config"]["how"] == how)
      return &r;
  return nullptr;
}

// A failed run with `reason` in its status reason, and nothing measured: no sample, no metric.
void check_failed(const json* run, const std::string& reason) {
  REQUIRE(run);
  INFO(run->dump());
  CHECK((*run)["status"] == "failed");
  CHECK((*run)["validity"] == "INVALID");
  CHECK((*run)["status_reason"].get<std::string>().find(reason) != std::string::npos);
  CHECK((*run)["samples"].empty());
  CHECK((*run)["metrics"].empty());
}

// A process that is gone: no such pid, or a zombie nobody reaped yet (it runs nothing).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0)
    return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Waits (60 s at most, a safety net) until `pid` is gone.
bool ends(pid_t pid) {
  for (auto deadline = std::chrono::steady_clock::now() + 60s;
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(10ms))
    if (gone(pid))
      return true;
  return false;
}

// The pid the hostile plugin's setup wrote to `file`, once written (60 s at most).
std::optional<pid_t> pid_in(const std::filesystem::path& file) {
  for (auto deadline = std::chrono::steady_clock::now() + 60s;
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(10ms)) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid && pid > 0)
      return pid_t(pid);
  }
  return std::nullopt;
}

// accelbench running the hostile plugin's endless run (the worker writes its pid to `pidfile`),
// started in its own process group as a user's shell would.
pid_t start_endless(const test_cli::temp_dir& t, const std::filesystem::path& pidfile) {
  return test_cli::spawn_sh("exec " ACCELBENCH_EXE " run --plugin " + k_hostile +
                            " test.hostile --set how=loop --set pidfile=" + pidfile.string() +
                            k_fast + "--db " + t.db());
}

} // namespace

TEST_CASE("every way a plugin's worker ends badly is a failed run with its reason, and the job "
          "goes on") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + k_hostile +
              " test.hostile --sweep how=segv,abort,exit0,exit3,loop,fail_first,good "
              "--rule plugin.timeout_s=1" +
              k_fast + "--db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1); // a failed run: never 0 (every run VALID), never a crash
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.err.find("of 7 run(s) failed or INVALID") != std::string::npos);
  const json runs = stored_runs(t);
  REQUIRE(runs.size() == 7);
  check_failed(run_with(runs, "segv"), "the plugin's worker was killed by SIGSEGV");
  check_failed(run_with(runs, "abort"), "the plugin's worker was killed by SIGABRT");
  check_failed(run_with(runs, "exit0"), "exited with code 0 before sending its run");
  check_failed(run_with(runs, "exit3"), "exited with code 3 before sending its run");
  check_failed(run_with(runs, "loop"), "ran past plugin.timeout_s = 1 s and was killed");
  check_failed(run_with(runs, "fail_first"), "plugin run failed: refused on its first call");
  const json* good = run_with(runs, "good");
  REQUIRE(good);
  INFO(good->dump());
  CHECK((*good)["status"] == "ok");
  CHECK((*good)["samples"].size() == 3);
  CHECK(test_cli::metric_of(*good, "tflops"));
}

TEST_CASE("a plugin's first failed call shows no throughput in the result table") {
  test_cli::temp_dir t;
  auto r = ab("run --plugin " + k_hostile + " test.hostile --set how=fail_first" + k_fast +
              "--db " + t.db());
  INFO(r.out << r.err);
  CHECK(r.rc == 1);
  CHECK(r.out.find("refused on its first call") != std::string::npos);
  CHECK(r.out.find("FLOP/s") == std::string::npos);
  check_failed(&stored_runs(t)[0], "refused on its first call");
}

TEST_CASE("work per iteration that is NaN, negative or infinite is refused before measuring") {
  test_cli::temp_dir t;
  auto r =
      ab("run --plugin " + k_hostile + " test.hostile --sweep how=nan_flops,neg_bytes,inf_items" +
         k_fast + "--db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1);
  const json runs = stored_runs(t);
  REQUIRE(runs.size() == 3);
  check_failed(run_with(runs, "nan_flops"), "plugin work: flops = nan per iteration");
  check_failed(run_with(runs, "neg_bytes"), "plugin work: bytes = -4378 per iteration");
  check_failed(run_with(runs, "inf_items"), "plugin work: items = inf per iteration");
}

TEST_CASE("a suite of a crashing plugin and a good one runs the good one after") {
  test_cli::temp_dir t;
  const json doc = {{"schema_version", 1},
                    {"name", "hostile-then-good"},
                    {"plugins", {k_hostile, k_good}},
                    {"entries",
                     {{{"workload", "test.hostile"}, {"set", {{"how", "segv"}}}},
                      {{"workload", "example.saxpy"}, {"set", {{"n", 1024}}}}}}};
  const auto suite = t.path / "suite.json";
  std::ofstream(suite) << doc.dump();
  auto r = ab("run --suite " + suite.string() + k_fast + "--db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 1);
  const json runs = stored_runs(t);
  REQUIRE(runs.size() == 2);
  check_failed(&runs[0], "SIGSEGV");
  CHECK(runs[1]["workload"] == "example.saxpy");
  CHECK(runs[1]["status"] == "ok");
  CHECK(runs[1]["extra"]["correctness"]["passed"] == true);
}

TEST_CASE("what a plugin leaves running in its worker's process group is killed with it") {
  test_cli::temp_dir t;
  const auto pidfile = t.path / "stray.pid";
  // The sleeper holds the worker's pipe open: the run must still end when the worker does, not at
  // plugin.timeout_s (which would fail it).
  auto r = ab("run --plugin " + k_hostile + " test.hostile --set how=stray --set pidfile=" +
              pidfile.string() + " --rule plugin.timeout_s=120" + k_fast + "--db " + t.db());
  INFO(r.err);
  CHECK(stored_runs(t)[0]["status"] == "ok");
  const auto stray = pid_in(pidfile);
  REQUIRE(stray);
  CHECK(ends(*stray));
}

TEST_CASE("Ctrl-C during a plugin's run ends its worker and stores nothing of that run") {
  test_cli::temp_dir t;
  const auto pidfile = t.path / "worker.pid";
  const pid_t ab_pid = start_endless(t, pidfile);
  const auto worker = pid_in(pidfile);
  REQUIRE(worker);
  ::kill(ab_pid, SIGINT);
  const auto end = test_cli::wait_for(ab_pid, 60s);
  CHECK_FALSE(end.timed_out);
  CHECK(end.rc == 130);
  CHECK(ends(*worker));
  CHECK(stored_runs(t).empty());
}

TEST_CASE("a worker does not outlive an accelbench that is killed") {
  test_cli::temp_dir t;
  const auto pidfile = t.path / "worker.pid";
  const pid_t ab_pid = start_endless(t, pidfile);
  const auto worker = pid_in(pidfile);
  REQUIRE(worker);
  ::kill(ab_pid, SIGKILL);
  test_cli::wait_for(ab_pid, 60s);
  CHECK(ends(*worker));
}
