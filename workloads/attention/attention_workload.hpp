#pragma once
// The `attention` workload: scaled dot-product attention (FlashAttention forward, backward or
// both) on the CPU backend, FLOPs counted per unmasked (query, key) pair (attention_flops).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/attention/cpu/flash_attention.hpp"

namespace accelbench::attention {

// Which passes one iteration runs.
enum class pass_kind { fwd, bwd, fwd_bwd };
pass_kind pass_from_string(const std::string& s); // throws input_error

// The config's shape. Axis conventions: kv_heads = 0 means "= heads" (multi-head attention),
// seq_k = 0 means "= seq_q" (self-attention), scale = 0 means 1/sqrt(head_dim).
attention_shape shape_of(const config& cfg);

// FLOPs of one iteration (attention_forward_flops / attention_backward_flops, per unmasked
// (query, key) pair; fwd_bwd is their sum, 3.5x the forward), for the CPU and CUDA backends.
double attention_flops(const attention_shape& s, pass_kind p);

// The convention of attention_forward_flops in one line, stored with every run.
inline constexpr const char* k_flop_convention =
    "4*batch*heads*head_dim per unmasked (query, key) pair (causal: exact count, bottom-right "
    "aligned); bwd 2.5x (FlashAttention: 5 matmuls), fwd_bwd 3.5x";

// Buffers of one run, fp32 or bf16 (raw bits) according to the dtype; lse always fp32.
struct attention_buffers {
  bool bf16 = false;
  std::vector<float> q, k, v, o, d_o, dq, dk, dv;                   // fp32 dtype
  std::vector<uint16_t> q16, k16, v16, o16, do16, dq16, dk16, dv16; // bf16 dtype
  std::vector<float> lse;
};

// Called on the outputs after measurement and before the correctness check. Tests use it to
// corrupt a result and prove that a wrong kernel is reported INVALID.
using output_hook = std::function<void(const attention_shape&, attention_buffers&)>;

std::unique_ptr<workload> make_attention_workload(output_hook hook = {});
void register_attention(registry& reg);

} // namespace accelbench::attention
