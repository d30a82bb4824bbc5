#pragma once
// The double-precision references of attention, which only the checker (attention_check.hpp)
// and the kernel tests use: plain loops over the layouts of kernels/attention/attention_shape.hpp,
// obviously correct and slow.
#include <cstdint>

#include "kernels/attention/attention_shape.hpp"

namespace accelbench::attention {

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

} // namespace accelbench::attention
