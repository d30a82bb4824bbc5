#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "harness/core/conditions.hpp"
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

TEST_CASE("the FMA probe measures a positive peak", "[peak][timing]") {
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

namespace {

// A cache in a folder of its own, with a probe that returns what the test says and counts calls:
// the rules of the cache, apart from this machine's speed and load.
struct fake_cache {
  std::filesystem::path dir;
  int probes = 0;
  double next_fp32 = 0.46, next_load = 0.01;
  fake_cache() {
    dir = std::filesystem::temp_directory_path() /
          ("ab-peak-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
    std::filesystem::create_directories(dir);
  }
  ~fake_cache() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path file() const { return dir / "peak.json"; }
  peak_cache cache() {
    return {file(), "Example CPU", 2, [this](int threads) {
              ++probes;
              cpu_peak p;
              p.fp32_tflops = next_fp32;
              p.bf16_tflops = 2 * next_fp32;
              p.threads = threads;
              p.isa = "avx512";
              p.cpu_model = "Example CPU";
              p.measured_at = "2026-12-04T00:00:00.000Z";
              p.other_load = next_load;
              return p;
            }};
  }
  void write(const json& j) const { std::ofstream(file()) << j.dump(); }
  json read() const { return json::parse(std::ifstream(file())); }
};

json entry(double fp32, std::optional<double> load) {
  json j = {{"fp32_tflops", fp32}, {"bf16_tflops", 0.0},         {"threads", 2},
            {"isa", "avx512"},     {"cpu_model", "Example CPU"}, {"measured_at", "then"}};
  if (load)
    j["other_processes_cpu_share"] = *load;
  return j;
}

} // namespace

TEST_CASE(
    "the peak cache: a quiet entry is used without probing, and a new probe keeps the highest",
    "[peak]") {
  fake_cache c;
  c.write(entry(0.268, 0.01));
  CHECK(resolve_cpu_peak(c.cache(), probe_when::if_unknown).fp32_tflops == 0.268);
  CHECK(c.probes == 0);
  // Probed again (env --reprobe, or a run beat it): the higher probe replaces the cached one.
  c.next_fp32 = 0.462;
  CHECK(resolve_cpu_peak(c.cache(), probe_when::again).fp32_tflops == 0.462);
  CHECK(c.read()["fp32_tflops"] == 0.462);
  CHECK(c.read()["other_processes_cpu_share"] == 0.01);
  // A lower one does not: the peak is a maximum, and a probe can only under-read it.
  c.next_fp32 = 0.30;
  CHECK(resolve_cpu_peak(c.cache(), probe_when::again).fp32_tflops == 0.462);
  CHECK(c.read()["fp32_tflops"] == 0.462);
  CHECK(c.probes == 2);
  // What this process already used is kept too.
  cpu_peak known;
  known.fp32_tflops = 0.5;
  known.other_load = 0;
  CHECK(resolve_cpu_peak(c.cache(), probe_when::if_unknown, known).fp32_tflops == 0.5);
}

TEST_CASE("the peak cache: a probe taken while other processes used the cores is never cached",
          "[peak]") {
  fake_cache c;
  c.next_fp32 = 0.268;
  c.next_load = 0.40; // the busy machine: 0.268 instead of 0.462 TFLOP/s
  cpu_peak p = resolve_cpu_peak(c.cache(), probe_when::if_unknown);
  CHECK(p.fp32_tflops == 0.268); // this process may use it (it gives no % of peak)
  CHECK_FALSE(p.quiet());
  CHECK_FALSE(std::filesystem::exists(c.file()));
  // So the next process probes again, and a quiet probe is cached.
  c.next_fp32 = 0.462;
  c.next_load = 0.02;
  CHECK(resolve_cpu_peak(c.cache(), probe_when::if_unknown).quiet());
  CHECK(c.probes == 2);
  CHECK(c.read()["fp32_tflops"] == 0.462);
  // A later loaded probe leaves the quiet entry alone.
  c.next_fp32 = 0.2;
  c.next_load = 0.5;
  const cpu_peak after = resolve_cpu_peak(c.cache(), probe_when::again);
  CHECK(after.fp32_tflops == 0.462);
  CHECK(after.quiet());
  CHECK(c.read()["fp32_tflops"] == 0.462);
  // Just above the limit is loaded; at it, quiet.
  c.next_load = k_probe_max_other_load + 0.001;
  CHECK_FALSE(c.cache().probe(2).quiet());
  c.next_load = k_probe_max_other_load;
  CHECK(c.cache().probe(2).quiet());
}

TEST_CASE("the peak cache: an entry without the load while probing is probed again", "[peak]") {
  fake_cache c;
  c.write(entry(0.268, std::nullopt)); // written before the load was recorded
  c.next_fp32 = 0.462;
  const cpu_peak p = resolve_cpu_peak(c.cache(), probe_when::if_unknown);
  CHECK(c.probes == 1);
  CHECK(p.fp32_tflops == 0.462);
  CHECK(c.read()["other_processes_cpu_share"] == 0.01);
  // An entry for another CPU is not this machine's peak.
  fake_cache other;
  json e = entry(9.0, 0.0);
  e["cpu_model"] = "Another CPU";
  other.write(e);
  CHECK(resolve_cpu_peak(other.cache(), probe_when::if_unknown).fp32_tflops == 0.46);
}

TEST_CASE("the FMA probe records other processes' share of the cores while it ran",
          "[peak][timing]") {
  // Two snapshots 10 s apart: the machine's CPUs were busy 10 s, this process 2 s, on 2 cores:
  // others used (10 - 2) / 10 / 2 = 40% of the cores.
  int calls = 0;
  auto fake_state = [&calls] {
    machine_state m;
    m.cores = 2;
    m.wall_s = calls == 0 ? 0 : 10;
    m.busy_cpu_s = calls == 0 ? 0 : 10;
    m.own_cpu_s = calls == 0 ? 0 : 2;
    ++calls;
    return m;
  };
  const cpu_peak p = measure_cpu_peak(1, fake_state);
  CHECK(calls == 2);
  CHECK(p.fp32_tflops > 0);
  CHECK(p.other_load == Approx(0.4));
  CHECK_FALSE(p.quiet());
  CHECK(p.to_json()["other_processes_cpu_share"] == Approx(0.4));
}
