#pragma once
// The workload interface and the registry. Registration is explicit: each workload exposes
// register_<name>(registry&), which the build finds and calls from one place
// (cmake/accelbench_workloads.cmake, harness/app/cli/register_all.cpp). Its backends are objects
// (harness/core/backend.hpp), so the names in spec().backends are those of the backends built.
#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/backend.hpp"
#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench {

// What a workload gets besides its config: effective rules and where to report progress.
struct run_context {
  const ruleset* rules = nullptr; // effective ruleset (overrides applied)
  std::ostream* log = nullptr;    // progress and logs (stderr); never results
  bool interactive = false;       // log is a terminal: a live progress line is welcome
  uint64_t seed = 0;              // 0: the workload draws one from a proper entropy source
  // Set when the user interrupts the job (Ctrl-C): a workload that runs another program ends it
  // now instead of at its end. nullptr: nobody can interrupt.
  const std::atomic<bool>* cancel = nullptr;
};

class workload {
public:
  virtual ~workload() = default;
  virtual const workload_spec& spec() const = 0;

  // The ruleset used when the user names none; a workload whose modes are judged by different
  // rules (training throughput vs time-to-train) picks by config.
  virtual std::string default_ruleset(const config& cfg) const { return spec().default_ruleset; }

  // Replaces sentinel values by what they stand for (e.g. seq_k = 0 meaning "= seq_q"), so that
  // two requests for the same computation share one canonical config key.
  virtual void normalize(config& cfg) const {}

  // Cross-axis rules (heads % kv_heads, dtype supported by library...). Throws input_error naming
  // the parameter and the value. Called before anything runs or is stored.
  virtual void validate(const config& cfg) const {}

  // Its backend objects, one per name of spec().backends (none for a workload that runs no code
  // of its own, e.g. an external program's): what each runs and whether it can run here.
  virtual std::vector<const backend*> backends() const { return {}; }
  // The backends of its folders that this build did not build, with the build's reason (CUDA
  // without nvcc): env lists them, the planner refuses them with that reason.
  virtual unbuilt_list backends_not_built() const { return {}; }

  // Bytes the config needs in host memory; refused before allocating when above what is available.
  virtual uint64_t estimate_host_bytes(const config& cfg) const { return 0; }

  // Why this config cannot run here (backend not built, no device, dtype unsupported on this
  // CPU); empty when it can. Single runs turn a reason into an input error, suites into a
  // skipped run.
  virtual std::string unavailable_reason(const config& cfg) const { return {}; }

  // Runs the config and fills samples, metrics, validity and extra. A failure inside the run is
  // data (out.mark_failed), not an exception; exceptions are for bugs. What a run may change is
  // what it is given (out, ctx): the workload itself is not, so the registry's workloads run as
  // they are (const).
  virtual void execute(const config& cfg, run& out, run_context& ctx) const = 0;
};

class registry {
public:
  void add(std::unique_ptr<workload> w);
  // Throws input_error listing the known workloads.
  workload& get(const std::string& name) const;
  const workload* find(const std::string& name) const;
  std::vector<const workload*> all() const;
  // One status per backend name of the registered workloads, in name order (`accelbench env`):
  // each asks the first built backend of its name (they answer alike), else the build's reason.
  std::vector<backend_status> backend_statuses() const;
  // The same names, each with what the build made of it or why it was not built, without asking
  // any backend about the machine (`accelbench --version` must not start the CUDA driver).
  std::vector<backend_build> backend_builds() const;

private:
  std::vector<std::unique_ptr<workload>> m_workloads;
};

} // namespace accelbench
