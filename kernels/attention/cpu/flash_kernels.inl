// The fused attention kernels, written once over a vector "isa" type and compiled once per
// instruction set (flash_kernels_avx512.cpp, _avx2.cpp, _generic.cpp). Not a header: each
// including translation unit must first define, inside an anonymous namespace, a struct `isa`
// with:
//   using vec; static constexpr int W (floats per vector), NV (vectors per micro-tile row),
//   MR (micro-tile rows); zero, set1, load, store, fmadd, mul, add, sub, max, exp2, hmax, hsum.
// Everything here has internal linkage: the ISA flags of the including file must not leak into
// functions another translation unit could pick (no std:: templates are instantiated here).
//
// Algorithm: FlashAttention-2 (Dao, 2023), forward Algorithm 1 and backward Algorithm 2, on CPU
// tiles. Scores are kept in log2 units (scale * log2(e) folded into one FMA before exp2), the
// stored lse is in natural log as in the FlashAttention API.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <omp.h>

namespace {

using accelbench::dtype;
using accelbench::attention::attention_shape;
using accelbench::attention::attention_tensors;
using accelbench::attention::bf16;
namespace det = accelbench::attention::detail;

constexpr float k_log2e = 1.4426950408889634f;
constexpr float k_ln2 = 0.6931471805599453f;
constexpr float k_inf = __builtin_inff();

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// Calls f(std::integral_constant<int, R>{}) with R = n for n in [1, N] (n > N: R = N), turning a
// run-time row or vector count into a micro-kernel's template argument: the one home of the
// switch over tail rows and panel widths (this file's kernels and the AVX512-BF16 ones).
template <int N, class F> inline void with_count(int n, const F& f) {
  if constexpr (N > 1)
    if (n < N) return with_count<N - 1>(n, f);
  f(std::integral_constant<int, N>{});
}

// Private copies of harness/core/bf16.hpp's conversions: an inline function from a shared header
// compiled here with AVX-512 flags could be the copy the linker keeps for the whole program.
inline float bf16_to_f32(bf16 x) {
  uint32_t u = uint32_t(x) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline bf16 f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return bf16(u >> 16);
}

// Reads `n` elements of a row (float or bf16) into fp32 and zero-fills up to `np`.
inline void load_row(dtype e, const void* base, int64_t offset, int64_t n, int64_t np,
                     float* dst) {
  if (e == dtype::fp32) {
    std::memcpy(dst, static_cast<const float*>(base) + offset, size_t(n) * 4);
  } else {
    const bf16* src = static_cast<const bf16*>(base) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
  }
  for (int64_t i = n; i < np; ++i) dst[i] = 0.f;
}
inline void store_row(dtype e, void* base, int64_t offset, int64_t n, const float* src,
                      float mul) {
  if (e == dtype::fp32) {
    float* dst = static_cast<float*>(base) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * mul;
  } else {
    bf16* dst = static_cast<bf16*>(base) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16(src[i] * mul);
  }
}

// ---------------------------------------------------------------------------------------------
// Register-blocked micro-kernel: C[MR][NV*W] (op)= A[MR][K] * B[K][NV*W].
// A is addressed as A[r * a_rs + k * a_ks], so one kernel serves P (row-major) and P^T
// (a_rs = 1, a_ks = ld) without a transpose copy; B is row-major with leading dimension ldb.
// Elements of A are broadcast from memory, B rows are vector loads, the MR x NV accumulators
// stay in registers for the whole K loop (6 x 4 zmm = 24 of AVX-512's 32 registers).
enum acc_mode { acc_zero, acc_add, acc_scale };  // C = AB | C += AB | C = diag(rs) C + AB

template <int MR, int NV, int MODE>
inline void micro(int64_t K, const float* __restrict A, int64_t a_rs, int64_t a_ks,
                  const float* __restrict B, int64_t ldb, float* __restrict C, int64_t ldc,
                  const float* __restrict rs) {
  using V = typename isa::vec;
  constexpr int W = isa::W;
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    V s = isa::set1(MODE == acc_scale ? rs[r] : 1.f);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      if constexpr (MODE == acc_zero) acc[r][v] = isa::zero();
      else if constexpr (MODE == acc_add) acc[r][v] = isa::load(C + r * ldc + v * W);
      else acc[r][v] = isa::mul(isa::load(C + r * ldc + v * W), s);
    }
  }
  const float* a[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) a[r] = A + r * a_rs;
  for (int64_t k = 0; k < K; ++k) {
    V b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) b[v] = isa::load(B + v * W);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      V x = isa::set1(*a[r]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = isa::fmadd(x, b[v], acc[r][v]);
      a[r] += a_ks;
    }
    B += ldb;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) isa::store(C + r * ldc + v * W, acc[r][v]);
}

template <int MODE, int MR>
inline void micro_nv(int nv, int64_t K, const float* A, int64_t a_rs, int64_t a_ks,
                     const float* B, int64_t ldb, float* C, int64_t ldc, const float* rs) {
  // nv <= isa::NV: the panel is at most isa::NV vectors wide.
  with_count<isa::NV>(nv, [&](auto NV) {
    micro<MR, decltype(NV)::value, MODE>(K, A, a_rs, a_ks, B, ldb, C, ldc, rs);
  });
}

// C[M][N] (op)= A[M][K] * B[K][N]; N must be a multiple of isa::W (padded layouts guarantee it).
// N outer, M inner: one K x (NV*W) panel of B is reused from L1 by every row block.
template <int MODE>
void small_gemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs, int64_t a_ks,
                const float* B, int64_t ldb, float* C, int64_t ldc, const float* rs = nullptr) {
  constexpr int W = isa::W, MR = isa::MR;
  constexpr int64_t NB = int64_t(isa::NV) * W;
  for (int64_t n = 0; n < N; n += NB) {
    const int nv = int(min64(NB, N - n) / W);
    const float* Bn = B + n;
    float* Cn = C + n;
    int64_t m = 0;
    for (; m + MR <= M; m += MR)
      micro_nv<MODE, MR>(nv, K, A + m * a_rs, a_rs, a_ks, Bn, ldb, Cn + m * ldc, ldc,
                         rs ? rs + m : nullptr);
    const int tail = int(M - m);
    if (tail == 0) continue;
    const float* At = A + m * a_rs;
    float* Ct = Cn + m * ldc;
    const float* rt = rs ? rs + m : nullptr;
    with_count<MR - 1>(tail, [&](auto R) {
      micro_nv<MODE, decltype(R)::value>(nv, K, At, a_rs, a_ks, Bn, ldb, Ct, ldc, rt);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Packing: K^T / V^T in tiles of tile_k columns, K and V rows, head_dim padded with zeros, so
// the micro-kernels see contiguous, aligned, full-width operands.
struct geometry {
  int64_t B, H, HK, G, SQ, SK, D, DP, SQP, SKP, NKT, NQT, off;
  bool causal;
  float scale, c;  // c = scale * log2(e): scores in log2 units
};

geometry make_geometry(const attention_shape& s, const det::workspace_layout& L) {
  geometry g;
  g.B = s.batch; g.H = s.heads; g.HK = s.kv_heads; g.G = s.heads / s.kv_heads;
  g.SQ = s.seq_q; g.SK = s.seq_k; g.D = s.head_dim; g.DP = L.dp; g.SQP = L.sqp; g.SKP = L.skp;
  g.NKT = L.n_kt; g.NQT = L.n_qt; g.off = s.seq_k - s.seq_q; g.causal = s.causal;
  g.scale = s.effective_scale(); g.c = g.scale * k_log2e;
  return g;
}

// Packs one kv head (b, hk): mode bit 1: K^T tiles, 2: K rows, 4: V rows, 8: V^T tiles.
void pack_kv(const geometry& g, dtype e, const void* k, const void* v, int64_t b, int64_t hk,
             float* ws, const det::workspace_layout& L, int what, float* row) {
  const int64_t head = b * g.HK + hk;
  const int64_t per_head = g.SKP * g.DP;
  float* kt = ws + L.kt + head * per_head;
  float* kp = ws + L.kp + head * per_head;
  float* vp = ws + L.vp + head * per_head;
  float* vt = ws + L.vt + head * per_head;
  const int64_t tk = det::tile_k;
  for (int64_t j = 0; j < g.SKP; ++j) {
    const int64_t tile = j / tk, c = j % tk;
    const bool real = j < g.SK;
    const int64_t src = ((b * g.SK + j) * g.HK + hk) * g.D;
    if (what & (1 | 2)) {
      if (real) load_row(e, k, src, g.D, g.DP, row);
      else std::memset(row, 0, size_t(g.DP) * 4);
      if (what & 2) std::memcpy(kp + j * g.DP, row, size_t(g.DP) * 4);
      if (what & 1)
        for (int64_t d = 0; d < g.DP; ++d) kt[(tile * g.DP + d) * tk + c] = row[d];
    }
    if (what & (4 | 8)) {
      if (real) load_row(e, v, src, g.D, g.DP, row);
      else std::memset(row, 0, size_t(g.DP) * 4);
      if (what & 4) std::memcpy(vp + j * g.DP, row, size_t(g.DP) * 4);
      if (what & 8)
        for (int64_t d = 0; d < g.DP; ++d) vt[(tile * g.DP + d) * tk + c] = row[d];
    }
  }
}

// Visible keys of query row i within the key tile starting at j0 (columns [0, result)).
// Causal, bottom-right aligned (FlashAttention >= 2.1): row i sees keys j <= i + seq_k - seq_q.
inline int64_t visible_cols(const geometry& g, int64_t i, int64_t j0, int64_t cols) {
  if (!g.causal) return cols;
  return max64(0, min64(cols, i + g.off - j0 + 1));
}

// ---------------------------------------------------------------------------------------------
// The helpers of the two entries below are hot code, split out only to be read one decision at a
// time: each is always inlined into its entry's OpenMP region, so the compiled loops are the ones
// the single functions had.
#define ACCELBENCH_HOT [[gnu::always_inline]] inline

// A thread's forward scratch, in its slice of the workspace.
struct forward_scratch {
  float* qs;    // [TQ][DP]
  float* os;    // [TQ][DP]
  float* sp;    // [TQ][TK] scores, then probabilities
  float* m;     // [TQ] running max (log2 units)
  float* l;     // [TQ] running sum
  float* alpha; // [TQ] rescale of O for this key tile
  float* row;   // [DP] packing buffer
};

ACCELBENCH_HOT forward_scratch forward_scratch_of(const geometry& g, float* ws,
                                                  const det::workspace_layout& L) {
  const int64_t TQ = det::tile_q, TK = det::tile_k;
  forward_scratch t;
  t.qs = ws + L.thread + int64_t(omp_get_thread_num()) * L.thread_stride;
  t.os = t.qs + TQ * g.DP;
  t.sp = t.os + TQ * g.DP;
  t.m = t.sp + TQ * TK;
  t.l = t.m + TQ;
  t.alpha = t.l + TQ;
  t.row = t.alpha + TQ;
  return t;
}

// Online softmax of score row r over one key tile (columns [lim, TK) are masked): the row becomes
// its probabilities against the new running max, and m, l and alpha of the row are updated.
ACCELBENCH_HOT void forward_softmax_row(const geometry& g, const forward_scratch& t, int64_t r,
                                        int64_t lim) {
  using V = typename isa::vec;
  constexpr int W = isa::W;
  const int64_t TK = det::tile_k;
  float* m = t.m;
  float* l = t.l;
  float* alpha = t.alpha;
  float* srow = t.sp + r * TK;
  for (int64_t c = lim; c < TK; ++c) srow[c] = -k_inf;
  V vmax = isa::set1(-k_inf);
  for (int64_t c = 0; c < TK; c += W) vmax = isa::max(vmax, isa::load(srow + c));
  const float mx = isa::hmax(vmax) * g.c;
  const float m_new = m[r] > mx ? m[r] : mx;
  if (m_new == -k_inf) {  // nothing visible yet in this row
    std::memset(srow, 0, size_t(TK) * 4);
    alpha[r] = 1.f;
    return;
  }
  const V vc = isa::set1(g.c), vm = isa::set1(-m_new);
  V vsum = isa::zero();
  for (int64_t c = 0; c < TK; c += W) {
    V p = isa::exp2(isa::fmadd(isa::load(srow + c), vc, vm));
    isa::store(srow + c, p);
    vsum = isa::add(vsum, p);
  }
  float sum = isa::hsum(vsum);
  if (lim < TK) {  // exp2 of a masked score is ~1e-38, not 0: make it exact
    for (int64_t c = lim; c < TK; ++c) { sum -= srow[c]; srow[c] = 0.f; }
  }
  alpha[r] = __builtin_exp2f(m[r] - m_new);
  l[r] = l[r] * alpha[r] + sum;
  m[r] = m_new;
}

// One forward work item: (batch, head, query tile), heaviest causal tiles first.
ACCELBENCH_HOT void forward_item(const geometry& g, dtype e, const void* q, void* o,
                                 float* lse, const float* ws, const det::workspace_layout& L,
                                 const forward_scratch& t, int64_t it) {
  const int64_t TQ = det::tile_q, TK = det::tile_k;
  float* qs = t.qs;
  float* os = t.os;
  float* sp = t.sp;
  float* m = t.m;
  float* l = t.l;
  const int64_t qt = g.NQT - 1 - it % g.NQT;
  const int64_t bh = it / g.NQT, b = bh / g.H, h = bh % g.H, hk = h / g.G;
  const int64_t i0 = qt * TQ, rows = min64(TQ, g.SQ - i0);
  const float* kt = ws + L.kt + (b * g.HK + hk) * g.SKP * g.DP;
  const float* vp = ws + L.vp + (b * g.HK + hk) * g.SKP * g.DP;

  for (int64_t r = 0; r < rows; ++r)
    load_row(e, q, ((b * g.SQ + i0 + r) * g.H + h) * g.D, g.D, g.DP, qs + r * g.DP);
  std::memset(os, 0, size_t(rows * g.DP) * 4);
  for (int64_t r = 0; r < rows; ++r) { m[r] = -k_inf; l[r] = 0.f; }

  // Causal: key tiles entirely above the diagonal are never visited.
  const int64_t kv_end = g.causal ? min64(g.SK, i0 + rows + g.off) : g.SK;
  for (int64_t j0 = 0; j0 < kv_end; j0 += TK) {
    const int64_t cols = min64(TK, g.SK - j0);
    // S = Q K^T for this tile (unscaled; the scale is folded into the exp2 argument).
    small_gemm<acc_zero>(rows, TK, g.DP, qs, g.DP, 1, kt + (j0 / TK) * g.DP * TK, TK, sp,
                         TK);
    const bool masked = cols < TK || (g.causal && j0 + TK - 1 > i0 + g.off);
    for (int64_t r = 0; r < rows; ++r)
      forward_softmax_row(g, t, r, masked ? visible_cols(g, i0 + r, j0, cols) : TK);
    // O = diag(alpha) O + P V
    small_gemm<acc_scale>(rows, g.DP, TK, sp, TK, 1, vp + j0 * g.DP, g.DP, os, g.DP, t.alpha);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const bool any = l[r] > 0.f;
    // A row with no visible key (causal, seq_q > seq_k): O = 0 and lse = +inf, the
    // FlashAttention convention, so that the backward's exp(S - lse) is exactly 0.
    lse[(b * g.H + h) * g.SQ + i] = any ? (m[r] + __builtin_log2f(l[r])) * k_ln2 : k_inf;
    store_row(e, o, ((b * g.SQ + i) * g.H + h) * g.D, g.D, os + r * g.DP,
              any ? 1.f / l[r] : 0.f);
  }
}

// Forward (FlashAttention-2 Algorithm 1). One work item = (batch, head, query tile); items are
// independent, so the OpenMP loop needs no synchronisation. O, m, l for the tile live in the
// thread's scratch; the score block never exceeds tile_q x tile_k.
//   q, o: [batch, seq_q, heads, head_dim]   k, v: [batch, seq_k, kv_heads, head_dim]
//   lse: [batch, heads, seq_q]
void forward_entry(const attention_shape& s, const attention_tensors& io, float* ws,
                   const det::workspace_layout& L) {
  const geometry g = make_geometry(s, L);
  const dtype e = io.type;
  const void *q = io.q, *k = io.k, *v = io.v;
  void* o = io.o;
  float* lse = io.lse;

#pragma omp parallel num_threads(L.threads)
  {
    const forward_scratch t = forward_scratch_of(g, ws, L);

    // Pack K^T and V rows once per kv head.
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < g.B * g.HK; ++bh)
      pack_kv(g, e, k, v, bh / g.HK, bh % g.HK, ws, L, 1 | 4, t.row);

    // Heaviest causal tiles (the last query tiles) first, for dynamic load balance.
    const int64_t items = g.B * g.H * g.NQT;
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it)
      forward_item(g, e, q, o, lse, ws, L, t, it);
  }
}

// ---------------------------------------------------------------------------------------------
// A thread's backward scratch, in its slice of the workspace.
struct backward_scratch {
  float* sp;   // [TQ][TK] P
  float* dps;  // [TQ][TK] dP, then dS
  float* dka;  // [TK][DP]
  float* dva;  // [TK][DP]
  float* row;  // [DP]
  float* row2; // [DP]
};

ACCELBENCH_HOT backward_scratch backward_scratch_of(const geometry& g, float* ws,
                                                    const det::workspace_layout& L) {
  const int64_t TQ = det::tile_q, TK = det::tile_k;
  backward_scratch t;
  t.sp = ws + L.thread + int64_t(omp_get_thread_num()) * L.thread_stride;
  t.dps = t.sp + TQ * TK;
  t.dka = t.dps + TQ * TK;
  t.dva = t.dka + TK * g.DP;
  t.row = t.dva + TK * g.DP;
  t.row2 = t.row + g.DP;
  return t;
}

// Q, dO rows, D_i = rowsum(dO * O) and lse in log2 units, of one (batch, head, padded row).
ACCELBENCH_HOT void backward_prepare_row(const geometry& g, dtype e, const void* q,
                                         const void* o, const void* d_o, const float* lse,
                                         float* ws, const det::workspace_layout& L, float* row,
                                         int64_t bhi) {
  const int64_t i = bhi % g.SQP, bh = bhi / g.SQP, b = bh / g.H, h = bh % g.H;
  float* qp = ws + L.qp + bh * g.SQP * g.DP + i * g.DP;
  float* dop = ws + L.dop + bh * g.SQP * g.DP + i * g.DP;
  float dsum = 0.f, l2 = k_inf;
  if (i < g.SQ) {
    const int64_t src = ((b * g.SQ + i) * g.H + h) * g.D;
    load_row(e, q, src, g.D, g.DP, qp);
    load_row(e, d_o, src, g.D, g.DP, dop);
    load_row(e, o, src, g.D, g.DP, row);
    for (int64_t d = 0; d < g.D; ++d) dsum += dop[d] * row[d];
    l2 = lse[bh * g.SQ + i] * k_log2e;
  } else {
    std::memset(qp, 0, size_t(g.DP) * 4);
    std::memset(dop, 0, size_t(g.DP) * 4);
  }
  ws[L.dvec + bh * g.SQP + i] = dsum;
  ws[L.lse2 + bh * g.SQP + i] = l2;
}

// P = exp(S - lse) recomputed from the scores in sp, and dS = P * (dP - D_i) over the dP in dps,
// for the rows of query tile i0 against key tile j0; masked entries and rows that see no key are 0.
ACCELBENCH_HOT void backward_probabilities(const geometry& g, const backward_scratch& t,
                                           int64_t rows, int64_t i0, int64_t j0, int64_t cols,
                                           const float* lse2, const float* dvec) {
  using V = typename isa::vec;
  constexpr int W = isa::W;
  const int64_t TK = det::tile_k;
  const bool masked = cols < TK || (g.causal && j0 + TK - 1 > i0 + g.off);
  const V vc = isa::set1(g.c);
  for (int64_t r = 0; r < rows; ++r) {
    float* prow = t.sp + r * TK;
    float* drow = t.dps + r * TK;
    const float l2 = lse2[i0 + r];
    const int64_t lim = masked ? visible_cols(g, i0 + r, j0, cols) : TK;
    if (l2 == k_inf || lim == 0) {
      std::memset(prow, 0, size_t(TK) * 4);
      std::memset(drow, 0, size_t(TK) * 4);
      continue;
    }
    const V vl = isa::set1(-l2), vd = isa::set1(dvec[i0 + r]);
    for (int64_t c = 0; c < TK; c += W) {
      V p = isa::exp2(isa::fmadd(isa::load(prow + c), vc, vl));
      isa::store(prow + c, p);
      isa::store(drow + c, isa::mul(p, isa::sub(isa::load(drow + c), vd)));
    }
    for (int64_t c = lim; c < TK; ++c) { prow[c] = 0.f; drow[c] = 0.f; }
  }
}

// One backward work item: the key tiles of one split of one (batch, head). dK_j and dV_j are
// accumulated in the thread's scratch and copied out per query head; dQ into the split's partial.
ACCELBENCH_HOT void backward_item(const geometry& g, float* ws, const det::workspace_layout& L,
                                  const backward_scratch& t, int64_t it) {
  const int64_t TQ = det::tile_q, TK = det::tile_k, NS = L.splits;
  float* sp = t.sp;
  float* dps = t.dps;
  float* dka = t.dka;
  float* dva = t.dva;
  const int64_t split = it % NS, bh = it / NS, b = bh / g.H, h = bh % g.H, hk = h / g.G;
  const int64_t kvh = (b * g.HK + hk) * g.SKP * g.DP;
  const float* kt = ws + L.kt + kvh;
  const float* kp = ws + L.kp + kvh;
  const float* vt = ws + L.vt + kvh;
  const float* qp = ws + L.qp + bh * g.SQP * g.DP;
  const float* dop = ws + L.dop + bh * g.SQP * g.DP;
  const float* dvec = ws + L.dvec + bh * g.SQP;
  const float* lse2 = ws + L.lse2 + bh * g.SQP;
  float* dqa = ws + L.dq + (split * g.B * g.H + bh) * g.SQP * g.DP;

  // Key tiles dealt round-robin to splits: causal work shrinks with j, so this balances.
  for (int64_t jt = split; jt < g.NKT; jt += NS) {
    const int64_t j0 = jt * TK, cols = min64(TK, g.SK - j0);
    std::memset(dka, 0, size_t(TK * g.DP) * 4);
    std::memset(dva, 0, size_t(TK * g.DP) * 4);
    // Causal: query tiles whose rows all precede key j0 are skipped.
    const int64_t i_first = g.causal ? max64(0, j0 - g.off) : 0;
    for (int64_t i0 = i_first / TQ * TQ; i0 < g.SQ; i0 += TQ) {
      const int64_t rows = min64(TQ, g.SQ - i0);
      const float* qi = qp + i0 * g.DP;
      const float* doi = dop + i0 * g.DP;
      small_gemm<acc_zero>(rows, TK, g.DP, qi, g.DP, 1, kt + jt * g.DP * TK, TK, sp, TK);
      small_gemm<acc_zero>(rows, TK, g.DP, doi, g.DP, 1, vt + jt * g.DP * TK, TK, dps, TK);
      backward_probabilities(g, t, rows, i0, j0, cols, lse2, dvec);
      // dV_j += P^T dO_i ; dK_j += dS^T Q_i (scaled at the end) ; dQ_i += dS K_j
      small_gemm<acc_add>(cols, g.DP, rows, sp, 1, TK, doi, g.DP, dva, g.DP);
      small_gemm<acc_add>(cols, g.DP, rows, dps, 1, TK, qi, g.DP, dka, g.DP);
      small_gemm<acc_add>(rows, g.DP, cols, dps, TK, 1, kp + j0 * g.DP, g.DP,
                          dqa + i0 * g.DP, g.DP);
    }
    float* dkh = ws + L.dkh + (bh * g.SKP + j0) * g.DP;
    float* dvh = ws + L.dvh + (bh * g.SKP + j0) * g.DP;
    std::memcpy(dkh, dka, size_t(cols * g.DP) * 4);
    std::memcpy(dvh, dva, size_t(cols * g.DP) * 4);
  }
}

// One dQ row: the splits' partials summed, scaled and written out.
ACCELBENCH_HOT void backward_write_dq(const geometry& g, dtype e, void* dq, const float* ws,
                                      const det::workspace_layout& L, float* row, int64_t bhi) {
  const int64_t NS = L.splits;
  const int64_t i = bhi % g.SQ, bh = bhi / g.SQ, b = bh / g.H, h = bh % g.H;
  const float* p0 = ws + L.dq + bh * g.SQP * g.DP + i * g.DP;
  for (int64_t d = 0; d < g.DP; ++d) row[d] = p0[d];
  for (int64_t sp2 = 1; sp2 < NS; ++sp2) {
    const float* pn = p0 + sp2 * g.B * g.H * g.SQP * g.DP;
    for (int64_t d = 0; d < g.DP; ++d) row[d] += pn[d];
  }
  store_row(e, dq, ((b * g.SQ + i) * g.H + h) * g.D, g.D, row, g.scale);
}

// One dK row and one dV row: the query heads of the GQA group summed, dK scaled, written out.
ACCELBENCH_HOT void backward_write_dkdv(const geometry& g, dtype e, void* dk, void* dv,
                                        const float* ws, const det::workspace_layout& L,
                                        float* row, float* row2, int64_t bjk) {
  const int64_t hk = bjk % g.HK, j = (bjk / g.HK) % g.SK, b = bjk / (g.HK * g.SK);
  for (int64_t d = 0; d < g.DP; ++d) { row[d] = 0.f; row2[d] = 0.f; }
  for (int64_t gi = 0; gi < g.G; ++gi) {
    const int64_t bh = b * g.H + hk * g.G + gi;
    const float* a = ws + L.dkh + (bh * g.SKP + j) * g.DP;
    const float* c = ws + L.dvh + (bh * g.SKP + j) * g.DP;
    for (int64_t d = 0; d < g.DP; ++d) { row[d] += a[d]; row2[d] += c[d]; }
  }
  const int64_t dst = ((b * g.SK + j) * g.HK + hk) * g.D;
  store_row(e, dk, dst, g.D, row, g.scale);
  store_row(e, dv, dst, g.D, row2, 1.f);
}

// Backward (FlashAttention-2 Algorithm 2). D_i = rowsum(dO_i * O_i); for each key tile j and
// each query tile i that sees it: P = exp(S - lse) recomputed from Q, K and lse, dV_j += P^T dO_i,
// dP = dO_i V_j^T, dS = P * (dP - D_i), dK_j += scale dS^T Q_i, dQ_i += scale dS K_j.
// Parallel over (batch, head, split) where a split is a set of key tiles of one head: dK_j and
// dV_j are private to the item that owns key tile j (accumulated per query head, then summed over
// the GQA group), and each split owns a private dQ partial, summed at the end: no data races and
// no atomics. splits = 1 whenever batch * heads already gives every thread work.
void backward_entry(const attention_shape& s, const attention_tensors& io, float* ws,
                    const det::workspace_layout& L) {
  const geometry g = make_geometry(s, L);
  const dtype e = io.type;
  const void *q = io.q, *k = io.k, *v = io.v, *o = io.o, *d_o = io.d_o;
  const float* lse = io.lse;
  void *dq = io.dq, *dk = io.dk, *dv = io.dv;
  const int64_t NS = L.splits;

#pragma omp parallel num_threads(L.threads)
  {
    const backward_scratch t = backward_scratch_of(g, ws, L);

#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t bh = 0; bh < g.B * g.HK; ++bh)
      pack_kv(g, e, k, v, bh / g.HK, bh % g.HK, ws, L, 1 | 2 | 8, t.row);
    // Q, dO rows, D_i = rowsum(dO * O) and lse in log2 units, per query head.
#pragma omp for schedule(static)
    for (int64_t bhi = 0; bhi < g.B * g.H * g.SQP; ++bhi)
      backward_prepare_row(g, e, q, o, d_o, lse, ws, L, t.row, bhi);
    // dQ partials start at zero.
#pragma omp for schedule(static)
    for (int64_t x = 0; x < NS * g.B * g.H; ++x)
      std::memset(ws + L.dq + x * g.SQP * g.DP, 0, size_t(g.SQP * g.DP) * 4);
    // (implicit barrier: everything packed)

    const int64_t items = g.B * g.H * NS;
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it)
      backward_item(g, ws, L, t, it);
    // (implicit barrier) Sum dQ partials and GQA groups, scale, write out.
#pragma omp for schedule(static) nowait
    for (int64_t bhi = 0; bhi < g.B * g.H * g.SQ; ++bhi)
      backward_write_dq(g, e, dq, ws, L, t.row, bhi);
#pragma omp for schedule(static)
    for (int64_t bjk = 0; bjk < g.B * g.SK * g.HK; ++bjk)
      backward_write_dkdv(g, e, dk, dv, ws, L, t.row, t.row2, bjk);
  }
}

#undef ACCELBENCH_HOT

} // namespace
