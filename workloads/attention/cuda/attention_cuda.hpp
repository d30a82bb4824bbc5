#pragma once
// The attention workload's CUDA backend. Plain C++ interface (no CUDA types). Called by
// workloads/attention/attention_workload.cpp with the config parsed once (attention_params) when
// the config's backend is "cuda".
//
// Two implementations, chosen by the config's "impl" axis (default cudnn), both in
// kernels/attention/cuda (attention_kernels.hpp):
//   native  FlashAttention-2-style kernels of our own: forward and backward, causal, GQA, fp32
//           and bf16, head_dim <= 256.
//   cudnn   cuDNN's fused SDPA through the cuDNN 9 backend graph API: forward and backward, bf16,
//           causal (top-left), GQA.
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "kernels/attention/cuda/attention_kernels.hpp"
#include "workloads/attention/attention_spec.hpp"

namespace accelbench::attention {

// The values of the "impl" axis the lead adds to the attention spec when CUDA is built.
const std::vector<std::string>& cuda_attention_impls(); // {"cudnn", "native"}

// Why this config cannot run on CUDA here, empty when it can: no device, impl/dtype/pass
// combination not supported (with the reason), not enough free device memory.
std::string attention_cuda_unavailable_reason(const attention_params& p);
// Device bytes the config allocates.
uint64_t attention_cuda_device_bytes(const attention_params& p);

// Runs the config on device 0: device-timed samples, metrics (time, tflops from attention_flops,
// the CPU backend's count, pct_of_peak where known, cv), extra (impl, device, correctness against
// the double-precision CPU reference), validity. Failures are data.
void attention_cuda_execute(const attention_params& p, run& out, run_context& ctx);

// ---- host-level entry points (tests, scripts): upload, run once, download ----
// All arrays in fp32 on the host; of dtype bf16 they are rounded to bf16 on upload (callers
// compare against the reference over the rounded inputs). fp32 or bf16.
struct host_result {
  std::vector<float> o, lse, dq, dk, dv;
};
host_result run_forward_host(const attention_shape& s, const std::string& impl, dtype type,
                             const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, int device_index = 0);
host_result run_backward_host(const attention_shape& s, const std::string& impl, dtype type,
                              const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const std::vector<float>& d_o);

namespace native {
// FLOPs the native kernels execute in one iteration, which is more than the convention counts
// (k_flop_convention, the `tflops` metric of every impl): the backward recomputes Q K^T in both
// its dQ and its dK/dV kernels and dO V^T in both, 14*head_dim per visible pair where
// FlashAttention's count has 10 (5 matmuls). Recorded as extra["executed_flops_per_iteration"].
double executed_flops(const attention_shape& s, pass_kind p);
} // namespace native

} // namespace accelbench::attention
