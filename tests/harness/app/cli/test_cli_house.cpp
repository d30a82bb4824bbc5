// Results housekeeping through the binary: import --tag/--system for every
// format and format detection, delete and gc, export --format csv|jsonl read back, compare
// --metric on imported Google Benchmark counters, report --json FILE's deprecated spelling.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/many_runs.hpp"

using namespace test_cli;
using nlohmann::json;

namespace {

// A Google Benchmark file: one benchmark with `reps` repetitions of `us` microseconds, a flops
// rate, CPU time `cpu_us`, and a counter whose direction its name does not tell.
std::string gbench_file(const std::string& dir, const std::string& name, const std::string& date,
                        double us, double cpu_us, int reps = 6) {
  json doc = {{"context",
               {{"date", date},
                {"host_name", "gb-host"},
                {"executable", "./bm"},
                {"num_cpus", 2},
                {"library_build_type", "release"}}},
              {"benchmarks", json::array()}};
  for (int i = 0; i < reps; ++i)
    doc["benchmarks"].push_back({{"name", "BM_dot/1024"},
                                 {"run_name", "BM_dot/1024"},
                                 {"run_type", "iteration"},
                                 {"repetitions", reps},
                                 {"repetition_index", i},
                                 {"threads", 1},
                                 {"iterations", 1000},
                                 {"real_time", us * (1 + 0.001 * i)},
                                 {"cpu_time", cpu_us * (1 + 0.001 * i)},
                                 {"time_unit", "us"},
                                 {"flops", 2048 / (us * 1e-6)},
                                 {"widgets", 7}});
  const std::string path = dir + "/" + name;
  std::ofstream(path) << doc.dump(1);
  return path;
}

// RFC 4180: fields separated by commas, quoted fields may hold commas, CR/LF and doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear(), was_quoted = false;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field), field.clear(), was_quoted = false;
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (!rows.back().empty() || !field.empty())
    rows.back().push_back(field);
  else
    rows.pop_back();
  return rows;
}

std::string count_runs(const std::string& db) {
  auto r = ab("export --db " + db + " --format jsonl");
  return std::to_string(std::count(r.out.begin(), r.out.end(), '\n'));
}

} // namespace

TEST_CASE("import --tag and --system apply to Google Benchmark and accelbench files, the format "
          "is detected and named",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  const std::string f = gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 9);
  auto r = ab("import " + f + " --tag nightly-1 --tag gb --system lab-a --db " + db);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("read as --format gbench") != std::string::npos);
  CHECK(r.err.find("counter 'widgets'") != std::string::npos); // direction unknown: said so
  auto shown = json::parse(ab("show --db " + db + " --json").out);
  REQUIRE(shown.size() == 1);
  CHECK(shown[0]["system"] == "lab-a");
  CHECK(shown[0]["tags"] == json({"gb", "nightly-1"})); // the store keeps tags sorted
  std::map<std::string, std::string> dirs;
  for (const auto& m : shown[0]["metrics"])
    dirs[m["name"]] = m["direction"];
  CHECK(dirs["flops"] == "higher");
  CHECK(dirs["cpu_time"] == "lower");
  CHECK(dirs["time"] == "lower");
  CHECK(dirs.count("widgets") == 0);

  // Our own export, imported elsewhere under another system and tag.
  REQUIRE(ab("export --db " + db + " -o " + dir + "/e.json").rc == 0);
  const std::string db2 = dir + "/two.db";
  r = ab("import " + dir + "/e.json --tag moved --system lab-b --db " + db2);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("read as --format") == std::string::npos); // it names its generator: no note
  shown = json::parse(ab("show --db " + db2 + " --json").out);
  REQUIRE(shown.size() == 1);
  CHECK(shown[0]["system"] == "lab-b");
  CHECK(shown[0]["tags"] == json({"gb", "moved", "nightly-1"}));
  CHECK(ab("compare --db " + db2 + " --baseline tag=moved --candidate lab-b").rc != 2);
  // The same document from another generator is read the same way, and the guess is said.
  json anonymous = json::parse(std::ifstream(dir + "/e.json"));
  anonymous["generator"] = {{"name", "another-tool"}, {"version", "1.0"}};
  std::ofstream(dir + "/anon.json") << anonymous.dump();
  r = ab("import " + dir + "/anon.json --tag moved --db " + dir + "/three.db");
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("read as --format accelbench") != std::string::npos);

  // --counter names a direction the name does not tell; wrong forms are usage errors.
  const std::string g = gbench_file(dir, "b.json", "2020-01-02T10:00:00+00:00", 10, 9);
  CHECK(ab("import " + g + " --counter widgets=higher --db " + db).rc == 0);
  CHECK(ab("show --db " + db + " --tag nightly-1 --json").out.find("widgets") == std::string::npos);
  r = ab("import " + g + " --counter widgets=up --db " + db);
  CHECK(r.rc == 2);
  CHECK(r.err.find("higher or lower") != std::string::npos);
}

// A Google Benchmark import's workload (gbench.BM_dot) is registered nowhere, so show has no
// primary metric for it; the store reads its metrics back by name (cpu_time, flops, time), and
// its result is its median time (the headline's list, harness/core/headline_metric.hpp), as on
// the dashboard, not the CPU time that happens to come first.
TEST_CASE("show's result for a run of an unregistered workload is its headline, not its first "
          "metric by name",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db();
  REQUIRE(ab("import " +
             gbench_file(t.path.string(), "g.json", "2020-01-01T10:00:00+00:00", 10, 4) + " --db " +
             db)
              .rc == 0);
  auto shown = ab("show --db " + db);
  INFO(shown.out);
  REQUIRE(shown.rc == 0);
  CHECK(shown.out.find("gbench.BM_dot") != std::string::npos);
  CHECK(shown.out.find(" 10.0 us") != std::string::npos); // real time, median of 10.00..10.05
  CHECK(shown.out.find("4.01 us") == std::string::npos);  // cpu_time, first by name
}

TEST_CASE("delete and gc list what goes, need --yes without a terminal, and keep the database "
          "consistent",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + gbench_file(dir, "old.json", "2020-01-01T10:00:00+00:00", 10, 9) +
             " --tag old --system sys-old --db " + db)
              .rc == 0);
  REQUIRE(ab("import " + gbench_file(dir, "base.json", "2020-01-02T10:00:00+00:00", 10, 9) +
             " --tag baseline --system sys-base --db " + db)
              .rc == 0);
  REQUIRE(
      ab("run gemm --set M=8 --set N=8 --set K=8 --rule repetitions=3 --tag new --quiet --db " + db)
          .rc <= 1); // stored either way; INVALID (exit 1) when the machine is loaded
  REQUIRE(count_runs(db) == "3");

  auto r = ab("delete tag=old --dry-run --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("sys-old") != std::string::npos);
  CHECK(r.out.find("would be deleted") != std::string::npos);
  CHECK(count_runs(db) == "3");

  r = ab("delete tag=old --db " + db); // stdin is /dev/null: no terminal to ask on
  CHECK(r.rc == 2);
  CHECK(r.err.find("--yes") != std::string::npos);
  CHECK(count_runs(db) == "3");

  r = ab("delete tag=old --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("deleted 1 run(s) (6 sample(s)") != std::string::npos);
  CHECK(r.out.find("1 system(s)") != std::string::npos);
  CHECK(count_runs(db) == "2");
  CHECK(ab("delete tag=old --yes --db " + db).rc == 2); // matches nothing now

  // gc: the 2020 baseline is old but kept by its tag; the run measured now is young.
  r = ab("gc --keep-days 30 --keep-tag baseline --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("nothing to delete") != std::string::npos);
  r = ab("gc --keep-days 30 --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("deleted 1 run(s)") != std::string::npos);
  CHECK(count_runs(db) == "1");
  CHECK(ab("show --db " + db + " --json").out.find("\"new\"") != std::string::npos);
}

TEST_CASE("export --format csv reads back to the same values as jsonl", "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 9) +
             " --system 'lab, \"quoted\"' --tag 'a b' --db " + db)
              .rc == 0);
  for (const char* rows : {"run", "metric", "sample"}) {
    CAPTURE(rows);
    auto csv = ab(fmt::format("export --db {} --format csv --rows {}", db, rows));
    auto jsonl = ab(fmt::format("export --db {} --format jsonl --rows {}", db, rows));
    REQUIRE(csv.rc == 0);
    REQUIRE(jsonl.rc == 0);
    auto table = parse_csv(csv.out);
    std::vector<json> objs;
    std::istringstream in(jsonl.out);
    for (std::string line; std::getline(in, line);)
      objs.push_back(json::parse(line));
    REQUIRE(table.size() == objs.size() + 1); // the header
    const auto& header = table[0];
    for (size_t i = 0; i < objs.size(); ++i) {
      REQUIRE(table[i + 1].size() == header.size());
      for (size_t c = 0; c < header.size(); ++c) {
        const json& v = objs[i].at(header[c]);
        const std::string& cell = table[i + 1][c];
        if (v.is_number_float())
          CHECK(std::stod(cell) == v.get<double>()); // bit for bit
        else if (v.is_string())
          CHECK(cell == v.get<std::string>());
      }
    }
    CHECK(objs[0]["system"] == "lab, \"quoted\"");
  }
  CHECK(ab("export --db " + db + " --format csv --rows nope").rc == 2);
  CHECK(ab("export --db " + db + " --format xml").rc == 2);
  CHECK(ab("export --db " + db + " --rows metric").rc == 2); // json exports whole runs
}

TEST_CASE("compare --metric compares CPU time and user counters of imported runs", "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  // Wall time the same, CPU time 50% higher in the candidate.
  REQUIRE(ab("import " + gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 8) +
             " --system s --tag A --db " + db)
              .rc == 0);
  REQUIRE(ab("import " + gbench_file(dir, "b.json", "2020-01-02T10:00:00+00:00", 10, 12) +
             " --system s --tag B --db " + db)
              .rc == 0);
  auto time = ab("compare --db " + db + " --baseline tag=A --candidate tag=B --format json");
  CHECK(time.rc == 0);
  auto cpu = ab("compare --db " + db +
                " --baseline tag=A --candidate tag=B --metric cpu_time --format json");
  CHECK(cpu.rc == 1); // a regression
  CHECK(cpu.out.find("regressed") != std::string::npos);
  auto flops =
      ab("compare --db " + db + " --baseline tag=A --candidate tag=B --metric flops --format json");
  CHECK(flops.rc == 0);
  auto none = ab("compare --db " + db + " --baseline tag=A --candidate tag=B --metric nope");
  CHECK(none.rc == 2);
  CHECK(none.err.find("flops") != std::string::npos); // names the metrics there are

  // report: -o FILE writes the JSON, --json alone prints it, --json FILE still works with a note.
  const std::string sel = " --baseline tag=A --candidate tag=B --db " + db;
  auto o = ab("report" + sel + " -o " + dir + "/o.json");
  CHECK(o.rc != 2);
  CHECK(o.err.find("deprecated") == std::string::npos);
  auto old = ab("report" + sel + " --json " + dir + "/old.json");
  CHECK(old.rc == o.rc);
  CHECK(old.err.find("deprecated; use -o FILE") != std::string::npos);
  CHECK(json::parse(slurp(dir + "/old.json"))["pairs"] ==
        json::parse(slurp(dir + "/o.json"))["pairs"]);
  auto out = ab("report" + sel + " --json");
  CHECK(out.rc == o.rc);
  CHECK(json::parse(out.out)["pairs"] == json::parse(slurp(dir + "/o.json"))["pairs"]);
}

TEST_CASE("show's config column holds what differs from the defaults and between rows, show RUN "
          "the whole config",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db();
  for (const char* m : {"8", "16"})
    REQUIRE(ab(fmt::format("run gemm --set M={} --set N=8 --set K=8 --rule repetitions=3 --quiet "
                           "--db {}",
                           m, db))
                .rc <= 1); // stored either way; INVALID (exit 1) when the machine is loaded
  auto r = ab("show --db " + db);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("M=8 ") != std::string::npos);
  CHECK(r.out.find("M=16 ") != std::string::npos);
  CHECK(r.out.find("N=8") != std::string::npos);    // not gemm's default
  CHECK(r.out.find("dtype=") == std::string::npos); // the default, the same in both rows
  auto one = ab("show 1 --db " + db);
  CHECK(one.out.find("dtype=fp32") != std::string::npos);
}

namespace {

bool has_exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return line.empty() || (paren + 2 < line.size() && line[paren + 2] == 'Z');
}

// A field of /proc/PID/status: a signal mask ("SigCgt:" caught, "ShdPnd:" and "SigPnd:" pending)
// or the name of the program the process runs ("Name:").
std::string status_field(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0)
      return line.substr(field.size());
  return "";
}
bool has_sigint(pid_t pid, const std::string& mask_field) {
  const std::string mask = status_field(pid, mask_field);
  return !mask.empty() && (std::stoull(mask, nullptr, 16) >> (SIGINT - 1) & 1) != 0;
}
// accelbench runs in `pid` (the shell that execs it is named "sh", and catches SIGINT while it
// reads its script) and catches SIGINT: its deletion's handler is in place.
bool catches_sigint(pid_t pid) {
  const std::string exe = std::filesystem::path(ACCELBENCH_EXE).filename().string().substr(0, 15);
  return status_field(pid, "Name:").find(exe) != std::string::npos && has_sigint(pid, "SigCgt:");
}

// A write transaction on a SQLite database (BEGIN IMMEDIATE) until release(): every other writer
// waits for it (accelbench's busy timeout is 30 s), readers go on (WAL).
class write_lock {
public:
  explicit write_lock(const std::string& path) {
    if (sqlite3_open(path.c_str(), &m_db) != SQLITE_OK ||
        sqlite3_busy_timeout(m_db, 30000) != SQLITE_OK ||
        sqlite3_exec(m_db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
      const std::string why = sqlite3_errmsg(m_db);
      release();
      throw std::runtime_error("cannot lock " + path + ": " + why);
    }
  }
  ~write_lock() { release(); }
  write_lock(const write_lock&) = delete;
  write_lock& operator=(const write_lock&) = delete;
  void release() {
    if (m_db)
      sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close_v2(m_db);
    m_db = nullptr;
  }

private:
  sqlite3* m_db = nullptr;
};

// `accelbench ARGS` on database `db`, started as a background job of a script starts it: with
// SIGINT ignored, which the process inherits (POSIX). A write lock held on the database keeps the
// deletion from starting (opened for writing, the store waits for it) until Ctrl-C was sent once
// the process caught SIGINT (its handler is in place) and was taken (no longer pending): then the
// lock goes. Events in that order, whatever this machine's speed: the deletion meets Ctrl-C, in
// its transaction, and rolls it back. (A Ctrl-C part way through the deletion, after runs were
// deleted in the transaction, is the store's case "delete_runs stopped on request rolls back",
// and test_store_pg's, where a row lock stops the deletion part way.)
struct interrupted_result {
  exit_status status;
  std::string out, err;
  bool caught = false; // it caught SIGINT before it was sent
};
interrupted_result interrupt_deletion(const temp_dir& t, const std::string& db,
                                      const std::string& args) {
  static int n = 0;
  spawn_options o;
  o.out = t.path / fmt::format("out-{}.txt", n);
  o.err = t.path / fmt::format("err-{}.txt", n++); // a new file: never an earlier run's words
  o.unset_env = {"ACCELBENCH_DB"};
  write_lock lock(db);
  const pid_t pid = spawn_sh("trap '' INT; exec '" ACCELBENCH_EXE "' " + args + " --db " + db, o);
  // A hang guard: the handler is in place within a second or so.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!catches_sigint(pid) && !has_exited(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  interrupted_result r;
  r.caught = catches_sigint(pid);
  kill(pid, SIGINT);
  while ((has_sigint(pid, "ShdPnd:") || has_sigint(pid, "SigPnd:")) && !has_exited(pid) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  lock.release();
  r.status = wait_for(pid, std::chrono::minutes(5));
  r.out = slurp(o.out);
  r.err = slurp(o.err);
  return r;
}

int64_t stored_runs(const std::string& db) {
  return accelbench::store::store::open(db, accelbench::store::access::read_only).count_runs();
}

} // namespace

TEST_CASE("delete and gc stop on Ctrl-C, even started with SIGINT ignored, roll back, delete "
          "nothing and exit 130",
          "[cli][house][interrupt][timing]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  constexpr int n = 200; // the order of events, not the size of the work, decides (above)
  REQUIRE(ab("import " + many_runs_file(dir, n) + " --db " + db).rc == 0);
  REQUIRE(stored_runs(db) == n);
  for (const char* args : {"delete tag=bulk --yes", "gc --keep-days 1 --yes"}) {
    CAPTURE(args);
    auto r = interrupt_deletion(t, db, args);
    CAPTURE(r.out, r.err);
    CHECK(r.caught);
    CHECK(r.status.rc == 130);
    CHECK(r.err.find("deleting 200 run(s)") != std::string::npos);
    CHECK(r.err.find("interrupted; rolled back, nothing deleted") != std::string::npos);
    CHECK(r.out.find("deleted ") == std::string::npos);
    CHECK(stored_runs(db) == n);
  }
  // Without Ctrl-C the same deletion goes through.
  auto done = ab("delete tag=bulk --yes --db " + db);
  CHECK(done.rc == 0);
  CHECK(stored_runs(db) == 0);
}

TEST_CASE("a Google Benchmark counter named like a built-in metric is stored as counter_<name> "
          "and never replaces it",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  json doc = json::parse(slurp(gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 9)));
  for (auto& b : doc["benchmarks"]) {
    b["time"] = 123.0;     // a user counter "time": used to become the time metric
    b["cpu_time_x"] = 1.0; // not a clash
  }
  std::ofstream(dir + "/clash.json") << doc.dump();
  auto r = ab("import " + dir + "/clash.json --db " + db);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("counter 'time' is stored as 'counter_time'") != std::string::npos);
  auto shown = json::parse(ab("show --db " + db + " --json").out);
  REQUIRE(shown.size() == 1);
  std::map<std::string, double> metrics;
  for (const auto& m : shown[0]["metrics"])
    metrics[m["name"]] = m["value"];
  CHECK(metrics.at("time") == Approx(10e-6).epsilon(0.01)); // the repetitions' real time
  CHECK(metrics.at("counter_time") == 123.0);
  // The per-repetition values are there under the same name, for compare --metric.
  auto cmp = ab("compare --db " + db + " --baseline " + dir + "/clash.json --candidate " + dir +
                "/clash.json --metric counter_time");
  CHECK(cmp.err.find("no run") == std::string::npos);

  // A file with a counter of the new name as well is refused, naming both.
  for (auto& b : doc["benchmarks"])
    b["counter_time"] = 5.0;
  std::ofstream(dir + "/both.json") << doc.dump();
  r = ab("import " + dir + "/both.json --db " + dir + "/new.db");
  CHECK(r.rc == 2);
  CHECK(r.err.find("the counter 'time' is renamed 'counter_time'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/new.db"));
}

TEST_CASE("export --format csv: text a spreadsheet would run as a formula is neutralised, tags "
          "with a semicolon stay apart",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  json doc = json::parse(slurp(many_runs_file(dir, 3)));
  doc["runs"][0]["system"] = "=HYPERLINK(\"http://x\",\"y\")";
  doc["runs"][0]["tags"] = {"a;b"};
  doc["runs"][1]["system"] = "@SUM(1+1)";
  doc["runs"][1]["tags"] = {"a", "b"};
  doc["runs"][2]["system"] = "\tcmd";
  doc["runs"][2]["tags"] = {"-2+3", "back\\slash"};
  std::ofstream(dir + "/f.json") << doc.dump();
  REQUIRE(ab("import " + dir + "/f.json --db " + db).rc == 0);
  auto csv = ab("export --db " + db + " --format csv --rows run");
  REQUIRE(csv.rc == 0);
  CAPTURE(csv.out);
  CHECK(csv.out.find(",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",") != std::string::npos);
  CHECK(csv.out.find(",\"'@SUM(1+1)\",") != std::string::npos);
  CHECK(csv.out.find(",\"'\tcmd\",") != std::string::npos);
  auto table = parse_csv(csv.out);
  REQUIRE(table.size() == 4);
  const auto& h = table[0];
  const size_t tags = std::find(h.begin(), h.end(), "tags") - h.begin();
  REQUIRE(tags < h.size());
  std::set<std::string> cells;
  for (size_t i = 1; i < table.size(); ++i)
    cells.insert(table[i][tags]);
  CHECK(cells == std::set<std::string>{"a\\;b", "a;b", "'-2+3;back\\\\slash"});
  // JSON lines keep the text as it is: no spreadsheet reads them.
  auto jsonl = ab("export --db " + db + " --format jsonl --rows run");
  CHECK(jsonl.out.find("\"system\":\"@SUM(1+1)\"") != std::string::npos);
}

TEST_CASE("db copy --to: a missing folder is refused and not created, a folder this user may not "
          "write is named with the reason",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + many_runs_file(dir, 2) + " --db " + db).rc == 0);
  auto r = ab("db copy --quiet --from " + db + " --to " + dir + "/no/such/x.db");
  CHECK(r.rc == 2);
  CHECK(r.err.find("the folder '" + dir + "/no/such' does not exist") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/no"));
  r = ab("db copy --quiet --from " + db + " --to " + db + "/x.db");
  CHECK(r.rc == 2);
  CHECK(r.err.find("is not a folder") != std::string::npos);

  // A folder without write permission. Root may write anywhere, so as root (CI) the copy runs as
  // the unprivileged user nobody, which may read the source but not write the folder.
  const std::string as =
      geteuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "";
  std::filesystem::permissions(t.path, std::filesystem::perms(0755));
  std::filesystem::permissions(db, std::filesystem::perms(0644));
  std::filesystem::create_directory(dir + "/ro");
  std::filesystem::permissions(dir + "/ro", std::filesystem::perms(0555));
  const std::string out = dir + "/o.txt", err = dir + "/e.txt";
  const int st = std::system((as + "'" ACCELBENCH_EXE "' db copy --quiet --from " + db + " --to " +
                              dir + "/ro/x.db >" + out + " 2>" + err)
                                 .c_str());
  const std::string message = slurp(err);
  CAPTURE(message);
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(message.find("Permission denied") != std::string::npos);
  CHECK(message.find("No such file or directory") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/ro/x.db"));
}

TEST_CASE("gc keeps runs whose started_at is not a date, and names them with the way to delete "
          "them",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + many_runs_file(dir, 3) + " --db " + db).rc == 0);
  // Stored by an accelbench before imports checked dates.
  REQUIRE(
      std::system(("sqlite3 " + db + " \"UPDATE runs SET started_at = 'yesterday' WHERE id = 2\"")
                      .c_str()) == 0);
  auto r = ab("gc --keep-days 1 --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.err.find("1 run(s) have a started_at that is not a date (run 2: 'yesterday')") !=
        std::string::npos);
  CHECK(r.err.find("accelbench delete run=2 removes them") != std::string::npos);
  CHECK(r.out.find("deleted 2 run(s)") != std::string::npos);
  CHECK(stored_runs(db) == 1);
}

TEST_CASE("show lists the user's runs and says how many published ones it left out, job=latest "
          "and job=previous select the last two jobs",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db();
  const std::string run = "run gemm --set M=8 --set N=8 --set K=8 --rule repetitions=3 --quiet ";
  // job=previous before two jobs exist: exit 2 with the count, not an empty selection.
  REQUIRE(ab(run + "--tag first --db " + db).rc <= 1); // INVALID (exit 1) on a loaded machine
  auto none = ab("compare --baseline job=previous --candidate job=latest --db " + db);
  CHECK(none.rc == 2);
  CHECK(none.err.find("holds 1 job(s)") != std::string::npos);
  REQUIRE(ab(run + "--tag second --db " + db).rc <= 1);
  REQUIRE(
      ab(fmt::format("import {}/results/published/kernels.json --db {}", ACCELBENCH_SOURCE_DIR, db))
          .rc == 0);

  auto shown = ab("show --db " + db);
  REQUIRE(shown.rc == 0);
  CHECK(shown.out.find("2 run(s) shown") != std::string::npos);
  CHECK(shown.out.find("published reference run(s) not shown") != std::string::npos);
  CHECK(shown.out.find("published-h100") == std::string::npos);
  const auto all = json::parse(ab("show --all --json --limit 0 --db " + db).out);
  const auto published = json::parse(ab("show --published --json --limit 0 --db " + db).out);
  CHECK(all.size() == 2 + published.size());
  REQUIRE(!published.empty());
  for (const auto& r : published)
    CHECK(r["source"] == "published");
  CHECK(shown.out.find(fmt::format("{} published", published.size())) != std::string::npos);
  CHECK(ab("show --all --published --db " + db).rc == 2); // one or the other

  // Each job's runs by its place in the database: job=previous is the first, job=latest the second.
  const auto prev = json::parse(ab("export job=previous --db " + db).out);
  const auto last = json::parse(ab("export job=latest --db " + db).out);
  REQUIRE(prev["runs"].size() == 1);
  REQUIRE(last["runs"].size() == 1);
  CHECK(prev["runs"][0]["tags"] == json({"first"}));
  CHECK(last["runs"][0]["tags"] == json({"second"}));
  const std::string id = last["runs"][0]["extra"]["job_id"];
  CHECK(json::parse(ab("export job=" + id + " --db " + db).out)["runs"].size() == 1);
  CHECK(ab("show 2 --db " + db).out.find("job        " + id) != std::string::npos);
  CHECK(ab("compare --baseline job=previous --candidate job=latest --db " + db).rc != 2);
}
