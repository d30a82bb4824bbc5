// AVX512-BF16 variant of the fused attention kernels for bf16 inputs (compiled with the AVX-512
// flags plus -mavx512bf16 by CMake for this file only; chosen at run time when the CPU has
// AVX512-BF16, see flash_attention.cpp).
//
// Every matmul of the forward (S = Q K^T, O += P V) and of the backward (S = Q K^T, dP = dO V^T,
// dV^T += dO^T P, dK^T += Q^T dS, dQ += dS K) runs on vdpbf16ps: each fp32 lane accumulates the
// products of one pair of bf16 values, 32 multiply-adds per instruction against the 16 of an
// fp32 FMA. Accumulation, the online softmax, lse, D_i = rowsum(dO * O) and every rescale stay in
// fp32 (the FlashAttention-2 recipe on bf16 tensor cores). The packed operands are bf16 copies
// in "pair" layout, B[k / 2][n][2]: the two values a lane multiplies sit in one 32-bit word.
//
// Arithmetic against the fp32 path (bf16 inputs widened to fp32, fp32 FMAs):
//  - Q K^T and dO V^T read the same bf16 values; a product of two bf16 values is exact in fp32,
//    so only the fp32 accumulation order differs.
//  - P (in [0, 1]) and dS are rounded to bf16 before their matmuls (relative error <= 2^-9 per
//    element, unbiased). Summed over a row these errors are independent: O, dQ, dK and dV move by
//    about 2^-9 / sqrt(3) ~ 1.1e-3 of their rms per rounding (measured: rms error / rms 1.6e-3
//    on the fp32 path, 1.9e-3 .. 2.6e-3 here), the order of the outputs' own bf16 rounding. An
//    element's error is bounded by 2^-9 * sum_j |P_ij V_j| (likewise dS K), so rows that see a
//    handful of keys (large P, outputs that cancel) carry the largest errors relative to the
//    tensor's rms: there the max error can approach the bf16 tolerance (2e-2 relative to
//    max(|ref|, rms)), as the fp32 path's D_i = rowsum(dO * O) over bf16 O already does.
//    The softmax normaliser l is summed from the unrounded fp32 P.
// AMX tiles are not used: no AMX-capable CPU was available to test them.
#include "kernels/attention/cpu/flash_isa_avx512.hpp"
#include "kernels/attention/cpu/flash_kernels.hpp"

#include "kernels/attention/cpu/flash_kernels.inl"

namespace {

#define ACCELBENCH_HOT [[gnu::always_inline]] inline

// C[MR][NV*16] (op)= A[MR][2*KP] * B[KP][NV*16][2]: A row-major bf16 (pairs contiguous, row
// stride a_rs), B in pair layout with ldb bf16 elements per pair row, C fp32.
template <int MR, int NV, int MODE>
inline void micro16(int64_t KP, const bf16* __restrict A, int64_t a_rs, const bf16* __restrict B,
                    int64_t ldb, float* __restrict C, int64_t ldc, const float* __restrict rs) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const __m512 s = _mm512_set1_ps(MODE == acc_scale ? rs[r] : 1.f);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      if constexpr (MODE == acc_zero)
        acc[r][v] = _mm512_setzero_ps();
      else if constexpr (MODE == acc_add)
        acc[r][v] = _mm512_loadu_ps(C + r * ldc + int64_t(v) * 16);
      else
        acc[r][v] = _mm512_mul_ps(_mm512_loadu_ps(C + r * ldc + int64_t(v) * 16), s);
    }
  }
  for (int64_t kk = 0; kk < KP; ++kk) {
    __m512i b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      b[v] = _mm512_loadu_si512(B + int64_t(v) * 32);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      int32_t pair;
      std::memcpy(&pair, A + r * a_rs + 2 * kk, 4);
      const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, (__m512bh)b[v]);
    }
    B += ldb;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      _mm512_storeu_ps(C + r * ldc + int64_t(v) * 16, acc[r][v]);
}

template <int MODE, int MR>
inline void micro16_nv(int nv, int64_t KP, const bf16* A, int64_t a_rs, const bf16* B, int64_t ldb,
                       float* C, int64_t ldc, const float* rs) {
  with_count<4>(nv, [&](auto NV) {
    micro16<MR, decltype(NV)::value, MODE>(KP, A, a_rs, B, ldb, C, ldc, rs);
  });
}

// C[M][N] (op)= A[M][2*KP] * B[KP][N][2]; N a multiple of 16 (padded layouts guarantee it).
// 6 x 4 accumulators (24 zmm) + 4 B vectors + 1 broadcast stay within the 32 registers.
template <int MODE>
void gemm16(int64_t M, int64_t N, int64_t KP, const bf16* A, int64_t a_rs, const bf16* B,
            int64_t ldb, float* C, int64_t ldc, const float* rs = nullptr) {
  constexpr int MR = 6;
  for (int64_t n = 0; n < N; n += 64) {
    const int nv = int(min64(64, N - n) / 16);
    const bf16* Bn = B + 2 * n;
    float* Cn = C + n;
    int64_t m = 0;
    for (; m + MR <= M; m += MR)
      micro16_nv<MODE, MR>(nv, KP, A + m * a_rs, a_rs, Bn, ldb, Cn + m * ldc, ldc,
                           rs ? rs + m : nullptr);
    const int tail = int(M - m);
    const bf16* At = A + m * a_rs;
    float* Ct = Cn + m * ldc;
    const float* rt = rs ? rs + m : nullptr;
    if (tail > 0)
      with_count<MR - 1>(tail, [&](auto R) {
        micro16_nv<MODE, decltype(R)::value>(nv, KP, At, a_rs, Bn, ldb, Ct, ldc, rt);
      });
  }
}

// 16 fp32 values of rows a and b rounded to bf16 (nearest even) and interleaved into 16 pairs.
inline __m512i pair_rows(__m512 a, __m512 b) {
  const __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(a));
  const __m512i hi = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(b));
  return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

// src[rows][TK] fp32 -> dst[ceil(rows / 2)][TK][2] bf16 (a missing odd row is zero).
inline void to_pairs(const float* src, int64_t rows, bf16* dst) {
  const int64_t TK = det::tile_k;
  for (int64_t r = 0; r < rows; r += 2) {
    const float* a = src + r * TK;
    const float* b = a + TK;
    for (int64_t c = 0; c < TK; c += 16) {
      const __m512 vb = r + 1 < rows ? _mm512_loadu_ps(b + c) : _mm512_setzero_ps();
      _mm512_storeu_si512(dst + (r / 2 * TK + c) * 2, pair_rows(_mm512_loadu_ps(a + c), vb));
    }
  }
}

// src[rows][TK] fp32 -> dst[rows][TK] bf16.
inline void to_rows(const float* src, int64_t rows, bf16* dst) {
  const int64_t n = rows * det::tile_k;
  for (int64_t x = 0; x < n; x += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + x),
                        (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + x)));
}

// n bf16 values, zero-filled up to np.
inline void copy_row(const bf16* src, int64_t n, int64_t np, bf16* dst) {
  std::memcpy(dst, src, size_t(n) * 2);
  for (int64_t d = n; d < np; ++d)
    dst[d] = 0;
}

// The first n of 16 lanes (n clamped to [0, 16]).
inline __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

// dst[0, n) = bf16(src * mul), rounded to nearest even (vcvtneps2bf16; n <= the padded row).
inline void store_row16(const float* src, float mul, int64_t n, bf16* dst) {
  const __m512 vm = _mm512_set1_ps(mul);
  for (int64_t x = 0; x < n; x += 16) {
    const __mmask16 k = lanes_below(n - x);
    const __m256i h = (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(src + x), vm));
    _mm256_mask_storeu_epi16(dst + x, k, h);
  }
}

// dst[c * ldd + r] = src[r * lds + c] for a 16 x 16 fp32 block: unpack pairs of rows, shuffle
// quadruples, then exchange 128-bit lanes twice (afterwards u[4i + k] lane l holds column
// 4l + k of rows 4i .. 4i + 3).
inline void transpose16(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m512 t[16], u[16];
  for (int64_t i = 0; i < 8; ++i) {
    const __m512 a = _mm512_loadu_ps(src + 2 * i * lds),
                 b = _mm512_loadu_ps(src + (2 * i + 1) * lds);
    t[2 * i] = _mm512_unpacklo_ps(a, b);
    t[2 * i + 1] = _mm512_unpackhi_ps(a, b);
  }
  for (int64_t i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int64_t k = 0; k < 4; ++k) {
    const __m512 v = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);
    const __m512 w = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
    _mm512_storeu_ps(dst + k * ldd, _mm512_shuffle_f32x4(v, v2, 0x88));
    _mm512_storeu_ps(dst + (8 + k) * ldd, _mm512_shuffle_f32x4(v, v2, 0xDD));
    _mm512_storeu_ps(dst + (4 + k) * ldd, _mm512_shuffle_f32x4(w, w2, 0x88));
    _mm512_storeu_ps(dst + (12 + k) * ldd, _mm512_shuffle_f32x4(w, w2, 0xDD));
  }
}

// ---------------------------------------------------------------------------------------------
// Packing of one kv head's K or V (bf16 input, no conversion), head_dim padded with zeros.
inline uint32_t pair_at(const bf16* x, int64_t d0, int64_t D) {
  const uint32_t lo = d0 < D ? x[d0] : 0, hi = d0 + 1 < D ? x[d0 + 1] : 0;
  return lo | (hi << 16);
}

// Transposed key tiles in pair layout over head_dim: dst[n_kt][DP / 2][TK][2] (S = Q K^T's B).
// Tile by tile, so that the tile_k source rows read for each output row stay in L1.
void pack_tiles(const geometry& g, const bf16* src, int64_t b, int64_t hk, bf16* dst) {
  const int64_t TK = det::tile_k;
  auto* out = reinterpret_cast<uint32_t*>(dst);
  for (int64_t j0 = 0; j0 < g.SKP; j0 += TK)
    for (int64_t dp = 0; dp < g.DP / 2; ++dp) {
      uint32_t* o = out + (j0 / TK * (g.DP / 2) + dp) * TK;
      for (int64_t c = 0; c < TK; ++c) {
        const int64_t j = j0 + c;
        o[c] = j < g.SK ? pair_at(src + ((b * g.SK + j) * g.HK + hk) * g.D, 2 * dp, g.D) : 0;
      }
    }
}

// Rows in pair layout over the keys: dst[SKP / 2][DP][2] (O += P V's and dQ += dS K's B).
void pack_rows(const geometry& g, const bf16* src, int64_t b, int64_t hk, bf16* dst) {
  for (int64_t j = 0; j < g.SKP; ++j) {
    const bf16* x = src + ((b * g.SK + j) * g.HK + hk) * g.D;
    bf16* o = dst + (j / 2) * g.DP * 2 + (j % 2);
    for (int64_t d = 0; d < g.DP; ++d)
      o[2 * d] = (j < g.SK && d < g.D) ? x[d] : bf16(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Forward.
struct forward_scratch16 {
  forward_scratch f; // fp32: os, sp (scores, then fp32 P), m, l, alpha
  bf16* qs;          // [TQ][DP]
  bf16* p;           // [TQ][TK]
};

ACCELBENCH_HOT forward_scratch16 forward_scratch16_of(const geometry& g, float* ws,
                                                      const det::workspace_layout& L) {
  forward_scratch16 t;
  t.f = forward_scratch_of(g, ws, L);
  t.qs = reinterpret_cast<bf16*>(t.f.qs);
  t.p = reinterpret_cast<bf16*>(t.f.row + g.DP);
  return t;
}

// One row of the online softmax, fused with P's rounding: scores srow[0, ncol) (columns from lim
// on masked) -> bf16 P in t.p (exactly 0 where masked), the fp32 sum of the unrounded P in sum,
// the running max m updated and the previous max kept in alpha (rescale_rows16 finishes it).
ACCELBENCH_HOT void softmax_row16(const geometry& g, const forward_scratch16& t, int64_t r,
                                  int64_t lim, int64_t ncol, float* sum) {
  const int64_t TK = det::tile_k;
  const float* srow = t.f.sp + r * TK;
  bf16* prow = t.p + r * TK;
  __m512 vmax = _mm512_set1_ps(-k_inf);
  for (int64_t c = 0; c < ncol; c += 16)
    vmax = _mm512_mask_max_ps(vmax, lanes_below(lim - c), vmax, _mm512_loadu_ps(srow + c));
  const float mx = _mm512_reduce_max_ps(vmax) * g.c;
  const float m_old = t.f.m[r], m_new = m_old > mx ? m_old : mx;
  t.f.alpha[r] = m_old;
  t.f.m[r] = m_new;
  const __m512 vc = _mm512_set1_ps(g.c), vm = _mm512_set1_ps(-m_new);
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t c = 0; c < ncol; c += 16) {
    const __mmask16 k = m_new == -k_inf ? __mmask16(0) : lanes_below(lim - c);
    const __m512 p =
        _mm512_maskz_mov_ps(k, isa::exp2(_mm512_fmadd_ps(_mm512_loadu_ps(srow + c), vc, vm)));
    vsum = _mm512_add_ps(vsum, p);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(prow + c), (__m256i)_mm512_cvtneps_pbh(p));
  }
  sum[r] = _mm512_reduce_add_ps(vsum);
}

// Rows [r0, r1), 16 at a time: alpha = 2^(m_old - m) (1 while a row has seen no key; 2^-125 for
// 0 as the exp2 clamps), l = alpha l + sum.
ACCELBENCH_HOT void rescale_rows16(const forward_scratch16& t, int64_t r0, int64_t r1,
                                   const float* sum) {
  for (int64_t r = r0; r < r1; r += 16) {
    const __mmask16 k = lanes_below(r1 - r);
    const __m512 m_old = _mm512_maskz_loadu_ps(k, t.f.alpha + r);
    const __m512 m_new = _mm512_maskz_loadu_ps(k, t.f.m + r);
    const __mmask16 none = _mm512_cmp_ps_mask(m_new, _mm512_set1_ps(-k_inf), _CMP_EQ_OQ);
    const __m512 a =
        _mm512_mask_blend_ps(none, isa::exp2(_mm512_sub_ps(m_old, m_new)), _mm512_set1_ps(1.f));
    const __m512 l = _mm512_maskz_loadu_ps(k, t.f.l + r);
    _mm512_mask_storeu_ps(t.f.alpha + r, k, a);
    _mm512_mask_storeu_ps(t.f.l + r, k, _mm512_fmadd_ps(l, a, _mm512_maskz_loadu_ps(k, sum + r)));
  }
}

// Rows [r0, r1) of the query tile against the key tile at j0 (ncol of its columns, a multiple of
// 16, hold every key these rows see): S = Q K^T, the softmax, O = diag(alpha) O + P V.
ACCELBENCH_HOT void forward_rows16(const geometry& g, const forward_scratch16& t, const bf16* kt,
                                   const bf16* vp, int64_t i0, int64_t j0, int64_t r0, int64_t r1,
                                   int64_t ncol, bool masked, float* sum) {
  const int64_t TK = det::tile_k, cols = min64(TK, g.SK - j0);
  gemm16<acc_zero>(r1 - r0, ncol, g.DP / 2, t.qs + r0 * g.DP, g.DP, kt + (j0 / TK) * g.DP * TK,
                   2 * TK, t.f.sp + r0 * TK, TK);
  for (int64_t r = r0; r < r1; ++r)
    softmax_row16(g, t, r, masked ? visible_cols(g, i0 + r, j0, cols) : TK, ncol, sum);
  rescale_rows16(t, r0, r1, sum);
  gemm16<acc_scale>(r1 - r0, g.DP, ncol / 2, t.p + r0 * TK, TK, vp + j0 * g.DP, 2 * g.DP,
                    t.f.os + r0 * g.DP, g.DP, t.f.alpha + r0);
}

// One key tile of a query tile. A tile the causal mask cuts (the diagonal) goes 16 rows at a time,
// each block only as far as its last row sees: about 3/8 of the diagonal's work is skipped.
ACCELBENCH_HOT void forward_tile16(const geometry& g, const forward_scratch16& t, const bf16* kt,
                                   const bf16* vp, int64_t i0, int64_t rows, int64_t j0,
                                   float* sum) {
  const int64_t TK = det::tile_k, cols = min64(TK, g.SK - j0);
  const bool diagonal = g.causal && j0 + TK - 1 > i0 + g.off;
  if (!diagonal) {
    forward_rows16(g, t, kt, vp, i0, j0, 0, rows, TK, cols < TK, sum);
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t r1 = min64(rows, r0 + 16);
    const int64_t ncol = (visible_cols(g, i0 + r1 - 1, j0, cols) + 15) / 16 * 16;
    forward_rows16(g, t, kt, vp, i0, j0, r0, r1, ncol, true, sum);
  }
}

ACCELBENCH_HOT void forward_item16(const geometry& g, const bf16* q, void* o, float* lse, float* ws,
                                   const det::workspace_layout& L, const forward_scratch16& t,
                                   int64_t it) {
  const int64_t TQ = det::tile_q;
  float* os = t.f.os;
  float* m = t.f.m;
  float* l = t.f.l;
  float sum[det::tile_q];
  const int64_t qt = g.NQT - 1 - it % g.NQT;
  const int64_t bh = it / g.NQT, b = bh / g.H, h = bh % g.H, hk = h / g.G;
  const int64_t i0 = qt * TQ, rows = min64(TQ, g.SQ - i0);
  const bf16* kt = reinterpret_cast<const bf16*>(ws + L.kt) + (b * g.HK + hk) * g.SKP * g.DP;
  const bf16* vp = reinterpret_cast<const bf16*>(ws + L.vp) + (b * g.HK + hk) * g.SKP * g.DP;

  for (int64_t r = 0; r < rows; ++r)
    copy_row(q + ((b * g.SQ + i0 + r) * g.H + h) * g.D, g.D, g.DP, t.qs + r * g.DP);
  std::memset(os, 0, size_t(rows * g.DP) * 4);
  for (int64_t r = 0; r < rows; ++r) {
    m[r] = -k_inf;
    l[r] = 0.f;
  }

  const int64_t kv_end = g.causal ? min64(g.SK, i0 + rows + g.off) : g.SK;
  for (int64_t j0 = 0; j0 < kv_end; j0 += det::tile_k)
    forward_tile16(g, t, kt, vp, i0, rows, j0, sum);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const bool any = l[r] > 0.f;
    lse[(b * g.H + h) * g.SQ + i] = any ? (m[r] + __builtin_log2f(l[r])) * k_ln2 : k_inf;
    store_row16(os + r * g.DP, any ? 1.f / l[r] : 0.f, g.D,
                static_cast<bf16*>(o) + ((b * g.SQ + i) * g.H + h) * g.D);
  }
}

void forward16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v, void* o,
               float* lse, float* ws, const det::workspace_layout& L) {
  const geometry g = make_geometry(s, L);
#pragma omp parallel num_threads(L.threads)
  {
    const forward_scratch16 t = forward_scratch16_of(g, ws, L);
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < g.B * g.HK; ++bh) {
      const int64_t head = bh * g.SKP * g.DP;
      pack_tiles(g, k, bh / g.HK, bh % g.HK, reinterpret_cast<bf16*>(ws + L.kt) + head);
      pack_rows(g, v, bh / g.HK, bh % g.HK, reinterpret_cast<bf16*>(ws + L.vp) + head);
    }
    const int64_t items = g.B * g.H * g.NQT;
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it)
      forward_item16(g, q, o, lse, ws, L, t, it);
  }
}

// ---------------------------------------------------------------------------------------------
// Backward. Per query head the packed region of Q holds Q rows [SQP][DP] then Q^T by query tile,
// [n_qt][DP][TQ] (bf16, together the size of the fp32 rows), likewise dO. Q^T tiled, not
// [DP][SQP]: rows of a whole Q^T 4 KiB apart (seq 2048) would all fall in the same L1 sets.
struct backward_scratch16 {
  backward_scratch f; // fp32: sp (S, then P), dps (dP, then dS), dka / dva as dK^T / dV^T [DP][TK]
  bf16* pv;           // P in pair layout over the query rows [TQ / 2][TK][2]
  bf16* dsv;          // dS likewise
  bf16* ds;           // dS rows [TQ][TK]
};

ACCELBENCH_HOT backward_scratch16 backward_scratch16_of(const geometry& g, float* ws,
                                                        const det::workspace_layout& L) {
  const int64_t TQ = det::tile_q, TK = det::tile_k;
  backward_scratch16 t;
  t.f = backward_scratch_of(g, ws, L);
  t.pv = reinterpret_cast<bf16*>(t.f.row2 + g.DP);
  t.dsv = t.pv + TQ * TK;
  t.ds = t.dsv + TQ * TK;
  return t;
}

inline bf16* q_rows16(float* ws, const det::workspace_layout& L, int64_t bh) {
  return reinterpret_cast<bf16*>(ws + L.qp) + bh * 2 * L.sqp * L.dp;
}
inline bf16* do_rows16(float* ws, const det::workspace_layout& L, int64_t bh) {
  return reinterpret_cast<bf16*>(ws + L.dop) + bh * 2 * L.sqp * L.dp;
}

// Q and dO rows and transposes, D_i = rowsum(dO * O) in fp32 and lse in log2 units, of one
// (batch, head).
ACCELBENCH_HOT void backward_prepare16(const geometry& g, const bf16* q, const bf16* o,
                                       const bf16* d_o, const float* lse, float* ws,
                                       const det::workspace_layout& L, int64_t bh) {
  const int64_t b = bh / g.H, h = bh % g.H;
  bf16* qr = q_rows16(ws, L, bh);
  bf16* dr = do_rows16(ws, L, bh);
  for (int64_t i = 0; i < g.SQP; ++i) {
    float dsum = 0.f, l2 = k_inf;
    if (i < g.SQ) {
      const int64_t src = ((b * g.SQ + i) * g.H + h) * g.D;
      copy_row(q + src, g.D, g.DP, qr + i * g.DP);
      copy_row(d_o + src, g.D, g.DP, dr + i * g.DP);
      for (int64_t d = 0; d < g.D; ++d)
        dsum += bf16_to_f32(d_o[src + d]) * bf16_to_f32(o[src + d]);
      l2 = lse[bh * g.SQ + i] * k_log2e;
    } else {
      std::memset(qr + i * g.DP, 0, size_t(g.DP) * 2);
      std::memset(dr + i * g.DP, 0, size_t(g.DP) * 2);
    }
    ws[L.dvec + bh * g.SQP + i] = dsum;
    ws[L.lse2 + bh * g.SQP + i] = l2;
  }
  // Transposes tile by tile: [TQ][DP] -> [DP][TQ].
  const int64_t TQ = det::tile_q;
  for (int64_t i0 = 0; i0 < g.SQP; i0 += TQ) {
    bf16* qt = qr + g.SQP * g.DP + i0 * g.DP;
    bf16* dt = dr + g.SQP * g.DP + i0 * g.DP;
    for (int64_t d = 0; d < g.DP; ++d)
      for (int64_t i = 0; i < TQ; ++i) {
        qt[d * TQ + i] = qr[(i0 + i) * g.DP + d];
        dt[d * TQ + i] = dr[(i0 + i) * g.DP + d];
      }
  }
}

// The five matmuls of one (query tile, key tile) pair; dK^T and dV^T accumulate in the scratch.
ACCELBENCH_HOT void backward_tile16(const geometry& g, float* ws, const det::workspace_layout& L,
                                    const backward_scratch16& t, int64_t bh, int64_t jt, int64_t i0,
                                    float* dqa) {
  const int64_t TQ = det::tile_q, TK = det::tile_k;
  const int64_t b = bh / g.H, hk = (bh % g.H) / g.G, j0 = jt * TK, cols = min64(TK, g.SK - j0);
  const int64_t kvh = (b * g.HK + hk) * g.SKP * g.DP, rows = min64(TQ, g.SQ - i0);
  const bf16* kt = reinterpret_cast<const bf16*>(ws + L.kt) + kvh + jt * g.DP * TK;
  const bf16* kp = reinterpret_cast<const bf16*>(ws + L.kp) + kvh + j0 * g.DP;
  const bf16* vt = reinterpret_cast<const bf16*>(ws + L.vt) + kvh + jt * g.DP * TK;
  const bf16* qr = q_rows16(ws, L, bh);
  const bf16* dr = do_rows16(ws, L, bh);
  const bf16* qt = qr + g.SQP * g.DP;
  const bf16* dt = dr + g.SQP * g.DP;
  gemm16<acc_zero>(rows, TK, g.DP / 2, qr + i0 * g.DP, g.DP, kt, 2 * TK, t.f.sp, TK);
  gemm16<acc_zero>(rows, TK, g.DP / 2, dr + i0 * g.DP, g.DP, vt, 2 * TK, t.f.dps, TK);
  backward_probabilities(g, t.f, rows, i0, j0, cols, ws + L.lse2 + bh * g.SQP,
                         ws + L.dvec + bh * g.SQP);
  to_pairs(t.f.sp, rows, t.pv);
  to_pairs(t.f.dps, rows, t.dsv);
  to_rows(t.f.dps, rows, t.ds);
  const int64_t rp = (rows + 1) / 2;
  // dV^T += dO^T P ; dK^T += Q^T dS (scaled at the end) ; dQ += dS K
  gemm16<acc_add>(g.DP, TK, rp, dt + i0 * g.DP, TQ, t.pv, 2 * TK, t.f.dva, TK);
  gemm16<acc_add>(g.DP, TK, rp, qt + i0 * g.DP, TQ, t.dsv, 2 * TK, t.f.dka, TK);
  gemm16<acc_add>(rows, g.DP, TK / 2, t.ds, TK, kp, 2 * g.DP, dqa + i0 * g.DP, g.DP);
}

ACCELBENCH_HOT void backward_item16(const geometry& g, float* ws, const det::workspace_layout& L,
                                    const backward_scratch16& t, int64_t it) {
  const int64_t TQ = det::tile_q, TK = det::tile_k, NS = L.splits;
  const int64_t split = it % NS, bh = it / NS;
  float* dqa = ws + L.dq + (split * g.B * g.H + bh) * g.SQP * g.DP;
  for (int64_t jt = split; jt < g.NKT; jt += NS) {
    const int64_t j0 = jt * TK;
    std::memset(t.f.dka, 0, size_t(TK * g.DP) * 4);
    std::memset(t.f.dva, 0, size_t(TK * g.DP) * 4);
    const int64_t i_first = g.causal ? max64(0, j0 - g.off) : 0;
    for (int64_t i0 = i_first / TQ * TQ; i0 < g.SQ; i0 += TQ)
      backward_tile16(g, ws, L, t, bh, jt, i0, dqa);
    float* dkh = ws + L.dkh + (bh * g.SKP + j0) * g.DP;
    float* dvh = ws + L.dvh + (bh * g.SKP + j0) * g.DP;
    // [DP][TK] -> [TK][DP] (rows past cols land in the padded rows, which nothing reads).
    for (int64_t d0 = 0; d0 < g.DP; d0 += 16)
      for (int64_t c0 = 0; c0 < TK; c0 += 16) {
        transpose16(t.f.dka + d0 * TK + c0, TK, dkh + c0 * g.DP + d0, g.DP);
        transpose16(t.f.dva + d0 * TK + c0, TK, dvh + c0 * g.DP + d0, g.DP);
      }
  }
}

void backward16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v,
                const bf16* o, const bf16* d_o, const float* lse, void* dq, void* dk, void* dv,
                float* ws, const det::workspace_layout& L) {
  const geometry g = make_geometry(s, L);
  const int64_t NS = L.splits;
#pragma omp parallel num_threads(L.threads)
  {
    const backward_scratch16 t = backward_scratch16_of(g, ws, L);
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t bh = 0; bh < g.B * g.HK; ++bh) {
      const int64_t head = bh * g.SKP * g.DP, b = bh / g.HK, hk = bh % g.HK;
      pack_tiles(g, k, b, hk, reinterpret_cast<bf16*>(ws + L.kt) + head);
      pack_rows(g, k, b, hk, reinterpret_cast<bf16*>(ws + L.kp) + head);
      pack_tiles(g, v, b, hk, reinterpret_cast<bf16*>(ws + L.vt) + head);
    }
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t bh = 0; bh < g.B * g.H; ++bh)
      backward_prepare16(g, q, o, d_o, lse, ws, L, bh);
#pragma omp for schedule(static)
    for (int64_t x = 0; x < NS * g.B * g.H; ++x)
      std::memset(ws + L.dq + x * g.SQP * g.DP, 0, size_t(g.SQP * g.DP) * 4);

    const int64_t items = g.B * g.H * NS;
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it)
      backward_item16(g, ws, L, t, it);
#pragma omp for schedule(static) nowait
    for (int64_t bhi = 0; bhi < g.B * g.H * g.SQ; ++bhi)
      backward_write_dq(g, dtype::bf16, dq, ws, L, t.f.row, bhi);
#pragma omp for schedule(static)
    for (int64_t bjk = 0; bjk < g.B * g.SK * g.HK; ++bjk)
      backward_write_dkdv(g, dtype::bf16, dk, dv, ws, L, t.f.row, t.f.row2, bjk);
  }
}

// Entries: bf16 calls take the native path; fp32 calls (never dispatched here by
// flash_attention.cpp) run the AVX-512 fp32 code, so the variant is complete on its own.
void forward_entry16(const attention_shape& s, const attention_tensors& io, float* ws,
                     const det::workspace_layout& L) {
  if (io.type != dtype::bf16)
    return forward_entry(s, io, ws, L);
  forward16(s, static_cast<const bf16*>(io.q), static_cast<const bf16*>(io.k),
            static_cast<const bf16*>(io.v), io.o, io.lse, ws, L);
}

void backward_entry16(const attention_shape& s, const attention_tensors& io, float* ws,
                      const det::workspace_layout& L) {
  if (io.type != dtype::bf16)
    return backward_entry(s, io, ws, L);
  backward16(s, static_cast<const bf16*>(io.q), static_cast<const bf16*>(io.k),
             static_cast<const bf16*>(io.v), static_cast<const bf16*>(io.o),
             static_cast<const bf16*>(io.d_o), io.lse, io.dq, io.dk, io.dv, ws, L);
}

#undef ACCELBENCH_HOT

} // namespace

namespace accelbench::attention::detail {
const kernel_variant variant_avx512_bf16 = {"avx512_bf16", &forward_entry16, &backward_entry16};
} // namespace accelbench::attention::detail
