#pragma once
// Scaled dot-product attention on the CPU: fused, tiled kernels with online softmax (the
// FlashAttention algorithm). The shape, its layouts, pair counts and FLOPs are every backend's
// (kernels/attention/attention_shape.hpp); the double-precision references beside the checker
// (workloads/attention/attention_reference.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/attention_shape.hpp"
#include "kernels/attention/attention_tensors.hpp"

namespace accelbench::attention {

using bf16 = uint16_t; // bfloat16 storage (upper half of an IEEE float), fp32 math

// Fast fused kernels (OpenMP over batch x heads x query tiles; AVX-512 / AVX2 / portable chosen
// at run time). Never allocate seq_q x seq_k. fp32 or bf16 tensors (io.type; fp32 math for
// both); another dtype is refused with backend_error naming it.
void flash_forward(const attention_shape& s, const attention_tensors& io);
void flash_backward(const attention_shape& s, const attention_tensors& io);
// The same on typed pointers.
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
