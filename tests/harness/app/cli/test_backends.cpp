// The backends of the registered workloads are objects (harness/core/backend.hpp): the registry
// lists each workload's backends from them, the planner refuses a backend that cannot run here
// with its reason (not built: the build has no such backend; built: the machine's reason, e.g. no
// GPU), and a backend's own limits (the cpu GEMM's two dtypes) are its refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/app/cli/register_all.hpp"
#include "harness/app/cli/usage.hpp"
#include "harness/app/runner/runner.hpp"
#include "harness/core/backend.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"

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

std::vector<std::string> names_of(const std::vector<const backend*>& bs) {
  std::vector<std::string> out;
  out.reserve(bs.size());
  for (const auto* b : bs)
    out.push_back(b->name());
  return out;
}

const backend* backend_named(const workload& w, const std::string& name) {
  for (const auto* b : w.backends())
    if (b->name() == name)
      return b;
  return nullptr;
}

runner::job_plan plan_one(const std::string& workload, const std::string& backend,
                          std::vector<std::string> sets = {}) {
  runner::request r;
  r.workload = workload;
  r.backend = backend;
  r.sets = std::move(sets);
  return runner::plan(all_workloads(), r);
}

struct tiny_backend : backend {
  explicit tiny_backend(std::string n) : m_name(std::move(n)) {}
  std::string name() const override { return m_name; }
  std::vector<std::string> dtypes() const override { return {"fp32"}; }
  std::string m_name;
};
struct other_backend : backend {
  std::string name() const override { return "other"; }
};

// A backend that answers for itself in env, as the cpu and cuda ones do with what they found, and
// in --version with what the build made of it. It counts the times it was asked about the machine.
struct tpu_backend : backend {
  static inline int status_asked = 0;
  std::string name() const override { return "tpu"; }
  backend_status status() const override {
    ++status_asked;
    return {"tpu", false, "no TPU here", json::array({{{"index", 0}}})};
  }
  std::string build_detail() const override { return "v5e"; }
};

// A workload of this test: the backends its folders built (a tpu) and those the build found but did
// not build, with the reasons, as a generated <workload>::unbuilt_backends() lists them.
class folders_workload : public workload {
public:
  folders_workload(std::string name, bool with_tpu, unbuilt_list unbuilt)
      : m_backends(made(with_tpu), std::move(unbuilt)) {
    m_spec.name = std::move(name);
    m_spec.family = "kernel";
    m_spec.backends = m_backends.names();
  }
  const workload_spec& spec() const override { return m_spec; }
  std::vector<const backend*> backends() const override { return m_backends.all(); }
  unbuilt_list backends_not_built() const override { return m_backends.unbuilt(); }
  void execute(const config&, run&, run_context&) const override {}

private:
  static backend_list made(bool with_tpu) {
    backend_list out;
    if (with_tpu)
      out.push_back(std::make_unique<tpu_backend>());
    return out;
  }
  backend_set<backend> m_backends;
  workload_spec m_spec;
};

// The backend names of --version's "backends   cpu, cuda (sm 90 100)" line: each name may be
// followed by its detail in parentheses (which may hold ", " itself).
std::vector<std::string> version_backend_names(const std::string& version) {
  const std::string tag = "\nbackends   ";
  const size_t at = version.find(tag);
  REQUIRE(at != std::string::npos);
  const std::string line =
      version.substr(at + tag.size(), version.find('\n', at + 1) - at - tag.size());
  std::vector<std::string> out;
  std::string name;
  int depth = 0;
  for (const char c : line) {
    if (c == '(' || c == ')') {
      depth += c == '(' ? 1 : -1;
    } else if (depth == 0 && c == ',') {
      out.push_back(name);
      name.clear();
    } else if (depth == 0 && c != ' ') { // names hold no space: the one after a comma
      name += c;
    }
  }
  out.push_back(name);
  return out;
}

std::vector<std::string> status_names(const std::vector<backend_status>& ss) {
  std::vector<std::string> out;
  out.reserve(ss.size());
  for (const auto& s : ss)
    out.push_back(s.name);
  return out;
}

} // namespace

TEST_CASE("registry lists each workload's backends from its backend objects") {
  for (const std::string name : {"gemm", "attention", "train.llama", "collective"}) {
    INFO(name);
    const workload* w = all_workloads().find(name);
    if (!w)
      continue; // left out by ACCELBENCH_SKIP_MODULES
    const auto objects = w->backends();
    REQUIRE(!objects.empty());
    CHECK(names_of(objects) == w->spec().backends);
    CHECK(w->spec().backends.front() == "cpu");
    CHECK(backend_named(*w, "cpu")->unavailable_reason().empty());
    if (!build_info::cuda_built()) {
      CHECK(backend_named(*w, "cuda") == nullptr);
      // Its cuda/ folder was found and not built: the build says why.
      REQUIRE(w->backends_not_built().size() == 1);
      CHECK(w->backends_not_built().front().name == "cuda");
      CHECK(!w->backends_not_built().front().reason.empty());
    }
  }
  // The dtype axis offers what the backends run: the cpu GEMM's two, every CUDA dtype with cuda.
  const workload& gemm = all_workloads().get("gemm");
  const axis* dtype = gemm.spec().find_axis("dtype");
  REQUIRE(dtype != nullptr);
  const auto backends = gemm.backends();
  std::vector<std::string> expected;
  for (const char* d : {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4"})
    if (std::any_of(backends.begin(), backends.end(),
                    [&](const backend* b) { return b->runs_dtype(d); }))
      expected.emplace_back(d);
  CHECK(dtype->choices == expected);
  CHECK(backend_named(gemm, "cpu")->dtypes() == std::vector<std::string>{"fp32", "bf16"});
}

TEST_CASE("registry refuses --backend cuda with the reason of its backend object") {
  for (const std::string name : {"gemm", "attention", "train.llama"}) {
    INFO(name);
    const workload* w = all_workloads().find(name);
    if (!w)
      continue;
    const backend* cuda = backend_named(*w, "cuda");
    if (!build_info::cuda_built()) {
      REQUIRE(cuda == nullptr);
      REQUIRE(!w->backends_not_built().empty());
      CHECK_THROWS_WITH(plan_one(name, "cuda"),
                        "backend cuda is unavailable for " + name + ": not built: " +
                            w->backends_not_built().front().reason + " (see accelbench env)");
      continue;
    }
    REQUIRE(cuda != nullptr);
    // A config every device runs (cuDNN's SDPA takes bf16 only, the native kernels fp32 too).
    const std::vector<std::string> sets =
        name == "attention" ? std::vector<std::string>{"impl=native"} : std::vector<std::string>{};
    const std::string why = cuda->unavailable_reason();
    if (why.empty()) { // a GPU: the config plans
      CHECK(plan_one(name, "cuda", sets).configs.size() == 1);
      continue;
    }
    // No GPU here: the single run is refused, naming what the backend found.
    CHECK_THROWS_AS(plan_one(name, "cuda", sets), input_error);
    CHECK_THROWS_WITH(plan_one(name, "cuda", sets), Catch::Contains(why));
  }
  CHECK_THROWS_WITH(plan_one("gemm", "tpu"),
                    Catch::Contains("unknown backend 'tpu' for workload gemm"));
}

TEST_CASE("registry: a dtype the cpu GEMM lacks is refused by its backend object") {
  const workload& gemm = all_workloads().get("gemm");
  const auto& choices = gemm.spec().find_axis("dtype")->choices;
  if (std::find(choices.begin(), choices.end(), "fp16") == choices.end()) {
    CHECK_THROWS_WITH(plan_one("gemm", "cpu", {"dtype=fp16"}), Catch::Contains("fp16"));
    return; // a build without CUDA does not offer it at all
  }
  CHECK_THROWS_WITH(plan_one("gemm", "cpu", {"dtype=fp16"}),
                    Catch::Contains("dtype fp16 is not supported by the cpu backend (fp32, bf16)"));
  CHECK(plan_one("gemm", "cpu", {"dtype=bf16"}).configs.size() == 1);
}

TEST_CASE("registry's backend sets hold each backend once, in name order") {
  backend_list made;
  made.push_back(std::make_unique<tiny_backend>("cuda"));
  made.push_back(std::make_unique<tiny_backend>("cpu"));
  backend_set<tiny_backend> set(std::move(made));
  CHECK(set.names() == std::vector<std::string>{"cpu", "cuda"});
  CHECK(set.find("tpu") == nullptr);
  CHECK(set.refusal("tpu", [](const tiny_backend&) { return std::string(); }) ==
        "backend tpu is not built into this accelbench (built: cpu, cuda)");
  CHECK(set.get("cpu").dtype_refusal("bf16") ==
        "dtype bf16 is not supported by the cpu backend (fp32)");
  CHECK(set.get("cpu").dtype_refusal("fp32").empty());
  CHECK_THROWS_WITH(set.add(std::make_unique<tiny_backend>("cpu")), "backend cpu registered twice");
  // A backend whose folder the build did not build is refused with the build's reason.
  backend_list one;
  one.push_back(std::make_unique<tiny_backend>("cpu"));
  backend_set<tiny_backend> partial(std::move(one),
                                    {{"cuda", "nvcc was not found at configure time"}});
  CHECK(partial.names() == std::vector<std::string>{"cpu"});
  CHECK(partial.refusal("cuda", [](const tiny_backend&) { return std::string(); }) ==
        "backend cuda is not built: nvcc was not found at configure time");
  CHECK_THROWS_WITH(set.add(std::make_unique<other_backend>()),
                    "backend other is not a backend of this workload");
}

TEST_CASE("registry: env's backends are the registered workloads' backend objects, and the "
          "backends their folders did not build, each once") {
  registry reg;
  reg.add(std::make_unique<folders_workload>(
      "first", true, unbuilt_list{{"npu", "no npu compiler at configure time"}}));
  // Another workload's tpu folder was not built: the tpu that was built answers.
  reg.add(std::make_unique<folders_workload>(
      "second", false,
      unbuilt_list{{"tpu", "no tpu library at configure time"},
                   {"npu", "a second reason that nobody reads"}}));
  const auto statuses = reg.backend_statuses();
  REQUIRE(status_names(statuses) == std::vector<std::string>{"npu", "tpu"});
  CHECK(!statuses[0].available);
  CHECK(statuses[0].detail == "not built: no npu compiler at configure time");
  CHECK(statuses[0].devices == json::array());
  CHECK(statuses[1].detail == "no TPU here");
  CHECK(statuses[1].devices == json::array({{{"index", 0}}}));

  // The planner refuses a backend that was not built with the build's reason, any other name as
  // unknown.
  runner::request r;
  r.workload = "first";
  r.backend = "npu";
  CHECK_THROWS_WITH(runner::plan(reg, r), "backend npu is unavailable for first: not built: no "
                                          "npu compiler at configure time (see accelbench env)");
  r.backend = "xpu";
  CHECK_THROWS_WITH(runner::plan(reg, r),
                    "unknown backend 'xpu' for workload first (available: tpu)");
}

TEST_CASE("registry: every backend of the registered workloads, built or not, has a status") {
  std::vector<std::string> expected;
  for (const workload* w : all_workloads().all()) {
    for (const backend* b : w->backends())
      expected.push_back(b->name());
    for (const unbuilt_backend& u : w->backends_not_built())
      expected.push_back(u.name);
  }
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  const auto statuses = all_workloads().backend_statuses();
  CHECK(status_names(statuses) == expected);
  for (const auto& s : statuses) {
    INFO(s.name);
    CHECK(!s.detail.empty());
    CHECK(s.devices.is_array());
  }
  // A build without CUDA still lists it, with the build's reason.
  REQUIRE(statuses.size() >= 2);
  CHECK(statuses[1].name == "cuda");
  if (!build_info::cuda_built())
    CHECK_THAT(statuses[1].detail, Catch::StartsWith("not built: "));
}

TEST_CASE("version: --version lists every backend of the registered workloads, as env does") {
  const std::string version = cli::version_text(all_workloads());
  INFO(version);
  CHECK(version_backend_names(version) == status_names(all_workloads().backend_statuses()));
  if (!build_info::cuda_built())
    CHECK_THAT(version, Catch::Contains(", cuda (not built: "));
}

TEST_CASE("version: a backend is listed with what the build made of it, or the build's reason, "
          "without asking it about the machine") {
  registry reg;
  reg.add(std::make_unique<folders_workload>(
      "first", true, unbuilt_list{{"npu", "no npu compiler at configure time"}}));
  reg.add(std::make_unique<folders_workload>(
      "second", false, unbuilt_list{{"tpu", "no tpu library at configure time"}}));
  const int asked = tpu_backend::status_asked;
  const std::string version = cli::version_text(reg);
  CHECK_THAT(version,
             Catch::Contains("\nbackends   npu (not built: no npu compiler at configure time), tpu "
                             "(v5e)\n"));
  CHECK(tpu_backend::status_asked == asked); // status() may start a driver: --version stays cheap
  const auto builds = reg.backend_builds();
  REQUIRE(builds.size() == 2);
  CHECK(!builds[0].built);
  CHECK(builds[1].built);
}
