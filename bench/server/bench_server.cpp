// accelbench_bench_server — figures of `accelbench serve`:
//  1. ingestion: P concurrent publishers (threads calling publish_runs) x R runs each, through a
//     real server: one run per POST (`accelbench publish`'s default) and B runs per POST
//     (--batch-size), side by side into fresh databases, runs/s and samples/s, each checked to
//     hold every run exactly once; beside them, the same runs imported directly into SQLite (one
//     transaction for all, as `accelbench import` does, and one transaction per run);
//  2. the server-side time (Server-Timing) of GET /api/v1/history over N nights x C configs, and
//     of the dashboard's /history page drawing them (on SQLite, and with --postgres also on
//     PostgreSQL);
//  3. the server-side time of GET /api/v1/compare of two nightly sets of K configs each.
// Usage: accelbench_bench_server [--publishers 16] [--runs 200] [--samples 10] [--batch 50]
//        [--nights 365] [--configs 100] [--compare-configs 1000] [--reps 3] [--postgres]
// --postgres: the server's database for ingestion is on a PostgreSQL 15 server the benchmark
// starts itself (the tests' server: fsync off, Unix socket), instead of a SQLite file, and the
// history is timed on PostgreSQL too.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <httplib.h>

#include "harness/app/net/publish.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/support/synthetic_run.hpp"
#ifdef ACCELBENCH_BENCH_PG_SERVER
#include "bench/support/seconds.hpp"
#include "tests/support/pg_server.hpp"
#endif

using namespace accelbench;
namespace fs = std::filesystem;
using clk = bench::clock_type;
using bench::seconds_since;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

run nightly(const std::string& system, int cfg, const std::string& tag, int night, double center,
            int samples, std::mt19937_64& g) {
  run r = test_support::gemm_run(test_support::gemm_onednn(std::to_string(64 * (cfg + 1))), system);
  const int y = 2025 + night / 365, d = night % 365;
  r.started_at = fmt::format("{:04d}-{:02d}-{:02d}T02:00:00.000Z", y, d / 28 % 12 + 1, d % 28 + 1);
  r.finished_at = r.started_at;
  r.tags = {tag};
  std::normal_distribution<double> noise(0, 0.03);
  for (int i = 0; i < samples; ++i)
    r.samples.push_back({i, center * (1 + noise(g)), 1, json::object()});
  r.add_metric("tflops", 1.0 / center, "TFLOP/s", direction::higher_is_better);
  return r;
}

struct server_proc {
  pid_t pid = -1;
  int port = 0;
  server_proc(const fs::path& db, const fs::path& log, const std::string& extra) {
    pid = fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      const std::string cmd = fmt::format("exec {} serve --quiet --db '{}' --listen 127.0.0.1:0 {}",
                                          ACCELBENCH_EXE, db.string(), extra);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), (char*)nullptr);
      _exit(127);
    }
    const std::regex serving(R"(serving http://127\.0\.0\.1:(\d+)/)");
    for (int i = 0; i < 3000 && port == 0; ++i) {
      std::smatch m;
      const std::string text = slurp(log);
      if (std::regex_search(text, m, serving))
        port = std::stoi(m[1]);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (port == 0)
      throw std::runtime_error("the server did not start: " + slurp(log));
  }
  ~server_proc() {
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
  }
};

struct timing {
  double wall_ms = 0, cpu_ms = 0;
  size_t bytes = 0;
};

// Median server-side wall and request-thread CPU time (Server-Timing app;dur=MS, cpu;dur=MS) of
// `reps` GETs, and the body size.
timing server_time(int port, const std::string& path, int reps) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(600, 0);
  std::vector<double> ms, cpu;
  size_t bytes = 0;
  for (int i = 0; i < reps; ++i) {
    auto res = c.Get(path.c_str());
    if (!res || res->status != 200)
      throw std::runtime_error(
          fmt::format("GET {} failed: {}", path, res ? res->body.substr(0, 300) : "no answer"));
    const std::string t = res->get_header_value("Server-Timing");
    ms.push_back(std::stod(t.substr(t.find("app;dur=") + 8)));
    cpu.push_back(std::stod(t.substr(t.find("cpu;dur=") + 8)));
    bytes = res->body.size();
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  return {ms[ms.size() / 2], cpu[cpu.size() / 2], bytes};
}

// P publishers sending their runs to a fresh server on `db` (a file or a PostgreSQL URI), `batch`
// runs per POST. Returns the seconds from the first POST to the last answer; `stored` is what the
// database holds afterwards (uuids are unique there, so stored == runs means each exactly once).
double publish_all(const std::string& db, const fs::path& log,
                   const std::vector<std::vector<run>>& sets, size_t batch, int64_t& stored) {
  {
    auto st = store::store::open(db);
    setenv("ACCELBENCH_BENCH_TOKEN",
           server::create_token(st, "bench", server::role::write).token.c_str(), 1);
  }
  server_proc srv(db, log, "");
  net::publish_options po;
  po.url = fmt::format("http://127.0.0.1:{}/api/v1/runs", srv.port);
  po.http.token_env = "ACCELBENCH_BENCH_TOKEN";
  po.http.log = [](const std::string& line) { std::cerr << "publish: " << line << "\n"; };
  po.batch_size = batch;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  const auto t0 = clk::now();
  for (size_t p = 0; p < sets.size(); ++p)
    threads.emplace_back([&, p] {
      try {
        net::publish_runs(sets[p], json::array(), po);
      } catch (const std::exception& e) {
        std::cerr << "publisher " << p << ": " << e.what() << "\n";
        ++failures;
      }
    });
  for (auto& t : threads)
    t.join();
  const double s = seconds_since(t0);
  stored = store::store::open(db, store::access::read_only).count_runs();
  size_t total = 0;
  for (const auto& set : sets)
    total += set.size();
  if (failures > 0 || stored != (int64_t)total)
    std::cerr << fmt::format("WARNING: {} publisher(s) failed; {} of {} runs stored\n",
                             failures.load(), stored, total);
  return s;
}

// The history of `nights` x `configs` runs (stored directly) timed through a server on `db`.
void time_history(const std::string& db, const fs::path& log, const char* kind, int nights,
                  int configs, int samples, int reps, std::mt19937_64& g) {
  {
    auto st = store::store::open(db);
    std::vector<run> runs;
    for (int n = 0; n < nights; ++n)
      for (int c = 0; c < configs; ++c)
        runs.push_back(nightly("nightly-box", c, fmt::format("nightly-{:04d}", n), n,
                               (c % 10 == 0 && n >= nights / 2 ? 1.15e-3 : 1e-3), samples, g));
    st.insert_runs(runs);
  }
  server_proc srv(db, log, "--public-read");
  const timing api = server_time(srv.port, "/api/v1/history?workload=gemm", reps);
  const timing page = server_time(srv.port, "/history?workload=gemm", reps);
  std::cout << fmt::format("history on {}: {} nights x {} configs ({} runs, {} samples each)\n",
                           kind, nights, configs, nights * configs, samples);
  std::cout << fmt::format("  GET /api/v1/history?workload=gemm  server time {:8.1f} ms wall, "
                           "{:8.1f} ms CPU (median of {}), {:.1f} MiB JSON\n",
                           api.wall_ms, api.cpu_ms, reps, api.bytes / 1048576.0);
  std::cout << fmt::format("  GET /history?workload=gemm (page)  server time {:8.1f} ms wall, "
                           "{:8.1f} ms CPU (median of {}), {:.1f} MiB HTML\n",
                           page.wall_ms, page.cpu_ms, reps, page.bytes / 1048576.0);
}

// Ingestion: `publishers` publishing `runs_each` runs at once through accelbench serve, one run
// per POST and `batch` a POST, beside the direct SQLite import of the same runs.
void ingestion_figures(const fs::path& dir, const std::string& server_db,
                       const std::string& batched_db, int publishers, int runs_each, int samples,
                       size_t batch, bool postgres, std::mt19937_64& g) {
  std::vector<std::vector<run>> sets(publishers);
  for (int p = 0; p < publishers; ++p)
    for (int i = 0; i < runs_each; ++i)
      sets[p].push_back(
          nightly(fmt::format("node-{:02d}", p), i, "nightly-2026-12-01", 0, 1e-3, samples, g));
  const size_t total_runs = size_t(publishers) * runs_each, total_samples = total_runs * samples;
  int64_t stored = 0, stored_batched = 0;
  const double served_s = publish_all(server_db, dir / "server.log", sets, 1, stored);
  const double batched_s = publish_all(batched_db, dir / "batched.log", sets,
                                       std::max<size_t>(batch, 1), stored_batched);
  std::vector<run> all;
  for (auto& s : sets)
    all.insert(all.end(), s.begin(), s.end());
  double import_one_tx_s = 0, import_per_run_s = 0;
  {
    auto db = store::store::open(dir / "import1.db");
    auto copy = all;
    const auto t0 = clk::now();
    db.insert_runs(copy);
    import_one_tx_s = seconds_since(t0);
  }
  {
    auto db = store::store::open(dir / "import2.db");
    auto copy = all;
    const auto t0 = clk::now();
    for (auto& r : copy)
      db.insert_run(r);
    import_per_run_s = seconds_since(t0);
  }
  std::cout << fmt::format("ingestion: {} publishers x {} runs ({} samples each); stored exactly "
                           "once: {} and {} of {}\n",
                           publishers, runs_each, samples, stored, stored_batched, total_runs);
  std::cout << fmt::format("  server's database: {}\n", postgres ? "PostgreSQL 15" : "SQLite");
  std::cout << fmt::format("  through accelbench serve (HTTP, one run per POST): {:8.0f} runs/s "
                           "{:10.0f} samples/s ({:.2f} s)\n",
                           total_runs / served_s, total_samples / served_s, served_s);
  std::cout << fmt::format("  through accelbench serve ({:3d} runs per POST):      {:8.0f} runs/s "
                           "{:10.0f} samples/s ({:.2f} s)\n",
                           batch, total_runs / batched_s, total_samples / batched_s, batched_s);
  std::cout << fmt::format("  batched / one run per POST: {:.2f}x\n", served_s / batched_s);
  std::cout << fmt::format("  direct SQLite import, one transaction per run:     {:8.0f} runs/s "
                           "{:10.0f} samples/s ({:.2f} s)\n",
                           total_runs / import_per_run_s, total_samples / import_per_run_s,
                           import_per_run_s);
  std::cout << fmt::format("  direct SQLite import, one transaction for all:     {:8.0f} runs/s "
                           "{:10.0f} samples/s ({:.2f} s)\n",
                           total_runs / import_one_tx_s, total_samples / import_one_tx_s,
                           import_one_tx_s);
  std::cout << fmt::format("  server / direct (per-run transactions): {:.2f}x\n",
                           import_per_run_s / served_s);
}

// The compare of two nightly sets of `cmp_configs` configs through the server.
void compare_figures(const fs::path& dir, int cmp_configs, int samples, int reps,
                     std::mt19937_64& g) {
  {
    auto db = store::store::open(dir / "compare.db");
    std::vector<run> runs;
    for (int c = 0; c < cmp_configs; ++c) {
      runs.push_back(nightly("nightly-box", c, "nightly-a", 0, 1e-3, samples, g));
      runs.push_back(
          nightly("nightly-box", c, "nightly-b", 1, c % 20 == 0 ? 1.2e-3 : 1e-3, samples, g));
    }
    db.insert_runs(runs);
  }
  {
    server_proc srv(dir / "compare.db", dir / "compare.log", "--public-read");
    const timing cmp = server_time(
        srv.port, "/api/v1/compare?baseline=tag%3Dnightly-a&candidate=tag%3Dnightly-b", reps);
    std::cout << fmt::format("compare: two nightly sets of {} configs ({} samples each)\n",
                             cmp_configs, samples);
    std::cout << fmt::format(
        "  GET /api/v1/compare                server time {:8.1f} ms wall, {:8.1f} ms CPU of the "
        "request thread (median of {}; the pairs are judged on worker threads), {:.1f} MiB JSON\n",
        cmp.wall_ms, cmp.cpu_ms, reps, cmp.bytes / 1048576.0);
  }
}

int run_bench(int argc, char** argv) {
  CLI::App app{"accelbench_bench_server: ingestion and query figures of accelbench serve"};
  int publishers = 16, runs_each = 200, samples = 10, nights = 365, configs = 100,
      cmp_configs = 1000, reps = 3;
  size_t batch = 50;
  app.add_option("--publishers", publishers);
  app.add_option("--batch", batch, "Runs per POST of the batched publishers (default 50)");
  app.add_option("--runs", runs_each);
  app.add_option("--samples", samples);
  app.add_option("--nights", nights);
  app.add_option("--configs", configs);
  app.add_option("--compare-configs", cmp_configs);
  app.add_option("--reps", reps);
  bool postgres = false;
  app.add_flag("--postgres", postgres);
  CLI11_PARSE(app, argc, argv);
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("accelbench-bench-server-{}", getpid());
  fs::create_directories(dir);
  std::string server_db = (dir / "server.db").string(), batched_db = (dir / "batched.db").string();
  std::string history_pg;
#ifdef ACCELBENCH_BENCH_PG_SERVER
  std::unique_ptr<testing::pg_server> pg;
  if (postgres) {
    if (std::string why = testing::pg_unavailable(); !why.empty()) {
      std::cerr << "bench_server: --postgres: " << why << "\n";
      return 2;
    }
    pg = std::make_unique<testing::pg_server>();
    server_db = pg->create_database("bench");
    batched_db = pg->create_database("batched");
    history_pg = pg->create_database("history");
  }
#else
  if (postgres) {
    std::cerr
        << "bench_server: --postgres needs the tests' PostgreSQL server (a build with tests)\n";
    return 2;
  }
#endif
  std::mt19937_64 g(1);

  // ---- 1. ingestion ----
  ingestion_figures(dir, server_db, batched_db, publishers, runs_each, samples, batch, postgres, g);

  // ---- 2. history over nights x configs ----
  time_history((dir / "history.db").string(), dir / "history.log", "SQLite", nights, configs,
               samples, reps, g);
  if (!history_pg.empty())
    time_history(history_pg, dir / "history-pg.log", "PostgreSQL 15", nights, configs, samples,
                 reps, g);

  // ---- 3. compare of two nightly sets ----
  compare_figures(dir, cmp_configs, samples, reps, g);
  if (std::getenv("ACCELBENCH_BENCH_KEEP")) {
    std::cout << "databases kept in " << dir.string() << "\n";
    return 0;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "accelbench_bench_server: " << e.what() << "\n";
    return 1;
  }
}
