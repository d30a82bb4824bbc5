#pragma once
// The environment captured with every run, and the fingerprint over the fields that must match
// for two runs to be comparable.
#include <functional>
#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

// Modules report the versions of the libraries they link (oneDNN, OpenBLAS, SQLite, cuBLAS...).
void register_library_version(const std::string& name, const std::string& version);
// The same, read only when the versions are first read (capture_environment), for a library whose
// query costs every process time at start (loading cuBLASLt, starting the CUDA driver). A version
// read as "" is not recorded.
void register_library_version(const std::string& name, std::function<std::string()> read);

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
// Fingerprint version 2: from the specification's offset basis (k_fnv1a64_basis).
std::string environment_fingerprint(const json& env);
// Version 1, as accelbench wrote it before schema version 6: the same fields from the legacy
// basis (k_fnv1a64_legacy_basis). Only to recognise old fingerprints.
std::string legacy_environment_fingerprint(const json& env);
// The fingerprint a run with environment `env` and fingerprint `stored` has now: version 2 when
// `stored` is the version-1 fingerprint of `env` (the store's migration 6 and imports of older
// documents), else `stored` unchanged. Old and new runs of one machine then compare as equal.
std::string current_fingerprint(const json& env, const std::string& stored);
// Names of comparable fields whose values differ ("cpu.model", "libraries.onednn").
std::vector<std::string> environment_differences(const json& a, const json& b);

// The CPU's instruction sets that matter for kernels.
struct cpu_features {
  bool avx2 = false, fma = false, avx512f = false, avx512bf16 = false;
};
cpu_features detect_cpu_features();

} // namespace accelbench
