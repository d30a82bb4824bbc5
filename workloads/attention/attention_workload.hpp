#pragma once
// The `attention` workload: scaled dot-product attention (FlashAttention forward, backward or
// both), FLOPs counted per unmasked (query, key) pair (attention_flops). The spec is
// attention_spec.hpp; the backends cpu/attention_cpu.hpp and cuda/attention_cuda.hpp.
#include <memory>

#include "harness/core/workload.hpp"
#include "workloads/attention/attention_spec.hpp"
#include "workloads/attention/cpu/attention_cpu.hpp"

namespace accelbench::attention {

std::unique_ptr<workload> make_attention_workload(output_hook hook = {});
void register_attention(registry& reg);

} // namespace accelbench::attention
