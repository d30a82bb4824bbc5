#pragma once
// The shape of one attention call, the same on every backend (the CPU kernels, the CUDA kernels,
// cuDNN's SDPA, the workload's spec and checker): its checks, its visible (query, key) pairs and
// its FLOPs. No kernel code here.
//
// Layouts (row-major, the FlashAttention convention):
//   q, o, dq, do : [batch, seq_q, heads,    head_dim]
//   k, v, dk, dv : [batch, seq_k, kv_heads, head_dim]
//   lse          : [batch, heads, seq_q]   natural-log log-sum-exp of the scaled scores per row
// Grouped-query attention: query head h reads kv head h / (heads / kv_heads).
// Causal with seq_q != seq_k aligns the mask bottom-right (FlashAttention >= 2.1): query row i
// attends keys j <= i + (seq_k - seq_q).
#include <cstdint>

namespace accelbench::attention {

struct attention_shape {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_k = 1, head_dim = 64;
  bool causal = false;
  float scale = 0; // 0: 1/sqrt(head_dim)
  float effective_scale() const;
};

// The shape of these sizes, scale 0 (1/sqrt(head_dim)): the one spelling of a shape from its
// fields in order, for the workloads and the tests.
attention_shape attention_shape_of(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q,
                                   int64_t seq_k, int64_t head_dim, bool causal);

// Throws input_error naming the first bad field (non-positive size, heads % kv_heads != 0,
// negative scale).
void check_shape(const attention_shape& s);

// (query, key) pairs of one head that the mask leaves visible: seq_q * seq_k, or causal (bottom-
// right aligned, as every kernel here masks: row i sees keys j <= i + seq_k - seq_q) exactly
//   seq_q <= seq_k: seq_q * seq_k - seq_q * (seq_q - 1) / 2
//   seq_q >  seq_k: seq_k * (seq_k + 1) / 2          (the first seq_q - seq_k rows see no key)
// FlashAttention's benchmarks halve seq_q * seq_k instead, which understates seq_q = 1024,
// seq_k = 4096 by 1.75x and overstates seq_q > seq_k.
double attention_pairs(const attention_shape& s);
// The one FLOP count of attention (workload on CPU and CUDA, benchmarks). Forward: two matmuls,
// Q K^T and P V, of 2 * head_dim FLOPs per visible pair: 4 * batch * heads * head_dim * pairs.
// Backward, FlashAttention's convention (Dao 2023, benchmark_flash_attention.py): 2.5x the
// forward, i.e. five matmuls (Q K^T recomputed, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q)
// of 2 * head_dim each, 10 * head_dim per visible pair. The softmax's exponentials and the other
// elementwise work are not counted, in either pass.
double attention_forward_flops(const attention_shape& s);
double attention_backward_flops(const attention_shape& s);

} // namespace accelbench::attention
