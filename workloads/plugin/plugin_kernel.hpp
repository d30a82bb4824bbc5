#pragma once
// The measure::kernel of a plugin's state: run() calls the plugin's run for one iteration, on the
// host (cpu) or enqueued on the device kernel's stream (cuda, timed with CUDA events). The first
// failure of the plugin's run is kept; the iterations after it are not run.
#include <memory>
#include <string>

#include "accelbench/plugin.h"
#include "harness/measure/measure.hpp"

namespace accelbench::plugin {

// What the plugin's run reported, shared by the kernel and its owner.
struct run_status_text {
  std::string error; // "" while every call succeeded
};

class plugin_kernel : public measure::kernel {
public:
  plugin_kernel(const accelbench_plugin_v1& api, void* state, run_status_text& status)
      : m_api(api), m_state(state), m_status(status) {}
  // One iteration: the plugin's run and a test of its result, nothing else (the per-sample
  // overhead against a built-in kernel, bench/plugin).
  void run() override {
    if (!m_failed && m_api.run(m_state, 1, nullptr, m_err, sizeof m_err) != 0)
      fail();
  }

private:
  void fail(); // keeps the message; the iterations after it are not run

  const accelbench_plugin_v1& m_api;
  void* m_state;
  run_status_text& m_status;
  bool m_failed = false;
  char m_err[512] = {}; // not cleared per call: only read after a failure
};

// One call of the plugin's run; false (and status.error set) when it failed or failed before.
bool call_run(const accelbench_plugin_v1& api, void* state, int64_t iterations, void* stream,
              run_status_text& status);

// The cuda kernel of a plugin (cuda/plugin_cuda.cpp); nullptr in a build without CUDA.
std::unique_ptr<measure::kernel> make_cuda_kernel(const accelbench_plugin_v1& api, void* state,
                                                  run_status_text& status);

} // namespace accelbench::plugin
