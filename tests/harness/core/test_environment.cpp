#include <catch2/catch.hpp>

#include "harness/core/environment.hpp"
#include "harness/core/peak.hpp"

using namespace accelbench;

TEST_CASE("the environment names the CPU, memory, OS, compiler and revision", "[environment]") {
  register_library_version("testlib", "1.2.3");
  json env = capture_environment();
  CHECK_FALSE(env["cpu"]["model"].get<std::string>().empty());
  CHECK(env["cpu"]["logical_cores"].get<int>() >= 1);
  CHECK(env["memory"]["total_bytes"].get<uint64_t>() > 0);
  CHECK(env["libraries"]["testlib"] == "1.2.3");
  CHECK(env["harness"].contains("git_revision"));
  CHECK(env["harness"].contains("git_dirty"));
  CHECK(env.contains("compiler_flags"));
}

TEST_CASE("the fingerprint covers comparable fields only", "[environment]") {
  json env = capture_environment();
  std::string f = environment_fingerprint(env);
  CHECK(f.size() == 16);
  json other = env;
  other["memory"]["available_bytes"] = 1;   // not comparable
  other["harness"]["git_revision"] = "abc"; // nightly runs compare revisions
  CHECK(environment_fingerprint(other) == f);
  CHECK(environment_differences(env, other).empty());
  other["libraries"]["onednn"] = "9.9.9";
  CHECK(environment_fingerprint(other) != f);
  auto d = environment_differences(env, other);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "libraries.onednn");
}

TEST_CASE("the FMA probe measures a positive peak", "[peak]") {
  auto p = measure_cpu_peak(1);
  CHECK(p.fp32_tflops > 0);
  CHECK(p.threads == 1);
  CHECK(peak_tflops_for(p, "fp32") == p.fp32_tflops);
  if (p.bf16_tflops > 0)
    CHECK(peak_tflops_for(p, "bf16") == p.bf16_tflops);
}

TEST_CASE("library names with '~' or '/' are compared as names, not pointer syntax",
          "[environment]") {
  // From an imported document: "a~b" used to be an invalid JSON pointer (an exception, exit 3).
  json a = {{"libraries", {{"a~b", "1"}, {"x/y", "2"}}}};
  json b = {{"libraries", {{"a~b", "1"}, {"x/y", "3"}}}};
  REQUIRE_NOTHROW(environment_fingerprint(a));
  CHECK(environment_fingerprint(a) != environment_fingerprint(b));
  CHECK(environment_differences(a, b) == std::vector<std::string>{"libraries.x/y"});
}

TEST_CASE("the fingerprint of stored text that is not UTF-8 does not throw", "[environment]") {
  json env = {{"compiler", "gcc caf\xE9"}, {"cpu", {{"model", "\xFF"}}}};
  CHECK_NOTHROW(environment_fingerprint(env));
}
