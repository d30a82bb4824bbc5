// The attention workload's cuda backend object: our kernels or cuDNN's SDPA on device 0
// (attention_cuda.hpp).
#include "harness/device/device.hpp"
#include "workloads/attention/attention_backend.hpp"
#include "workloads/attention/cuda/attention_cuda.hpp"

namespace accelbench::attention {

namespace {

class cuda_backend : public attention_backend {
public:
  std::string name() const override { return "cuda"; }
  backend_status status() const override { return device::cuda_backend_status(); }
  std::string build_detail() const override { return device::cuda_build_detail(); }
  std::string default_impl() const override { return "cudnn"; }
  std::string unavailable_reason() const override {
    std::string why;
    return device::cuda_available(&why) ? std::string() : "CUDA backend: " + why;
  }

  std::string refusal(const attention_params& p, const config& cfg) const override {
    return attention_cuda_unavailable_reason(p);
  }

  void execute(const attention_params& p, run& out, run_context& ctx,
               const output_hook&) const override {
    attention_cuda_execute(p, out, ctx);
  }
};

} // namespace

std::unique_ptr<backend> make_cuda_backend() { return std::make_unique<cuda_backend>(); }

} // namespace accelbench::attention
