#pragma once
// A backend of a workload: the name the command line and the store use ("cpu", "cuda"), what it
// can run (the dtypes it takes) and whether it can run here at all (with the reason when not).
// Each backend folder of a workload (workloads/X/cpu, workloads/X/cuda) defines one, found by the
// build (cmake/accelbench_workloads.cmake) and handed to its workload once, in a backend_set: the
// workload asks the backend object instead of testing names or build macros. A backend that this
// build does not have is absent from the set, so asking for it is refused by name
// (backend_set::refusal); where the build found its folder but did not build it (CUDA without nvcc)
// the set keeps its name and the build's reason (an unbuilt_backend, generated beside the makers).
// Each backend also answers for itself in `accelbench env` (status()) and in `accelbench --version`
// (build_detail()), so that no list of backend names is kept anywhere else.
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"

namespace accelbench {

// What `accelbench env` says of a backend on this machine: one row per backend name.
struct backend_status {
  std::string name;
  bool available = false;
  std::string detail; // what was found, or why it is unavailable
  nlohmann::json devices = nlohmann::json::array();
};

// What `accelbench --version` says of a backend: one row per backend name, read from the build
// alone (build_detail(), or the build's reason), never from status(), which starts the CUDA driver.
struct backend_build {
  std::string name;
  bool built = false;
  std::string detail; // what the build made of it ("sm 90 100"), or "not built: <reason>"
};

// A backend whose folder the build found but did not build, and the build's reason ("nvcc was
// not found at configure time"): generated beside the makers (cmake/accelbench_workloads.cmake),
// the one place that decides which folders are built.
struct unbuilt_backend {
  std::string name;
  std::string reason;
  // "not built: <reason>", the words of env and of the planner's refusal.
  std::string why() const { return "not built: " + reason; }
  backend_status status() const { return {name, false, why(), nlohmann::json::array()}; }
  backend_build build() const { return {name, false, why()}; }
};

class backend {
public:
  virtual ~backend() = default;
  // The name in configs, runs and on the command line.
  virtual std::string name() const = 0;
  // The dtypes it runs (names as in configs); empty: the workload's dtype axis is not its concern.
  virtual std::vector<std::string> dtypes() const { return {}; }
  // Why nothing can run on it on this machine (no device, no driver), empty when it can. The
  // per-config reasons (a dtype the device lacks, memory) are the workload backend's.
  virtual std::string unavailable_reason() const { return {}; }
  // What this machine offers it, for `accelbench env`. Every workload's backend of one name
  // answers alike (cpu_backend_status(), device::cuda_backend_status()): env shows one row per
  // name. By default: available unless unavailable_reason() says why not.
  virtual backend_status status() const {
    const std::string why = unavailable_reason();
    return {name(), why.empty(), why, nlohmann::json::array()};
  }
  // What this build made of it, known without asking the machine (`accelbench --version`): the
  // CUDA architectures of the cuda backends' kernels (device::cuda_build_detail()); empty when
  // there is nothing to say beyond its name.
  virtual std::string build_detail() const { return {}; }
  backend_build build() const { return {name(), true, build_detail()}; }

  bool runs_dtype(std::string_view d) const {
    const auto ds = dtypes();
    return ds.empty() || std::find(ds.begin(), ds.end(), d) != ds.end();
  }
  // "dtype X is not supported by the cpu backend (fp32, bf16)", or "" when it is.
  std::string dtype_refusal(std::string_view d) const {
    if (runs_dtype(d))
      return {};
    return fmt::format("dtype {} is not supported by the {} backend ({})", d, name(),
                       fmt::join(dtypes(), ", "));
  }
};

// The cpu backends' status (each workload's cpu backend answers with it): the CPU libraries and
// the widest instruction set the CPU kernels use here.
inline backend_status cpu_backend_status() {
  const cpu_features f = detect_cpu_features();
  const char* isa =
      f.avx512f ? (f.avx512bf16 ? "AVX-512 with BF16" : "AVX-512") : (f.avx2 ? "AVX2" : "baseline");
  return {"cpu", true, std::string("oneDNN and OpenBLAS; ISA ") + isa, nlohmann::json::array()};
}

// Made by a backend folder; the build lists the makers of a workload's folders in
// <workload>::built_backends(), and the folders it did not build in <workload>::unbuilt_backends()
// (generated: see cmake/accelbench_workloads.cmake).
using backend_list = std::vector<std::unique_ptr<backend>>;
using unbuilt_list = std::vector<unbuilt_backend>;

// The backends of one workload, each once, in name order (cpu, cuda: the order `accelbench list`
// shows). B is the workload's own backend interface, derived from backend.
template <class B> class backend_set {
public:
  backend_set() = default;
  explicit backend_set(backend_list all, unbuilt_list unbuilt = {})
      : m_unbuilt(std::move(unbuilt)) {
    for (auto& b : all)
      add(std::move(b));
  }

  void add(std::unique_ptr<backend> b) {
    if (find(b->name()))
      throw error(fmt::format("backend {} registered twice", b->name()));
    if (!dynamic_cast<B*>(b.get()))
      throw error(fmt::format("backend {} is not a backend of this workload", b->name()));
    m_all.emplace_back(static_cast<B*>(b.release())); // a B: checked above
    std::sort(m_all.begin(), m_all.end(),
              [](const auto& x, const auto& y) { return x->name() < y->name(); });
  }

  const B* find(std::string_view name) const {
    for (const auto& b : m_all)
      if (b->name() == name)
        return b.get();
    return nullptr;
  }

  // The backend of a config the plan accepted (its name is one of names()).
  const B& get(std::string_view name) const {
    if (const B* b = find(name))
      return *b;
    throw error(fmt::format("backend {} is not built", name));
  }

  // Why a config of backend `name` cannot run: the build lacks it, or the backend's own reason,
  // refusal(b) (empty when it can run).
  template <class F> std::string refusal(std::string_view name, F&& refusal) const {
    if (const B* b = find(name))
      return refusal(*b);
    if (const unbuilt_backend* u = find_unbuilt(name))
      return fmt::format("backend {} is {}", name, u->why());
    return fmt::format("backend {} is not built into this accelbench (built: {})", name,
                       fmt::join(names(), ", "));
  }

  std::vector<const backend*> all() const {
    std::vector<const backend*> out;
    out.reserve(m_all.size());
    for (const auto& b : m_all)
      out.push_back(b.get());
    return out;
  }

  // The backends of its folders that this build did not build, with the build's reason.
  const unbuilt_list& unbuilt() const { return m_unbuilt; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(m_all.size());
    for (const auto& b : m_all)
      out.push_back(b->name());
    return out;
  }

  // The dtypes any backend runs, in the order of `order` (a dtype axis' choices).
  template <class D> std::vector<std::string> dtype_choices(std::span<const D> order) const {
    std::vector<std::string> out;
    out.reserve(order.size());
    for (const auto& d : order)
      if (std::any_of(m_all.begin(), m_all.end(),
                      [&](const auto& b) { return has(b->dtypes(), to_string(d)); }))
        out.push_back(to_string(d));
    return out;
  }

private:
  const unbuilt_backend* find_unbuilt(std::string_view name) const {
    for (const auto& u : m_unbuilt)
      if (u.name == name)
        return &u;
    return nullptr;
  }
  static bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }
  std::vector<std::unique_ptr<B>> m_all;
  unbuilt_list m_unbuilt;
};

} // namespace accelbench
