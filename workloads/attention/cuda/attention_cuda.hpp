#pragma once
// Attention on CUDA (issue 8 §4). Plain C++ interface (no CUDA types): pointers are device
// pointers, streams are cudaStream_t passed as void*. Called by workloads/attention/
// attention_workload.cpp when the config's backend is "cuda".
//
// Two implementations, chosen by the config's "impl" axis (default cudnn):
//   native  FlashAttention-2-style kernels of our own (flash_native.cu): forward and backward,
//           causal, GQA, fp32 and bf16, head_dim <= 256.
//   cudnn   cuDNN's fused SDPA through the cuDNN 9 backend graph API (cudnn_sdpa.cpp): forward
//           and backward, bf16, causal (top-left), GQA.
// Layouts and conventions are the CPU kernels' (workloads/attention/cpu/flash_attention.hpp).
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/attention/attention_workload.hpp"
#include "workloads/attention/cpu/flash_attention.hpp"

namespace accelbench::attention {

// The values of the "impl" axis the lead adds to the attention spec when CUDA is built.
const std::vector<std::string>& cuda_attention_impls(); // {"cudnn", "native"}

// Why this config cannot run on CUDA here, empty when it can: no device, impl/dtype/pass
// combination not supported (with the reason), not enough free device memory.
std::string attention_cuda_unavailable_reason(const config& cfg);
// Device bytes the config allocates.
uint64_t attention_cuda_device_bytes(const config& cfg);

// Runs the config on device 0: device-timed samples, metrics (time, tflops from attention_flops,
// the CPU backend's count, pct_of_peak where known, cv), extra (impl, device, correctness against
// the double-precision CPU reference), validity. Failures are data.
void attention_cuda_execute(const config& cfg, run& out, run_context& ctx);

// ---- host-level entry points (tests, scripts): upload, run once, download ----
// All arrays in fp32 on the host; with bf16 = true they are rounded to bf16 on upload (callers
// compare against the reference over the rounded inputs).
struct host_result {
  std::vector<float> o, lse, dq, dk, dv;
};
host_result run_forward_host(const attention_shape& s, const std::string& impl, bool bf16,
                             const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, int device_index = 0);
host_result run_backward_host(const attention_shape& s, const std::string& impl, bool bf16,
                              const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const std::vector<float>& d_o);

namespace native {
// FLOPs the native kernels execute in one iteration, which is more than the convention counts
// (k_flop_convention, the `tflops` metric of every impl): the backward recomputes Q K^T in both
// its dQ and its dK/dV kernels and dO V^T in both, 14*head_dim per visible pair where
// FlashAttention's count has 10 (5 matmuls). Recorded as extra["executed_flops_per_iteration"].
double executed_flops(const attention_shape& s, pass_kind p);
// How many (device, kernel) shared-memory opt-ins this process has made (each is made once per
// device: the attribute is per device, so one made on device 0 does not hold on device 1).
int smem_opt_ins();
// Device pointers; T = float or bf16 by `bf16`. `delta` is B*H*Sq floats of scratch.
void forward(const attention_shape& s, bool bf16, const void* q, const void* k, const void* v,
             void* o, float* lse, void* stream);
void backward(const attention_shape& s, bool bf16, const void* q, const void* k, const void* v,
              const void* o, const void* d_o, const float* lse, float* delta, void* dq, void* dk,
              void* dv, void* stream);
} // namespace native

namespace cudnn {
// cuDNN's version and whether its SDPA can run the shape here; empty when it can.
std::string unsupported_reason(const attention_shape& s, bool bf16, bool backward);

// A built cuDNN SDPA forward graph (execution plan + workspace) for one shape; move-only.
class sdpa_forward {
public:
  explicit sdpa_forward(const attention_shape& s); // throws backend_error with cuDNN's message
  ~sdpa_forward();
  sdpa_forward(sdpa_forward&&) noexcept;
  sdpa_forward& operator=(sdpa_forward&&) noexcept;
  // bf16 q, k, v, o; fp32 lse ([B, H, Sq], natural log).
  void run(const void* q, const void* k, const void* v, void* o, float* lse, void* stream);
  std::string engine() const; // engine id and knobs chosen by the heuristic
  // Variant packs built so far: one per distinct set of buffers, not one per run.
  int variant_packs_built() const;

private:
  struct impl;
  impl* m_impl = nullptr;
};

// A built cuDNN SDPA backward graph for one shape, with its scratch (rowsum(dO*O), an fp32 dQ
// accumulator, the plan's workspace); move-only.
class sdpa_backward {
public:
  explicit sdpa_backward(const attention_shape& s); // throws backend_error with cuDNN's message
  ~sdpa_backward();
  sdpa_backward(sdpa_backward&&) noexcept;
  sdpa_backward& operator=(sdpa_backward&&) noexcept;
  // bf16 q, k, v, o, d_o, dq, dk, dv in our [B, S, heads, D] layout; lse from the forward.
  void run(const void* q, const void* k, const void* v, const void* o, const void* d_o,
           const float* lse, void* dq, void* dk, void* dv, void* stream);
  std::string engine() const;
  uint64_t scratch_bytes() const;  // device bytes beyond the caller's tensors
  int variant_packs_built() const; // as sdpa_forward's
private:
  struct impl;
  impl* m_impl = nullptr;
};
} // namespace cudnn

} // namespace accelbench::attention
