// Figures for reports, not a pass/fail test:
//  1. time and peak memory to build a report over a database of R runs x S samples (default
//     10,000 x 100 = 1,000,000 samples; aim <= 3 s): the report runs in a forked child so its
//     peak RSS (getrusage) is its own; the time is split into store query, build_report, to_json
//     and to_html;
//  2. the size of the HTML (and JSON) of the MLPerf comparison of the shared data
//     (accelerator=H100 vs accelerator=Blackwell).
// Usage: accelbench_bench_report [--runs R] [--samples S] [--db PATH (kept; reused when present)]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
#include <string>

#include <fmt/format.h>

#include "bench/support/seconds.hpp"
#include "harness/app/query/report_side.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/store/store.hpp"
#include "importers/mlperf/ingest.hpp"
#include "reporters/report/report.hpp"

using namespace accelbench;
namespace fs = std::filesystem;
using bench::clock_type;
using bench::seconds_since;

namespace {

// Two systems; configs x 5 runs per system; `samples` seconds-per-iteration samples per run.
void build_db(const fs::path& path, size_t runs, size_t samples) {
  auto db = store::store::open(path);
  store::system_record h{"bench-h100", "NVIDIA H100-SXM5-80GB", 8, 1, "measured", json::object()};
  store::system_record b{"bench-b200", "NVIDIA B200-SXM-180GB", 8, 1, "measured", json::object()};
  db.upsert_system(h);
  db.upsert_system(b);
  const size_t per_config = 5, configs = std::max<size_t>(1, runs / (2 * per_config));
  std::mt19937_64 g(1);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<run> batch;
  size_t n = 0;
  for (size_t c = 0; c < configs; ++c) {
    const int64_t m = 256 * int64_t(1 + c % 32), nn = 256 * int64_t(1 + (c / 32) % 32),
                  k = 1024 * int64_t(1 + c / 1024);
    const double flops = 2.0 * double(m) * double(nn) * double(k);
    for (const auto* sys : {&h, &b})
      for (size_t r = 0; r < per_config; ++r) {
        run x;
        x.uuid = fmt::format("00000000-0000-4000-8000-{:012x}", ++n);
        x.cfg.workload = "gemm";
        x.cfg.backend = "cuda";
        x.cfg.values = {{"M", std::to_string(m)},
                        {"N", std::to_string(nn)},
                        {"K", std::to_string(k)},
                        {"dtype", "bf16"},
                        {"library", "cublas"}};
        x.system = sys->name;
        x.ruleset = "kernel-v1";
        x.started_at = x.finished_at = "2026-01-01T00:00:00.000Z";
        x.extra["flops_per_iteration"] = flops;
        const double t = flops / (sys == &h ? 700e12 : 1500e12);
        for (size_t s = 0; s < samples; ++s)
          x.samples.push_back({int64_t(s), t * (1 + noise(g)), 1, json::object()});
        batch.push_back(std::move(x));
        if (batch.size() == 500) {
          db.insert_runs(batch);
          batch.clear();
        }
      }
  }
  if (!batch.empty())
    db.insert_runs(batch);
}

report::options opts() {
  report::options o;
  o.devices = report::device_catalogue::builtin();
  o.prices = report::price_table::builtin();
  return o;
}

// The MLPerf comparison of the shared data, in a database under `tmp`.
void mlperf_figures(const fs::path& tmp) {
  const fs::path mdb = tmp / "mlperf.db";
  auto db = store::store::open(mdb);
  auto res = mlperf::ingest(fs::path(ACCELBENCH_SOURCE_DIR) / "results/published/mlperf");
  for (const auto& s : res.systems)
    db.upsert_system(
        {s.name, s.accelerator_model, s.accelerators_per_node, s.nodes, "published", s.to_json()});
  db.insert_runs(res.runs);
  auto t0 = clock_type::now();
  auto b = query::select_runs(db, "accelerator=H100");
  auto c = query::select_runs(db, "accelerator=Blackwell");
  auto rep = report::build_report(query::report_side(b.label, b.runs, b.systems),
                                  query::report_side(c.label, c.runs, c.systems), opts());
  const std::string html = report::to_html(rep), js = report::to_json(rep).dump(2);
  std::printf("MLPerf report (accelerator=H100 vs accelerator=Blackwell, %zu pairs): HTML %.1f "
              "KiB, JSON %.1f KiB, built in %.3f s\n",
              rep.pairs.size(), html.size() / 1024.0, js.size() / 1024.0, seconds_since(t0));
  std::printf("  %s\n", rep.headline.c_str());
}

int run_bench(int argc, char** argv) {
  size_t runs = 10000, samples = 100;
  std::string db_arg;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs"))
      runs = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--samples"))
      samples = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--db"))
      db_arg = argv[i + 1];
  }
  const fs::path tmp =
      fs::temp_directory_path() / fmt::format("accelbench-bench-report-{}", getpid());
  fs::create_directories(tmp);
  const fs::path dbp = db_arg.empty() ? tmp / "bench.db" : fs::path(db_arg);
  if (!fs::exists(dbp)) {
    auto t0 = clock_type::now();
    build_db(dbp, runs, samples);
    std::printf("database: %zu runs x %zu samples written in %.2f s (%s)\n", runs, samples,
                seconds_since(t0), dbp.c_str());
  }

  // 1. The report, in a child process so its peak memory is its own.
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    auto db = store::store::open(dbp, store::access::read_only);
    auto t0 = clock_type::now();
    auto b = query::select_runs(db, "system=bench-h100");
    auto c = query::select_runs(db, "system=bench-b200");
    const double t_query = seconds_since(t0);
    size_t n = 0;
    const size_t nruns = b.runs.size() + c.runs.size();
    for (const auto& r : b.runs)
      n += r.samples.size();
    for (const auto& r : c.runs)
      n += r.samples.size();
    auto t1 = clock_type::now();
    auto rep =
        report::build_report(query::report_side(b.label, std::move(b.runs), b.systems),
                             query::report_side(c.label, std::move(c.runs), c.systems), opts());
    const double t_build = seconds_since(t1);
    auto t2 = clock_type::now();
    const std::string js = report::to_json(rep).dump();
    const double t_json = seconds_since(t2);
    auto t3 = clock_type::now();
    const std::string html = report::to_html(rep);
    const double t_html = seconds_since(t3);
    struct rusage self {};
    getrusage(RUSAGE_SELF, &self);
    const double cpu = double(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                       1e-6 * double(self.ru_utime.tv_usec + self.ru_stime.tv_usec);
    std::printf("report over %zu runs, %zu samples, %zu pairs: query %.2f s, build_report %.2f s, "
                "to_json %.2f s, to_html %.2f s; total %.2f s wall, %.2f s CPU\n",
                nruns, n, rep.pairs.size(), t_query, t_build, t_json, t_html, seconds_since(t0),
                cpu);
    std::printf("  JSON %.1f MiB, HTML %.1f MiB\n", js.size() / 1048576.0, html.size() / 1048576.0);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  std::printf("  peak memory of the report process (max RSS): %.1f MiB\n", ru.ru_maxrss / 1024.0);

  // 2. The MLPerf comparison of the shared data.
  mlperf_figures(tmp);
  std::error_code ec;
  fs::remove_all(tmp, ec); // a --db database lies outside it and stays
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accelbench_bench_report: %s\n", e.what());
    return 1;
  }
}
