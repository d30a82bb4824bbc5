// The gemm workload's cuda backend object: cuBLASLt on device 0 (gemm_cuda.hpp).
#include "harness/device/device.hpp"
#include "workloads/gemm/cuda/gemm_cuda.hpp"
#include "workloads/gemm/gemm_backend.hpp"

namespace accelbench::gemm {

namespace {

class cuda_backend : public gemm_backend {
public:
  std::string name() const override { return "cuda"; }
  backend_status status() const override { return device::cuda_backend_status(); }
  std::string build_detail() const override { return device::cuda_build_detail(); }
  std::vector<std::string> dtypes() const override { return cuda_gemm_dtypes(); }
  std::string unavailable_reason() const override {
    std::string why;
    return cuda_available(&why) ? std::string() : "CUDA backend: " + why;
  }

  void normalize(config& cfg) const override { cfg.values["library"] = "cublaslt"; }

  std::string refusal(const gemm_shape& s, const config& cfg) const override {
    return gemm_cuda_unavailable_reason(s);
  }

  void execute(const gemm_shape& s, const config& cfg, run& out, run_context& ctx,
               const output_hook& hook) const override {
    gemm_cuda_execute(s, cfg.key(), out, ctx);
  }
};

} // namespace

std::unique_ptr<backend> make_cuda_backend() { return std::make_unique<cuda_backend>(); }

} // namespace accelbench::gemm
