#pragma once
// The measure::kernel of a plugin's state: run() calls the plugin's run for one iteration, on the
// host (cpu) or enqueued on the device kernel's stream (cuda, timed with CUDA events). The first
// failure of the plugin's run throws run_failed: the measurement stops there, so a run whose
// plugin failed keeps no sample and no throughput (the iterations after a failure did no work).
#include <memory>
#include <stdexcept>
#include <string>

#include "accelbench/plugin.h"
#include "harness/measure/measure.hpp"

namespace accelbench::plugin {

// The plugin's run returned non-zero; what() is its message (one printable line).
class run_failed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Throws run_failed with the plugin's message in `err` (err_size bytes, maybe unterminated).
[[noreturn]] void throw_run_failed(char* err, size_t err_size);

class plugin_kernel : public measure::kernel {
public:
  plugin_kernel(const accelbench_plugin_v1& api, void* state) : m_api(api), m_state(state) {}
  // One iteration: the plugin's run and a test of its result, nothing else (the per-sample
  // overhead against a built-in kernel, bench/plugin).
  void run() override {
    if (m_api.run(m_state, 1, nullptr, m_err, sizeof m_err) != 0)
      throw_run_failed(m_err, sizeof m_err);
  }

private:
  const accelbench_plugin_v1& m_api;
  void* m_state;
  char m_err[512] = {}; // not cleared per call: only read after a failure
};

// One call of the plugin's run; throws run_failed when it fails.
void call_run(const accelbench_plugin_v1& api, void* state, int64_t iterations, void* stream);

// The cuda kernel of a plugin (cuda/plugin_cuda.cpp); nullptr in a build without CUDA.
std::unique_ptr<measure::kernel> make_cuda_kernel(const accelbench_plugin_v1& api, void* state);

} // namespace accelbench::plugin
