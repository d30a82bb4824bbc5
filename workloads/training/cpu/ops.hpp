#pragma once
// The layers of a Llama-style decoder as forward/backward pairs of free functions, llm.c style:
// each comment names the tensor shapes (row-major; B batch, T sequence, C model width, NH query
// heads, KVH key/value heads, HD head dim, F SwiGLU width, V vocabulary, BT = B*T). Backward
// functions ACCUMULATE into parameter gradients (+=) so that gradient accumulation over micro
// batches needs no extra buffers; for activation gradients each comment says = or +=.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/dtype.hpp"
#include "kernels/attention/cpu/flash_attention.hpp"
#include "workloads/training/llama.hpp"
#include "workloads/training/model_config.hpp"

namespace accelbench::training {

// C[M,N] = (accumulate ? C : 0) + op(A)[M,K] * op(B)[K,N]; row-major with leading dimensions.
// Runs through oneDNN's matmul primitive (cached per shape), OpenMP-parallel.
void matmul(compute_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
            const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
            bool accumulate);

// Round to bfloat16 and back (round to nearest even); NaN stays NaN.
float round_to_bf16(float x);

// out[BT,OC] = inp[BT,C] * w[OC,C]^T   (a torch.nn.Linear without bias)
void linear_forward(compute_dtype dt, float* out, const float* inp, const float* w, int64_t bt,
                    int64_t c, int64_t oc);
// dinp[BT,C] (= or += per accumulate_dinp) dout[BT,OC] * w[OC,C];  dw[OC,C] += dout^T * inp
void linear_backward(compute_dtype dt, float* dinp, float* dw, const float* dout, const float* inp,
                     const float* w, int64_t bt, int64_t c, int64_t oc, bool accumulate_dinp);

// out[BT,C] = wte[tokens[bt], :]        tokens[BT], wte[V,C]
void embedding_forward(float* out, const int32_t* tokens, const float* wte, int64_t bt, int64_t c);
// dwte[V,C] += scatter of dout[BT,C] by tokens (serial over BT: deterministic)
void embedding_backward(float* dwte, const float* dout, const int32_t* tokens, int64_t bt,
                        int64_t c);

// RMSNorm (Zhang & Sennrich 2019): out = inp * rstd * weight, rstd = 1/sqrt(mean(inp^2) + eps)
// out[BT,C], rstd[BT], inp[BT,C], weight[C]
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t bt,
                     int64_t c, float eps);
// dinp[BT,C] += ..., dweight[C] += ...
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t bt, int64_t c);

// RoPE (rope_table, llama.hpp):
// x[B,T,NH,HD] rotated in place
void rope_forward(float* x, const rope_table& r, int64_t b, int64_t t, int64_t nh, int64_t hd);
// dx[B,T,NH,HD] in place: the transpose of a rotation is the rotation by -angle
void rope_backward(float* dx, const rope_table& r, int64_t b, int64_t t, int64_t nh, int64_t hd);

// Causal grouped-query attention through the fused kernels of kernels/attention. With bf16 (the
// bf16 recipe) Q, K, V, O and dO are rounded to bf16 and the bf16 kernels run (vdpbf16ps where
// the CPU has AVX512-BF16; softmax, lse and accumulation in fp32, as bf16 FlashAttention on GPUs),
// O and the gradients widened back to fp32; fp32 runs the fp32 kernels.
// The shape is the kernels' (causal_attention_shape: B batch, T = seq_q = seq_k, NH heads, KVH
// kv_heads, HD head_dim); the fp32 tensors, forward and backward pairs side by side:
struct attention_io {
  const float* q = nullptr; // [B,T,NH,HD]
  float* dq = nullptr;
  const float* k = nullptr; // [B,T,KVH,HD]
  float* dk = nullptr;
  const float* v = nullptr; // [B,T,KVH,HD]
  float* dv = nullptr;
  float* out = nullptr; // [B,T,NH,HD]
  const float* dout = nullptr;
  float* lse = nullptr; // [B,NH,T]
};
// out, lse (=) from q, k, v
void attention_forward(compute_dtype dt, const attention::attention_shape& s,
                       const attention_io& io);
// dq, dk, dv (=) from dout, q, k, v, out, lse
void attention_backward(compute_dtype dt, const attention::attention_shape& s,
                        const attention_io& io);

// SwiGLU (Shazeer 2020): out[BT,F] = silu(h1) * h3, silu(x) = x * sigmoid(x)
void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n);
// dh1, dh3[BT,F] (=)
void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n);

// out[N] = a[N] + b[N]
void residual_forward(float* out, const float* a, const float* b, int64_t n);

// Softmax cross-entropy. logits[BT,V] are replaced by probabilities; losses[BT] = -log p[target].
void softmax_crossentropy_forward(float* logits_to_probs, float* losses, const int32_t* targets,
                                  int64_t bt, int64_t v);
// probs[BT,V] replaced by dlogits = (probs - onehot(target)) * dloss
void crossentropy_softmax_backward(float* probs_to_dlogits, const int32_t* targets, int64_t bt,
                                   int64_t v, float dloss);

// The plain-loop versions of the layers above whose fast versions change the arithmetic: the
// fast RMSNorm sums x^2 and w dy x in 16 lanes (the same terms in another order; the gain
// gradient keeps this order, so it is bit-identical), the fast SwiGLU uses a vectorised exp (1-2
// ulp from libm's). Bounds the tests hold the fast ones to (tests/.../test_fast_ops.cpp): RMSNorm
// outputs and rstd within 2e-6 relative; SwiGLU within 1e-6 relative (dh1 relative to dout*h3,
// where its terms cancel); a model's loss within 1e-5 relative over four AdamW steps. Kept for
// those tests and the benchmark's before/after (llama_options::reference_ops).
namespace reference {
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t bt,
                     int64_t c, float eps);
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t bt, int64_t c);
void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n);
void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n);
} // namespace reference

} // namespace accelbench::training
