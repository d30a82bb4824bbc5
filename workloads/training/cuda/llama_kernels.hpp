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

// AdamW on one tensor (torch.optim.AdamW semantics, as optimizer.cpp):
// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m/bc1 / (sqrt(v/bc2) + eps) + wd p)
void adamw(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1, float b2,
           float eps, float wd, float bc1, float bc2, void* stream);

// fp32 <-> bf16 (round to nearest even; NaN stays NaN)
void to_bf16(uint16_t* out, const float* in, int64_t n, void* stream);
void from_bf16(float* out, const uint16_t* in, int64_t n, void* stream);

} // namespace accelbench::training::cuda::kernels
