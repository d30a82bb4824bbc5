// The cuda kernel of a plugin: a device::device_kernel whose iteration is the plugin's run on the
// kernel's stream, so that the harness times it with CUDA events, flushes L2 and waits for the
// clock as it does for the built-in CUDA kernels. Plain C++: the stream is an opaque pointer.
#include "harness/device/device_kernel.hpp"
#include "workloads/plugin/plugin_kernel.hpp"

namespace accelbench::plugin {

namespace {

class plugin_cuda_kernel : public device::device_kernel {
public:
  plugin_cuda_kernel(const accelbench_plugin_v1& api, void* state) : m_api(api), m_state(state) {}
  void enqueue(void* stream) override { call_run(m_api, m_state, 1, stream); }

private:
  const accelbench_plugin_v1& m_api;
  void* m_state;
};

} // namespace

std::unique_ptr<measure::kernel> make_cuda_kernel(const accelbench_plugin_v1& api, void* state) {
  return std::make_unique<plugin_cuda_kernel>(api, state);
}

} // namespace accelbench::plugin
