// FlashAttention-2-style kernels on tensor cores (impl=native, bf16 and fp16 inputs): the fp32
// CUDA-core kernels of flash_native.cu stay the reference for fp32 inputs. Same layouts and
// conventions: q, o [B, Sq, H, D]; k, v [B, Sk, KVH, D]; lse [B, H, Sq] natural log; GQA query
// head h reads kv head h / (H / KVH); causal masks bottom-right (j <= i + Sk - Sq); a row that
// sees no key gets o = 0 and lse = +inf.
//
// Instructions: mma.sync.aligned.m16n8k16 (bf16 or fp16 in, fp32 accumulate), fragments loaded
// with ldmatrix (x4, .trans for the operands stored k-major), tiles staged global -> shared with
// cp.async (16 bytes, zero-filled past the sequence end) and double-buffered. These run on sm_80
// and later, so on sm_90 and sm_100 alike; Hopper's WGMMA/TMA (and Blackwell's tcgen05) would be
// faster still and are a follow-up.
//
// Work split (FlashAttention-2, Dao 2023): 4 warps per block, 16 rows per warp, tiles of 64
// rows. Forward: a block owns 64 query rows, streams K/V tiles, keeps Q fragments, the fp32 O
// accumulator and the online-softmax state (max, sum per row) in registers, writes O and lse.
// Backward: delta = rowsum(dO * O); a dQ pass over query tiles (recomputes S and dP, as the
// forward) and a dK/dV pass over key tiles (recomputes P^T and dP^T from lse), so no atomics
// and no fp32 dQ scratch are needed, at the cost of recomputing Q K^T and dO V^T in both passes
// (14 * D FLOPs per visible pair instead of 10; native::executed_flops counts them).
// Shared-memory rows are padded by 8 elements (16 bytes) so the 8 rows of an ldmatrix 8x8 load
// fall in distinct banks.
//
// Resources (nvcc 13.0, ptxas -v, bf16 and fp16 alike; no kernel spills or uses a stack frame):
//   kernel   shared memory (D64 / D128)   registers sm_90 (D64 / D128)   sm_100
//   fwd      46080 / 87040 B               141 / 200                      168 / 168
//   dq       55296 / 104448 B              168 / 244                      128 / 166
//   dkv      56320 / 105472 B              160 / 244                      136 / 240
//   delta    0                             30                             22
// so two blocks (8 warps) fit an SM at head_dim 128 on both (registers and 228 KB of shared
// memory). The dK/dV loop over the two halves of a query tile is kept rolled: unrolled, it spills
// at head_dim 128.
#include "kernels/attention/cuda/flash_launch.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "harness/core/error.hpp"
#include "harness/device/device.hpp"

namespace accelbench::attention::native::tc {

namespace {

constexpr int warps = 4;
constexpr int threads = warps * 32;
constexpr int rows = 64; // rows a block owns (16 per warp) and rows of a streamed tile
constexpr float log2e = 1.4426950408889634f;

struct params {
  int64_t B, H, KVH, Sq, Sk;
  bool causal;
  float scale;
};

// ---- PTX wrappers ----

__device__ inline uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lanes 8m..8m+7 give the row addresses of matrix m, register m holds
// (row lane/4, columns 2*(lane%4), +1) of matrix m, or with .trans (rows 2*(lane%4), +1; column
// lane/4).
__device__ inline void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ inline void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

// c += a * b on one 16x8x16 tile: a 16x16 row-major, b 16x8 column-major, c fp32 16x8.
template <class T>
__device__ inline void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ inline void mma<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ inline void mma<__half>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                   uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as one register of two 16-bit values, `lo` in the low half (the lower column).
template <class T> __device__ inline uint32_t pack(float lo, float hi);
template <> __device__ inline uint32_t pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}
template <> __device__ inline uint32_t pack<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}
__device__ inline float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float to_f(__half x) { return __half2float(x); }

// 16 bytes global -> shared, asynchronously; zeros when !valid (nothing is read then).
__device__ inline void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---- tiles and fragments ----

// A [.., seq, heads, D] tensor seen from one (batch, head): element (row, d) is at
// base + row * stride + d.
struct rows_view {
  int64_t base, stride, seq;
};
__device__ inline rows_view view_of(int64_t b, int64_t seq, int64_t heads, int64_t head, int D) {
  return {(b * seq * heads + head) * D, heads * D, seq};
}

// Rows [r0, r0 + 64) of `v` into smem[64][D + 8], zeros past the sequence end (asynchronous:
// the caller commits and waits).
template <class T, int D>
__device__ inline void load_tile(T* smem, const T* g, const rows_view& v, int64_t r0) {
  constexpr int chunks = D / 8; // 16-byte chunks per row
  for (int c = threadIdx.x; c < rows * chunks; c += threads) {
    const int r = c / chunks, col = (c % chunks) * 8;
    const bool ok = r0 + r < v.seq;
    const T* src = ok ? g + v.base + (r0 + r) * v.stride + col : g;
    cp_async16(smem + r * (D + 8) + col, src, ok);
  }
}

// One step of a query tile's loop over key tiles, with K and V double-buffered (stage s: K at
// kv + 2s * tile, V after it): starts copying key tile it + 1, if any, into the other stage, then
// waits for tile it's copies, which the whole block then sees.
template <class T, int D>
__device__ inline void next_kv_stage(T* kv, const T* k, const T* v, const rows_view& kvv, int it,
                                     int n) {
  constexpr int tile = rows * (D + 8);
  if (it + 1 < n) {
    T* next = kv + 2 * ((it + 1) & 1) * tile;
    load_tile<T, D>(next, k, kvv, (int64_t)(it + 1) * rows);
    load_tile<T, D>(next + tile, v, kvv, (int64_t)(it + 1) * rows);
  }
  cp_async_commit();
  cp_async_wait<1>();
  __syncthreads();
}

// A fragment (16 x 16 at row0, k0) of a row-major [m][k] tile; also the B fragments of two
// n-tiles (n0 .. n0 + 15 at k0) of a k-major [k][n] tile with .trans: the addressing is the same.
template <int D> __device__ inline const void* frag_addr(const void* tile, int r0, int c0) {
  const int l = threadIdx.x & 31;
  return static_cast<const char*>(tile) + ((r0 + (l & 15)) * (D + 8) + c0 + (l >> 4) * 8) * 2;
}
template <int D> __device__ inline void load_a(uint32_t (&a)[4], const void* tile, int r0, int k0) {
  ldsm_x4(a, frag_addr<D>(tile, r0, k0));
}
// B fragments {b0, b1} of n-tiles n0 and n0 + 8 (at k0) of a k-major [k][n] tile.
template <int D>
__device__ inline void load_b_kn(uint32_t (&b)[4], const void* tile, int k0, int n0) {
  ldsm_x4_t(b, frag_addr<D>(tile, k0, n0));
}
// B fragments {b0, b1} of n-tiles n0 and n0 + 8 (at k0) of an n-major [n][k] tile.
template <int D>
__device__ inline void load_b_nk(uint32_t (&b)[4], const void* tile, int n0, int k0) {
  const int l = threadIdx.x & 31;
  const int r = n0 + (l & 7) + ((l >> 4) << 3), c = k0 + ((l >> 3) & 1) * 8;
  ldsm_x4(b, static_cast<const char*>(tile) + (r * (D + 8) + c) * 2);
}

// acc[16 x 8N] += A[16 x K] * B where A is the warp's rows r0.. of the row-major tile `a` and B
// is n-major (B[k][n] = b[n][k]): S = Q K^T and the like.
template <class T, int D, int N>
__device__ inline void mma_a_bt(float (&acc)[N][4], const T* a, int r0, const T* b) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t af[4];
    load_a<D>(af, a, r0, kk * 16);
#pragma unroll
    for (int np = 0; np < N / 2; ++np) {
      uint32_t bf[4];
      load_b_nk<D>(bf, b, np * 16, kk * 16);
      mma<T>(acc[2 * np], af, bf[0], bf[1]);
      mma<T>(acc[2 * np + 1], af, bf[2], bf[3]);
    }
  }
}

// acc[16 x D] += P[16 x 16K] * B[16K x D] where P is in registers as mma accumulators
// (p[n-tile][4], the layout an S = A B^T leaves) and B is k-major in shared memory (V, K, Q, dO).
template <class T, int D, int K>
__device__ inline void mma_p_b(float (&acc)[D / 8][4], const float (&p)[2 * K][4], const T* b) {
#pragma unroll
  for (int kk = 0; kk < K; ++kk) {
    const uint32_t pa[4] = {
        pack<T>(p[2 * kk][0], p[2 * kk][1]), pack<T>(p[2 * kk][2], p[2 * kk][3]),
        pack<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]), pack<T>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      uint32_t bf[4];
      load_b_kn<D>(bf, b, kk * 16, dp * 16);
      mma<T>(acc[2 * dp], pa, bf[0], bf[1]);
      mma<T>(acc[2 * dp + 1], pa, bf[2], bf[3]);
    }
  }
}

template <int N> __device__ inline void zero(float (&x)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    x[i][0] = x[i][1] = x[i][2] = x[i][3] = 0.0f;
}

// Max and sum over the 4 threads of a quad (the threads that share an accumulator row).
__device__ inline float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Where this thread's accumulator elements sit: element e of n-tile nt is at warp row
// lane/4 + 8*(e/2), column nt*8 + 2*(lane%4) + e%2.
__device__ inline int frag_row(int e) { return ((threadIdx.x & 31) >> 2) + 8 * (e >> 1); }
__device__ inline int frag_col(int nt, int e) { return nt * 8 + 2 * (threadIdx.x & 3) + (e & 1); }

// Two adjacent 16-bit elements (4-byte aligned: columns are even, rows a multiple of 8 long).
template <class T> __device__ inline void store2(T* at, uint32_t v) {
  *reinterpret_cast<uint32_t*>(at) = v;
}

// acc * mul as T into rows r0 + (this thread's rows) of `v`, those below `seq`.
template <class T, int D>
__device__ inline void store_rows(int64_t seq, const float (&acc)[D / 8][4], float mul, T* g,
                                  const rows_view& v, int64_t r0) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = r0 + frag_row(2 * r);
    if (row >= seq)
      continue;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      store2(g + v.base + row * v.stride + frag_col(nt, 0),
             pack<T>(acc[nt][2 * r] * mul, acc[nt][2 * r + 1] * mul));
  }
}

__device__ inline bool visible(const params& p, int64_t i, int64_t j) {
  return i < p.Sq && j < p.Sk && (!p.causal || j <= i + p.Sk - p.Sq);
}

// Keys [0, key_end) some query row of [q0, q0 + 64) can see.
__device__ inline int64_t key_end(const params& p, int64_t q0) {
  const int64_t last = min(q0 + rows, p.Sq) - 1;
  return p.causal ? max((int64_t)0, min(p.Sk, last + p.Sk - p.Sq + 1)) : p.Sk;
}

// The query tile a forward or dQ block owns, the last first: under a causal mask the last tiles
// see the most keys, and starting them first keeps a short block from being the tail of the grid.
__device__ inline int64_t heavy_first_tile() { return (int64_t)(gridDim.x - 1 - blockIdx.x); }

// ---- forward ----

struct softmax_state {
  float m[2], l[2]; // running max (log2 domain) and this thread's part of the sum, rows g, g+8
};

// Scales s to the log2 domain, masks it, and folds it into the running state: s becomes P
// (unnormalised, relative to the new max), acc is rescaled.
template <int D>
__device__ inline void online_softmax(float (&s)[rows / 8][4], float (&acc)[D / 8][4],
                                      softmax_state& st, const params& p, int64_t i0, int64_t j0,
                                      bool mask) {
  const float sc = p.scale * log2e;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < rows / 8; ++nt)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        float x = s[nt][e] * sc;
        if (mask && !visible(p, i0 + frag_row(e), j0 + frag_col(nt, e)))
          x = -INFINITY;
        s[nt][e] = x;
        mx = fmaxf(mx, x);
      }
    const float m_new = fmaxf(st.m[r], quad_max(mx));
    const float m_use = m_new == -INFINITY ? 0.0f : m_new; // nothing visible yet: P = 0
    const float corr = exp2f(st.m[r] - m_use);
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < rows / 8; ++nt)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        s[nt][e] = exp2f(s[nt][e] - m_use);
        sum += s[nt][e];
      }
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      acc[nt][2 * r] *= corr, acc[nt][2 * r + 1] *= corr;
    st.l[r] = st.l[r] * corr + sum;
    st.m[r] = m_new;
  }
}

template <class T, int D>
__device__ inline void store_forward(const params& p, const float (&acc)[D / 8][4],
                                     softmax_state& st, T* o, float* lse, const rows_view& qv,
                                     int64_t i0, int64_t bh) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float l = quad_sum(st.l[r]);
    const int64_t i = i0 + frag_row(2 * r);
    if (i >= p.Sq)
      continue;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      const uint32_t v = pack<T>(acc[nt][2 * r] * inv, acc[nt][2 * r + 1] * inv);
      store2(o + qv.base + i * qv.stride + frag_col(nt, 0), v);
    }
    if ((threadIdx.x & 3) == 0)
      lse[bh * p.Sq + i] = l > 0.0f ? (st.m[r] + log2f(l)) / log2e : INFINITY;
  }
}

//   grid (ceil(Sq / 64), H, B), block 128, smem (1 + 2 * 2) tiles of 64 x (D + 8)
template <class T, int D>
__global__ void __launch_bounds__(threads)
    fwd_kernel(params p, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               T* __restrict__ o, float* __restrict__ lse) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int tile = rows * (D + 8);
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* kv = qs + tile; // stage s: K at kv + 2s * tile, V after it
  const int warp = threadIdx.x / 32;
  const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / (p.H / p.KVH);
  const int64_t q0 = heavy_first_tile() * rows, i0 = q0 + warp * 16;
  const rows_view qv = view_of(b, p.Sq, p.H, h, D), kvv = view_of(b, p.Sk, p.KVH, hk, D);
  const int64_t kend = key_end(p, q0);
  const int n = (int)((kend + rows - 1) / rows);

  load_tile<T, D>(qs, q, qv, q0);
  if (n > 0) {
    load_tile<T, D>(kv, k, kvv, 0);
    load_tile<T, D>(kv + tile, v, kvv, 0);
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    load_a<D>(qf[kk], qs, warp * 16, kk * 16);

  float acc[D / 8][4];
  zero(acc);
  softmax_state st{{-INFINITY, -INFINITY}, {0.0f, 0.0f}};
  for (int it = 0; it < n; ++it) {
    next_kv_stage<T, D>(kv, k, v, kvv, it, n);
    const T* ks = kv + 2 * (it & 1) * tile;
    const int64_t j0 = (int64_t)it * rows;
    float s[rows / 8][4];
    zero(s);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int np = 0; np < rows / 16; ++np) {
        uint32_t bf[4];
        load_b_nk<D>(bf, ks, np * 16, kk * 16);
        mma<T>(s[2 * np], qf[kk], bf[0], bf[1]);
        mma<T>(s[2 * np + 1], qf[kk], bf[2], bf[3]);
      }
    const bool mask = j0 + rows > p.Sk || (p.causal && j0 + rows - 1 > i0 + p.Sk - p.Sq);
    online_softmax<D>(s, acc, st, p, i0, j0, mask);
    mma_p_b<T, D, rows / 16>(acc, s, ks + tile);
    __syncthreads(); // every warp is done with this stage before it is loaded again
  }
  store_forward<T, D>(p, acc, st, o, lse, qv, i0, b * p.H + h);
}

// ---- backward ----

// delta_i = rowsum(dO_i * O_i): one warp per row.
template <class T, int D>
__global__ void __launch_bounds__(threads)
    delta_kernel(params p, const T* __restrict__ o, const T* __restrict__ d_o,
                 float* __restrict__ delta) {
  const int64_t r = (int64_t)blockIdx.x * warps + threadIdx.x / 32; // over B * Sq * H
  if (r >= p.B * p.Sq * p.H)
    return;
  const int lane = threadIdx.x & 31;
  float s = 0.0f;
  for (int d = lane; d < D; d += 32)
    s += to_f(o[r * D + d]) * to_f(d_o[r * D + d]);
  s += __shfl_xor_sync(0xffffffffu, s, 16);
  s += __shfl_xor_sync(0xffffffffu, s, 8);
  s += __shfl_xor_sync(0xffffffffu, s, 4);
  s = quad_sum(s);
  if (lane == 0) {
    const int64_t h = r % p.H, i = (r / p.H) % p.Sq, b = r / (p.H * p.Sq);
    delta[(b * p.H + h) * p.Sq + i] = s;
  }
}

// dS = P * (dP - delta) with P = exp2(S * scale * log2e - lse2) recomputed, element by element of
// accumulator tiles whose rows are i (query) or j (key) as `rows_are_queries` says; lse2 and
// delta are per query. s becomes P, dp becomes dS.
template <int N, class L, class Dl>
__device__ inline void p_and_ds(float (&s)[N][4], float (&dp)[N][4], const params& p, int64_t r0,
                                int64_t c0, bool rows_are_queries, L lse2_of, Dl delta_of) {
  const float sc = p.scale * log2e;
#pragma unroll
  for (int nt = 0; nt < N; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t r = r0 + frag_row(e), c = c0 + frag_col(nt, e);
      const int64_t i = rows_are_queries ? r : c, j = rows_are_queries ? c : r;
      const float pij = visible(p, i, j) ? exp2f(s[nt][e] * sc - lse2_of(nt, e)) : 0.0f;
      s[nt][e] = pij;
      dp[nt][e] = pij * (dp[nt][e] - delta_of(nt, e));
    }
}

//   dQ for 64 query rows: grid (ceil(Sq / 64), H, B), block 128, smem (2 + 2 * 2) tiles
template <class T, int D>
__global__ void __launch_bounds__(threads)
    dq_kernel(params p, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
              const T* __restrict__ d_o, const float* __restrict__ lse,
              const float* __restrict__ delta, T* __restrict__ dq) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int tile = rows * (D + 8);
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* dos = qs + tile;
  T* kv = dos + tile; // stage s: K at kv + 2s * tile, V after it
  const int warp = threadIdx.x / 32;
  const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / (p.H / p.KVH), bh = b * p.H + h;
  const int64_t q0 = heavy_first_tile() * rows, i0 = q0 + warp * 16;
  const rows_view qv = view_of(b, p.Sq, p.H, h, D), kvv = view_of(b, p.Sk, p.KVH, hk, D);
  const int n = (int)((key_end(p, q0) + rows - 1) / rows);
  float lse2[2], dl[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = i0 + frag_row(2 * r);
    lse2[r] = i < p.Sq ? lse[bh * p.Sq + i] * log2e : INFINITY;
    dl[r] = i < p.Sq ? delta[bh * p.Sq + i] : 0.0f;
  }
  load_tile<T, D>(qs, q, qv, q0);
  load_tile<T, D>(dos, d_o, qv, q0);
  if (n > 0) {
    load_tile<T, D>(kv, k, kvv, 0);
    load_tile<T, D>(kv + tile, v, kvv, 0);
  }
  cp_async_commit();
  float acc[D / 8][4];
  zero(acc);
  for (int it = 0; it < n; ++it) {
    const T* cur = kv + 2 * (it & 1) * tile;
    next_kv_stage<T, D>(kv, k, v, kvv, it, n);
    float s[rows / 8][4], dp[rows / 8][4];
    zero(s);
    zero(dp);
    mma_a_bt<T, D, rows / 8>(s, qs, warp * 16, cur);
    mma_a_bt<T, D, rows / 8>(dp, dos, warp * 16, cur + tile);
    p_and_ds(
        s, dp, p, i0, (int64_t)it * rows, true, [&](int, int e) { return lse2[e >> 1]; },
        [&](int, int e) { return dl[e >> 1]; });
    mma_p_b<T, D, rows / 16>(acc, dp, cur);
    __syncthreads();
  }
  cp_async_wait<0>(); // n = 0: the Q and dO loads are still in flight
  store_rows<T, D>(p.Sq, acc, p.scale, dq, qv, i0);
}

// The query tiles a dK/dV block walks: every query head of the kv head's group, from the first
// query row that sees one of its keys.
struct query_walk {
  int64_t i_begin;
  int per_head, total;
};
__device__ inline query_walk walk_of(const params& p, int64_t k0) {
  query_walk w;
  w.i_begin = p.causal ? max((int64_t)0, k0 - (p.Sk - p.Sq)) : 0;
  w.per_head = w.i_begin < p.Sq ? (int)((p.Sq - w.i_begin + rows - 1) / rows) : 0;
  w.total = w.per_head * (int)(p.H / p.KVH);
  return w;
}

// Stage `it` of the walk: Q and dO tiles (async) and lse2, delta of its 64 rows.
template <class T, int D>
__device__ inline void load_query_stage(T* st, float* stats, const params& p, const T* q,
                                        const T* d_o, const float* lse, const float* delta,
                                        const query_walk& w, int64_t b, int64_t hk, int it) {
  constexpr int tile = rows * (D + 8);
  const int64_t h = hk * (p.H / p.KVH) + it / w.per_head;
  const int64_t i0 = w.i_begin + (int64_t)(it % w.per_head) * rows;
  const rows_view qv = view_of(b, p.Sq, p.H, h, D);
  load_tile<T, D>(st, q, qv, i0);
  load_tile<T, D>(st + tile, d_o, qv, i0);
  if (threadIdx.x < rows) {
    const int64_t i = i0 + threadIdx.x, at = (b * p.H + h) * p.Sq + i;
    stats[threadIdx.x] = i < p.Sq ? lse[at] * log2e : INFINITY;
    stats[rows + threadIdx.x] = i < p.Sq ? delta[at] : 0.0f;
  }
}

//   dK, dV for 64 key rows of one kv head (summed over its query heads): grid (ceil(Sk / 64),
//   KVH, B), block 128, smem (2 + 2 * 2) tiles + 2 stages of 2 * 64 floats (lse2, delta)
template <class T, int D>
__global__ void __launch_bounds__(threads)
    dkv_kernel(params p, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               const T* __restrict__ d_o, const float* __restrict__ lse,
               const float* __restrict__ delta, T* __restrict__ dk, T* __restrict__ dv) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int tile = rows * (D + 8);
  T* ks = reinterpret_cast<T*>(smem_raw);
  T* vs = ks + tile;
  T* qdo = vs + tile; // stage s: Q at qdo + 2s * tile, dO after it
  float* stats = reinterpret_cast<float*>(qdo + 4 * tile); // stage s at stats + 2s * rows
  const int warp = threadIdx.x / 32;
  const int64_t b = blockIdx.z, hk = blockIdx.y;
  const int64_t k0 = (int64_t)blockIdx.x * rows, j0 = k0 + warp * 16;
  const rows_view kvv = view_of(b, p.Sk, p.KVH, hk, D);
  const query_walk w = walk_of(p, k0);
  load_tile<T, D>(ks, k, kvv, k0);
  load_tile<T, D>(vs, v, kvv, k0);
  if (w.total > 0)
    load_query_stage<T, D>(qdo, stats, p, q, d_o, lse, delta, w, b, hk, 0);
  cp_async_commit();
  float dka[D / 8][4], dva[D / 8][4];
  zero(dka);
  zero(dva);
  for (int it = 0; it < w.total; ++it) {
    if (it + 1 < w.total)
      load_query_stage<T, D>(qdo + 2 * ((it + 1) & 1) * tile, stats + 2 * ((it + 1) & 1) * rows, p,
                             q, d_o, lse, delta, w, b, hk, it + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const T* qt = qdo + 2 * (it & 1) * tile;
    const float* lse2 = stats + 2 * (it & 1) * rows;
    const int64_t i0 = w.i_begin + (int64_t)(it % w.per_head) * rows;
    // Two halves of 32 query rows each keep S^T and dP^T at 16 registers apiece (not unrolled:
    // unrolled, the dK and dV accumulators and both halves' fragments spill at head_dim 128).
#pragma unroll 1
    for (int half = 0; half < 2; ++half) {
      const T* qh = qt + half * 32 * (D + 8);
      const T* doh = qh + tile;
      const float* lh = lse2 + half * 32;
      float s[4][4], dp[4][4];
      zero(s);
      zero(dp);
      mma_a_bt<T, D, 4>(s, ks, warp * 16, qh);
      mma_a_bt<T, D, 4>(dp, vs, warp * 16, doh);
      p_and_ds(
          s, dp, p, j0, i0 + half * 32, false, [&](int nt, int e) { return lh[frag_col(nt, e)]; },
          [&](int nt, int e) { return lh[rows + frag_col(nt, e)]; });
      mma_p_b<T, D, 2>(dva, s, doh);
      mma_p_b<T, D, 2>(dka, dp, qh);
    }
    __syncthreads();
  }
  cp_async_wait<0>();
  store_rows<T, D>(p.Sk, dka, p.scale, dk, kvv, j0);
  store_rows<T, D>(p.Sk, dva, 1.0f, dv, kvv, j0);
}

// ---- host ----

params params_of(const attention_shape& s) {
  return {s.batch, s.heads, s.kv_heads, s.seq_q, s.seq_k, s.causal, s.effective_scale()};
}
// cp.async moves 16 bytes at a time: a tensor that does not start on a 16-byte boundary (a view
// into a larger buffer) would fault the context, so it is refused here with its name.
void require_aligned(std::initializer_list<std::pair<const char*, const void*>> tensors) {
  for (const auto& [name, ptr] : tensors)
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
      throw backend_error(std::string("native attention (tensor cores): ") + name +
                          " is not 16-byte aligned (cp.async copies 16-byte chunks)");
}

unsigned blocks(int64_t n) { return (unsigned)((n + rows - 1) / rows); }
template <int D> constexpr size_t tile_bytes() { return (size_t)rows * (D + 8) * 2; }

template <class T, int D>
void forward_t(const attention_shape& s, const void* q, const void* k, const void* v, void* o,
               float* lse, cudaStream_t st) {
  const size_t smem = 5 * tile_bytes<D>();
  allow_smem(reinterpret_cast<const void*>(fwd_kernel<T, D>), smem);
  dim3 grid(blocks(s.seq_q), (unsigned)s.heads, (unsigned)s.batch);
  fwd_kernel<T, D><<<grid, threads, smem, st>>>(params_of(s), (const T*)q, (const T*)k, (const T*)v,
                                                (T*)o, lse);
}

template <class T, int D>
void backward_t(const attention_shape& s, const void* q, const void* k, const void* v,
                const void* o, const void* d_o, const float* lse, float* delta, void* dq, void* dk,
                void* dv, cudaStream_t st) {
  const params p = params_of(s);
  const int64_t all_rows = s.batch * s.seq_q * s.heads;
  delta_kernel<T, D><<<(unsigned)((all_rows + warps - 1) / warps), threads, 0, st>>>(
      p, (const T*)o, (const T*)d_o, delta);
  const size_t smem = 6 * tile_bytes<D>();
  allow_smem(reinterpret_cast<const void*>(dq_kernel<T, D>), smem);
  dim3 gq(blocks(s.seq_q), (unsigned)s.heads, (unsigned)s.batch);
  dq_kernel<T, D><<<gq, threads, smem, st>>>(p, (const T*)q, (const T*)k, (const T*)v,
                                             (const T*)d_o, lse, delta, (T*)dq);
  const size_t smem_kv = smem + 4 * rows * sizeof(float);
  allow_smem(reinterpret_cast<const void*>(dkv_kernel<T, D>), smem_kv);
  dim3 gk(blocks(s.seq_k), (unsigned)s.kv_heads, (unsigned)s.batch);
  dkv_kernel<T, D><<<gk, threads, smem_kv, st>>>(p, (const T*)q, (const T*)k, (const T*)v,
                                                 (const T*)d_o, lse, delta, (T*)dk, (T*)dv);
}

} // namespace

bool supports(const attention_shape& s) { return s.head_dim == 64 || s.head_dim == 128; }

void forward(const attention_shape& s, const attention_tensors& io, void* stream) {
  const void *q = io.q, *k = io.k, *v = io.v;
  void* o = io.o;
  float* lse = io.lse;
  require_aligned({{"q", q}, {"k", k}, {"v", v}, {"o", o}});
  const bool bf16 = io.type == dtype::bf16; // else fp16
  auto st = static_cast<cudaStream_t>(stream);
  if (s.head_dim == 64)
    bf16 ? forward_t<__nv_bfloat16, 64>(s, q, k, v, o, lse, st)
         : forward_t<__half, 64>(s, q, k, v, o, lse, st);
  else
    bf16 ? forward_t<__nv_bfloat16, 128>(s, q, k, v, o, lse, st)
         : forward_t<__half, 128>(s, q, k, v, o, lse, st);
}

void backward(const attention_shape& s, const attention_tensors& io, float* delta, void* stream) {
  const void *q = io.q, *k = io.k, *v = io.v, *o = io.o, *d_o = io.d_o;
  const float* lse = io.lse;
  void *dq = io.dq, *dk = io.dk, *dv = io.dv;
  require_aligned(
      {{"q", q}, {"k", k}, {"v", v}, {"o", o}, {"d_o", d_o}, {"dq", dq}, {"dk", dk}, {"dv", dv}});
  const bool bf16 = io.type == dtype::bf16; // else fp16
  auto st = static_cast<cudaStream_t>(stream);
  if (s.head_dim == 64)
    bf16 ? backward_t<__nv_bfloat16, 64>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st)
         : backward_t<__half, 64>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st);
  else
    bf16 ? backward_t<__nv_bfloat16, 128>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st)
         : backward_t<__half, 128>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st);
}

} // namespace accelbench::attention::native::tc
