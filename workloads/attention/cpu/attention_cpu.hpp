#pragma once
// The attention workload's CPU backend: seeded inputs, the fused kernels of
// kernels/attention/cpu timed, the kernel metrics, the check against the double-precision
// reference (attention_check.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/core/workload.hpp"
#include "kernels/attention/attention_tensors.hpp"
#include "workloads/attention/attention_spec.hpp"

namespace accelbench::attention {

// Buffers of one run, fp32 or bf16 (raw bits) according to the dtype; lse always fp32.
struct attention_buffers {
  dtype type = dtype::fp32;
  std::vector<float> q, k, v, o, d_o, dq, dk, dv;                   // fp32 dtype
  std::vector<uint16_t> q16, k16, v16, o16, do16, dq16, dk16, dv16; // bf16 dtype
  std::vector<float> lse;
  // The kernels' view of the buffers of `type`.
  attention_tensors tensors();
};

// Called on the outputs after measurement and before the correctness check. Tests use it to
// corrupt a result and prove that a wrong kernel is reported INVALID.
using output_hook = std::function<void(const attention_shape&, attention_buffers&)>;

// Host bytes one run holds: tensors, the kernels' workspace, the checker's fp32 copies.
uint64_t attention_cpu_host_bytes(const attention_params& p);

// Measures, fills metrics and extra, checks the outputs (INVALID when wrong).
void attention_cpu_execute(const attention_params& p, run& out, run_context& ctx,
                           const output_hook& hook);

} // namespace accelbench::attention
