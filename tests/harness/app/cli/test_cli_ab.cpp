// accelbench ab: a baseline and a candidate measured in one job, round by round in an order drawn
// from --seed, each side in a fresh child process; both sides stored with run.extra.ab so that the
// comparison pairs them; Ctrl-C stores every finished round and nothing of the running one.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/app/cli/ab_command.hpp"
#include "harness/core/error.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const std::string k_exe = ACCELBENCH_EXE;

std::string sh_word(const fs::path& p) { return fmt::format("'{}'", p.string()); }

// Every run of the database, as `accelbench export` writes them.
json exported_runs(const std::string& db) {
  auto r = test_cli::ab("export --db " + db);
  REQUIRE(r.rc == 0);
  return json::parse(r.out)["runs"];
}

std::vector<json> runs_tagged(const json& runs, const std::string& tag) {
  std::vector<json> out;
  for (const auto& r : runs)
    for (const auto& t : r["tags"])
      if (t == tag)
        out.push_back(r);
  return out;
}

// Which side each round measured first, from the stored runs (position 0).
std::map<int64_t, std::string> first_sides(const std::vector<json>& runs) {
  std::map<int64_t, std::string> first;
  for (const auto& r : runs)
    if (r["extra"]["ab"]["position"] == 0)
      first[r["extra"]["ab"]["round"].get<int64_t>()] = r["extra"]["ab"]["side"];
  return first;
}

// The documented order rule: per round, the top bit of the next mt19937_64 output of the seed
// (0: the baseline first).
std::map<int64_t, std::string> expected_first(uint64_t seed, int64_t rounds) {
  std::mt19937_64 gen(seed);
  std::map<int64_t, std::string> first;
  for (int64_t r = 1; r <= rounds; ++r)
    first[r] = (gen() >> 63) == 0 ? "baseline" : "candidate";
  return first;
}

// The runs of one A/B: one A/B id and one job id on every run, each round holding both sides at
// positions 0 and 1, every run tagged T and T:side.
void check_ab_runs(const std::vector<json>& runs, const std::string& tag, int64_t rounds,
                   uint64_t seed) {
  REQUIRE(runs.size() == static_cast<size_t>(2 * rounds));
  std::set<std::string> ids, jobs, uuids;
  std::map<int64_t, std::set<std::string>> sides;
  std::map<int64_t, std::set<int>> positions;
  for (const auto& r : runs) {
    const json& ab = r["extra"]["ab"];
    ids.insert(ab["id"].get<std::string>());
    jobs.insert(r["extra"]["job_id"].get<std::string>());
    uuids.insert(r["uuid"].get<std::string>());
    sides[ab["round"]].insert(ab["side"].get<std::string>());
    positions[ab["round"]].insert(ab["position"].get<int>());
    CHECK(ab["seed"].get<uint64_t>() == seed);
    CHECK(ab["slot"] == 0);
    const auto side_tag = tag + ":" + ab["side"].get<std::string>();
    CHECK(std::count(r["tags"].begin(), r["tags"].end(), tag) == 1);
    CHECK(std::count(r["tags"].begin(), r["tags"].end(), side_tag) == 1);
  }
  CHECK(ids.size() == 1);
  CHECK(jobs.size() == 1);
  CHECK(uuids.size() == runs.size()); // each run keeps the uuid its child gave it
  for (int64_t round = 1; round <= rounds; ++round) {
    CHECK(sides[round] == std::set<std::string>{"baseline", "candidate"});
    CHECK(positions[round] == std::set<int>{0, 1});
  }
}

} // namespace

TEST_CASE("ab splits each side's ARGS into words as a shell does, without expansions") {
  using accelbench::cli::split_words;
  CHECK(split_words("--set library=onednn", "--baseline-args") ==
        std::vector<std::string>{"--set", "library=onednn"});
  CHECK(split_words("  -- sh -c 'echo \"$x\" >&3'  ", "o") ==
        std::vector<std::string>{"--", "sh", "-c", "echo \"$x\" >&3"});
  CHECK(split_words(R"(a\ b "c \"d\" \$e \q" '')", "o") ==
        std::vector<std::string>{"a b", "c \"d\" $e \\q", ""});
  CHECK(split_words("", "o").empty());
  CHECK_THROWS_AS(split_words("-- sh -c 'exit 3", "--candidate-args"), accelbench::usage_error);
  CHECK_THROWS_WITH(split_words("a \"b", "--candidate-args"),
                    Catch::Contains("--candidate-args 'a \"b'") &&
                        Catch::Contains("the quote \" at character 3 is not closed"));
  CHECK_THROWS_WITH(split_words("a\\", "o"), Catch::Contains("ends with a lone backslash"));
}

TEST_CASE("ab of two GEMM settings: both sides stored round by round, one job, the order "
          "reproducible from the seed",
          "[timing]") {
  test_cli::temp_dir dir;
  const std::string common = "ab gemm --set M=64 --set N=64 --set K=64" +
                             test_support::k_fast_rules +
                             " --baseline-args '--set library=onednn' --candidate-args "
                             "'--set library=openblas' --rounds 3 --seed 12345 --db " +
                             dir.db();
  auto first = test_cli::ab(common + " --tag g1");
  INFO(first.out << first.err);
  // compare's exit codes: 0, or 1 when the comparison calls one library a regression.
  REQUIRE((first.rc == 0 || first.rc == 1));
  CHECK(first.out.find("accelbench compare: tag=g1:baseline -> tag=g1:candidate") !=
        std::string::npos);
  // The sides' configs differ in the library: paired by their place in the plan.
  CHECK(first.out.find("library=onednn->openblas") != std::string::npos);
  CHECK(first.err.find("ab: 3 rounds, order seed 12345, baseline first in ") != std::string::npos);
  CHECK(first.err.find("(reproduce with: accelbench compare --baseline tag=g1:baseline "
                       "--candidate tag=g1:candidate --db ") != std::string::npos);
  CHECK(first.err.find("ab: process start/export overhead ") != std::string::npos);

  auto second = test_cli::ab(common + " --tag g2");
  INFO(second.out << second.err);
  REQUIRE((second.rc == 0 || second.rc == 1));
  const json runs = exported_runs(dir.db());
  const auto g1 = runs_tagged(runs, "g1"), g2 = runs_tagged(runs, "g2");
  check_ab_runs(g1, "g1", 3, 12345);
  check_ab_runs(g2, "g2", 3, 12345);
  for (const auto& r : g1)
    CHECK(r["config"]["library"] ==
          (r["extra"]["ab"]["side"] == "baseline" ? "onednn" : "openblas"));
  CHECK(first_sides(g1) == expected_first(12345, 3));
  CHECK(first_sides(g2) == first_sides(g1));
  CHECK(g1.front()["extra"]["ab"]["id"] != g2.front()["extra"]["ab"]["id"]);

  // The sides' tags select one A/B alone: a tag in use is refused before anything runs.
  auto again = test_cli::ab(common + " --tag g1");
  CHECK(again.rc == 2);
  CHECK(again.err.find("already holds runs tagged g1:baseline") != std::string::npos);
  CHECK(exported_runs(dir.db()).size() == runs.size());
}

TEST_CASE("ab of two external programs: the candidate reporting twice the seconds regressed",
          "[timing]") {
  test_cli::temp_dir dir;
  // Each run of a program reports one sample: 0.25x s (x, a digit, from its pid), or 0.50x s; the
  // modulus reaches it as the config's {mod}, which the child fills, not ab.
  for (const auto& [name, seconds] : {std::pair{"a.sh", "0.25"}, std::pair{"b.sh", "0.50"}})
    std::ofstream(dir.path / name) << "echo \"{\\\"sample\\\": {\\\"seconds\\\": " << seconds
                                   << "$(($$ % $1))}}\" >&\"$ACCELBENCH_RESULTS_FD\"\n";
  const std::string cmd =
      fmt::format("ab external --name step --set mod=10 --rule repetitions=5 --baseline-args "
                  "\"-- sh {} {{mod}}\" --candidate-args \"-- sh {} {{mod}}\" --rounds 5 --tag "
                  "ext --trust-loaded --quiet --db {}",
                  sh_word(dir.path / "a.sh"), sh_word(dir.path / "b.sh"), dir.db());
  auto r = test_cli::ab(cmd);
  INFO(r.out << r.err);
  CHECK(r.rc == 1); // compare's exit code for a regression
  // The one config: the sides' commands, paired by their place in the plan.
  const auto line = r.out.substr(r.out.find("\nregressed ") + 1);
  CHECK(line.rfind("regressed ", 0) == 0);
  CHECK(line.find("external/cpu/command=[\"sh\",") != std::string::npos);
  CHECK(line.find("a.sh\",\"{mod}\"]->[\"sh\",") != std::string::npos);
  CHECK(r.err.find("accelbench: 1 pair(s): 1 regressed") != std::string::npos);
  const json runs = exported_runs(dir.db());
  check_ab_runs(runs_tagged(runs, "ext"), "ext", 5, runs[0]["extra"]["ab"]["seed"].get<uint64_t>());
  for (const auto& run : runs) {
    const bool base = run["extra"]["ab"]["side"] == "baseline";
    CHECK(run["samples"].size() == 5);
    for (const auto& s : run["samples"])
      CHECK(s["value"].get<double>() == Approx(base ? 0.2545 : 0.5045).margin(0.0051));
  }
}

TEST_CASE("ab: an executable that does not exist is refused in one line, nothing stored") {
  test_cli::temp_dir dir;
  auto r =
      test_cli::ab("ab gemm --set M=64 --candidate-exe /nonexistent/accelbench --db " + dir.db());
  CHECK(r.rc == 2);
  CHECK(r.err == "accelbench: error: --candidate-exe '/nonexistent/accelbench': no such file\n");
  CHECK(r.out.empty());
  CHECK(!fs::exists(dir.db()));
}

TEST_CASE("ab runs a side's executable through the interface it documents: run ... --rounds 1 "
          "--quiet --tag T:SIDE --db PATH, then export --db PATH -o FILE",
          "[timing]") {
  test_cli::temp_dir dir;
  // The baseline's executable: a script that logs its arguments and runs this accelbench.
  const fs::path exe = dir.path / "logged-accelbench", log = dir.path / "log.txt";
  std::ofstream(exe) << "#!/bin/sh\necho \"$*\" >> " << sh_word(log) << "\nexec " << k_exe
                     << " \"$@\"\n";
  fs::permissions(exe, fs::perms::owner_all);
  auto r = test_cli::ab(fmt::format("ab external --name t --rule repetitions=1 --rounds 2 --tag x "
                                    "--baseline-exe {} --db {} -- true",
                                    sh_word(exe), dir.db()));
  INFO(r.out << r.err);
  CHECK((r.rc == 0 || r.rc == 1));
  const std::string text = test_cli::slurp(log);
  INFO(text);
  size_t runs = 0, exports = 0;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("run external --name t --rule repetitions=1 --rounds 1 --quiet --tag "
                   "x:baseline --db ",
                   0) == 0 &&
        line.find(" -- true") != std::string::npos)
      ++runs;
    else if (line.rfind("export --db ", 0) == 0 && line.find(" -o ") != std::string::npos)
      ++exports;
  }
  CHECK(runs == 2); // one child run a round, and its export: nothing else
  CHECK(exports == 2);
  CHECK(runs_tagged(exported_runs(dir.db()), "x:baseline").size() == 2);
}

namespace {

// The processes whose command line names `text`.
std::vector<pid_t> processes_naming(const std::string& text) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string cmdline = test_cli::slurp(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos && std::stoi(name) != getpid())
      out.push_back(std::stoi(name));
  }
  return out;
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return false;
  return line.find(") Z ") == std::string::npos; // a zombie has ended
}

} // namespace

TEST_CASE("ab: Ctrl-C stops the running child and its process tree, keeps every finished round "
          "and nothing of the running one",
          "[timing]") {
  test_cli::temp_dir dir;
  // Each start of the program counts itself; the third (the first side of round 2) sleeps,
  // saying its pid first.
  std::ofstream(dir.path / "prog.sh")
      << "d=$(dirname \"$0\")\n"
      << "n=$(cat \"$d/n\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/n\"\n"
      << "if [ $n -ge 3 ]; then echo $$ > \"$d/pid.tmp\"; mv \"$d/pid.tmp\" \"$d/pid\"; "
         "exec sleep 300; fi\n"
      << "echo '{\"sample\": {\"seconds\": 0.01}}' >&\"$ACCELBENCH_RESULTS_FD\"\n";
  test_cli::spawn_options so;
  so.err = dir.path / "err.txt";
  so.out = dir.path / "out.txt";
  const pid_t ab = test_cli::spawn_sh(
      fmt::format("exec {} ab external --name s --rule repetitions=1 --rule warmup_iterations=0 "
                  "--baseline-args '--set v=a' --candidate-args '--set v=b' --rounds 3 --tag c "
                  "--db {} -- sh {}",
                  k_exe, dir.db(), sh_word(dir.path / "prog.sh")),
      so);
  // Synchronised on the program's own pid file; the deadline is a hang guard only.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!fs::exists(dir.path / "pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  REQUIRE(fs::exists(dir.path / "pid"));
  const pid_t sleeper = std::stoi(test_cli::slurp(dir.path / "pid"));
  REQUIRE(kill(ab, SIGINT) == 0);
  const auto status = test_cli::wait_for(ab, 60s); // hang guard
  const std::string err = test_cli::slurp(dir.path / "err.txt");
  INFO(err);
  REQUIRE(!status.timed_out);
  CHECK(status.rc == 130);
  CHECK(err.find("interrupted in round 2 of 3 (nothing of it is stored); 1 round(s), 2 run(s), "
                 "stored under tag=c") != std::string::npos);
  // The tree is gone: the program (it would sleep 300 s) and the child accelbench naming it.
  const auto gone_by = std::chrono::steady_clock::now() + 20s; // hang guard
  while ((alive(sleeper) || !processes_naming(dir.path.string()).empty()) &&
         std::chrono::steady_clock::now() < gone_by)
    std::this_thread::sleep_for(10ms);
  CHECK(!alive(sleeper));
  CHECK(processes_naming(dir.path.string()).empty());
  // Round 1 whole; nothing of round 2.
  const json runs = exported_runs(dir.db());
  REQUIRE(runs.size() == 2);
  for (const auto& r : runs)
    CHECK(r["extra"]["ab"]["round"] == 1);
  CHECK(first_sides(runs_tagged(runs, "c")).size() == 1);
}
