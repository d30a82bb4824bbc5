// End-to-end tests of the command line against hostile input: option values that would disable
// what they control, sweeps and shapes whose sizes overflow 64 bits, output paths that cannot be
// written, names that carry terminal escapes, and Ctrl-C during a long run.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using test_cli::ab;
namespace fs = std::filesystem;

namespace {

const std::string k_fast = test_support::k_fast_rules;

int64_t runs_in(const std::string& db) {
  if (!fs::exists(db))
    return -1;
  return store::store::open(db, store::access::read_only).count_runs();
}

// Every file under `dir` (names only): a failed command must leave this set unchanged.
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// Two tagged gemm runs, imported: enough for report and compare to have a pair.
void seed_pair(const test_cli::temp_dir& t) {
  stats::rng g(3);
  std::vector<run> runs;
  for (const char* tag : {"base", "cand"}) {
    run r;
    r.uuid = new_uuid();
    r.cfg.workload = "gemm";
    r.cfg.backend = "cpu";
    r.cfg.values = {{"M", "64"},           {"N", "64"},      {"K", "64"},     {"dtype", "fp32"},
                    {"library", "onednn"}, {"trans_a", "0"}, {"trans_b", "0"}};
    r.system = "box";
    r.ruleset = "kernel-v1";
    r.tags = {tag};
    r.started_at = r.finished_at = "2026-10-01T02:00:00.000Z";
    for (int i = 0; i < 10; ++i)
      r.samples.push_back({i, 1e-3 * (1 + 0.01 * g.normal()), 10, json::object()});
    r.add_metric("tflops", 1.0, "TFLOP/s", direction::higher_is_better);
    runs.push_back(r);
  }
  std::string doc = (t.path / "seed.json").string();
  std::ofstream(doc) << results_document(runs, json::array(), json::array()).dump();
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  fs::remove(doc);
}

} // namespace

TEST_CASE("sweep sizes are counted without overflow, and absurd ones are refused even with --force",
          "[cli][hardening]") {
  test_cli::temp_dir t;
  // Sixteen sweeps of 16 values: 2^64 configs, which wrapped to 0 and passed the limit.
  std::string sweeps;
  // Distinct keys: a key swept twice is its own error, checked before the count.
  for (char key = 'a'; key < 'a' + 16; ++key)
    sweeps += std::string(" --sweep ") + key + "=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16";
  auto r = ab("run gemm" + sweeps + " --db " + t.db() + k_fast);
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("more than 2^64 configs"));
  CHECK(lines(r.err) == 1);
  auto f = ab("run gemm" + sweeps + " --force --db " + t.db() + k_fast);
  CHECK(f.rc == 2);
  CHECK_THAT(f.err, Catch::Contains("even with --force"));
  // Three million configs: --force does not make them fit in a plan.
  std::string thousand = "1";
  for (int i = 2; i <= 1000; ++i)
    thousand += fmt::format(",{}", i); // not "," + to_string: GCC 12's false -Wrestrict
  auto m = ab("run gemm --sweep M=" + thousand + " --sweep N=" + thousand +
              " --sweep K=1,2,3 --force --db " + t.db() + k_fast);
  CHECK(m.rc == 2);
  CHECK_THAT(m.err, Catch::Contains("3000000 configs"));
  CHECK_FALSE(fs::exists(t.db())); // refused before the database is created
}

TEST_CASE("memory estimates saturate: shapes beyond 2^64 bytes are refused, not estimated small",
          "[cli][hardening][timing]") {
  test_cli::temp_dir t;
  // fp32 M=N=2^30, K=1.5*2^30 needs exactly 2^64 bytes, which wrapped to an estimate of 0.
  auto g = ab("run gemm --set M=1073741824 --set N=1073741824 --set K=1610612736 --db " + t.db() +
              k_fast);
  CHECK(g.rc == 2);
  CHECK_THAT(g.err, Catch::Contains("host memory"));
  // In a sweep a too-big config is recorded as skipped with the reason, as any that does not fit.
  auto s = ab("run gemm --set M=1073741824 --set K=1610612736 --sweep N=8,1073741824 --json --db " +
              t.db() + k_fast);
  CHECK(s.rc == 0);
  auto j = json::parse(s.out);
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][1]["status"] == "skipped");
  CHECK_THAT(j["runs"][1]["status_reason"].get<std::string>(), Catch::Contains("64 bits"));
  // Attention: a shape whose element count overflows 64 bits is refused before any size is
  // computed.
  auto a = ab("run attention --set batch=4294967296 --set seq_q=4294967296 --set heads=1 --set "
              "head_dim=64 --db " +
              t.db() + " --quiet");
  CHECK(a.rc == 2);
  CHECK_THAT(a.err, Catch::Contains("elements per tensor"));
  // Training: a micro batch of 2^62 sequences.
  auto tr = ab("run train.llama --set batch=4611686018427387904 --set seq=16 --db " + t.db() +
               " --quiet");
  CHECK(tr.rc == 2);
  CHECK_THAT(tr.err, Catch::Contains("host memory"));
  CHECK(runs_in(t.db()) == 2); // only the skipped records of the sweep
}

TEST_CASE("output paths are checked before any work and written atomically", "[cli][hardening]") {
  test_cli::temp_dir t;
  seed_pair(t);
  auto before = listing(t.path);
  const std::string sel = " --baseline tag=base --candidate tag=cand --db " + t.db();
  // A bad --html used to leave the --json written just before it.
  auto r = ab("report" + sel + " --json " + (t.path / "a.json").string() +
              " --html /missing/dir/r.html");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("--html") && Catch::Contains("does not exist"));
  CHECK(listing(t.path) == before);
  // A folder as the output: named as such, not "Success".
  auto e = ab("export -o " + t.path.string() + " --db " + t.db());
  CHECK(e.rc == 2);
  CHECK_THAT(e.err, Catch::Contains("is a directory"));
  CHECK_THAT(e.err, !Catch::Contains("Success"));
  auto c = ab("compare" + sel + " -o " + (t.path / "no" / "c.md").string());
  CHECK(c.rc == 2);
  CHECK_THAT(c.err, Catch::Contains("does not exist"));
  // An output may not replace the database it was read from.
  const std::string db_bytes = test_cli::slurp(t.db());
  auto x = ab("export -o " + t.db() + " --db " + t.db());
  CHECK(x.rc == 2);
  CHECK_THAT(x.err, Catch::Contains("input of this command"));
  CHECK(test_cli::slurp(t.db()) == db_bytes);
  auto same = ab("report" + sel + " --json " + (t.path / "s").string() + " --html " +
                 (t.path / "s").string());
  CHECK(same.rc == 2);
  CHECK(listing(t.path) == before);
  // The good case still writes both files, and nothing else.
  auto ok = ab("report" + sel + " --json " + (t.path / "a.json").string() + " --html " +
               (t.path / "r.html").string());
  CHECK(ok.rc == 0);
  auto after = listing(t.path);
  after.erase("a.json");
  after.erase("r.html");
  CHECK(after == before);
}

TEST_CASE("write_files_atomic: all or nothing, with the real reason and no temporary file left",
          "[cli][hardening]") {
  test_cli::temp_dir t;
  fs::create_directories(t.path / "dir");
  // The second output cannot be written: the first must not appear either.
  try {
    write_files_atomic({{t.path / "first.json", "{}"}, {t.path / "dir", "x"}});
    FAIL("no error");
  } catch (const input_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("is a directory"));
  }
  CHECK(listing(t.path) == std::set<std::string>{"dir"});
  try {
    write_file_atomic(t.path / "nowhere" / "x.json", "{}");
    FAIL("no error");
  } catch (const input_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("No such file or directory"));
  }
  write_file_atomic(t.path / "ok.txt", "hello");
  CHECK(test_cli::slurp(t.path / "ok.txt") == "hello");
  CHECK(listing(t.path) == std::set<std::string>{"dir", "ok.txt"});
  // A new output gets the usual permissions (umask), not mkstemp's 0600.
  auto perms = fs::status(t.path / "ok.txt").permissions();
  CHECK((perms & fs::perms::owner_read) != fs::perms::none);
  mode_t mask = umask(0);
  umask(mask);
  if (!(mask & S_IROTH))
    CHECK((perms & fs::perms::others_read) != fs::perms::none);
}

TEST_CASE("ordinary bad input is exit 2, not an internal error", "[cli][hardening]") {
  test_cli::temp_dir t;
  fs::create_directories(t.path / "d.json");
  const std::string d = (t.path / "d.json").string();
  struct bad {
    std::string args, expect;
  };
  std::vector<bad> cases = {
      {"run gemm --rules " + d, "is a directory"},
      {"run gemm --shapes " + d, "is a directory"},
      {"run --suite " + d, "is a directory"},
      {"run gemm --rule 'a~b=1'", "a~b"},
      {"run gemm --rule 'measurement.repetitions.x=1'", "not a setting"},
      {"run gemm --rule '..=1'", "not a setting name"},
      // A catalogue parameter of the wrong type is named, not the axis it is substituted into.
      {"run gemm --shapes llama3-8b --set tokens=abc", "tokens"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = ab(c.args + " --db " + t.db() + " --quiet");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
    CHECK(lines(r.err) == 1);
  }
  auto tokens = ab("run gemm --shapes llama3-8b --set tokens=abc --db " + t.db() + " --quiet");
  CHECK_THAT(tokens.err, !Catch::Contains("parameter M"));
  CHECK_FALSE(fs::exists(t.db()));
}

TEST_CASE("option values that would disable or invert what they control are refused",
          "[cli][hardening]") {
  test_cli::temp_dir t;
  seed_pair(t);
  const std::string cmp = "compare --baseline tag=base --candidate tag=cand --db " + t.db();
  const std::string imp = "import http://127.0.0.1:9/x.json --db " + t.db();
  struct bad {
    std::string args, expect;
  };
  std::vector<bad> cases = {
      {imp + " --timeout 0", "--timeout"},
      {imp + " --timeout -1", "--timeout"},
      {imp + " --timeout nan", "'nan'"},
      {imp + " --timeout 1e30", "'1e30'"},
      {imp + " --timeout 0.0001", "--timeout"}, // 0 whole milliseconds: no timeout for libcurl
      {imp + " --connect-timeout -3", "--connect-timeout"},
      {imp + " --retries -5", "--retries"},
      {cmp + " --threshold -5", "--threshold"},
      {cmp + " --threshold nan", "--threshold"},
      {cmp + " --alpha nan", "--alpha"},
      {cmp + " --alpha 1", "--alpha"},
      {"run gemm --seed -1 --db " + t.db() + k_fast, "--seed"},
      {"show --limit -3 --db " + t.db(), "--limit"},
      {"show 0 --db " + t.db(), "run_id"},
      {"run gemm --tag '' --db " + t.db() + k_fast, "--tag"},
      {"show --tag '' --db " + t.db(), "--tag"},
      {"compare --baseline 'since=banana' --candidate tag=cand --db " + t.db(), "banana"},
      {"compare --baseline 'since=2026-02-30' --candidate tag=cand --db " + t.db(), "2026-02-30"},
      {"compare --baseline '&&&' --candidate tag=cand --db " + t.db(), "no filter"},
      {"history gemm --since banana --db " + t.db(), "--since"},
      {"history gemm --max-pvalue nan --db " + t.db(), "--max-pvalue"},
      {"history gemm --min-segment -3 --db " + t.db(), "--min-segment"},
      {"run gemm --system \"$(printf 'caf\\351')\" --db " + t.db() + k_fast, "UTF-8"},
      {"run gemm --tag \"$(printf '\\377')\" --db " + t.db() + k_fast, "UTF-8"},
      {"run gemm --set \"dtype=$(printf '\\377')\" --db " + t.db() + k_fast, "UTF-8"},
  };
  const std::string db_bytes = test_cli::slurp(t.db());
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = ab(c.args);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.expect));
    CHECK(lines(r.err) == 1);
  }
  CHECK(test_cli::slurp(t.db()) == db_bytes);
  CHECK(runs_in(t.db()) == 2);
  // The edges that are fine stay fine.
  CHECK(ab("show --limit 0 --db " + t.db()).rc == 0);
  CHECK(ab(cmp + " --threshold 0 --alpha 0.05").rc == 0);
  CHECK(ab("compare --baseline 'tag=base&since=2026-10-01' --candidate "
           "'tag=cand&since=2026-09-30T23:59:59Z' --db " +
           t.db())
            .rc == 0);
}

TEST_CASE("names are escaped on the terminal: no raw newline, escape sequence or bidi override",
          "[cli][hardening][timing]") {
  test_cli::temp_dir t;
  // ESC ] 0 ; ... BEL sets a terminal's title; U+202E reverses the rest of the line.
  const std::string evil = "\"$(printf 'ev\\033]0;pwned\\007il\\nline2\\342\\200\\256x')\"";
  auto r = ab("run gemm --set M=8 --set N=8 --set K=8 --system " + evil + " --tag " + evil +
              " --db " + t.db() + k_fast);
  REQUIRE(r.rc == 0);
  for (const std::string& out : {ab("show --db " + t.db()).out, ab("show 1 --db " + t.db()).out}) {
    INFO(out);
    CHECK(out.find('\033') == std::string::npos);
    CHECK(out.find('\007') == std::string::npos);
    CHECK(out.find("\xE2\x80\xAE") == std::string::npos);
    CHECK(out.find("il\nline2") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("ev\\x1b]0;pwned\\x07il\\nline2\\u202ex"));
  }
  // compare's table and the report's summary print the same names (selector label, system).
  REQUIRE(ab("run gemm --set M=8 --set N=8 --set K=8 --system " + evil + " --db " + t.db() + k_fast)
              .rc == 0);
  for (const std::string& out :
       {ab("compare --baseline \"tag=\"" + evil + " --candidate run=2 --db " + t.db()).out,
        // One system on both sides: the report names them by their selectors, this one evil too.
        ab("report --baseline \"tag=\"" + evil + " --candidate run=2 --db " + t.db()).out}) {
    INFO(out);
    CHECK(out.find('\033') == std::string::npos);
    CHECK(out.find('\007') == std::string::npos);
    CHECK(out.find("\xE2\x80\xAE") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("ev\\x1b]0;pwned\\x07il\\nline2\\u202ex"));
  }
  // The stored name is unchanged: escaping is for display only.
  auto j = json::parse(ab("show 1 --json --db " + t.db()).out);
  CHECK(j["system"] == "ev\033]0;pwned\007il\nline2\xE2\x80\xAEx");
  // One-line error messages stay one line whatever a value holds.
  auto e = ab("run " + evil + " --db " + t.db());
  CHECK(e.rc == 2);
  CHECK(lines(e.err) == 1);
  CHECK(e.err.find('\033') == std::string::npos);
}

namespace {

// Starts accelbench with `args` (no shell), stderr to `err`; returns its pid.
pid_t spawn(const std::vector<std::string>& args, const fs::path& err) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    std::string exe = ACCELBENCH_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits until `err` contains `text` (true) or the process ended or 120 s passed (false).
bool wait_for_text(pid_t pid, const fs::path& err, const std::string& text) {
  for (int i = 0; i < 2400; ++i) {
    if (test_cli::slurp(err).find(text) != std::string::npos)
      return true;
    if (waitpid(pid, nullptr, WNOHANG) != 0)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Exit status of `pid`, or -1 when it is still running after 120 s (then it is killed). A bound
// for a hung process, not a timing: a clean exit takes a fraction of it.
int wait_exit(pid_t pid) {
  for (int i = 0; i < 2400; ++i) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

} // namespace

TEST_CASE("Ctrl-C: the first stops cleanly after the current run, a second exits at once",
          "[cli][hardening][signal][timing]") {
  test_cli::temp_dir t;
  const fs::path err = t.path / "err.txt";
  SECTION("one Ctrl-C: the runs so far are stored, exit 130") {
    std::string sweep = "8";
    for (int i = 9; i < 2000; ++i)
      sweep += fmt::format(",{}", i);
    pid_t pid = spawn({"run", "gemm", "--set", "N=8", "--set", "K=8", "--sweep", "M=" + sweep,
                       "--rules", "kernel-quick", "--rule", "repetitions=3", "--rule",
                       "min_time_s=0", "--rule", "min_warmup_time_s=0", "--db", t.db()},
                      err);
    REQUIRE(wait_for_text(pid, err, "[2/"));
    kill(pid, SIGINT);
    CHECK(wait_exit(pid) == 130);
    INFO(test_cli::slurp(err));
    CHECK_THAT(test_cli::slurp(err), Catch::Contains("runs stored"));
    int64_t n = runs_in(t.db());
    CHECK(n >= 1);
    CHECK(n < 1992);
  }
  SECTION("two Ctrl-C during a run that would take hours: exit 130 at once, the database intact") {
    pid_t pid = spawn({"run",     "gemm",
                       "--set",   "M=64",
                       "--set",   "N=64",
                       "--set",   "K=64",
                       "--sweep", "dtype=fp32,bf16",
                       "--rules", "kernel-quick",
                       "--rule",  "repetitions=100000",
                       "--rule",  "min_time_s=1",
                       "--rule",  "max_time_s=1000000",
                       "--db",    t.db()},
                      err);
    REQUIRE(wait_for_text(pid, err, "[1/"));
    kill(pid, SIGINT);
    REQUIRE(wait_for_text(pid, err, "Ctrl-C again"));
    kill(pid, SIGINT);
    CHECK(wait_exit(pid) == 130);
    CHECK_THAT(test_cli::slurp(err), Catch::Contains("exiting now"));
    CHECK(runs_in(t.db()) == 0); // the database opens: nothing half-stored
  }
}

TEST_CASE(
    "a run at every limit imports and exports whole, and one tag more is refused naming the run "
    "and the limit, with nothing stored",
    "[cli][hardening][limits]") {
  test_cli::temp_dir t;
  run r = test_support::gemm_run({{"M", "64"}}, "box");
  r.uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  r.started_at = r.finished_at = "2026-10-01T02:00:00.000Z";
  r.samples.reserve(limits::k_max_samples);
  for (size_t i = 0; i < limits::k_max_samples; ++i)
    r.samples.push_back({(int64_t)i, 1e-3 * (1 + (double)(i % 5)), 10, json::object()});
  for (size_t i = 0; i < limits::k_max_metrics; ++i)
    r.add_metric("m" + std::to_string(i), 1.0, "", direction::higher_is_better);
  for (size_t i = 0; i < limits::k_max_tags; ++i)
    r.tags.push_back("t" + std::to_string(i));
  const std::string doc = (t.path / "at.json").string();
  std::ofstream(doc) << results_document({r}, json::array(), json::array()).dump();

  // One tag more: in the document, or through --tag.
  run over = r;
  over.tags.emplace_back("one-more");
  const std::string over_doc = (t.path / "over.json").string();
  std::ofstream(over_doc) << results_document({over}, json::array(), json::array()).dump();
  const std::string says =
      "run 0 (uuid 0f8fad5b-d9cb-469f-a165-70867728950e): 10001 tags, more than the 10000 a run "
      "may hold";
  for (const std::string& cmd :
       {"import " + over_doc + " --db " + t.db(), "import " + doc + " --tag x --db " + t.db()}) {
    INFO(cmd);
    auto refused = ab(cmd);
    CHECK(refused.rc == 2);
    CHECK_THAT(refused.err, Catch::Contains(says));
    CHECK(lines(refused.err) == 1);
    CHECK_FALSE(fs::exists(t.db())); // refused before the database was opened
  }

  auto imported = ab("import " + doc + " --db " + t.db());
  INFO(imported.err);
  REQUIRE(imported.rc == 0);
  CHECK_THAT(imported.out, Catch::Contains("imported 1 run(s)"));
  const std::string exported = (t.path / "back.json").string();
  REQUIRE(ab("export --db " + t.db() + " -o " + exported).rc == 0);
  const std::string again = (t.path / "again.db").string();
  REQUIRE(ab("import " + exported + " --db " + again).rc == 0);
  auto db = store::store::open(again, store::access::read_only);
  const auto back = db.query({});
  REQUIRE(back.size() == 1);
  CHECK(back[0].samples.size() == limits::k_max_samples);
  CHECK(back[0].metrics.size() == limits::k_max_metrics);
  CHECK(back[0].tags.size() == limits::k_max_tags);
}

TEST_CASE("a program that reports as many metrics of its own as it may has its run stored VALID, "
          "with accelbench's own figures beside them",
          "[cli][hardening][limits]") {
  test_cli::temp_dir t;
  const std::string program = fmt::format(
      "sh -c 'echo \"{{\\\"sample\\\": {{\\\"seconds\\\": 0.5}}}}\" >&3; seq -f "
      "\"{{\\\"metric\\\": "
      "{{\\\"name\\\": \\\"m%g\\\", \\\"value\\\": 1, \\\"unit\\\": \\\"\\\", \\\"direction\\\": "
      "\\\"lower\\\"}}}}\" {} >&3'",
      limits::k_max_program_metrics);
  auto r = ab("run external --name x --rule warmup_iterations=0 --rule repetitions=1 "
              "--rule conditions.on_high_cv=ignore --rule conditions.on_loaded_machine=ignore "
              "--rule conditions.on_governor=ignore --quiet --db " +
              t.db() + " -- " + program);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  auto db = store::store::open(t.db(), store::access::read_only);
  const auto runs = db.query({});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].valid);
  CHECK(runs[0].metrics.size() == limits::k_max_program_metrics + 2); // time and cv beside them
  CHECK(runs[0].find_metric("m9984"));
  CHECK(runs[0].find_metric("time"));
}
