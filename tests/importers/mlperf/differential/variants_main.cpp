// accelbench_mlperf_variants OUT_DIR [PUBLISHED_DIR]: writes every differential variant as
// OUT_DIR/<variant-id>/<ORG>/{systems,results,benchmarks} and lists "<id>\t<ORG>\t<defect>" on
// stdout, for scripts/mlcommons-differential.sh. PUBLISHED_DIR defaults to this checkout's
// results/published/mlperf/training_v5.0. Exit 2 on bad arguments (OUT_DIR must be absent or
// empty, so that no variant of an earlier run is mixed in), 1 when writing fails.
#include <cstdio>
#include <exception>
#include <filesystem>

#include <fmt/format.h>

#include "variants.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fmt::print(stderr, "usage: accelbench_mlperf_variants OUT_DIR [PUBLISHED_DIR]\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path published =
      argc == 3 ? fs::path(argv[2])
                : fs::path(ACCELBENCH_SOURCE_DIR "/results/published/mlperf/training_v5.0");
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    fmt::print(stderr, "accelbench_mlperf_variants: OUT_DIR is not an empty folder: {}\n",
               out.string());
    return 2;
  }
  if (!fs::is_directory(published / "AMD", ec) || !fs::is_directory(published / "tinycorp", ec)) {
    fmt::print(stderr, "accelbench_mlperf_variants: no AMD/ and tinycorp/ in PUBLISHED_DIR: {}\n",
               published.string());
    return 2;
  }
  try {
    fs::create_directories(out);
    for (const auto& v : mlperf_differential::make_variants(published)) {
      mlperf_differential::write_variant(v, out);
      fmt::print("{}\t{}\t{}\n", v.id, v.pkg.org, v.defect);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "accelbench_mlperf_variants: {}\n", e.what());
    return 1;
  }
  return 0;
}
