// Figures for the PostgreSQL store: the direct insert rate into SQLite and into
// PostgreSQL side by side (one transaction per run, as `accelbench run` stores; one transaction
// for many, as `import` does), the `db copy` rate both ways, and history's read of every run's
// median (store::history_rows: the median column written at insert, schema version 5) against
// reading every run whole with every sample, on both stores. Runs and samples per
// second.
//
//   ./bench/store/accelbench_bench_store [--runs R] [--samples S] [--pg URI]
//
// Without --pg the benchmark starts its own PostgreSQL 15 server in a temporary folder (the
// tests' server, tests/support/pg_server: fsync off, Unix socket), so the figures compare the
// stores' code paths and round trips rather than the disks. With --pg it uses that database,
// which must be empty or an accelbench database (its runs are left in place and added to).
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bench/support/measured_gemm.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/stats.hpp"
#include "harness/store/store.hpp"
#ifdef ACCELBENCH_BENCH_PG_SERVER
#include "tests/support/pg_server.hpp"
#endif

using namespace accelbench;
using clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

run synthetic_run(int samples, const json& env, int i) {
  run r = bench::measured_gemm(std::to_string(256 + i % 64), i % 2 ? "bench-h100" : "bench-b200",
                               samples, env);
  r.tags = {"nightly", "bench"};
  return r;
}

struct rate {
  double seconds = 0;
  int64_t runs = 0, samples = 0;
  std::string str() const {
    return fmt::format("{:.2f} s = {:.0f} runs/s, {:.0f} samples/s", seconds, runs / seconds,
                       samples / seconds);
  }
};

std::vector<run> batch_of(int runs, int samples, const json& env) {
  std::vector<run> out;
  out.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i)
    out.push_back(synthetic_run(samples, env, i));
  return out;
}

// One insert figure: sqlite's and postgresql's rates measured side by side, and their ratio.
void print_inserts(const char* what, const rate& lite, const rate& pg) {
  std::cout << fmt::format("{}:\n  sqlite      {}\n  postgresql  {}\n"
                           "  postgresql / sqlite: {:.2f}x the runs/s\n",
                           what, lite.str(), pg.str(),
                           (pg.runs / pg.seconds) / (lite.runs / lite.seconds));
}

rate insert_each(store::store& db, std::vector<run> runs) {
  auto t0 = clk::now();
  for (auto& r : runs)
    db.insert_run(r);
  rate x{std::chrono::duration<double>(clk::now() - t0).count(), (int64_t)runs.size(), 0};
  for (const auto& r : runs)
    x.samples += (int64_t)r.samples.size();
  return x;
}

rate insert_all(store::store& db, std::vector<run> runs) {
  auto t0 = clk::now();
  db.insert_runs(runs);
  rate x{std::chrono::duration<double>(clk::now() - t0).count(), (int64_t)runs.size(), 0};
  for (const auto& r : runs)
    x.samples += (int64_t)r.samples.size();
  return x;
}

rate copy(store::store& from, store::store& to) {
  auto t0 = clk::now();
  store::copy_result res = store::copy_store(from, to, 200);
  return {std::chrono::duration<double>(clk::now() - t0).count(), res.runs_copied,
          res.samples_copied};
}

// history's read: every run of the workload whole with all its samples, or as history reads it
// (store::history_rows: the stored median); the medians must be equal bit for bit. Best of 3.
struct history_read {
  double all_s = 1e300, middle_s = 1e300;
  size_t runs = 0;
};

std::vector<double> medians_of(const std::vector<run>& runs) {
  std::vector<double> out;
  for (const auto& r : runs) {
    std::vector<double> v;
    for (const auto& s : r.samples)
      v.push_back(s.value);
    out.push_back(stats::median(v));
  }
  return out;
}

std::vector<double> medians_of(const std::vector<store::history_row>& rows) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (const auto& r : rows)
    out.push_back(r.median.value_or(stats::median({})));
  return out;
}

// The medians of the gemm runs, read whole (middle: false) or as history reads them.
std::vector<double> read_medians(store::store& db, bool middle, size_t& runs) {
  store::run_filter f;
  f.workloads = {"gemm"};
  if (!middle) {
    auto whole = db.query(f);
    runs = whole.size();
    return medians_of(whole);
  }
  auto rows = db.history_rows(f);
  runs = rows.size();
  return medians_of(rows);
}

history_read time_history(store::store& db) {
  history_read h;
  for (int rep = 0; rep < 3; ++rep)
    for (bool middle : {false, true}) {
      auto t0 = clk::now();
      auto m = read_medians(db, middle, h.runs);
      double s = std::chrono::duration<double>(clk::now() - t0).count();
      (middle ? h.middle_s : h.all_s) = std::min(middle ? h.middle_s : h.all_s, s);
      static std::vector<double> reference;
      if (!middle)
        reference = m;
      else if (m != reference)
        throw std::runtime_error("median-only read gave other medians than the full read");
    }
  return h;
}

} // namespace

int main(int argc, char** argv) {
  int runs = 2000, samples = 100;
  std::string pg_uri;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--samples"))
      samples = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--pg"))
      pg_uri = argv[i + 1];
  }
  try {
#ifdef ACCELBENCH_BENCH_PG_SERVER
    std::unique_ptr<testing::pg_server> server;
    if (pg_uri.empty()) {
      if (std::string why = testing::pg_unavailable(); !why.empty()) {
        std::cerr << "bench_store: " << why << " (or pass --pg URI)\n";
        return 2;
      }
      server = std::make_unique<testing::pg_server>();
      pg_uri = server->create_database("bench");
    }
#endif
    if (pg_uri.empty()) {
      std::cerr
          << "bench_store: pass --pg postgresql://... (this build has no test PostgreSQL server)\n";
      return 2;
    }
    const fs::path dir =
        fs::temp_directory_path() / fmt::format("accelbench-bench-store-{}", getpid());
    fs::create_directories(dir);
    const json env = capture_environment();
    std::cout << fmt::format(
        "store: {} runs x {} samples each (full environment, 2 metrics, 2 tags per run)\n", runs,
        samples);
    {
      auto lite = store::store::open(dir / "a.db");
      auto pg = store::store::open(pg_uri);
      // Side by side, each pair on fresh runs of the same shape.
      rate l1 = insert_each(lite, batch_of(runs, samples, env));
      rate p1 = insert_each(pg, batch_of(runs, samples, env));
      print_inserts("insert, one transaction per run (accelbench run)", l1, p1);
      rate l2 = insert_all(lite, batch_of(runs, samples, env));
      rate p2 = insert_all(pg, batch_of(runs, samples, env));
      print_inserts("insert, one transaction for all (import)", l2, p2);
      for (auto* db : {&lite, &pg}) {
        history_read h = time_history(*db);
        std::cout << fmt::format("history read, {} runs ({}): all samples {:.3f} s, medians only "
                                 "{:.3f} s: {:.1f}x faster, same medians\n",
                                 h.runs, db->kind(), h.all_s, h.middle_s, h.all_s / h.middle_s);
      }
    }
    {
      // db copy both ways, into empty destinations: the SQLite file above (2 x runs) to a fresh
      // PostgreSQL database, and that back to a fresh SQLite file.
      auto src = store::store::open(dir / "a.db", store::access::read_only);
#ifdef ACCELBENCH_BENCH_PG_SERVER
      std::string copy_uri = server ? server->create_database("copy") : pg_uri;
#else
      std::string copy_uri = pg_uri;
#endif
      auto pg = store::store::open(copy_uri);
      rate to_pg = copy(src, pg);
      auto back = store::store::open(dir / "b.db");
      rate to_lite = copy(pg, back);
      std::cout << fmt::format("db copy (batches of 200 runs):\n  sqlite -> postgresql  {}\n  "
                               "postgresql -> sqlite  {}\n",
                               to_pg.str(), to_lite.str());
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
  } catch (const std::exception& e) {
    std::cerr << "bench_store: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
