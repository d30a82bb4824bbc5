#pragma once
// A Llama-style decoder (Touvron et al. 2023; Dubey et al. 2024): token embedding, L blocks of
// [RMSNorm -> grouped-query causal attention with RoPE -> residual, RMSNorm -> SwiGLU MLP ->
// residual], final RMSNorm, untied LM head, softmax cross-entropy. fp32 master weights; the
// matmuls run in the chosen compute dtype (model_config.hpp). What the CPU model (cpu/) and the
// CUDA one (cuda/) share: the options, the flat parameter layout and its initial values, the
// memory plan's parts and each block's saved activations.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/attention/attention_shape.hpp"
#include "workloads/training/model_config.hpp"

namespace accelbench::training {

struct llama_options {
  int64_t layers = 0;    // decoder blocks to build; 0: the model's own
  bool with_head = true; // false: blocks only (a subset of a large model, for throughput)
  int64_t batch = 1;     // micro batch B
  int64_t seq = 128;     // T
  compute_dtype dtype = compute_dtype::fp32;
  // true: RMSNorm and SwiGLU through ops.hpp's reference:: versions (the tests' and the
  // benchmark's "before"); false: the vectorised ones (within the bound ops.hpp states).
  bool reference_ops = false;
};

// One parameter tensor inside the flat parameter buffer.
struct param_tensor {
  std::string name;           // "tok_emb", "layers.0.wq", ..., "final_norm", "lm_head"
  size_t offset = 0;          // in floats
  std::vector<int64_t> shape; // row-major
  size_t size = 0;            // elements
  bool decay = false;         // AdamW weight decay: matrices yes, norm gains no
};

// Bytes of everything the training step allocates (AdamW moments included).
struct memory_plan {
  uint64_t params = 0, grads = 0, optimizer = 0, activations = 0, scratch = 0;
  uint64_t total() const { return params + grads + optimizer + activations + scratch; }
};

// Decoder blocks built: opt.layers, or the model's own when 0.
int64_t resolved_layers(const model_config& cfg, const llama_options& opt);

// The flat parameter layout (names, shapes, offsets in floats) of a model built with these
// options: embedding, 9 tensors per block, final norm and LM head. Shared by the CPU model and
// the CUDA one (workloads/training/cuda), so parameters and gradients compare element by element.
std::vector<param_tensor> parameter_layout(const model_config& cfg, const llama_options& opt);

// The initial values llama_model::init_parameters draws: params [num_params]; when x0 and probe
// are given (blocks-only models) also the fixed input residual stream and the loss probe, n_resid
// = B*T*C floats each, drawn after the parameters from the same generator.
void init_parameter_values(const model_config& cfg, const std::vector<param_tensor>& tensors,
                           uint64_t seed, float* params, float* x0, float* probe, int64_t n_resid);

// One decoder block's saved activations, carved from `base` (BT tokens): xn1, rstd1, q, k, v, att,
// lse, xmid, xn2, rstd2, h1, h3, g, in this order, each starting on a 256-byte boundary. The
// layout both backends use.
struct block_acts {
  float *xn1, *rstd1, *q, *k, *v, *att, *lse, *xmid, *xn2, *rstd2, *h1, *h3, *g;
};
// Floats of one block's block_acts for BT tokens (about BT * (5 C + 2 KVH*HD + 2 + NH + 3 F)).
int64_t block_act_floats(const model_config& m, int64_t bt);
block_acts carve_block_acts(float* base, int64_t bt, const model_config& m);

// Rotary position embedding (Su et al. 2021) in the "rotate half" convention of the Hugging Face
// Llama: channel pairs (i, i + HD/2) of every head rotated by angle t * theta^(-2i/HD).
struct rope_table {
  int64_t seq = 0, half = 0;
  std::vector<float> cos, sin; // [T, HD/2]
};
rope_table make_rope_table(int64_t seq, int64_t head_dim, double theta);

// The causal self-attention shape of a model's layer (seq_q = seq_k = t, scale 1/sqrt(hd)).
attention::attention_shape causal_attention_shape(int64_t b, int64_t t, int64_t nh, int64_t kvh,
                                                  int64_t hd);

} // namespace accelbench::training
