#pragma once
// The CUDA kernels of train.llama on the GPU: the layers of ops.hpp that are not
// matmuls or attention, written for readability (llm.c's train_gpt2.cu is the model of style).
// Plain C++ header: pointers are device pointers, `stream` is a cudaStream_t. Shapes and
// accumulate (+=) vs overwrite (=) semantics are those of the CPU functions in ops.hpp, so the
// two backends can be compared function by function.
#include <cstdint>

namespace accelbench::training::cuda::kernels {

// out[BT,C] = wte[tokens[bt], :]
void embedding_forward(float* out, const int32_t* tokens, const float* wte, int64_t bt, int64_t c,
                       void* stream);
// dwte[V,C] += scatter of dout[BT,C] by tokens (atomicAdd: order not fixed)
void embedding_backward(float* dwte, const float* dout, const int32_t* tokens, int64_t bt,
                        int64_t c, void* stream);

// RMSNorm: one block per row. out[BT,C], rstd[BT]
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t bt,
                     int64_t c, float eps, void* stream);
// dinp[BT,C] +=, dweight[C] += (dweight: one thread per channel, rows in order)
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t bt, int64_t c, void* stream);

// Rotary embedding in place on x[B,T,NH,HD], "rotate half" pairs (i, i+HD/2); cos, sin [T, HD/2].
// sign = +1 forward, -1 backward (the transpose of a rotation).
void rope(float* x, const float* cos, const float* sin, int64_t b, int64_t t, int64_t nh,
          int64_t hd, float sign, void* stream);

// out[N] = silu(h1) * h3;  dh1, dh3 (=)
void swiglu_forward(float* out, const float* h1, const float* h3, int64_t n, void* stream);
void swiglu_backward(float* dh1, float* dh3, const float* dout, const float* h1, const float* h3,
                     int64_t n, void* stream);

// out[N] = a[N] + b[N]
void add(float* out, const float* a, const float* b, int64_t n, void* stream);
// out[N] = alpha * x[N] (out may be x)
void scale(float* out, const float* x, float alpha, int64_t n, void* stream);

// Softmax cross-entropy, one block per row: logits[BT,V] replaced by probabilities,
// losses[BT] = logsumexp - logit[target].
void softmax_crossentropy_forward(float* logits_to_probs, float* losses, const int32_t* targets,
                                  int64_t bt, int64_t v, void* stream);
// probs[BT,V] replaced by (probs - onehot(target)) * dloss
void crossentropy_softmax_backward(float* probs_to_dlogits, const int32_t* targets, int64_t bt,
                                   int64_t v, float dloss, void* stream);

// Partial sums of a[i]*b[i] (b = null: a[i]^2) in double, one per block of a fixed grid of
// `partials` blocks (the same order every call: deterministic). The caller sums them.
void dot_partials(double* partials, int partials_count, const float* a, const float* b, int64_t n,
                  void* stream);

// fp32 -> bf16 (round to nearest even; NaN stays NaN): the weight copies after an upload.
void to_bf16(uint16_t* out, const float* in, int64_t n, void* stream);

// ---- the recipe "bf16-mixed-v1" (llama_cuda.hpp): bf16 activations (uint16_t bit patterns),
// fp32 statistics, fp32 weights read directly (norm gains, embedding) and fp32 gradients. Each
// kernel reads bf16, computes in fp32 and writes bf16: the casts are fused into it. ----

void embedding_forward_bf16(uint16_t* out, const int32_t* tokens, const float* wte, int64_t bt,
                            int64_t c, void* stream);
void embedding_backward_bf16(float* dwte, const uint16_t* dout, const int32_t* tokens, int64_t bt,
                             int64_t c, void* stream);
// out bf16, rstd fp32 (sum of squares in fp32)
void rmsnorm_forward_bf16(uint16_t* out, float* rstd, const uint16_t* inp, const float* weight,
                          int64_t bt, int64_t c, float eps, void* stream);
// dinp[BT,C] += (bf16), dweight[C] += (fp32)
void rmsnorm_backward_bf16(uint16_t* dinp, float* dweight, const uint16_t* dout,
                           const uint16_t* inp, const float* weight, const float* rstd, int64_t bt,
                           int64_t c, void* stream);
void rope_bf16(uint16_t* x, const float* cos, const float* sin, int64_t b, int64_t t, int64_t nh,
               int64_t hd, float sign, void* stream);
void swiglu_forward_bf16(uint16_t* out, const uint16_t* h1, const uint16_t* h3, int64_t n,
                         void* stream);
void swiglu_backward_bf16(uint16_t* dh1, uint16_t* dh3, const uint16_t* dout, const uint16_t* h1,
                          const uint16_t* h3, int64_t n, void* stream);
// out[N] = bf16(alpha * x[N])
void scale_to_bf16(uint16_t* out, const float* x, float alpha, int64_t n, void* stream);
// Cross-entropy on bf16 logits, kept (not overwritten): lse[BT] = logsumexp (fp32),
// losses[BT] = lse - logit[target].
void crossentropy_forward_bf16(const uint16_t* logits, float* lse, float* losses,
                               const int32_t* targets, int64_t bt, int64_t v, void* stream);
// logits[BT,V] replaced by bf16((softmax - onehot(target)) * dloss), from the saved lse.
void crossentropy_backward_bf16(uint16_t* logits_to_dlogits, const float* lse,
                                const int32_t* targets, int64_t bt, int64_t v, float dloss,
                                void* stream);
// dot_partials of a bf16 vector with an fp32 one (the blocks-only probe loss).
void dot_partials_bf16(double* partials, int partials_count, const uint16_t* a, const float* b,
                       int64_t n, void* stream);

// ---- on-device reductions and the fused optimizer (both recipes: no host round trip) ----

// Partial sums of a[i] (as dot_partials).
void sum_partials(double* partials, int partials_count, const float* a, int64_t n, void* stream);
// *out += scale * (sum of the partials, in order): one thread, deterministic.
void accumulate_partials(float* out, const double* partials, int partials_count, double scale,
                         void* stream);

// A run of parameters one block of the fused AdamW updates: [begin, end) inside one tensor,
// decay 1 when the tensor takes weight decay (matrices), 0 otherwise.
struct adamw_chunk {
  int64_t begin = 0, end = 0;
  int32_t decay = 0, pad = 0;
};
// AdamW with torch.optim.AdamW's semantics (as optimizer.cpp):
// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m/bc1 / (sqrt(v/bc2) + eps) + wd p),
// in one launch over every parameter: gradient-norm clipping from the partial sums of squares of
// the gradients (norm_partials, dot_partials over all gradients; null: no clipping), then AdamW
// (as adamw above, the gradient scaled by min(1, max_norm / (norm + 1e-6)) when norm > max_norm,
// torch.nn.utils.clip_grad_norm_'s rule), writing the fp32 master weights, the moments and, when
// p_bf16 is not null, the bf16 copies of the weights. norm_out (may be null): the norm.
struct adamw_args {
  float *p, *m, *v;
  const float* g;
  uint16_t* p_bf16;
  const adamw_chunk* chunks; // device array
  int64_t chunk_count;
  float lr, b1, b2, eps, wd, bc1, bc2;
  const double* norm_partials;
  int partials_count;
  double max_norm;
  float* norm_out;
};
void adamw_fused(const adamw_args& a, void* stream);

} // namespace accelbench::training::cuda::kernels
