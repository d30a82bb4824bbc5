// Times MLPerf ingest (parse + compliance check + run construction) on the published results
// folder and on a synthetic folder of 1,000 result files generated in a temporary directory,
// plus check_package on the synthetic folder. Prints one line per figure.
//
//   accelbench_bench_mlperf_ingest [shared_dir] [--reps N] [--files N]
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/score.hpp"
#include "importers/mlperf/synthetic.hpp"

namespace fs = std::filesystem;
using namespace accelbench::mlperf;

namespace {

template <class F> std::vector<double> time_reps(int reps, F&& f) {
  std::vector<double> out;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(out.begin(), out.end());
  return out;
}

uintmax_t folder_bytes(const fs::path& dir) {
  uintmax_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      n += e.file_size();
  return n;
}

void report(const std::string& what, const std::vector<double>& t, size_t files, uintmax_t bytes) {
  const double med = t[t.size() / 2];
  fmt::print("{:<34} files={:<5} MB={:<7.2f} median={:.4f}s min={:.4f}s max={:.4f}s "
             "({:.0f} files/s, {:.1f} MB/s, reps={})\n",
             what, files, bytes / 1e6, med, t.front(), t.back(), files / med, bytes / 1e6 / med,
             t.size());
}

} // namespace

int main(int argc, char** argv) {
  fs::path shared = fs::path(ACCELBENCH_SOURCE_DIR) / "results" / "published" / "mlperf";
  int reps = 5, nfiles = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--files" && i + 1 < argc)
      nfiles = std::atoi(argv[++i]);
    else
      shared = a;
  }
  try {
    // 1. The published folder.
    ingest_result res;
    auto t = time_reps(reps, [&] { res = ingest(shared); });
    report("ingest published (shared)", t, res.runs.size(), folder_bytes(shared));
    for (const auto& s : score_groups(res.runs))
      fmt::print("  score {:<30} {:<16} {:.4f} min {}\n", s.system, s.benchmark, s.score_min,
                 s.valid ? "VALID" : "INVALID");

    // 2. A synthetic organisation: nfiles / 10 systems x 10 llama2_70b_lora result files.
    std::random_device rd;
    const fs::path tmp =
        fs::temp_directory_path() / fmt::format("accelbench-mlperf-bench-{:08x}", rd());
    const fs::path org = tmp / "training_v5.0" / "Synth";
    const std::string sys_json = [&] {
      accelbench::json d = accelbench::json::object();
      for (const auto& f : required_system_fields())
        d[f] = "";
      d["submitter"] = "Synth";
      d["division"] = "closed";
      d["status"] = "Available on-premise";
      d["system_name"] = "synthetic";
      d["number_of_nodes"] = "1";
      d["accelerators_per_node"] = "8";
      d["other_software_stack"] = accelbench::json::object();
      return d.dump(4);
    }();
    const int systems = std::max(1, nfiles / 10);
    int written = 0;
    for (int s = 0; s < systems; ++s) {
      const std::string name = fmt::format("sys{:04}", s);
      fs::create_directories(org / "systems");
      std::ofstream(org / "systems" / (name + ".json")) << sys_json;
      const fs::path dir = org / "results" / name / "llama2_70b_lora";
      fs::create_directories(dir);
      for (int i = 0; i < 10 && written < nfiles; ++i, ++written) {
        synthetic_log_options o;
        o.org = "Synth";
        o.seed = s * 100 + i;
        o.train_min = 10 + i * 0.5;
        o.evals = 6;
        std::ofstream(dir / fmt::format("result_{}.txt", i)) << synthetic_training_log(o);
      }
    }
    ingest_result syn;
    t = time_reps(reps, [&] { syn = ingest(org); });
    report(fmt::format("ingest synthetic ({} files)", written), t, syn.runs.size(),
           folder_bytes(org));
    check_result c;
    t = time_reps(reps, [&] { c = check_package(org); });
    report("check_package synthetic", t, c.result_files, folder_bytes(org));
    fmt::print("  synthetic package: {} ({} reasons, {} diagnostics from ingest)\n",
               c.valid ? "VALID" : "INVALID", c.reasons.size(), syn.diagnostics.size());
    std::error_code ec;
    fs::remove_all(tmp, ec);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
