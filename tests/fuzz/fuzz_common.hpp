#pragma once
// Shared by the libFuzzer targets of tests/fuzz: what counts as a finding, and scratch files for
// the parsers that only read paths.
//
// The promise under test (README, "Exit codes"): bad input ends in an accelbench error whose exit
// code is 2 (input_error, usage_error, storage_error, backend_error, http_error). Anything else is
// a finding: an internal error (exit 3), any other exception (a json::type_error,
// std::out_of_range, std::bad_alloc...), a crash, a sanitizer report, a leak, a hang or runaway
// memory (libFuzzer's -timeout and -rss_limit_mb). A finding aborts, so libFuzzer stops and saves
// the input.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "harness/core/error.hpp"

namespace accelbench::fuzz {

[[noreturn]] inline void finding(const std::string& what, const std::string& message) {
  std::fprintf(stderr, "\n==fuzz== FINDING: %s: %s\n", what.c_str(), message.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `body` on one input: an exit-2 error is the expected answer to bad input, every other
// exception is a finding.
template <class F> void guarded(F&& body) {
  try {
    body();
  } catch (const accelbench::error& e) {
    if (e.exit_code() != exit_usage)
      finding("accelbench error with exit code " + std::to_string(e.exit_code()) + " (" +
                  typeid(e).name() + ")",
              e.what());
  } catch (const std::exception& e) {
    finding(std::string("unexpected exception ") + typeid(e).name(), e.what());
  } catch (...) {
    finding("unexpected non-standard exception", "");
  }
}

// Runs `body`, which must not throw at all (e.g. reading back what we wrote ourselves).
template <class F> void must_succeed(const char* what, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    finding(std::string(what) + " failed (" + typeid(e).name() + ")", e.what());
  }
}

// A folder of this process's own under $TMPDIR, created on first use and removed by atexit when
// the process exits normally; libFuzzer often ends with _Exit, so run_fuzz.sh points TMPDIR at a
// scratch folder of its own and removes that.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/accelbench-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

// Writes `data` to `path` (replacing it), aborting when the scratch folder cannot be written:
// that is a broken fuzzing setup, not a finding in the code under test.
inline void write_file(const std::filesystem::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write scratch file %s\n", path.c_str());
    std::abort();
  }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

} // namespace accelbench::fuzz
