#pragma once
// The environment captured with every run, and the fingerprint over the fields that must match
// for two runs to be comparable.
#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

// Modules report the versions of the libraries they link (oneDNN, OpenBLAS, SQLite, cuBLAS...).
void register_library_version(const std::string& name, const std::string& version);

struct memory_info {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};
memory_info read_memory_info();

// cpu (model, logical cores, MHz, ISA), memory, os/kernel, compiler and flags, build type,
// library versions, harness version, git revision and dirty flag, hostname.
json capture_environment();

// FNV-1a 64 over the comparable fields: cpu model, logical cores, compiler, build type, library
// versions, accelerator. Not the revision (nightly runs compare revisions) nor clocks or memory.
std::string environment_fingerprint(const json& env);
// Names of comparable fields whose values differ ("cpu.model", "libraries.onednn").
std::vector<std::string> environment_differences(const json& a, const json& b);

// The CPU's instruction sets that matter for kernels.
struct cpu_features {
  bool avx2 = false, fma = false, avx512f = false, avx512bf16 = false;
};
cpu_features detect_cpu_features();

} // namespace accelbench
