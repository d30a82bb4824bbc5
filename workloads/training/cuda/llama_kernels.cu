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

// ---- embedding ----
__global__ void embedding_forward_k(float* out, const int32_t* tokens, const float* wte, int64_t bt,
                                    int64_t c) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < bt * c;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t row = i / c, col = i % c;
    out[i] = wte[(int64_t)tokens[row] * c + col];
  }
}
__global__ void embedding_backward_k(float* dwte, const float* dout, const int32_t* tokens,
                                     int64_t bt, int64_t c) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < bt * c;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t row = i / c, col = i % c;
    atomicAdd(&dwte[(int64_t)tokens[row] * c + col], dout[i]);
  }
}

// ---- RMSNorm ----
__global__ void rmsnorm_forward_k(float* out, float* rstd, const float* inp, const float* w,
                                  int64_t c, float eps) {
  const float* x = inp + blockIdx.x * c;
  float ss = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    ss += x[j] * x[j];
  ss = block_sum(ss);
  const float r = rsqrtf(ss / (float)c + eps);
  if (threadIdx.x == 0)
    rstd[blockIdx.x] = r;
  float* o = out + blockIdx.x * c;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    o[j] = x[j] * r * w[j];
}
// dx_j += r w_j dy_j - x_j r^3/C sum_k(w_k dy_k x_k)
__global__ void rmsnorm_backward_dx_k(float* dinp, const float* dout, const float* inp,
                                      const float* w, const float* rstd, int64_t c) {
  const int64_t row = blockIdx.x;
  const float* x = inp + row * c;
  const float* dy = dout + row * c;
  const float r = rstd[row];
  float dot = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    dot += w[j] * dy[j] * x[j];
  dot = block_sum(dot);
  const float coef = dot * r * r * r / (float)c;
  float* dx = dinp + row * c;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
    dx[j] += r * w[j] * dy[j] - coef * x[j];
}
// dweight_j += sum_rows dy * x * r: one thread per channel, rows in order (coalesced across j).
__global__ void rmsnorm_backward_dw_k(float* dw, const float* dout, const float* inp,
                                      const float* rstd, int64_t bt, int64_t c) {
  const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (j >= c)
    return;
  float s = 0;
  for (int64_t i = 0; i < bt; i++)
    s += dout[i * c + j] * inp[i * c + j] * rstd[i];
  dw[j] += s;
}

// ---- RoPE ----
__global__ void rope_k(float* x, const float* cs, const float* sn, int64_t b, int64_t t, int64_t nh,
                       int64_t hd, float sign) {
  const int64_t half = hd / 2, n = b * t * nh * half;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t pair = i % half, head = i / half; // head = (bi*t + ti)*nh + h
    const int64_t ti = (head / nh) % t;
    float* v = x + head * hd;
    const float c = cs[ti * half + pair], s = sign * sn[ti * half + pair];
    const float x1 = v[pair], x2 = v[pair + half];
    v[pair] = x1 * c - x2 * s;
    v[pair + half] = x2 * c + x1 * s;
  }
}

// ---- elementwise ----
__global__ void swiglu_forward_k(float* out, const float* h1, const float* h3, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float x = h1[i];
    out[i] = x / (1.0f + expf(-x)) * h3[i];
  }
}
__global__ void swiglu_backward_k(float* dh1, float* dh3, const float* dout, const float* h1,
                                  const float* h3, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float x = h1[i], s = 1.0f / (1.0f + expf(-x));
    dh3[i] = dout[i] * x * s;
    dh1[i] = dout[i] * h3[i] * s * (1.0f + x * (1.0f - s));
  }
}
__global__ void add_k(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = a[i] + b[i];
}
__global__ void scale_k(float* out, const float* x, float alpha, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = alpha * x[i];
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

// ---- reductions, optimizer, casts ----
__global__ void dot_partials_k(double* partials, const float* a, const float* b, int64_t n) {
  __shared__ double part[1024];
  double s = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    s += (double)a[i] * (double)(b ? b[i] : a[i]);
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
__global__ void adamw_k(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1,
                        float b2, float eps, float wd, float bc1, float bc2) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float gi = g[i];
    const float mi = b1 * m[i] + (1 - b1) * gi, vi = b2 * v[i] + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= lr * ((mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * p[i]);
  }
}
__global__ void to_bf16_k(__nv_bfloat16* out, const float* in, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}
__global__ void from_bf16_k(float* out, const __nv_bfloat16* in, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = __bfloat162float(in[i]);
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
  scale_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(out, x, alpha, n);
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
  dot_partials_k<<<count, 1024, 0, st(s)>>>(partials, a, b, n);
  launched("dot_partials");
}
void adamw(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1, float b2,
           float eps, float wd, float bc1, float bc2, void* s) {
  adamw_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(p, g, m, v, n, lr, b1, b2, eps, wd, bc1, bc2);
  launched("adamw");
}
void to_bf16(uint16_t* out, const float* in, int64_t n, void* s) {
  to_bf16_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(reinterpret_cast<__nv_bfloat16*>(out), in,
                                                       n);
  launched("to_bf16");
}
void from_bf16(float* out, const uint16_t* in, int64_t n, void* s) {
  from_bf16_k<<<grid_for(n, kBlock), kBlock, 0, st(s)>>>(
      out, reinterpret_cast<const __nv_bfloat16*>(in), n);
  launched("from_bf16");
}

} // namespace accelbench::training::cuda::kernels
