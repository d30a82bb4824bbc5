#pragma once
// Shared fixtures of the report tests: temporary folders and stores, a deterministic synthetic
// database, and the shared MLPerf data loaded into a store.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "harness/app/cli/mlperf_commands.hpp"
#include "harness/app/query/report_side.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/store/store.hpp"
#include "importers/mlperf/ingest.hpp"
#include "reporters/report/report.hpp"

namespace report_test {

namespace fs = std::filesystem;
using namespace accelbench;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    path =
        fs::temp_directory_path() / fmt::format("accelbench-report-test-{}-{:08x}", getpid(), rd());
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

inline fs::path mlperf_data() {
  return fs::path(ACCELBENCH_SOURCE_DIR "/results/published/mlperf");
}

// Fixed options: the built-in catalogue and prices, fixed time and revision (golden files).
inline report::options fixed_options() {
  report::options o;
  o.devices = report::device_catalogue::builtin();
  o.prices = report::price_table::builtin();
  o.generated_at = "2026-01-01T00:00:00.000Z";
  o.harness_revision = "test-revision";
  o.harness_version = "0.0.0-test";
  return o;
}

inline report::side side_of(const query::selection& s) {
  return query::report_side(s.label, s.runs, s.systems);
}

// A deterministic run: fixed uuid and timestamps, samples from a seeded generator.
inline run make_run(int n, const std::string& system, const std::string& workload,
                    std::map<std::string, std::string> values, const std::string& unit,
                    direction dir, double center, double spread, int samples, uint64_t seed) {
  run r;
  r.uuid = fmt::format("00000000-0000-4000-8000-{:012x}", n);
  r.cfg.workload = workload;
  r.cfg.backend = "cuda";
  r.cfg.values = std::move(values);
  r.system = system;
  r.ruleset = "kernel-v1";
  r.sample_unit = unit;
  r.sample_dir = dir;
  r.started_at = fmt::format("2026-01-01T00:{:02d}:00.000Z", n % 60);
  r.finished_at = fmt::format("2026-01-01T00:{:02d}:30.000Z", n % 60);
  r.harness_revision = "abc1234";
  r.tags = {"nightly"};
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < samples; ++i)
    r.samples.push_back({i, center + spread * u(g), 1, json::object()});
  return r;
}

inline store::system_record system_rec(const std::string& name, const std::string& model,
                                       int64_t per_node, int64_t nodes,
                                       const std::string& source = "measured") {
  store::system_record s;
  s.name = name;
  s.accelerator_model = model;
  s.accelerators_per_node = per_node;
  s.nodes = nodes;
  s.source = source;
  return s;
}

// The synthetic database of the golden test: an "H100" and a "B200" box, two GEMM sizes, one
// attention config only on the candidate (unpaired), a training throughput pair with eval curves,
// and a failed run.
inline void fill_synthetic(store::store& db, const std::string& base_name = "h100-box",
                           const std::string& cand_name = "b200-box",
                           const std::string& tag = "nightly") {
  db.upsert_system(system_rec(base_name, "NVIDIA H100-SXM5-80GB", 8, 1));
  db.upsert_system(system_rec(cand_name, "NVIDIA B200-SXM-180GB", 8, 1));
  int n = 1;
  std::vector<run> runs;
  for (int size : {4096, 8192}) {
    const double flops = 2.0 * size * double(size) * size;
    std::map<std::string, std::string> v = {{"M", std::to_string(size)},
                                            {"N", std::to_string(size)},
                                            {"K", std::to_string(size)},
                                            {"dtype", "bf16"},
                                            {"library", "cublas"},
                                            {"trans_a", "0"},
                                            {"trans_b", "0"}};
    // seconds per iteration: H100 at ~700 TFLOP/s, B200 at ~1500 TFLOP/s
    run b = make_run(n++, base_name, "gemm", v, "s", direction::lower_is_better, flops / 700e12,
                     flops / 700e12 * 0.02, 15, 11 + size);
    run c = make_run(n++, cand_name, "gemm", v, "s", direction::lower_is_better, flops / 1500e12,
                     flops / 1500e12 * 0.02, 15, 12 + size);
    for (run* r : {&b, &c}) {
      r->extra["flops_per_iteration"] = flops;
      // bf16 A and B read once, the fp32 C written once (as the CUDA GEMM records it)
      r->extra["bytes_per_iteration"] = 2.0 * size * double(size) * 2 + size * double(size) * 4;
      r->environment = {{"libraries", {{"cublas", "13.0"}}}, {"compiler", "nvcc 13"}};
    }
    runs.push_back(b);
    runs.push_back(c);
  }
  // Library versions differ on this pair: flagged.
  runs.back().environment["libraries"]["cublas"] = "13.1";
  {
    std::map<std::string, std::string> v = {{"batch", "1"},    {"heads", "16"},
                                            {"seq_q", "8192"}, {"head_dim", "128"},
                                            {"dtype", "bf16"}, {"pass", "fwd"}};
    run c = make_run(n++, cand_name, "attention", v, "TFLOP/s", direction::higher_is_better, 1400,
                     20, 9, 99);
    c.extra["flops_per_iteration"] = 4.0 * 16 * 8192 * 8192 * 128;
    runs.push_back(c);
  }
  {
    std::map<std::string, std::string> v = {
        {"model", "llama3-8b"}, {"dtype", "bf16"}, {"seq_len", "8192"}};
    run b = make_run(n++, base_name, "train.llama", v, "tokens/s", direction::higher_is_better,
                     8 * 9000, 800, 12, 5);
    run c = make_run(n++, cand_name, "train.llama", v, "tokens/s", direction::higher_is_better,
                     8 * 19000, 1500, 12, 6);
    b.ruleset = c.ruleset = "train-v1";
    b.add_metric("mfu", 0.42, "", direction::higher_is_better);
    c.add_metric("mfu", 0.39, "", direction::higher_is_better);
    for (run* r : {&b, &c}) {
      json curve = json::array();
      for (int i = 1; i <= 5; ++i)
        curve.push_back({{"time_s", 60.0 * i * (r == &b ? 2 : 1)}, {"eval_loss", 4.0 - 0.3 * i}});
      r->extra["eval_curve"] = curve;
    }
    runs.push_back(b);
    runs.push_back(c);
    run f = make_run(n++, cand_name, "train.llama", v, "tokens/s", direction::higher_is_better, 0,
                     0, 0, 7);
    f.ruleset = "train-v1";
    f.mark_failed("out of memory");
    runs.push_back(f);
  }
  for (auto& r : runs)
    r.tags = {tag};
  db.insert_runs(runs);
}

// The shared MLPerf folders imported into `db` as `accelbench import --format mlperf` does.
inline void import_mlperf(store::store& db) {
  auto res = mlperf::ingest(mlperf_data());
  for (const auto& s : res.systems)
    db.upsert_system(cli::published_system_record(s));
  db.insert_runs(res.runs);
}

} // namespace report_test
