#pragma once
// Shared fixtures for the MLPerf tests: the published results folder and temporary folders.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <fmt/format.h>

namespace mlperf_test {

namespace fs = std::filesystem;

// The published results (the shared folder sits beside the repository).
inline fs::path shared_data() {
  return fs::path(ACCELBENCH_SOURCE_DIR "/results/published/mlperf");
}

// A fresh folder under the system temp dir, removed with the object.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    path =
        fs::temp_directory_path() / fmt::format("accelbench-mlperf-test-{:08x}{:08x}", rd(), rd());
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

inline void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace mlperf_test
