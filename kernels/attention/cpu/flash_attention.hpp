#pragma once
// Scaled dot-product attention on the CPU: a fused, tiled kernel with online softmax (the
// FlashAttention algorithm) and a plain reference that materialises the score matrix.
//
// Layouts (row-major, the FlashAttention convention):
//   q, o, dq, do : [batch, seq_q, heads,    head_dim]
//   k, v, dk, dv : [batch, seq_k, kv_heads, head_dim]
//   lse          : [batch, heads, seq_q]   natural-log log-sum-exp of the scaled scores per row
// Grouped-query attention: query head h reads kv head h / (heads / kv_heads).
// Causal with seq_q != seq_k aligns the mask bottom-right (FlashAttention >= 2.1): query row i
// attends keys j <= i + (seq_k - seq_q).
#include <cstdint>
#include <string>
#include <vector>

namespace accelbench::attention {

using bf16 = uint16_t; // bfloat16 storage (upper half of an IEEE float), fp32 math

struct attention_shape {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_k = 1, head_dim = 64;
  bool causal = false;
  float scale = 0; // 0: 1/sqrt(head_dim)
  float effective_scale() const;
};

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

// Fast fused kernels (OpenMP over batch x heads x query tiles; AVX-512 / AVX2 / portable chosen
// at run time). Never allocate seq_q x seq_k.
void flash_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                   float* o, float* lse);
void flash_backward(const attention_shape& s, const float* q, const float* k, const float* v,
                    const float* o, const float* d_o, const float* lse, float* dq, float* dk,
                    float* dv);
void flash_forward_bf16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v,
                        bf16* o, float* lse);
void flash_backward_bf16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v,
                         const bf16* o, const bf16* d_o, const float* lse, bf16* dq, bf16* dk,
                         bf16* dv);

// Reference: materialises the scores, accumulates in double. Obviously correct, slow.
// A row with no visible key (causal, seq_q > seq_k) has o = 0 and lse = +inf in both the
// reference and the fast kernels (FlashAttention's convention: the backward's exp(S - lse) is 0).
void reference_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                       double* o, double* lse);
void reference_backward(const attention_shape& s, const float* q, const float* k, const float* v,
                        const float* d_o, double* dq, double* dk, double* dv);

// Row-wise references for sampled checks of large shapes (cost O(seq_k * head_dim) per query row,
// O(seq_q * group * head_dim) per key row), all in double:
// o_row[head_dim] of query row i of head h in batch b; returns its lse.
double reference_forward_row(const attention_shape& s, const float* q, const float* k,
                             const float* v, int64_t b, int64_t h, int64_t i, double* o_row);
// dq_row[head_dim] of query row i, computed from scratch (its own lse and O row).
void reference_dq_row(const attention_shape& s, const float* q, const float* k, const float* v,
                      const float* d_o, int64_t b, int64_t h, int64_t i, double* dq_row);
// lse and D_i = rowsum(dO_i * O_i) of every query row of head h in batch b, from the reference's
// own forward (never a kernel's O and lse): lse[seq_q], di[seq_q]. Costs a forward pass of the
// head.
void reference_row_stats(const attention_shape& s, const float* q, const float* k, const float* v,
                         const float* d_o, int64_t b, int64_t h, double* lse, double* di);
// dk_row, dv_row [head_dim] of key row j of kv head hk in batch b, given reference_row_stats of
// the group's query heads hk*G .. hk*G+G-1 (G = heads / kv_heads): lse[g * seq_q + i], di likewise.
void reference_dkv_row(const attention_shape& s, const float* q, const float* k, const float* v,
                       const float* d_o, const double* lse, const double* di, int64_t b, int64_t hk,
                       int64_t j, double* dk_row, double* dv_row);

// Whole-array bf16 <-> fp32 (round to nearest even; harness/core/bf16.hpp per element), for
// callers preparing inputs and checking outputs.
void to_float(const bf16* in, float* out, int64_t n);
void to_bf16(const float* in, bf16* out, int64_t n);

// The instruction set the fast kernels use: "avx512", "avx2" or "generic", chosen from the CPU at
// first use (the environment variable ACCELBENCH_ATTN_ISA can ask for a lower one).
std::string kernel_isa();
// The variants this CPU can run, best first.
std::vector<std::string> available_isas();
// Forces a variant for this process (tests, comparisons); throws input_error when the CPU lacks
// it or the name is unknown.
void set_kernel_isa(const std::string& isa);
// How bf16 calls compute: "avx512_bf16" (native bf16 dot products, vdpbf16ps, fp32 accumulation
// and softmax) when the CPU has AVX512-BF16 and the AVX-512 kernels are the current ISA, else
// "fp32" (bf16 widened to fp32, fp32 FMAs: today's path on every other CPU). The environment
// variable ACCELBENCH_ATTN_BF16=fp32 forces the fp32 path (side-by-side measurement).
std::string bf16_path();
// The bf16 paths this CPU can run, best first ("avx512_bf16" only with AVX512-BF16).
std::vector<std::string> available_bf16_paths();
// Asks for a bf16 path for this process ("auto": the default choice above, the environment read
// again); throws input_error when the name is unknown or the CPU lacks it. bf16_path() still
// reports "fp32" while a lower ISA than avx512 is forced.
void set_bf16_path(const std::string& path);
// The fast kernels keep a grow-only per-thread workspace between calls (a fresh multi-megabyte
// allocation per call costs page faults worth a few percent at seq 2048), freed at thread exit.

// Bytes of workspace a call needs (packed K/V copies, backward accumulators): part of
// estimate_host_bytes.
uint64_t forward_workspace_bytes(const attention_shape& s);
uint64_t backward_workspace_bytes(const attention_shape& s);
// Grows the calling thread's workspace now to what forward and backward calls of shape s need,
// so that an allocation failure surfaces here (backend_error) and not in the middle of a step:
// a data-parallel replica reserves it while constructing, before any collective.
void reserve_workspace(const attention_shape& s);

} // namespace accelbench::attention
