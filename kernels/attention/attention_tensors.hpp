#pragma once
// The tensors of one attention call, beside its shape (attention_shape.hpp): what every kernel
// (the CPU flash kernels, the CUDA native kernels, cuDNN's SDPA) reads and writes, in one struct
// instead of a dozen pointer arguments, with the one element type of the harness
// (harness/core/dtype.hpp). Host pointers for the CPU kernels, device pointers for CUDA.
#include <initializer_list>
#include <string_view>

#include "harness/core/dtype.hpp"

namespace accelbench::attention {

// Forward and backward pairs side by side (llm.c's style). Every tensor is of element type
// `type` except lse, always fp32. A forward reads q, k, v and writes o, lse; a backward reads
// q, k, v, o, d_o, lse and writes dq, dk, dv.
struct attention_tensors {
  dtype type = dtype::fp32;
  // [batch, seq_q, heads, head_dim]
  const void* q = nullptr;
  void* dq = nullptr;
  // [batch, seq_k, kv_heads, head_dim]
  const void* k = nullptr;
  void* dk = nullptr;
  const void* v = nullptr;
  void* dv = nullptr;
  // [batch, seq_q, heads, head_dim]
  void* o = nullptr;
  const void* d_o = nullptr;
  // [batch, heads, seq_q], fp32: natural-log log-sum-exp of the scaled scores per row
  float* lse = nullptr;
};

// The one refusal of an element type a kernel does not compute in: throws backend_error
// "<kernel>: dtype 'fp8_e4m3' is not supported (fp32, bf16)" unless `t` is one of `supported`.
void require_dtype(std::string_view kernel, dtype t, std::initializer_list<dtype> supported);

} // namespace accelbench::attention
