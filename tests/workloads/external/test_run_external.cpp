// accelbench run external as a user runs it: shell programs that report through the results
// protocol, are timed as whole processes, fail, hang, or are interrupted; every run is read back
// from the JSON the command prints and from the database.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/core/model.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/run_json.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
using accelbench::store::store;
using test_cli::metric_of;

namespace {

// Fixed measurement without load conditions: the rules' warnings never change a verdict here.
const std::string k_rules = "--rule warmup_iterations=0 --rule repetitions=3 --quiet";

// A shell script in the test's folder, made executable.
std::string script(const test_cli::temp_dir& d, const std::string& name, const std::string& body) {
  const fs::path p = d.path / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

json runs_of(const test_cli::result& r) {
  INFO(r.err);
  REQUIRE_FALSE(r.out.empty());
  return json::parse(r.out)["runs"];
}

int64_t stored(const std::string& db) {
  if (!fs::exists(db))
    return 0;
  return store::open(db, accelbench::store::access::read_only).count_runs();
}

int lines_in(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

// Running or sleeping: not gone, and not a zombie waiting for a parent to reap it.
bool alive(pid_t p) {
  if (kill(p, 0) != 0)
    return false;
  const std::string stat = test_cli::slurp("/proc/" + std::to_string(p) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

} // namespace

TEST_CASE("a program without the protocol is timed as a whole process, after its warm-up runs",
          "[timing]") {
  test_cli::temp_dir d;
  const fs::path count = d.path / "count";
  const std::string prog = script(d, "p.sh", "echo run >> " + count.string() + "; sleep 0.02");
  auto r = test_cli::ab("run external --name sleepy --rule warmup_iterations=2 --rule "
                        "repetitions=3 --quiet --json --db " +
                        d.db() + " -- " + prog);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 1);
  const json& run = runs[0];
  CHECK(run["status"] == "ok");
  CHECK(run["validity"] == "VALID");
  CHECK(run["workload"] == "external");
  CHECK(run["config_key"].get<std::string>().find(prog) != std::string::npos);
  CHECK(run["config"]["name"] == "sleepy");
  CHECK(json::parse(run["config"]["command"].get<std::string>()) == json::array({prog}));
  CHECK(run["extra"]["mode"] == "whole_process");
  CHECK(run["extra"]["program_runs"] == 3);
  CHECK(lines_in(count) == 5); // 2 warm-up runs + 3 timed
  REQUIRE(run["samples"].size() == 3);
  for (const auto& s : run["samples"])
    CHECK(s["value"].get<double>() >= 0.02); // the program's own sleep is inside its time
  REQUIRE(metric_of(run, "time"));
  CHECK(stored(d.db()) == 1);
}

TEST_CASE("protocol samples, rates, the program's metrics, check and extra facts are stored, and "
          "the config reaches the program as {K} and ACCELBENCH_K") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", R"(n=$1
[ "$ACCELBENCH_BATCH_SIZE" = 8 ] || { echo "no ACCELBENCH_BATCH_SIZE" >&2; exit 9; }
echo '{"protocol": 1}' >&"$ACCELBENCH_RESULTS_FD"
i=0
while [ $i -lt $n ]; do
  echo '{"sample": {"seconds": 0.5, "items": 100, "flops": 2e12, "bytes": 1e9}}' >&3
  i=$((i + 1))
done
echo '{"metric": {"name": "loss", "value": 1.25, "unit": "", "direction": "lower"}}' >&3
echo '{"check": {"passed": true, "reason": "loss finite"}}' >&3
echo '{"extra": {"framework": "sh"}}' >&3
echo 'stdout stays the program'"'"'s own')");
  auto r = test_cli::ab("run external --name proto --set n=4 --set batch-size=8 " + k_rules +
                        " --json --db " + d.db() + " -- " + prog + " {n}");
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = runs_of(r)[0];
  CHECK(run["validity"] == "VALID");
  CHECK(run["extra"]["mode"] == "protocol");
  CHECK(run["extra"]["program_runs"] == 1); // 4 samples in one run cover repetitions=3
  CHECK(run["extra"]["argv"] == json::array({prog, "4"}));
  CHECK(run["extra"]["program"]["framework"] == "sh");
  CHECK(run["extra"]["correctness"]["passed"] == true);
  REQUIRE(run["samples"].size() == 4);
  CHECK(run["samples"][0]["value"].get<double>() == 0.5);
  CHECK(metric_of(run, "items_per_s")->at("value").get<double>() == Approx(200));
  CHECK(metric_of(run, "tflops")->at("value").get<double>() == Approx(4));
  CHECK(metric_of(run, "gb_per_s")->at("value").get<double>() == Approx(2));
  CHECK(metric_of(run, "loss")->at("value").get<double>() == 1.25);
  CHECK(metric_of(run, "loss")->at("direction") == "lower");
  CHECK(run["config"]["n"] == 4);
  CHECK(run["config"]["batch-size"] == 8);
}

TEST_CASE("the config key holds the command: two programs, or one swept, are distinct configs") {
  test_cli::temp_dir d;
  const std::string a = script(d, "a.sh", "true"), b = script(d, "b.sh", "true");
  auto ra = test_cli::ab("run external --name x " + k_rules +
                         " --sweep n=1,2 --tag A --json --db " + d.db() + " -- " + a + " {n}");
  auto rb = test_cli::ab("run external --name x " + k_rules + " --set n=1 --tag B --json --db " +
                         d.db() + " -- " + b + " {n}");
  REQUIRE(ra.rc == 0);
  REQUIRE(rb.rc == 0);
  REQUIRE(runs_of(ra).size() == 2);
  CHECK(runs_of(ra)[0]["config"] != runs_of(ra)[1]["config"]);
  // Same name and n, another program: compare pairs nothing.
  auto cmp = test_cli::ab("compare --baseline tag=A --candidate tag=B --db " + d.db());
  INFO(cmp.out + cmp.err);
  CHECK(cmp.rc == 2);
  CHECK(cmp.err.find("have no config in common") != std::string::npos);
}

TEST_CASE("the program's own options after -- reach it, whichever repeatable option comes "
          "before the --") {
  test_cli::temp_dir d;
  const fs::path seen = d.path / "seen";
  const std::string prog = script(d, "p.sh", "echo \"$@\" > " + seen.string());
  // CLI11 ends a repeatable option's values at "--" and would then read --flag as an option of
  // ours; each of these takes one value, so the -- starts the command.
  for (const std::string last : {"--rule repetitions=1", "--set n=1", "--sweep n=1", "--tag t"}) {
    fs::remove(seen);
    auto r = test_cli::ab("run external --name x --rule warmup_iterations=0 --quiet --db " +
                          d.db() + " " + last + " -- " + prog + " --flag -x value");
    INFO(last << "\n" << r.err);
    CHECK(r.rc == 0);
    CHECK(test_cli::slurp(seen) == "--flag -x value\n");
  }
}

TEST_CASE("a failing, crashing, hanging or lying program: the run is failed or INVALID with the "
          "reason and its stderr tail, and the command exits 1",
          "[timing]") {
  test_cli::temp_dir d;
  struct row {
    std::string body, rules, status, validity, reason;
  };
  const std::vector<row> rows = {
      {"echo 'disk on fire' >&2; exit 3", "", "failed", "INVALID",
       "run 1 of the program: exit code 3"},
      {"kill -SEGV $$", "", "failed", "INVALID", "killed by signal SIGSEGV"},
      {"sleep 600", "--rule external.timeout_s=0.5", "failed", "INVALID",
       "timed out: its timeout is 0.5 s (ended after "},
      {"echo '{\"sample\": {\"seconds\": -2}}' >&3", "", "ok", "INVALID",
       "protocol line 1: sample seconds -2"},
      {"echo '{\"protocol\": 1}' >&3", "", "ok", "INVALID", "reported no samples"},
      {"echo '{\"check\": {\"passed\": false, \"reason\": \"NaN loss\"}}' >&3; echo "
       "'{\"sample\": {\"seconds\": 1}}' >&3",
       "", "ok", "INVALID", "the program's check failed: NaN loss"},
      {"true", "--rule external.require_protocol=true", "ok", "INVALID", "no protocol line"},
      {"exit 4", "--rule warmup_iterations=1", "failed", "INVALID",
       "warm-up run 1 of the program: exit code 4"},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const row& w = rows[i];
    INFO(w.body);
    const std::string prog = script(d, "p" + std::to_string(i) + ".sh", w.body);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string rules = w.rules.find("warmup") == std::string::npos
                                  ? k_rules + " " + w.rules
                                  : "--rule repetitions=3 --quiet " + w.rules;
    auto r =
        test_cli::ab("run external --name bad " + rules + " --json --db " + d.db() + " -- " + prog);
    INFO(r.err);
    // The hanging program was ended by its timeout, not by its own end (600 s): a hang guard, far
    // above the timeout, the 2 s grace and the command's start on a loaded or sanitized machine.
    if (w.body == "sleep 600")
      CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300));
    CHECK(r.rc == 1);
    const json run = runs_of(r)[0];
    CHECK(run["status"] == w.status);
    CHECK(run["validity"] == w.validity);
    const std::string why = run["status"] == "failed" ? run["status_reason"].get<std::string>()
                                                      : run["invalid_reasons"].dump();
    CHECK(why.find(w.reason) != std::string::npos);
  }
  auto shown = test_cli::ab("export --db " + d.db());
  CHECK(shown.out.find("disk on fire") != std::string::npos); // the stderr tail is kept
  CHECK(stored(d.db()) == (int64_t)rows.size());
}

TEST_CASE("the ruleset's bounds reach the program: its open files, a TMPDIR of its own, and a "
          "file or memory over its limit fails the run naming the limit",
          "[timing]") {
  test_cli::temp_dir d;
  const std::string ok = script(d, "ok.sh", R"sh([ "$(ulimit -n)" = 64 ] || exit 7
case "$TMPDIR" in */accelbench-run-*) ;; *) exit 8 ;; esac)sh");
  auto r = test_cli::ab("run external --name bounded " + k_rules +
                        " --rule external.max_open_files=64 --json --db " + d.db() + " -- " + ok);
  INFO(r.err);
  CHECK(r.rc == 0);
  struct row {
    std::string body, rule, reason;
  };
  const std::vector<row> rows = {
      {"head -c 4000000 /dev/zero > \"$TMPDIR/f\"", "--rule external.max_file_mib=1",
       "run 1 of the program: exit code 153 (a process of it wrote past its file-size limit of 1 "
       "MiB)"},
      // 50 MB held by the shell; the timeout, far above, is a hang guard.
      {"x=$(head -c 50000000 /dev/zero | tr '\\0' a); sleep 60",
       "--rule external.max_memory_mib=16 --rule external.timeout_s=50",
       "run 1 of the program: used more than 16 MiB of resident memory"},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO(rows[i].body);
    const std::string prog = script(d, "b" + std::to_string(i) + ".sh", rows[i].body);
    auto b = test_cli::ab("run external --name bounded " + k_rules + " " + rows[i].rule +
                          " --json --db " + d.db() + " -- " + prog);
    INFO(b.err);
    CHECK(b.rc == 1);
    const json run = runs_of(b)[0];
    CHECK(run["status"] == "failed");
    CHECK(run["status_reason"].get<std::string>().find(rows[i].reason) != std::string::npos);
  }
}

TEST_CASE("max_time_s bounds the samples together: fewer than the rules ask for is INVALID",
          "[timing]") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", "sleep 0.2");
  auto r = test_cli::ab("run external --name slow --rule warmup_iterations=0 --rule "
                        "repetitions=50 --rule max_time_s=0.5 --quiet --json --db " +
                        d.db() + " -- " + prog);
  CHECK(r.rc == 1);
  const json run = runs_of(r)[0];
  CHECK(run["validity"] == "INVALID");
  CHECK(run["invalid_reasons"].dump().find("of the ruleset's 50 samples within max_time_s") !=
        std::string::npos);
  CHECK(run["samples"].size() < 50);
}

TEST_CASE("MLLOG lines on the program's stdout are stored verbatim with the run") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", R"(
echo ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "t.py", "lineno": 1}}'
echo 'some other line'
echo ':::MLLOG {"namespace": "", "time_ms": 9, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "t.py", "lineno": 2, "status": "success"}}')");
  auto r =
      test_cli::ab("run external --name ml " + k_rules + " --json --db " + d.db() + " -- " + prog);
  REQUIRE(r.rc == 0);
  auto shown = test_cli::ab("export --db " + d.db());
  const json doc = json::parse(shown.out);
  const std::string log = doc["runs"][0]["mllog"];
  CHECK(log.find("run_start") != std::string::npos);
  CHECK(log.find("run_stop") != std::string::npos);
  CHECK(log.find("some other line") == std::string::npos);
  CHECK(doc["runs"][0]["extra"]["mllog_events"] == 2);
}

TEST_CASE("bad input to run external: exit 2 naming the problem, nothing stored") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", "true");
  struct row {
    std::string args, message;
  };
  const std::vector<row> rows = {
      {"run external -- " + prog, "needs a name for the program: --name NAME"},
      {"run external --name x", "needs the program to run after --"},
      {"run external --name x -- no-such-program-here", "cannot run 'no-such-program-here'"},
      {"run external --name x -- " + prog + " {size}",
       "names {size}, which the config does not set"},
      {"run external --name x --set 'bad key=1' -- " + prog, "parameter name 'bad key'"},
      {"run gemm --name x", "--name is for run external only"},
      {"run external --name x --rule external.timeout_s=-1 -- " + prog, "timeout_s"},
      {"run external --name x --set command=notjson", "JSON array of strings"},
  };
  for (const auto& w : rows) {
    auto r = test_cli::ab(w.args + " --db " + d.db());
    INFO(w.args + "\n" + r.err);
    CHECK(r.rc == 2);
    CHECK(r.err.find(w.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(d.db()));
}

TEST_CASE("Ctrl-C ends the program's whole process group, and the interrupted run is not stored",
          "[timing]") {
  test_cli::temp_dir d;
  const fs::path pids = d.path / "pids";
  // The program and a background child of it, each writing its pid; it outlasts any wait below.
  const std::string prog = script(d, "p.sh",
                                  "sleep 600 & echo $! >> " + pids.string() + "; echo $$ >> " +
                                      pids.string() + "; wait");
  test_cli::spawn_options so;
  so.err = d.path / "err";
  const pid_t pid = test_cli::spawn_sh("exec " ACCELBENCH_EXE " run external --name long " +
                                           k_rules + " --db " + d.db() + " -- " + prog,
                                       so);
  // Interrupted once both pids are written (the program runs): a hang guard of 120 s, not a delay.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lines_in(pids) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(lines_in(pids) == 2);
  kill(pid, SIGINT);
  // Hang guard: the group ends at once on SIGTERM, the command exits after it.
  const auto st = test_cli::wait_for(pid, std::chrono::seconds(120));
  INFO(test_cli::slurp(so.err));
  REQUIRE_FALSE(st.timed_out);
  CHECK(st.rc == 130);
  std::ifstream in(pids);
  for (pid_t p; in >> p;)
    CHECK_FALSE(alive(p)); // neither the program nor its background child is left
  CHECK(test_cli::slurp(so.err).find("not stored") != std::string::npos);
  CHECK(stored(d.db()) == 0);
}

TEST_CASE("a suite lists external programs, and a second night compares with the first") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", R"(i=0
while [ $i -lt 5 ]; do echo "{\"sample\": {\"seconds\": 0.$1}}" >&3; i=$((i + 1)); done)");
  const fs::path suite = d.path / "mine.json";
  std::ofstream(suite) << json{{"schema_version", 1},
                               {"name", "mine"},
                               {"rules", "external-v1"},
                               {"entries",
                                {{{"workload", "external"},
                                  {"set", {{"name", "fixed"}, {"n", 5}}},
                                  {"command", {prog, "{n}"}}},
                                 {{"workload", "external"},
                                  {"set", {{"name", "swept"}}},
                                  {"sweep", {{"n", {2, 3}}}},
                                  {"command", {prog, "{n}"}}}}}};
  for (int night = 0; night < 2; ++night) {
    auto r = test_cli::ab("run --suite " + suite.string() +
                          " --rule warmup_iterations=0 --rule repetitions=5 --quiet --json --db " +
                          d.db());
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const json runs = runs_of(r);
    REQUIRE(runs.size() == 3);
    CHECK(runs[0]["tags"].dump().find("suite:mine") != std::string::npos);
    CHECK(runs[0]["extra"]["argv"] == json::array({prog, "5"}));
  }
  auto cmp = test_cli::ab("compare --baseline job=previous --candidate job=latest --format json "
                          "--db " +
                          d.db());
  INFO(cmp.out + cmp.err);
  CHECK(cmp.rc == 0); // the same programs, the same samples: nothing regressed
  CHECK(json::parse(cmp.out).dump().find("swept") != std::string::npos);
}

TEST_CASE("run gbench: a Google Benchmark executable run with the rules' repetitions, each "
          "benchmark a measured run of this machine",
          "[timing]") {
  test_cli::temp_dir d;
  auto r = test_cli::ab("run gbench --rule repetitions=3 --tag mine --quiet --json --db " + d.db() +
                        " -- " GBENCH_PROGRAM " --benchmark_min_time=0.01");
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    CHECK(run["workload"] == "gbench.BM_sum");
    CHECK(run["source"] == "measured");
    CHECK(run["samples"].size() == 3);
    CHECK(run["tags"] == json::array({"mine"}));
    CHECK(run["environment"].contains("os"));     // this machine's, captured
    CHECK(run["environment"].contains("gbench")); // the executable's own context kept
    CHECK(run["extra"].contains("job_id"));
  }
  CHECK(runs[0]["config"]["benchmark"] != runs[1]["config"]["benchmark"]);
  CHECK(stored(d.db()) == 2);
  // A second run is new runs, not the first one again.
  auto again = test_cli::ab("run gbench --rule repetitions=3 --quiet --db " + d.db() +
                            " -- " GBENCH_PROGRAM " --benchmark_min_time=0.01");
  CHECK(again.rc == 0);
  CHECK(stored(d.db()) == 4);
  // --rules as a file stores the ruleset's id, which comparisons look up for their settings.
  auto by_file = test_cli::ab("run gbench --rules " ACCELBENCH_SOURCE_DIR
                              "/workloads/gemm/rulesets/kernel-quick.json --rule repetitions=3 "
                              "--tag file --quiet --json --db " +
                              d.db() + " -- " GBENCH_PROGRAM " --benchmark_min_time=0.01");
  REQUIRE(by_file.rc == 0);
  for (const auto& run : runs_of(by_file))
    CHECK(run["ruleset"] == "kernel-quick");
}

namespace {

// A Google Benchmark program that runs the real one, then does `after` with its output file
// ($out, whose path it writes to out-path): a claimed date rewritten, the file replaced by a folder
// or a FIFO.
std::string gbench_wrapper(const test_cli::temp_dir& d, const std::string& after) {
  return script(d, "wrap.sh",
                "\"" GBENCH_PROGRAM "\" --benchmark_min_time=0.01 \"$@\" >/dev/null || exit 1\n"
                "for a in \"$@\"; do case $a in --benchmark_out=*) out=${a#--benchmark_out=};; "
                "esac; done\n"
                "echo \"$out\" > \"" +
                    (d.path / "out-path").string() + "\"\n" + after);
}

// The entries of a folder.
size_t entries_in(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++n;
  return n;
}

} // namespace

TEST_CASE("run gbench: a measured run's times are accelbench's clock, never the date the program "
          "claims",
          "[timing]") {
  test_cli::temp_dir d;
  const std::string prog = gbench_wrapper(
      d, "sed -i 's/\"date\": \"[^\"]*\"/\"date\": \"1970-01-01T00:00:00+00:00\"/' \"$out\"");
  const std::string before = accelbench::now_iso8601();
  auto r =
      test_cli::ab("run gbench --rule repetitions=2 --quiet --json --db " + d.db() + " -- " + prog);
  const std::string after = accelbench::now_iso8601();
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    CHECK(run["started_at"].get<std::string>() >= before);
    CHECK(run["finished_at"].get<std::string>() <= after);
    CHECK(run["started_at"].get<std::string>() <= run["finished_at"].get<std::string>());
    CHECK(run["extra"]["gbench"]["claimed_date"] == "1970-01-01T00:00:00+00:00");
  }
  // The claim of 1970 no longer makes gc delete the runs just measured.
  auto gc = test_cli::ab("gc --keep-days 30 --yes --db " + d.db());
  INFO(gc.err);
  CHECK(gc.rc == 0);
  CHECK(stored(d.db()) == 2);
}

TEST_CASE("run gbench: an output replaced by a folder or a FIFO stores nothing and leaves no "
          "temporary folder",
          "[timing]") {
  test_cli::temp_dir d;
  const fs::path tmp = d.path / "tmp";
  fs::create_directories(tmp);
  const std::string env = "TMPDIR=" + tmp.string();
  for (const std::string& replace :
       {std::string("rm -f \"$out\"; mkdir \"$out\"; touch \"$out/inside\""),
        std::string("rm -f \"$out\"; mkfifo \"$out\""),
        std::string("rm -f \"$out\"; ln -s /proc/self/environ \"$out\"")}) {
    INFO(replace);
    const std::string prog = gbench_wrapper(d, replace);
    auto r =
        test_cli::ab("run gbench --rule repetitions=2 --quiet --db " + d.db() + " -- " + prog, env);
    INFO(r.err);
    CHECK(r.rc == 1); // the program's fault, as when it writes no JSON
    CHECK(r.err.find("the benchmark program's output is not usable") != std::string::npos);
    CHECK(stored(d.db()) == 0);
    // Nothing left behind: not what the program put in place of its output, and no
    // accelbench-gbench-* folder.
    std::string out;
    std::getline(std::ifstream(d.path / "out-path"), out);
    REQUIRE_FALSE(out.empty());
    std::error_code ec;
    CHECK_FALSE(fs::exists(fs::symlink_status(out, ec)));
    CHECK(entries_in(tmp) == 0);
  }
}

TEST_CASE("run gbench: a failing program or options accelbench owns store nothing") {
  test_cli::temp_dir d;
  const std::string prog = script(d, "p.sh", "echo 'no such benchmark' >&2; exit 3");
  auto failed = test_cli::ab("run gbench --quiet --db " + d.db() + " -- " + prog);
  CHECK(failed.rc == 1);
  CHECK(failed.err.find("exit code 3") != std::string::npos);
  CHECK(failed.err.find("no such benchmark") != std::string::npos);
  CHECK(stored(d.db()) == 0);
  auto owned = test_cli::ab("run gbench --db " + d.db() +
                            " -- " GBENCH_PROGRAM " --benchmark_repetitions=5");
  CHECK(owned.rc == 2);
  CHECK(owned.err.find("--benchmark_repetitions") != std::string::npos);
  auto none = test_cli::ab("run gbench --db " + d.db());
  CHECK(none.rc == 2);
  CHECK(none.err.find("needs the benchmark program after --") != std::string::npos);
  CHECK(stored(d.db()) == 0);
}
