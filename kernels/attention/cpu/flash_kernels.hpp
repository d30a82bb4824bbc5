#pragma once
// Internal to the attention CPU backend: the tile geometry shared by every ISA variant, the
// workspace layout, and the per-ISA entry points that flash_attention.cpp dispatches to.
//
// Each ISA variant is the same template code (flash_kernels.inl) compiled in its own translation
// unit with its own instruction-set flags (the PyTorch/oneDNN "one source, several CPU
// capabilities" pattern). Run-time dispatch picks one with __builtin_cpu_supports; the build itself
// has no -march flag, so the binary still runs on a CPU without AVX-512.
#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention_tensors.hpp"
#include "kernels/attention/cpu/flash_attention.hpp"

namespace accelbench::attention::detail {

// Query rows and key columns per tile. 64 x 64 keeps a tile's working set (Q, K^T, V tiles and
// the 64 x 64 score block, 128-wide heads) inside a Zen 5 core's 1 MiB L2 and mostly in L1.
constexpr int64_t tile_q = 64;
constexpr int64_t tile_k = 64;
// head_dim is padded with zeros to a multiple of 16 floats in the packed copies, so the
// micro-kernels never need a masked tail (zeros do not change dot products).
constexpr int64_t pad_d = 16;

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
inline int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// Offsets (in floats) into one workspace buffer; computed by the dispatcher so that the buffer
// can be reused across calls (first-touch page faults of a fresh allocation would otherwise cost
// a few percent of a forward pass at seq 2048).
struct workspace_layout {
  int64_t dp = 0;     // padded head_dim
  int64_t skp = 0;    // padded seq_k (multiple of tile_k)
  int64_t sqp = 0;    // padded seq_q (multiple of tile_q)
  int64_t n_kt = 0;   // number of key tiles
  int64_t n_qt = 0;   // number of query tiles
  int64_t splits = 1; // backward: key-tile groups per head, each with its own dQ partial
  int threads = 1;
  // Per kv head: K^T tiles [n_kt][dp][tile_k], K rows [skp][dp], V rows [skp][dp], V^T tiles.
  int64_t kt = 0, kp = 0, vp = 0, vt = 0;
  // Per query head (backward): Q rows [sqp][dp], dO rows [sqp][dp], D_i [sqp], lse*log2(e) [sqp].
  int64_t qp = 0, dop = 0, dvec = 0, lse2 = 0;
  // Backward accumulators: dQ partials [splits][batch][heads][sqp][dp]; dK, dV per query head
  // [batch][heads][skp][dp] (summed over each GQA group at the end).
  int64_t dq = 0, dkh = 0, dvh = 0;
  // Per-thread scratch.
  // (Each thread's slice ends with room for the AVX512-BF16 variant's bf16 tiles: P in the
  // forward; P and dS in pair-interleaved and row-major form in the backward.)
  int64_t thread = 0, thread_stride = 0;
  int64_t total = 0;
};

workspace_layout forward_layout(const attention_shape& s, int threads);
workspace_layout backward_layout(const attention_shape& s, int threads);

// One ISA variant. The tensors are fp32 or bf16 (io.type; the math is fp32 for both), the type
// checked by the dispatcher (flash_attention.cpp) before any variant is called.
struct kernel_variant {
  const char* isa; // "avx512" | "avx2" | "generic" | "avx512_bf16"
  void (*forward)(const attention_shape& s, const attention_tensors& io, float* ws,
                  const workspace_layout& L);
  void (*backward)(const attention_shape& s, const attention_tensors& io, float* ws,
                   const workspace_layout& L);
};

extern const kernel_variant variant_avx512;
extern const kernel_variant variant_avx2;
extern const kernel_variant variant_generic;
// bf16 inputs with native bf16 dot products (vdpbf16ps, fp32 accumulation; the same workspace
// layouts, its packed copies stored as bf16). Called for dtype::bf16 only when the CPU has
// AVX512-BF16 and the AVX-512 variant is the current one (flash_attention.cpp); fp32 calls fall
// back to the AVX-512 code.
extern const kernel_variant variant_avx512_bf16;

} // namespace accelbench::attention::detail
