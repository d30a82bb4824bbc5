#pragma once
// Single-defect variants of real MLPerf Training v5.0 organisation folders, for the differential
// test against MLCommons' package checker. One home for the variants: the recording script
// (scripts/mlcommons-differential.sh, through accelbench_mlperf_variants) and the CTest test
// (test_differential.cpp) both take them from make_variants(), so the verdicts MLCommons gave
// are always about the folders accelbench is given.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlperf_differential {

namespace fs = std::filesystem;

// An organisation folder held in memory: file contents by path relative to the org folder, and
// the folders that must exist even when empty (benchmarks/, an empty system folder).
struct package {
  std::string org;
  std::map<std::string, std::string> files;
  std::set<std::string> folders;
};

struct variant {
  std::string id;     // "<base>.<defect>", e.g. "amd_lora.seed_duplicated"
  std::string base;   // "amd_lora", "tiny_bert", "tiny_retinanet"
  std::string defect; // what was broken, in words
  package pkg;
};

// Every variant of every base folder, in a fixed order (the same on every machine). `published`
// is results/published/mlperf/training_v5.0; the bases are read from it.
std::vector<variant> make_variants(const fs::path& published);

// The folder the checkers are given: dir/<id>/<org>.
fs::path org_folder(const variant& v, const fs::path& dir);

// Writes v's package under org_folder(v, dir), creating folders as needed.
void write_variant(const variant& v, const fs::path& dir);

} // namespace mlperf_differential
