#pragma once
// A Llama-style decoder (Touvron et al. 2023; Dubey et al. 2024): token embedding, L blocks of
// [RMSNorm -> grouped-query causal attention with RoPE -> residual, RMSNorm -> SwiGLU MLP ->
// residual], final RMSNorm, untied LM head, softmax cross-entropy. fp32 master weights; the
// matmuls run in the chosen compute dtype (ops.hpp). All buffers are allocated up front from one
// memory plan, so the estimate the harness checks before allocating is the allocation itself.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/training/model_config.hpp"
#include "workloads/training/ops.hpp"

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

class llama_layout; // llama_layout.hpp: parameter offsets, blocks, backward scratch

class llama_model {
public:
  llama_model(const model_config& cfg, const llama_options& opt);
  ~llama_model();
  llama_model(const llama_model&) = delete;
  llama_model& operator=(const llama_model&) = delete;

  // Everything the model and its AdamW state need, in bytes, computed without allocating.
  static memory_plan plan(const model_config& cfg, const llama_options& opt);

  // Weights ~ N(0, 0.02), output projections (wo, w2) scaled by 1/sqrt(2L) (GPT-2 init), RMSNorm
  // gains 1. Blocks-only models also draw their fixed input and loss probe from `seed`.
  void init_parameters(uint64_t seed);

  // inputs, targets: [B,T] token ids. Returns the mean cross-entropy (nats) and keeps the
  // activations for backward. Blocks-only models ignore both (may be null) and return the probe
  // loss mean_bt(sum_c x_L[bt,c] * probe[bt,c]).
  float forward(const int32_t* inputs, const int32_t* targets);

  void zero_grad();
  // grads += d(loss * loss_scale)/d(params) for the last forward (loss_scale = 1/grad_accum).
  void backward(float loss_scale = 1.0f);

  // Data parallel: backward calls `fn` with the offset (in floats) from which every
  // gradient of this backward is final: after the LM head, after each block (last to first) and
  // after the embedding. Empty (the default): nothing is called.
  void set_grad_ready(std::function<void(size_t)> fn) { m_grad_ready = std::move(fn); }

  float* params() { return m_params.get(); }
  const float* params() const { return m_params.get(); }
  float* grads() { return m_grads.get(); }
  const float* grads() const { return m_grads.get(); }
  size_t num_params() const { return m_num_params; }
  const std::vector<param_tensor>& tensors() const;
  const param_tensor& tensor(const std::string& name) const; // throws input_error

  const model_config& config() const { return m_cfg; }
  const llama_options& options() const { return m_opt; }
  int64_t layers() const { return m_layers; }

private:
  block_acts la(int64_t l) const;

  model_config m_cfg;
  llama_options m_opt;
  int64_t m_layers = 0;
  size_t m_num_params = 0;
  std::unique_ptr<const llama_layout> m_layout;
  std::unique_ptr<float[]> m_params, m_grads, m_acts, m_scratch;
  size_t m_acts_floats = 0, m_scratch_floats = 0;
  rope_table m_rope;
  std::vector<int32_t> m_inputs, m_targets;
  bool m_have_forward = false;
  std::function<void(size_t)> m_grad_ready;
};

} // namespace accelbench::training
