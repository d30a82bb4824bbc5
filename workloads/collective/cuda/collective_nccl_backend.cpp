// The collective workload's cuda backend object: NCCL on device buffers (collective_nccl.hpp).
#include "harness/core/environment.hpp"
#include "harness/device/device.hpp"
#include "workloads/collective/collective_backend.hpp"
#include "workloads/collective/cuda/collective_nccl.hpp"

namespace accelbench::collective {

namespace {

class cuda_backend : public collective_backend {
public:
  std::string name() const override { return "cuda"; }
  backend_status status() const override { return device::cuda_backend_status(); }
  std::string build_detail() const override { return device::cuda_build_detail(); }
  std::string unavailable_reason() const override {
    std::string why;
    return device::cuda_available(&why) ? std::string() : "no usable CUDA device: " + why;
  }
  std::string refusal(const shape& s) const override { return nccl_unavailable_reason(s); }
  std::unique_ptr<collective_kernel> make_kernel(const shape& s) const override {
    return make_nccl_collective(s);
  }
};

} // namespace

// NCCL's version is among the libraries of every run of a build that has this backend.
std::unique_ptr<backend> make_cuda_backend() {
  register_library_version("nccl", nccl_version());
  return std::make_unique<cuda_backend>();
}

} // namespace accelbench::collective
