// Every CUDA config as a user reaches it: through the registry (the spec's axes and choices,
// resolve_config, validate, normalize, unavailable_reason) and through the CLI's planning of
// `run` (cmd_run up to the point where a device is needed). The backend tests call the CUDA code
// directly, so a spec that refuses what the backend supports (the GEMM dtype choices did: a CUDA
// build accepted only fp32 and bf16) shows only here. Runs without a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/register_all.hpp"
#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "tests/support/cli_helpers.hpp"
#include "workloads/gemm/cuda/gemm_cuda.hpp"

using namespace accelbench;

namespace {

const registry& all_workloads() {
  static const registry reg = [] {
    registry r;
    cli::register_all(r);
    return r;
  }();
  return reg;
}

bool has_cuda(const workload_spec& s) {
  return std::find(s.backends.begin(), s.backends.end(), "cuda") != s.backends.end();
}

const axis* find_axis(const workload_spec& s, const std::string& name) {
  for (const auto& a : s.axes)
    if (a.name == name)
      return &a;
  return nullptr;
}

// Values that every CUDA kernel of the workload accepts besides the axis under test: the GEMM's
// narrow dtypes need the TN layout, everything else runs on the defaults.
std::map<std::string, std::string> base_values(const std::string& workload) {
  if (workload == "gemm")
    return {{"trans_b", "1"}};
  return {};
}

// The planner of `accelbench run`, stopped before anything runs: a sweep of every choice of one
// axis, so a config that cannot run here is a recorded skip and a refused value is an exception.
int plan_sweep(const std::string& workload, const axis& a) {
  cli::run_options o;
  o.workload = workload;
  o.backend = "cuda";
  for (const auto& [k, v] : base_values(workload))
    if (k != a.name)
      o.sets.push_back(k + "=" + v);
  std::string values;
  for (const auto& c : a.choices)
    values += (values.empty() ? "" : ",") + c;
  o.sweeps = {a.name + "=" + values};
  o.plan_only = true;
  o.quiet = true;
  return cli::cmd_run(all_workloads(), o);
}

} // namespace

TEST_CASE("the GEMM spec offers every dtype of the CUDA backend", "[cuda][configs]") {
  const workload_spec& s = all_workloads().get("gemm").spec();
  const axis* dtype = find_axis(s, "dtype");
  REQUIRE(dtype != nullptr);
  CHECK(dtype->choices == gemm::cuda_gemm_dtypes());
  for (const char* d : {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4"}) {
    INFO(d);
    CHECK(std::count(dtype->choices.begin(), dtype->choices.end(), d) == 1);
  }
}

TEST_CASE("every choice of every CUDA workload resolves through the registry", "[cuda][configs]") {
  std::string no_device;
  const bool gpu = device::cuda_available(&no_device);
  int workloads = 0;
  for (const workload* w : all_workloads().all()) {
    const workload_spec& s = w->spec();
    if (!has_cuda(s))
      continue;
    ++workloads;
    for (const axis& a : s.axes)
      for (const std::string& choice : a.choices) {
        auto vals = base_values(s.name);
        vals[a.name] = choice;
        INFO(s.name << " " << a.name << "=" << choice);
        config cfg;
        REQUIRE_NOTHROW(cfg = resolve_config(s, "cuda", vals));
        REQUIRE_NOTHROW(w->validate(cfg));
        w->normalize(cfg);
        const std::string why = w->unavailable_reason(cfg);
        // Without a device every CUDA config is unavailable, with a reason; never for being
        // unknown.
        if (!gpu)
          CHECK_FALSE(why.empty());
        CHECK(why.find("unknown") == std::string::npos);
        CHECK(why.find("cpu backend") == std::string::npos);
      }
  }
  CHECK(workloads >= 1);
}

TEST_CASE("the GEMM's every CUDA dtype needs only a device, not another value", "[cuda][configs]") {
  std::string no_device;
  if (device::cuda_available(&no_device))
    return; // with a device the reasons are the device's
  const workload& w = all_workloads().get("gemm");
  for (const auto& d : gemm::cuda_gemm_dtypes()) {
    INFO(d);
    config cfg = resolve_config(w.spec(), "cuda", {{"dtype", d}, {"trans_b", "1"}});
    w.validate(cfg);
    w.normalize(cfg);
    CHECK(w.unavailable_reason(cfg).rfind("CUDA backend: ", 0) == 0);
  }
}

TEST_CASE("the run planner accepts every choice of every CUDA workload's axes", "[cuda][configs]") {
  for (const workload* w : all_workloads().all()) {
    const workload_spec& s = w->spec();
    if (!has_cuda(s))
      continue;
    for (const axis& a : s.axes) {
      if (a.choices.empty())
        continue;
      INFO(s.name << " --sweep " << a.name);
      CHECK(plan_sweep(s.name, a) == exit_ok);
    }
  }
}

TEST_CASE(
    "accelbench run gemm --backend cuda takes an fp8 dtype (refused only for want of a device)",
    "[cuda][configs]") {
  test_cli::temp_dir tmp;
  auto r = test_cli::ab(
      "run gemm --backend cuda --set dtype=fp8_e4m3 --set trans_b=1 --set M=256 --set N=256 "
      "--set K=256 --rules kernel-quick --quiet --db " +
      tmp.db());
  INFO(r.err);
  CHECK(r.err.find("unknown dtype") == std::string::npos);
  std::string why;
  if (device::cuda_available(&why)) {
    // A device that cannot run fp8 (before sm_89) says so; one that can runs it.
    CHECK((r.rc == exit_ok || r.rc == exit_failed || r.err.find("fp8") != std::string::npos));
  } else {
    CHECK(r.rc == exit_usage);
    CHECK(r.err.find("CUDA backend: ") != std::string::npos);
  }
}
