#pragma once
// The `attention` workload: scaled dot-product attention (FlashAttention forward, backward or
// both) on the CPU backend, FLOPs counted as FlashAttention's benchmarks count them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/attention/cpu/flash_attention.hpp"

namespace accelbench::attention {

// Which passes one iteration runs.
enum class pass_kind { fwd, bwd, fwd_bwd };
pass_kind pass_from_string(const std::string& s);  // throws input_error

// The config's shape. Axis conventions: kv_heads = 0 means "= heads" (multi-head attention),
// seq_k = 0 means "= seq_q" (self-attention), scale = 0 means 1/sqrt(head_dim).
attention_shape shape_of(const config& cfg);

// FlashAttention benchmark FLOPs (flash-attention/benchmarks/benchmark_flash_attention.py):
// forward 4 * batch * heads * seq_q * seq_k * head_dim, halved when causal; backward 2.5x the
// forward (two matmuls recomputed plus three gradient matmuls); fwd_bwd 3.5x.
double attention_flops(const attention_shape& s, pass_kind p);

// Buffers of one run, fp32 or bf16 (raw bits) according to the dtype; lse always fp32.
struct attention_buffers {
  bool bf16 = false;
  std::vector<float> q, k, v, o, d_o, dq, dk, dv;        // fp32 dtype
  std::vector<uint16_t> q16, k16, v16, o16, do16, dq16, dk16, dv16;  // bf16 dtype
  std::vector<float> lse;
};

// Called on the outputs after measurement and before the correctness check. Tests use it to
// corrupt a result and prove that a wrong kernel is reported INVALID.
using output_hook = std::function<void(const attention_shape&, attention_buffers&)>;

std::unique_ptr<workload> make_attention_workload(output_hook hook = {});
void register_attention(registry& reg);

} // namespace accelbench::attention
