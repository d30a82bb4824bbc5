#pragma once
// The CPU model of train.llama (llama.hpp has the layout both backends share): forward and backward
// through the layers of ops.hpp, on buffers allocated up front from one memory plan, so the
// estimate the harness checks before allocating is the allocation itself.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/training/cpu/ops.hpp"
#include "workloads/training/llama.hpp"

namespace accelbench::training {

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
