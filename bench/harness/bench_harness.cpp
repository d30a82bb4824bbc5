// Figures for the walking skeleton: GEMM throughput per library and dtype at 4096³ with
// % of the FMA probe's peak, the harness's overhead per sample on an empty kernel, and the store's
// ingest rate and size. Everything is measured side by side in this one process.
//
//   ./bench/harness/accelbench_bench_harness [--size N] [--reps R]
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "bench/support/measured_gemm.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/stats.hpp"
#include "harness/measure/measure.hpp"
#include "harness/store/store.hpp"
#include "workloads/gemm/cpu/gemm_cpu.hpp"

using namespace accelbench;
using clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

class empty_kernel : public measure::kernel {
public:
  void run() override { asm volatile("" ::: "memory"); }
};

// `n` runs of `samples` samples each, one config on one system (bench::measured_gemm).
std::vector<run> synthetic_runs(int n, int samples, const json& env) {
  std::vector<run> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    out.push_back(bench::measured_gemm("1024", "bench", samples, env));
  return out;
}

// Peak (fresh probe, not the cache) and GEMM at size³.
void gemm_figures(int64_t size, int reps) {
  auto peak = measure_cpu_peak();
  std::cout << fmt::format(
      "FMA probe peak: fp32 {:.4f} TFLOP/s, bf16 {:.4f} TFLOP/s ({} threads)\n", peak.fp32_tflops,
      peak.bf16_tflops, peak.threads);
  double fp32_best = 0, bf16_best = 0;
  for (std::string lib : {"onednn", "openblas"})
    for (std::string dtype : {"fp32", "bf16"}) {
      gemm::gemm_shape s{size, size, size, false, false, parse_dtype(dtype)};
      if (lib == "openblas" && dtype == "bf16" && !gemm::openblas_has_bf16()) {
        std::cout << fmt::format("gemm {}³ {:<4} {:<8}: skipped (OpenBLAS built without sbgemm)\n",
                                 size, dtype, lib);
        continue;
      }
      auto buf = gemm::make_buffers(s, 1);
      auto k = gemm::make_cpu_gemm(lib, s);
      k->run(buf); // warm-up
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        auto t0 = clk::now();
        k->run(buf);
        t.push_back(std::chrono::duration<double>(clk::now() - t0).count());
      }
      double tflops = s.flops() / stats::median(t) / 1e12;
      double pk = peak_tflops_for(peak, dtype);
      std::cout << fmt::format("gemm {}³ {:<4} {:<8}: {:.4f} TFLOP/s = {:5.1f}% of the {} peak "
                               "({:.4f}), {:5.1f}% of the fp32 peak\n",
                               size, dtype, lib, tflops, 100 * tflops / pk, dtype, pk,
                               100 * tflops / peak.fp32_tflops);
      if (lib == "onednn")
        (dtype == "fp32" ? fp32_best : bf16_best) = tflops;
    }
  if (fp32_best > 0)
    std::cout << fmt::format("bf16 / fp32 (oneDNN): {:.2f}x\n", bf16_best / fp32_best);
}

// Harness overhead on an empty kernel.
void overhead_figures() {
  empty_kernel k;
  measurement_settings m;
  m.warmup_iterations = 10;
  m.iterations = 1;
  m.repetitions = 2000;
  m.max_time_s = 60;
  auto t0 = clk::now();
  auto res = measure::run_kernel("empty/1", k, m);
  double wall = std::chrono::duration<double>(clk::now() - t0).count();
  std::vector<double> v;
  for (const auto& s : res.samples)
    v.push_back(s.value);
  std::cout << fmt::format(
      "empty kernel, 1 iteration per sample: median sample {:.1f} ns (time the harness adds "
      "inside a sample), "
      "wall {:.2f} µs per sample including Google Benchmark's bookkeeping between samples\n",
      1e9 * stats::median(v), 1e6 * wall / res.samples.size());
  m.iterations = 100000;
  m.repetitions = 20;
  res = measure::run_kernel("empty/100000", k, m);
  v.clear();
  for (const auto& s : res.samples)
    v.push_back(s.value);
  std::cout << fmt::format(
      "empty kernel, 100000 iterations per sample: {:.2f} ns per iteration (loop overhead)\n",
      1e9 * stats::median(v));
}

// Store ingest rate and size.
void store_figures(const json& env) {
  fs::path dir = fs::temp_directory_path() / ("accelbench-bench-store-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto db = store::store::open(dir / "a.db");
  const int runs = 1000, samples = 100;
  std::vector<run> batch = synthetic_runs(runs, samples, env);
  auto t0 = clk::now();
  for (auto& r : batch)
    db.insert_run(r); // one transaction per run, as accelbench run does
  double dt = std::chrono::duration<double>(clk::now() - t0).count();
  std::cout << fmt::format("store: {} runs x {} samples, one transaction per run: {:.2f} s = "
                           "{:.0f} samples/s, {:.0f} runs/s\n",
                           runs, samples, dt, runs * samples / dt, runs / dt);
  std::vector<run> batch2 = synthetic_runs(runs, samples, env);
  t0 = clk::now();
  db.insert_runs(batch2); // imports: one transaction
  dt = std::chrono::duration<double>(clk::now() - t0).count();
  std::cout << fmt::format(
      "store: {} runs x {} samples, one transaction (import): {:.2f} s = {:.0f} samples/s\n", runs,
      samples, dt, runs * samples / dt);

  auto db2 = store::store::open(dir / "b.db");
  std::vector<run> tenk = synthetic_runs(1000, 10, env);
  db2.insert_runs(tenk);
  db2.checkpoint();
  std::cout << fmt::format("store: database size per 1,000 kernel runs (10 samples each, full "
                           "environment): {:.2f} MiB\n",
                           fs::file_size(dir / "b.db") / 1048576.0);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

} // namespace

int main(int argc, char** argv) {
  int64_t size = 4096;
  int reps = 5;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--size"))
      size = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
  }
  try {
    const json env = capture_environment();
    std::cout << fmt::format("machine: {}, {} logical cores\n",
                             env["cpu"]["model"].get<std::string>(),
                             env["cpu"]["logical_cores"].get<int>());
    gemm_figures(size, reps);
    overhead_figures();
    store_figures(env);
  } catch (const std::exception& e) {
    std::cerr << "accelbench_bench_harness: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
