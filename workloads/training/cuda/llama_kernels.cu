// CUDA kernels of train.llama (declarations and semantics in llama_kernels.hpp).
#include "workloads/training/cuda/llama_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "harness/device/device.hpp"

namespace accelbench::training::cuda::kernels {

namespace {

cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }
void launched(const char* what) { device::check_cuda((int)cudaGetLastError(), what); }
int grid_for(int64_t n, int block) {
  int64_t g = (n + block - 1) / block;
  return (int)(g < 65535 * 64 ? g : 65535 * 64);
}

// Calls f(i) for every i in [0, n), the grid striding over the range (grid_for caps the grid):
// the one loop of every elementwise kernel here.
template <class F> __device__ __forceinline__ void grid_stride(int64_t n, const F& f) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    f(i);
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024).
__device__ float block_sum(float x) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads(); // part[] may still be read by a previous call
  if (lane == 0)
    part[warp] = x;
  __syncthreads();
  const int warps = blockDim.x / 32;
  x = lane < warps ? part[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ float block_max(float x) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
    part[warp] = x;
  __syncthreads();
  const int warps = blockDim.x / 32;
  x = lane < warps ? part[lane] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// Loads and stores of either storage type, computing in fp32: one template serves the fp32
// recipe and the bf16 one (the cast fused into the kernel).
using bf16 = __nv_bfloat16;
__device__ __forceinline__ float ld(const float* p) { return *p; }
__device__ __forceinline__ float ld(const bf16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void sto(float* p, float x) { *p = x; }
__device__ __forceinline__ void sto(bf16* p, float x) { *p = __float2bfloat16_rn(x); }
const bf16* as_bf(const uint16_t* p) { return reinterpret_cast<const bf16*>(p); }
bf16* as_bf(uint16_t* p) { return reinterpret_cast<bf16*>(p); }

// ---- embedding ----
template <class T>
__global__ void embedding_forward_k(T* out, const int32_t* tokens, const float* wte, int64_t bt,
                                    int64_t c) {
  grid_stride(bt * c, [&](int64_t i) {
    int64_t row = i / c, col = i % c;
    sto(&out[i], wte[(int64_t)tokens[row] * c + col]);
  });
}
template <class T>
__global__ void embedding_backward_k(float* dwte, const T* dout, const int32_t* tokens, int64_t bt,
                                     int64_t c) {
  grid_stride(bt * c, [&](int64_t i) {
    int64_t row = i / c, col = i % c;
    atomicAdd(&dwte[(int64_t)tokens[row] * c + col], ld(&dout[i]));
  });
}

// ---- RMSNorm ----
template <class T>
__global__ void rmsnorm_forward_k(T* out, float* rstd, const T* inp, const float* w, int64_t c,
                                  float eps) {
  const T* x = inp + blockIdx.x * c;
  float ss = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
    const float xj = ld(&x[j]);
    ss += xj * xj;
  }
  ss = block_sum(ss);
  const float r = rsqrtf(ss / (float)c + eps);
  if (threadIdx.x == 0)
    rstd[blockIdx.x] = r;
  T* o = out + blockIdx.x * c;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    sto(&o[j], ld(&x[j]) * r * w[j]);
}
// dx_j += r w_j dy_j - x_j r^3/C sum_k(w_k dy_k x_k)
template <class T>
__global__ void rmsnorm_backward_dx_k(T* dinp, const T* dout, const T* inp, const float* w,
                                      const float* rstd, int64_t c) {
  const int64_t row = blockIdx.x;
  const T* x = inp + row * c;
  const T* dy = dout + row * c;
  const float r = rstd[row];
  float dot = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    dot += w[j] * ld(&dy[j]) * ld(&x[j]);
  dot = block_sum(dot);
  const float coef = dot * r * r * r / (float)c;
  T* dx = dinp + row * c;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    sto(&dx[j], ld(&dx[j]) + r * w[j] * ld(&dy[j]) - coef * ld(&x[j]));
}
// dweight_j += sum_rows dy * x * r: one thread per channel, rows in order (coalesced across j).
template <class T>
__global__ void rmsnorm_backward_dw_k(float* dw, const T* dout, const T* inp, const float* rstd,
                                      int64_t bt, int64_t c) {
  const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (j >= c)
    return;
  float s = 0;
  for (int64_t i = 0; i < bt; i++)
    s += ld(&dout[i * c + j]) * ld(&inp[i * c + j]) * rstd[i];
  dw[j] += s;
}

// ---- RoPE ----
template <class T>
__global__ void rope_k(T* x, const float* cs, const float* sn, int64_t b, int64_t t, int64_t nh,
                       int64_t hd, float sign) {
  const int64_t half = hd / 2, n = b * t * nh * half;
  grid_stride(n, [&](int64_t i) {
    const int64_t pair = i % half, head = i / half; // head = (bi*t + ti)*nh + h
    const int64_t ti = (head / nh) % t;
    T* v = x + head * hd;
    const float c = cs[ti * half + pair], s = sign * sn[ti * half + pair];
    const float x1 = ld(&v[pair]), x2 = ld(&v[pair + half]);
    sto(&v[pair], x1 * c - x2 * s);
    sto(&v[pair + half], x2 * c + x1 * s);
  });
}

// ---- elementwise ----
template <class T> __global__ void swiglu_forward_k(T* out, const T* h1, const T* h3, int64_t n) {
  grid_stride(n, [&](int64_t i) {
    const float x = ld(&h1[i]);
    sto(&out[i], x / (1.0f + expf(-x)) * ld(&h3[i]));
  });
}
template <class T>
__global__ void swiglu_backward_k(T* dh1, T* dh3, const T* dout, const T* h1, const T* h3,
                                  int64_t n) {
  grid_stride(n, [&](int64_t i) {
    const float x = ld(&h1[i]), s = 1.0f / (1.0f + expf(-x)), d = ld(&dout[i]);
    sto(&dh3[i], d * x * s);
    sto(&dh1[i], d * ld(&h3[i]) * s * (1.0f + x * (1.0f - s)));
  });
}
__global__ void add_k(float* out, const float* a, const float* b, int64_t n) {
  grid_stride(n, [&](int64_t i) { out[i] = a[i] + b[i]; });
}
template <class T> __global__ void scale_k(T* out, const float* x, float alpha, int64_t n) {
  grid_stride(n, [&](int64_t i) { sto(&out[i], alpha * x[i]); });
}

// ---- cross-entropy ----
__global__ void softmax_ce_forward_k(float* logits, float* losses, const int32_t* targets,
                                     int64_t v) {
  float* p = logits + blockIdx.x * v;
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    mx = fmaxf(mx, p[j]);
  mx = block_max(mx);
  float sum = 0;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    sum += expf(p[j] - mx);
  sum = block_sum(sum);
  const float target_logit = p[targets[blockIdx.x]]; // read before the row is overwritten
  __syncthreads();
  const float inv = 1.0f / sum;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    p[j] = expf(p[j] - mx) * inv;
  if (threadIdx.x == 0)
    losses[blockIdx.x] = logf(sum) - (target_logit - mx);
}
__global__ void ce_backward_k(float* p, const int32_t* targets, int64_t v, float dloss) {
  float* row = p + blockIdx.x * v;
  const int32_t tg = targets[blockIdx.x];
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    row[j] = (row[j] - (j == tg ? 1.0f : 0.0f)) * dloss;
}

// bf16 logits stay as they are; the statistics are fp32 (PyTorch autocast runs cross_entropy in
// fp32). Backward recomputes softmax from the saved logsumexp.
__global__ void ce_forward_bf16_k(const bf16* logits, float* lse, float* losses,
                                  const int32_t* targets, int64_t v) {
  const bf16* p = logits + blockIdx.x * v;
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    mx = fmaxf(mx, ld(&p[j]));
  mx = block_max(mx);
  float sum = 0;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    sum += expf(ld(&p[j]) - mx);
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    const float l = mx + logf(sum);
    lse[blockIdx.x] = l;
    losses[blockIdx.x] = l - ld(&p[targets[blockIdx.x]]);
  }
}
__global__ void ce_backward_bf16_k(bf16* logits, const float* lse, const int32_t* targets,
                                   int64_t v, float dloss) {
  bf16* row = logits + blockIdx.x * v;
  const int32_t tg = targets[blockIdx.x];
  const float l = lse[blockIdx.x];
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x)
    sto(&row[j], (expf(ld(&row[j]) - l) - (j == tg ? 1.0f : 0.0f)) * dloss);
}

// ---- reductions, optimizer, casts ----
// mode 0: sum a*b (b null: a*a); mode 1: sum a.
template <class T>
__global__ void dot_partials_k(double* partials, const T* a, const float* b, int64_t n, int mode) {
  __shared__ double part[1024];
  double s = 0;
  grid_stride(n, [&](int64_t i) {
    const double x = (double)ld(&a[i]);
    s += mode == 1 ? x : x * (b ? (double)b[i] : x);
  });
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w)
      part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partials[blockIdx.x] = part[0];
}
__global__ void accumulate_partials_k(float* out, const double* partials, int count, double scale) {
  double s = 0;
  for (int i = 0; i < count; i++)
    s += partials[i];
  *out += float(scale * s);
}
// One block per chunk (a chunk lies inside one tensor). Every block sums the norm's partials in
// the same order, so all agree on the clipping coefficient without another launch.
__global__ void adamw_fused_k(adamw_args a) {
  __shared__ float coef;
  if (threadIdx.x == 0) {
    float c = 1.0f;
    if (a.norm_partials) {
      double ss = 0;
      for (int i = 0; i < a.partials_count; i++)
        ss += a.norm_partials[i];
      const double norm = sqrt(ss);
      if (a.max_norm > 0 && norm > a.max_norm)
        c = float(a.max_norm / (norm + 1e-6));
      if (a.norm_out && blockIdx.x == 0)
        *a.norm_out = float(norm);
    }
    coef = c;
  }
  __syncthreads();
  const adamw_chunk ch = a.chunks[blockIdx.x];
  const float wd = ch.decay ? a.wd : 0.0f;
  for (int64_t i = ch.begin + threadIdx.x; i < ch.end; i += blockDim.x) {
    const float gi = a.g[i] * coef;
    const float mi = a.b1 * a.m[i] + (1 - a.b1) * gi, vi = a.b2 * a.v[i] + (1 - a.b2) * gi * gi;
    a.m[i] = mi;
    a.v[i] = vi;
    const float pi = a.p[i] - a.lr * ((mi / a.bc1) / (sqrtf(vi / a.bc2) + a.eps) + wd * a.p[i]);
    a.p[i] = pi;
    if (a.p_bf16)
      a.p_bf16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(pi));
  }
}
__global__ void to_bf16_k(__nv_bfloat16* out, const float* in, int64_t n) {
  grid_stride(n, [&](int64_t i) { out[i] = __float2bfloat16_rn(in[i]); });
}
constexpr int kBlock = 256;
int row_block(int64_t c) { return c >= 1024 ? 1024 : c >= 256 ? 256 : 128; }

} // namespace

void embedding_forward(float* out, const int32_t* tokens, const float* wte, int64_t bt, int64_t c,
                       void* s) {
  embedding_forward_k<<<grid_for(bt * c, kBlock), kBlock, 0, st(s)>>>(out, tokens, wte, bt, c);
  launched("embedding_forward");
}
void embedding_backward(float* dwte, const float* dout, const int32_t* tokens, int64_t bt,
                        int64_t c, void* s) {
  embedding_backward_k<<<grid_for(bt * c, kBlock), kBlock, 0, st(s)>>>(dwte, dout, tokens, bt, c);
  launched("embedding_backward");
}
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* w, int64_t bt,
                     int64_t c, float eps, void* s) {
  rmsnorm_forward_k<<<(unsigned)bt, row_block(c), 0, st(s)>>>(out, rstd, inp, w, c, eps);
  launched("rmsnorm_forward");
}
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* w, const float* rstd, int64_t bt, int64_t c, void* s) {
  rmsnorm_backward_dx_k<<<(unsigned)bt, row_block(c), 0, st(s)>>>(dinp, dout, inp, w, rstd, c);
  launched("rmsnorm_backward (dx)");
  rmsnorm_backward_dw_k<<<(unsigned)((c + 127) / 128), 128, 0, st(s)>>>(dweight, dout, inp, rstd,
                                                                        bt, c);
  launched("rmsnorm_backward (dweight)");
}
void rope(float* x, const float* cs, const float* sn, int64_t b, int64_t t, int64_t nh, int64_t hd,
          float sign, void* s) {
  rope_k<<<grid_for(b * t * nh * (hd / 2), kBlock), kBlock, 0, st(s)>>>(x, cs, sn, b, t, nh, hd,
                                                                        sign);
  launched("rope");
}
void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n, void* s) {
  swiglu_forward_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(out, h1, h3, n);
  launched("swiglu_forward");
}
void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n, void* s) {
  swiglu_backward_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(dh1, dh3, dout, h1, h3, n);
  launched("swiglu_backward");
}
void add(float* out, const float* a, const float* b, int64_t n, void* s) {
  add_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(out, a, b, n);
  launched("add");
}
void scale(float* out, const float* x, float alpha, int64_t n, void* s) {
  scale_k<float><<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(out, x, alpha, n);
  launched("scale");
}
void softmax_crossentropy_forward(float* logits, float* losses, const int32_t* targets, int64_t bt,
                                  int64_t v, void* s) {
  softmax_ce_forward_k<<<(unsigned)bt, 1024, 0, st(s)>>>(logits, losses, targets, v);
  launched("softmax_crossentropy_forward");
}
void crossentropy_softmax_backward(float* probs, const int32_t* targets, int64_t bt, int64_t v,
                                   float dloss, void* s) {
  ce_backward_k<<<(unsigned)bt, 1024, 0, st(s)>>>(probs, targets, v, dloss);
  launched("crossentropy_softmax_backward");
}
void dot_partials(double* partials, int count, const float* a, const float* b, int64_t n, void* s) {
  dot_partials_k<<<count, 1024, 0, st(s)>>>(partials, a, b, n, 0);
  launched("dot_partials");
}
void to_bf16(uint16_t* out, const float* in, int64_t n, void* s) {
  to_bf16_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(reinterpret_cast<__nv_bfloat16*>(out), in,
                                                       n);
  launched("to_bf16");
}
// ---- bf16-mixed-v1 ----
void embedding_forward_bf16(uint16_t* out, const int32_t* tokens, const float* wte, int64_t bt,
                            int64_t c, void* s) {
  embedding_forward_k<<<grid_for(bt * c, kBlock), kBlock, 0, st(s)>>>(as_bf(out), tokens, wte, bt,
                                                                      c);
  launched("embedding_forward_bf16");
}
void embedding_backward_bf16(float* dwte, const uint16_t* dout, const int32_t* tokens, int64_t bt,
                             int64_t c, void* s) {
  embedding_backward_k<<<grid_for(bt * c, kBlock), kBlock, 0, st(s)>>>(dwte, as_bf(dout), tokens,
                                                                       bt, c);
  launched("embedding_backward_bf16");
}
void rmsnorm_forward_bf16(uint16_t* out, float* rstd, const uint16_t* inp, const float* w,
                          int64_t bt, int64_t c, float eps, void* s) {
  rmsnorm_forward_k<<<(unsigned)bt, row_block(c), 0, st(s)>>>(as_bf(out), rstd, as_bf(inp), w, c,
                                                              eps);
  launched("rmsnorm_forward_bf16");
}
void rmsnorm_backward_bf16(uint16_t* dinp, float* dweight, const uint16_t* dout,
                           const uint16_t* inp, const float* w, const float* rstd, int64_t bt,
                           int64_t c, void* s) {
  rmsnorm_backward_dx_k<<<(unsigned)bt, row_block(c), 0, st(s)>>>(as_bf(dinp), as_bf(dout),
                                                                  as_bf(inp), w, rstd, c);
  launched("rmsnorm_backward_bf16 (dx)");
  rmsnorm_backward_dw_k<<<(unsigned)((c + 127) / 128), 128, 0, st(s)>>>(dweight, as_bf(dout),
                                                                        as_bf(inp), rstd, bt, c);
  launched("rmsnorm_backward_bf16 (dweight)");
}
void rope_bf16(uint16_t* x, const float* cs, const float* sn, int64_t b, int64_t t, int64_t nh,
               int64_t hd, float sign, void* s) {
  rope_k<<<grid_for(b * t * nh * (hd / 2), kBlock), kBlock, 0, st(s)>>>(as_bf(x), cs, sn, b, t, nh,
                                                                        hd, sign);
  launched("rope_bf16");
}
void swiglu_forward_bf16(uint16_t* out, const uint16_t* h1, const uint16_t* h3, int64_t n,
                         void* s) {
  swiglu_forward_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(as_bf(out), as_bf(h1), as_bf(h3), n);
  launched("swiglu_forward_bf16");
}
void swiglu_backward_bf16(uint16_t* dh1, uint16_t* dh3, const uint16_t* dout, const uint16_t* h1,
                          const uint16_t* h3, int64_t n, void* s) {
  swiglu_backward_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(as_bf(dh1), as_bf(dh3), as_bf(dout),
                                                               as_bf(h1), as_bf(h3), n);
  launched("swiglu_backward_bf16");
}
void scale_to_bf16(uint16_t* out, const float* x, float alpha, int64_t n, void* s) {
  scale_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(as_bf(out), x, alpha, n);
  launched("scale_to_bf16");
}
void crossentropy_forward_bf16(const uint16_t* logits, float* lse, float* losses,
                               const int32_t* targets, int64_t bt, int64_t v, void* s) {
  ce_forward_bf16_k<<<(unsigned)bt, 1024, 0, st(s)>>>(as_bf(logits), lse, losses, targets, v);
  launched("crossentropy_forward_bf16");
}
void crossentropy_backward_bf16(uint16_t* logits, const float* lse, const int32_t* targets,
                                int64_t bt, int64_t v, float dloss, void* s) {
  ce_backward_bf16_k<<<(unsigned)bt, 1024, 0, st(s)>>>(as_bf(logits), lse, targets, v, dloss);
  launched("crossentropy_backward_bf16");
}
void dot_partials_bf16(double* partials, int count, const uint16_t* a, const float* b, int64_t n,
                       void* s) {
  dot_partials_k<<<count, 1024, 0, st(s)>>>(partials, as_bf(a), b, n, 0);
  launched("dot_partials_bf16");
}
void sum_partials(double* partials, int count, const float* a, int64_t n, void* s) {
  dot_partials_k<<<count, 1024, 0, st(s)>>>(partials, a, nullptr, n, 1);
  launched("sum_partials");
}
void accumulate_partials(float* out, const double* partials, int count, double scale, void* s) {
  accumulate_partials_k<<<1, 1, 0, st(s)>>>(out, partials, count, scale);
  launched("accumulate_partials");
}
void adamw_fused(const adamw_args& a, void* s) {
  if (a.chunk_count == 0)
    return;
  adamw_fused_k<<<(unsigned)a.chunk_count, kBlock, 0, st(s)>>>(a);
  launched("adamw_fused");
}

} // namespace accelbench::training::cuda::kernels
