// A FlashAttention-2-style attention of our own (impl=native) on CUDA cores: the fp32 reference
// path (fp32 inputs, and bf16 at head dims the tensor-core kernels of flash_tc.cu are not built
// for); bf16/fp16 at head_dim 64 and 128 dispatch to flash_tc.cu. Readable first, fast second. Same
// layouts and conventions as every backend (kernels/attention/attention_shape.hpp): q, o [B,
// Sq, H, D]; k, v [B, Sk, KVH, D]; lse [B, H, Sq] natural log; GQA query head h reads kv head h /
// (H / KVH); causal masks bottom-right (j <= i + Sk - Sq).
//
// Work split (FlashAttention-2, Dao 2023, §3.2): the forward and dQ pass parallelise over query
// tiles, the dK/dV pass over key tiles, so no pass needs atomics. One query (or key) row belongs
// to a quad of 4 threads; each thread owns head-dimension elements d = lane + 4*t, and dot products
// are finished with two shuffles. K/V (or Q/dO) tiles are staged in shared memory as fp32.
// Scores are kept in the log2 domain (scale * log2(e) folded into q) so exp2 is one instruction.
//
// Registers (nvcc 13, ptxas -v, sm_90): at head_dim <= 128 (DPT 32) no kernel spills; the forward
// keeps its 32-score tile in a 128-byte local array (L1). At head_dim <= 256 (DPT 64) the dQ and
// dK/dV kernels spill (160 / 416 bytes). `#pragma unroll` on the score loops moves the tile into
// registers but makes this file take 6x longer to compile (2 min per architecture), so it is not
// done until a GPU measurement says the speed is worth it.
#include "kernels/attention/cuda/attention_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "kernels/attention/cuda/flash_launch.hpp"

namespace accelbench::attention::native {

namespace {

constexpr int rows_per_block = 32; // query (or key) rows per block: 32 quads = 128 threads
constexpr int tile = 32;           // keys (or queries) per shared-memory tile
constexpr int threads = rows_per_block * 4;
constexpr float log2e = 1.4426950408889634f;

__device__ inline float to_f(float x) { return x; }
__device__ inline float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ inline T from_f(float x);
template <> __device__ inline float from_f<float>(float x) { return x; }
template <> __device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// Sum over the 4 threads of a quad (lanes 4q..4q+3).
__device__ inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  return x;
}

struct params {
  int64_t B, H, KVH, Sq, Sk, D;
  bool causal;
  float scale;
};

// The backward's two scores of one (query, key) pair, s = a . x and dp = b . y, with a and b held
// across a quad (element d = lane + 4t in a[t], b[t]) and x, y rows of a shared tile.
template <int DPT>
__device__ inline void quad_dots(const params& p, int lane, const float (&a)[DPT],
                                 const float (&b)[DPT], const float* x, const float* y, float& s,
                                 float& dp) {
  float ps = 0, pd = 0;
  for (int t = 0; t < DPT; ++t) {
    int d = lane + 4 * t;
    if (d < p.D) {
      ps += a[t] * x[d];
      pd += b[t] * y[d];
    }
  }
  s = quad_sum(ps);
  dp = quad_sum(pd);
}

__device__ inline int64_t q_index(const params& p, int64_t b, int64_t i, int64_t h) {
  return ((b * p.Sq + i) * p.H + h) * p.D;
}
__device__ inline int64_t k_index(const params& p, int64_t b, int64_t j, int64_t hk) {
  return ((b * p.Sk + j) * p.KVH + hk) * p.D;
}

// Loads rows [r0, r0 + tile) of a [.., rows, heads, D] tensor (head `hh`) into smem[tile][D] as
// fp32, zero past `rows`.
template <class T>
__device__ void load_tile(float* smem, const T* g, const params& p, int64_t b, int64_t r0,
                          int64_t rows, int64_t heads, int64_t hh) {
  for (int64_t e = threadIdx.x; e < tile * p.D; e += threads) {
    int64_t r = e / p.D, d = e % p.D;
    int64_t row = r0 + r;
    smem[e] = row < rows ? to_f(g[((b * rows + row) * heads + hh) * p.D + d]) : 0.0f;
  }
}

// One thread's place in the kernels over query rows (forward, dQ): its lane in the quad, its
// batch b, head h and kv head hk, its query row i (active: the row exists), and the shift of the
// bottom-right causal alignment.
struct query_thread {
  int lane;
  int64_t b, h, hk, i;
  bool active;
  int64_t shift;
};
__device__ __forceinline__ query_thread query_thread_of(const params& p) {
  const int lane = threadIdx.x & 3;
  const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / (p.H / p.KVH);
  const int64_t i = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / 4;
  return {lane, b, h, hk, i, i < p.Sq, p.Sk - p.Sq};
}

// The K and V tiles of keys j0.. into shared memory, once every thread is done with the last.
template <class T>
__device__ __forceinline__ void load_kv_tiles(float* ks, float* vs, const T* k, const T* v,
                                              const params& p, int64_t b, int64_t j0, int64_t hk) {
  __syncthreads();
  load_tile(ks, k, p, b, j0, p.Sk, p.KVH, hk);
  load_tile(vs, v, p, b, j0, p.Sk, p.KVH, hk);
  __syncthreads();
}

// ---- forward: o, lse for one tile of query rows of one (batch, head) ----
//   grid (ceil(Sq / 32), H, B), block 128, smem 2 * tile * D floats (K and V tiles)
template <class T, int DPT>
__global__ void __launch_bounds__(threads)
    forward_kernel(params p, const T* __restrict__ q, const T* __restrict__ k,
                   const T* __restrict__ v, T* __restrict__ o, float* __restrict__ lse) {
  extern __shared__ float smem[];
  float* ks = smem;
  float* vs = smem + tile * p.D;
  const auto [lane, b, h, hk, i, active, shift] = query_thread_of(p);

  float qr[DPT], acc[DPT];
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    qr[t] = (active && d < p.D) ? to_f(q[q_index(p, b, i, h) + d]) * p.scale * log2e : 0.0f;
    acc[t] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;

  // Keys any row of this block can see.
  int64_t last_row = min((int64_t)(blockIdx.x + 1) * rows_per_block, p.Sq) - 1;
  int64_t key_end = p.causal ? min(p.Sk, last_row + shift + 1) : p.Sk;
  for (int64_t j0 = 0; j0 < key_end; j0 += tile) {
    load_kv_tiles(ks, vs, k, v, p, b, j0, hk);

    // S = Q K^T for the tile (log2 domain), masked; then one online-softmax update per tile.
    float s[tile];
    float tile_max = -INFINITY;
    for (int jj = 0; jj < tile; ++jj) {
      float part = 0.0f;
      for (int t = 0; t < DPT; ++t) {
        int d = lane + 4 * t;
        if (d < p.D)
          part += qr[t] * ks[jj * p.D + d];
      }
      float sc = quad_sum(part);
      int64_t j = j0 + jj;
      bool visible = active && j < p.Sk && (!p.causal || j <= i + shift);
      s[jj] = visible ? sc : -INFINITY;
      tile_max = fmaxf(tile_max, s[jj]);
    }
    if (tile_max == -INFINITY)
      continue; // nothing visible in this tile for this row
    float m_new = fmaxf(m, tile_max);
    float corr = exp2f(m - m_new); // m = -inf the first time: corr = 0, acc and l are 0 anyway
    l *= corr;
    for (int t = 0; t < DPT; ++t)
      acc[t] *= corr;
    for (int jj = 0; jj < tile; ++jj) {
      float pj = exp2f(s[jj] - m_new);
      l += pj;
      for (int t = 0; t < DPT; ++t) {
        int d = lane + 4 * t;
        if (d < p.D)
          acc[t] += pj * vs[jj * p.D + d];
      }
    }
    m = m_new;
  }
  if (!active)
    return;
  // A row with no visible key: o = 0, lse = +inf (the CPU kernels' convention).
  float inv = l > 0 ? 1.0f / l : 0.0f;
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    if (d < p.D)
      o[q_index(p, b, i, h) + d] = from_f<T>(acc[t] * inv);
  }
  if (lane == 0)
    lse[(b * p.H + h) * p.Sq + i] = l > 0 ? (m + log2f(l)) / log2e : INFINITY;
}

// ---- backward, step 1: D_i = rowsum(dO_i * O_i) ----
template <class T>
__global__ void dot_do_o_kernel(params p, const T* __restrict__ o, const T* __restrict__ d_o,
                                float* __restrict__ delta) {
  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; // over B*Sq*H
  if (r >= p.B * p.Sq * p.H)
    return;
  int64_t h = r % p.H, i = (r / p.H) % p.Sq, b = r / (p.H * p.Sq);
  float s = 0;
  for (int64_t d = 0; d < p.D; ++d)
    s += to_f(o[r * p.D + d]) * to_f(d_o[r * p.D + d]);
  delta[(b * p.H + h) * p.Sq + i] = s;
}

// ---- backward, step 2: dQ for one tile of query rows (recomputes P from lse) ----
//   dS_ij = P_ij (dP_ij - D_i), dP_ij = dO_i . v_j, dQ_i = scale * sum_j dS_ij k_j
template <class T, int DPT>
__global__ void __launch_bounds__(threads)
    dq_kernel(params p, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
              const T* __restrict__ d_o, const float* __restrict__ lse,
              const float* __restrict__ delta, T* __restrict__ dq) {
  extern __shared__ float smem[];
  float* ks = smem;
  float* vs = smem + tile * p.D;
  const auto [lane, b, h, hk, i, active, shift] = query_thread_of(p);
  float qr[DPT], dor[DPT], acc[DPT];
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    bool in = active && d < p.D;
    qr[t] = in ? to_f(q[q_index(p, b, i, h) + d]) * p.scale * log2e : 0.0f;
    dor[t] = in ? to_f(d_o[q_index(p, b, i, h) + d]) : 0.0f;
    acc[t] = 0.0f;
  }
  const float lse2 = active ? lse[(b * p.H + h) * p.Sq + i] * log2e : INFINITY;
  const float di = active ? delta[(b * p.H + h) * p.Sq + i] : 0.0f;
  int64_t last_row = min((int64_t)(blockIdx.x + 1) * rows_per_block, p.Sq) - 1;
  int64_t key_end = p.causal ? min(p.Sk, last_row + shift + 1) : p.Sk;
  for (int64_t j0 = 0; j0 < key_end; j0 += tile) {
    load_kv_tiles(ks, vs, k, v, p, b, j0, hk);
    for (int jj = 0; jj < tile; ++jj) {
      float s, dp;
      quad_dots(p, lane, qr, dor, ks + jj * p.D, vs + jj * p.D, s, dp);
      int64_t j = j0 + jj;
      bool visible = active && j < p.Sk && (!p.causal || j <= i + shift) && lse2 != INFINITY;
      if (!visible)
        continue;
      float pij = exp2f(s - lse2);
      float ds = pij * (dp - di);
      for (int t = 0; t < DPT; ++t) {
        int d = lane + 4 * t;
        if (d < p.D)
          acc[t] += ds * ks[jj * p.D + d];
      }
    }
  }
  if (!active)
    return;
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    if (d < p.D)
      dq[q_index(p, b, i, h) + d] = from_f<T>(acc[t] * p.scale);
  }
}

// ---- backward, step 3: dK, dV for one tile of key rows of one kv head, summed over the query
// heads of its group (GQA) and over all query rows that see it ----
//   dV_j = sum_i P_ij dO_i,  dK_j = scale * sum_i dS_ij q_i
template <class T, int DPT>
__global__ void __launch_bounds__(threads)
    dkv_kernel(params p, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               const T* __restrict__ d_o, const float* __restrict__ lse,
               const float* __restrict__ delta, T* __restrict__ dk, T* __restrict__ dv) {
  extern __shared__ float smem[];
  float* qs = smem;
  float* dos = smem + tile * p.D;
  float* lse_s = smem + 2 * tile * p.D;
  float* delta_s = lse_s + tile;
  const int lane = threadIdx.x & 3;
  const int64_t b = blockIdx.z, hk = blockIdx.y, group = p.H / p.KVH;
  const int64_t j = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / 4;
  const bool active = j < p.Sk;
  const int64_t shift = p.Sk - p.Sq;
  float kr[DPT], vr[DPT], dka[DPT], dva[DPT];
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    bool in = active && d < p.D;
    kr[t] = in ? to_f(k[k_index(p, b, j, hk) + d]) * p.scale * log2e : 0.0f;
    vr[t] = in ? to_f(v[k_index(p, b, j, hk) + d]) : 0.0f;
    dka[t] = dva[t] = 0.0f;
  }
  // The first query row that sees any key of this block (causal): i >= j - shift.
  int64_t first_key = (int64_t)blockIdx.x * rows_per_block;
  int64_t i_begin = p.causal ? max((int64_t)0, first_key - shift) : 0;
  i_begin = i_begin / tile * tile;
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    for (int64_t i0 = i_begin; i0 < p.Sq; i0 += tile) {
      __syncthreads();
      load_tile(qs, q, p, b, i0, p.Sq, p.H, h);
      load_tile(dos, d_o, p, b, i0, p.Sq, p.H, h);
      if (threadIdx.x < tile) {
        int64_t i = i0 + threadIdx.x;
        lse_s[threadIdx.x] = i < p.Sq ? lse[(b * p.H + h) * p.Sq + i] * log2e : INFINITY;
        delta_s[threadIdx.x] = i < p.Sq ? delta[(b * p.H + h) * p.Sq + i] : 0.0f;
      }
      __syncthreads();
      for (int ii = 0; ii < tile; ++ii) {
        float s, dp;
        quad_dots(p, lane, kr, vr, qs + ii * p.D, dos + ii * p.D, s, dp);
        int64_t i = i0 + ii;
        bool visible = active && i < p.Sq && (!p.causal || j <= i + shift) && lse_s[ii] != INFINITY;
        if (!visible)
          continue;
        float pij = exp2f(s - lse_s[ii]);
        float ds = pij * (dp - delta_s[ii]);
        for (int t = 0; t < DPT; ++t) {
          int d = lane + 4 * t;
          if (d < p.D) {
            dva[t] += pij * dos[ii * p.D + d];
            dka[t] += ds * qs[ii * p.D + d];
          }
        }
      }
    }
  }
  if (!active)
    return;
  for (int t = 0; t < DPT; ++t) {
    int64_t d = lane + 4 * t;
    if (d < p.D) {
      dk[k_index(p, b, j, hk) + d] = from_f<T>(dka[t] * p.scale);
      dv[k_index(p, b, j, hk) + d] = from_f<T>(dva[t]);
    }
  }
}

params params_of(const attention_shape& s) {
  return {s.batch, s.heads,    s.kv_heads, s.seq_q,
          s.seq_k, s.head_dim, s.causal,   s.effective_scale()};
}

// The shared-memory opt-ins made so far (allow_smem), per device and kernel.
std::mutex g_smem_mu;
std::map<std::pair<int, const void*>, size_t> g_smem_allowed;
int g_smem_opt_ins = 0;

template <class T, int DPT>
void forward_t(const attention_shape& s, const void* q, const void* k, const void* v, void* o,
               float* lse, cudaStream_t st) {
  auto p = params_of(s);
  size_t smem = 2 * tile * s.head_dim * sizeof(float);
  allow_smem(reinterpret_cast<const void*>(forward_kernel<T, DPT>), smem);
  dim3 grid((unsigned)((s.seq_q + rows_per_block - 1) / rows_per_block), (unsigned)s.heads,
            (unsigned)s.batch);
  forward_kernel<T, DPT>
      <<<grid, threads, smem, st>>>(p, (const T*)q, (const T*)k, (const T*)v, (T*)o, lse);
}

template <class T, int DPT>
void backward_t(const attention_shape& s, const void* q, const void* k, const void* v,
                const void* o, const void* d_o, const float* lse, float* delta, void* dq, void* dk,
                void* dv, cudaStream_t st) {
  auto p = params_of(s);
  int64_t rows = s.batch * s.seq_q * s.heads;
  dot_do_o_kernel<T>
      <<<(unsigned)((rows + 255) / 256), 256, 0, st>>>(p, (const T*)o, (const T*)d_o, delta);
  size_t smem = 2 * tile * s.head_dim * sizeof(float);
  allow_smem(reinterpret_cast<const void*>(dq_kernel<T, DPT>), smem);
  dim3 gq((unsigned)((s.seq_q + rows_per_block - 1) / rows_per_block), (unsigned)s.heads,
          (unsigned)s.batch);
  dq_kernel<T, DPT><<<gq, threads, smem, st>>>(p, (const T*)q, (const T*)k, (const T*)v,
                                               (const T*)d_o, lse, delta, (T*)dq);
  size_t smem_kv = smem + 2 * tile * sizeof(float);
  allow_smem(reinterpret_cast<const void*>(dkv_kernel<T, DPT>), smem_kv);
  dim3 gk((unsigned)((s.seq_k + rows_per_block - 1) / rows_per_block), (unsigned)s.kv_heads,
          (unsigned)s.batch);
  dkv_kernel<T, DPT><<<gk, threads, smem_kv, st>>>(p, (const T*)q, (const T*)k, (const T*)v,
                                                   (const T*)d_o, lse, delta, (T*)dk, (T*)dv);
}

} // namespace

// Opts a kernel into more than 48 KB of dynamic shared memory, once per device, kernel and size
// (host work: not something to repeat inside a timed loop). The attribute belongs to the current
// device, so the cache is keyed by it too: an opt-in made on device 0 does not hold on device 1.
void allow_smem(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024)
    return;
  int dev = 0;
  device::check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(g_smem_mu);
  size_t& have = g_smem_allowed[{dev, kernel}];
  if (have >= bytes)
    return;
  device::check_cuda(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
      "cudaFuncSetAttribute(shared memory)");
  have = bytes;
  ++g_smem_opt_ins;
}

int smem_opt_ins() {
  std::lock_guard<std::mutex> lock(g_smem_mu);
  return g_smem_opt_ins;
}

// One home for the dispatch rule: 16-bit inputs at a head_dim the tensor-core kernels are built
// for run on tensor cores; fp32 inputs (and other head dims in bf16) run the CUDA-core kernels.
bool uses_tensor_cores(const attention_shape& s, dtype t) {
  return (t == dtype::bf16 || t == dtype::fp16) && tc::supports(s);
}

std::string kernel_name(const attention_shape& s, dtype t) {
  if (uses_tensor_cores(s, t))
    return std::string("flash_tc: tensor cores, mma.sync m16n8k16 ") + to_string(t) +
           " with fp32 accumulate, ldmatrix, cp.async";
  return "flash_native: CUDA cores, fp32 math (the reference kernels)";
}

namespace {
void refuse_unsupported(const attention_shape& s, dtype t) {
  require_dtype("native attention", t, {dtype::fp32, dtype::bf16, dtype::fp16});
  if (t == dtype::fp16 && !uses_tensor_cores(s, t))
    throw backend_error("native attention: fp16 runs on the tensor-core kernels only, which "
                        "support head_dim 64 and 128 (got head_dim=" +
                        std::to_string(s.head_dim) + ")");
}
} // namespace

// head_dim <= 128 keeps 32 values per thread per operand in registers; up to 256 uses 64.
void forward(const attention_shape& s, const attention_tensors& io, void* stream) {
  refuse_unsupported(s, io.type);
  const void *q = io.q, *k = io.k, *v = io.v;
  void* o = io.o;
  float* lse = io.lse;
  const bool bf16 = io.type == dtype::bf16; // else fp32 on the CUDA cores
  auto st = static_cast<cudaStream_t>(stream);
  if (uses_tensor_cores(s, io.type))
    tc::forward(s, io, stream);
  else if (s.head_dim <= 128)
    bf16 ? forward_t<__nv_bfloat16, 32>(s, q, k, v, o, lse, st)
         : forward_t<float, 32>(s, q, k, v, o, lse, st);
  else
    bf16 ? forward_t<__nv_bfloat16, 64>(s, q, k, v, o, lse, st)
         : forward_t<float, 64>(s, q, k, v, o, lse, st);
  device::check_cuda(cudaGetLastError(), "native attention forward launch");
}

void backward(const attention_shape& s, const attention_tensors& io, float* delta, void* stream) {
  refuse_unsupported(s, io.type);
  const void *q = io.q, *k = io.k, *v = io.v, *o = io.o, *d_o = io.d_o;
  const float* lse = io.lse;
  void *dq = io.dq, *dk = io.dk, *dv = io.dv;
  const bool bf16 = io.type == dtype::bf16; // else fp32 on the CUDA cores
  auto st = static_cast<cudaStream_t>(stream);
  if (uses_tensor_cores(s, io.type))
    tc::backward(s, io, delta, stream);
  else if (s.head_dim <= 128)
    bf16 ? backward_t<__nv_bfloat16, 32>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st)
         : backward_t<float, 32>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st);
  else
    bf16 ? backward_t<__nv_bfloat16, 64>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st)
         : backward_t<float, 64>(s, q, k, v, o, d_o, lse, delta, dq, dk, dv, st);
  device::check_cuda(cudaGetLastError(), "native attention backward launch");
}

} // namespace accelbench::attention::native
