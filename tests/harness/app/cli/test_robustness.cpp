// The database survives what users do to running processes: kill -9 in the middle of a sweep
// leaves an intact database with no half-stored run, and several processes writing one database
// at once lose nothing and store nothing twice. Both are bounded (a few dozen short runs).
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include "tests/support/cli_helpers.hpp"
#include <nlohmann/json.hpp>

#include <random>

#include <fmt/format.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const fs::path k_source = ACCELBENCH_SOURCE_DIR;
const std::string k_exe = ACCELBENCH_EXE;

// Small GEMMs, 3 samples each, no minimum time: a sweep of 8 configs takes about a second.
const std::string k_small =
    " --set K=16 --set dtype=fp32 --rules kernel-quick --rule repetitions=3 --rule min_time_s=0 "
    "--rule min_warmup_time_s=0 --quiet ";
const std::string k_sweep = " --sweep M=16,32,48,64 --sweep N=16,32" + k_small;
constexpr int k_sweep_configs = 8;

// fmt, not "'" + string: GCC 12's false -Wrestrict on literal + string (GCC bug 105329).
std::string sh_word(const fs::path& p) { return fmt::format("'{}'", p.string()); }

// ---------------------------------------------------------------------------------------------
// Reading a database directly with SQLite, independently of the store under test.
class raw_db {
public:
  explicit raw_db(const fs::path& path) {
    int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE, nullptr);
    if (rc != SQLITE_OK)
      throw std::runtime_error("cannot open " + path.string() + ": " + sqlite3_errstr(rc));
    sqlite3_busy_timeout(m_db, 30000);
  }
  ~raw_db() { sqlite3_close_v2(m_db); }
  raw_db(const raw_db&) = delete;
  raw_db& operator=(const raw_db&) = delete;

  // Every row of a query, each column as text.
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string(sqlite3_errmsg(m_db)) + " in: " + sql);
    std::vector<std::vector<std::string>> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      auto& row = out.emplace_back();
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        auto t = sqlite3_column_text(st, i);
        row.push_back(t ? reinterpret_cast<const char*>(t) : "");
      }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
      throw std::runtime_error(std::string(sqlite3_errmsg(m_db)) + " in: " + sql);
    return out;
  }
  std::string one(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }
  int64_t count(const std::string& sql) { return std::stoll(one(sql)); }

private:
  sqlite3* m_db = nullptr;
};

// Each measured run that was stored by halves, described; empty when the database is whole. A
// whole run has the samples its measurement reports (indexes 0..n-1), the metrics every run of
// the workload has, and its system.
std::vector<std::string> half_runs(raw_db& db, int64_t metrics_per_run) {
  std::vector<std::string> out;
  auto rows = db.rows(R"sql(
SELECT r.id, r.status,
  (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id),
  (SELECT COALESCE(MAX(idx), -1) FROM samples s WHERE s.run_id = r.id),
  COALESCE(json_extract(r.effective_settings, '$.measurement_applied.repetitions'), -1),
  (SELECT COUNT(*) FROM metrics m WHERE m.run_id = r.id),
  (SELECT COUNT(*) FROM systems y WHERE y.name = r.system)
FROM runs r WHERE r.source = 'measured')sql");
  for (const auto& r : rows) {
    std::string id = "run " + r[0] + ": ";
    int64_t samples = std::stoll(r[2]), last_idx = std::stoll(r[3]), reps = std::stoll(r[4]);
    int64_t metrics = std::stoll(r[5]), systems = std::stoll(r[6]);
    if (r[1] != "ok")
      out.push_back(id + "status " + r[1]);
    if (samples != reps || last_idx != samples - 1)
      out.push_back(id + std::to_string(samples) + " samples stored, measured " +
                    std::to_string(reps));
    if (metrics != metrics_per_run)
      out.push_back(id + std::to_string(metrics) + " metrics, expected " +
                    std::to_string(metrics_per_run));
    if (systems != 1)
      out.push_back(id + "its system is not in the systems table");
  }
  return out;
}

// The checks SQLite itself offers: page structure, indexes, and foreign keys (a sample, metric or
// tag without its run).
void check_integrity(raw_db& db) {
  CHECK(db.one("PRAGMA integrity_check") == "ok");
  CHECK(db.rows("PRAGMA foreign_key_check").empty());
}

test_cli::exit_status run_to_end(const std::string& args, const fs::path& log,
                                 std::chrono::seconds limit = 120s) {
  test_cli::spawn_options o;
  o.err = log;
  o.unset_env = {"ACCELBENCH_DB"};
  return test_cli::wait_for(test_cli::spawn_sh(sh_word(k_exe) + " " + args, o), limit);
}

int64_t runs_in_file(const fs::path& export_json) {
  return (int64_t)json::parse(test_cli::slurp(export_json)).at("runs").size();
}

} // namespace

TEST_CASE("the half-run check finds runs stored by halves", "[cli][robustness]") {
  // The checks below would pass on any database if this one could not fail.
  test_cli::temp_dir t;
  fs::path log = t.path / "stderr.txt";
  auto r = run_to_end("run gemm --set M=16 --set N=16" + k_small + "--db " + sh_word(t.db()), log);
  INFO(test_cli::slurp(log));
  REQUIRE(r.rc == 0);
  raw_db d(t.db());
  const int64_t metrics = d.count("SELECT COUNT(*) FROM metrics");
  REQUIRE(half_runs(d, metrics).empty());
  d.rows("DELETE FROM samples WHERE idx = 2");
  CHECK(half_runs(d, metrics).size() == 1);
  d.rows("DELETE FROM metrics WHERE name = (SELECT MIN(name) FROM metrics)");
  CHECK(half_runs(d, metrics).size() == 2);
}

TEST_CASE("kill -9 in the middle of a sweep leaves an intact database with no half-stored run",
          "[cli][robustness][timing]") {
  test_cli::temp_dir t;
  fs::path log = t.path / "stderr.txt";
  const std::string db = " --db " + sh_word(t.db());

  // An uninterrupted sweep first: how long one takes (the kills land within that span) and what
  // a whole run looks like.
  auto t0 = std::chrono::steady_clock::now();
  auto whole = run_to_end("run gemm" + k_sweep + "--tag whole" + db, log);
  INFO(test_cli::slurp(log));
  REQUIRE(whole.rc == 0);
  const auto sweep_time =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  int64_t metrics_per_run = 0;
  {
    raw_db d(t.db());
    REQUIRE(d.count("SELECT COUNT(*) FROM runs") == k_sweep_configs);
    metrics_per_run =
        d.count("SELECT COUNT(*) FROM metrics WHERE run_id = (SELECT MIN(id) FROM runs)");
    REQUIRE(metrics_per_run > 0);
    REQUIRE(half_runs(d, metrics_per_run).empty());
  }

  // Fixed seed: the same delays on every run of the test, spread over the whole sweep (start-up,
  // opening the database, measuring, storing).
  std::mt19937 rng(12);
  std::uniform_int_distribution<int64_t> delay_ms(0, std::max<int64_t>(sweep_time.count(), 50));
  const int iterations = 20;
  int killed = 0,
      interrupted =
          0; // killed while running; of those, killed before the sweep's last run was stored
  int64_t stored_before = k_sweep_configs;
  std::string per_kill;
  for (int i = 0; i < iterations; ++i) {
    test_cli::spawn_options o;
    o.err = log;
    o.unset_env = {"ACCELBENCH_DB"};
    pid_t pid = test_cli::spawn_sh("exec " + sh_word(k_exe) + " run gemm" + k_sweep + "--tag kill" +
                                       std::to_string(i) + db,
                                   o);
    REQUIRE(pid > 0);
    auto delay = std::chrono::milliseconds(delay_ms(rng));
    std::this_thread::sleep_for(delay);
    // Still running: the kill lands mid-sweep. (The process group: sh execs accelbench.)
    int st = 0;
    bool running = waitpid(pid, &st, WNOHANG) == 0;
    if (running) {
      kill(-pid, SIGKILL);
      waitpid(pid, &st, 0);
      ++killed;
    }
    raw_db d(t.db());
    check_integrity(d);
    auto broken = half_runs(d, metrics_per_run);
    for (const auto& b : broken)
      FAIL_CHECK("after kill " << i << " at " << delay.count() << " ms: " << b);
    int64_t stored = d.count("SELECT COUNT(*) FROM runs");
    per_kill += fmt::format(" {}", stored - stored_before);
    interrupted += running && stored - stored_before < k_sweep_configs;
    stored_before = stored;
  }

  // Still a working database: a whole sweep more is stored and read back.
  auto after = run_to_end("run gemm" + k_sweep + "--tag after" + db, log);
  CHECK(after.rc == 0);
  auto shown = run_to_end("show" + db, log);
  CHECK(shown.rc == 0);
  raw_db d(t.db());
  check_integrity(d);
  CHECK(half_runs(d, metrics_per_run).empty());
  CHECK(d.count("SELECT COUNT(*) FROM runs r JOIN tags g ON g.run_id = r.id AND g.tag = 'after'") ==
        k_sweep_configs);
  CHECK(interrupted > 0); // the test proved nothing if every sweep had already finished
  WARN("kill -9 loop: " << iterations << " sweeps of " << k_sweep_configs << " configs (one takes "
                        << sweep_time.count() << " ms), " << killed << " killed while running, "
                        << interrupted
                        << " of them before the sweep's last run was stored; runs stored per sweep:"
                        << per_kill << "; " << d.count("SELECT COUNT(*) FROM runs")
                        << " runs in the database, none half-stored");
}

TEST_CASE("concurrent writers to one database lose nothing and store nothing twice",
          "[cli][robustness][timing]") {
  test_cli::temp_dir t;
  const fs::path kernels = k_source / "results" / "published" / "kernels.json";
  const fs::path training = k_source / "results" / "published" / "training.json";
  const std::string db = " --db " + sh_word(t.db());

  // Two rounds of four processes started together: two sweeps and two imports, the second round
  // importing kernels.json twice at once (imports are idempotent by run uuid).
  const std::vector<std::vector<std::string>> rounds = {
      {"import " + sh_word(kernels), "import " + sh_word(training),
       "run gemm" + k_sweep + "--tag w1", "run gemm" + k_sweep + "--tag w2"},
      {"import " + sh_word(kernels), "import " + sh_word(kernels),
       "run gemm" + k_sweep + "--tag w3", "run gemm" + k_sweep + "--tag w4"},
  };
  int processes = 0;
  for (size_t round = 0; round < rounds.size(); ++round) {
    std::vector<pid_t> pids;
    std::vector<fs::path> logs;
    for (size_t i = 0; i < rounds[round].size(); ++i) {
      test_cli::spawn_options o;
      o.err =
          logs.emplace_back(t.path / ("stderr-" + std::to_string(round) + "-" + std::to_string(i)));
      o.unset_env = {"ACCELBENCH_DB"};
      pids.push_back(test_cli::spawn_sh(sh_word(k_exe) + " " + rounds[round][i] + db, o));
      ++processes;
    }
    for (size_t i = 0; i < pids.size(); ++i) {
      auto st = test_cli::wait_for(pids[i], 120s);
      INFO(rounds[round][i] << "\n" << test_cli::slurp(logs[i]));
      CHECK(st.rc == 0);
    }
  }

  raw_db d(t.db());
  check_integrity(d);
  const int64_t published = runs_in_file(kernels) + runs_in_file(training);
  const int64_t measured = 4 * k_sweep_configs;
  const int64_t metrics_per_run = d.count("SELECT COUNT(*) FROM metrics WHERE run_id = (SELECT "
                                          "MIN(id) FROM runs WHERE source = 'measured')");
  CHECK(half_runs(d, metrics_per_run).empty());
  CHECK(d.count("SELECT COUNT(*) FROM runs WHERE source != 'measured'") == published);
  CHECK(d.count("SELECT COUNT(*) FROM runs WHERE source = 'measured'") == measured);
  for (const char* tag : {"w1", "w2", "w3", "w4"})
    CHECK(d.count(std::string("SELECT COUNT(*) FROM tags WHERE tag = '") + tag + "'") ==
          k_sweep_configs);
  CHECK(d.count("SELECT COUNT(*) FROM (SELECT uuid FROM runs GROUP BY uuid HAVING COUNT(*) > 1)") ==
        0);
  // The imported runs arrived whole: their samples as in the files.
  CHECK(d.count("SELECT COUNT(*) FROM runs r WHERE r.source != 'measured' AND NOT EXISTS "
                "(SELECT 1 FROM samples s WHERE s.run_id = r.id)") == 0);
  WARN("concurrent writers: " << rounds.size() << " rounds of " << rounds[0].size()
                              << " processes (" << processes << " in all); "
                              << d.count("SELECT COUNT(*) FROM runs") << " runs stored ("
                              << published << " imported, each once; " << measured
                              << " measured), none lost or duplicated");
}
