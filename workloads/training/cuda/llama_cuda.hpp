#pragma once
// train.llama on the GPU (issue 8 §5): the CPU model of workloads/training/llama.hpp, layer for
// layer, on one CUDA device. Same parameter layout (parameter_layout), same initial values
// (init_parameter_values), same mixed precision: fp32 master weights, gradients, AdamW state and
// activations; matmuls through cuBLASLt with fp32 inputs (dtype fp32: CUBLAS_COMPUTE_32F, no TF32)
// or inputs rounded to bf16 with fp32 accumulation (dtype bf16), as the CPU's oneDNN matmuls do.
// Attention: dtype fp32 runs our FlashAttention-2-style kernel in fp32; dtype bf16 runs cuDNN's
// fused SDPA on bf16 copies of q, k, v where cuDNN supports the shape (else the fp32 kernel). The
// CPU trainer keeps attention in fp32 for both dtypes, so bf16 losses agree more loosely.
//
// Plain C++ interface: no CUDA type appears here (DESIGN.md, "Layers").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/training/llama.hpp"
#include "workloads/training/optimizer.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training::cuda {

// Device bytes the model allocates (parameters, gradients, AdamW moments, activations, scratch,
// the cuBLASLt workspace), computed without allocating. The constructor allocates exactly this.
memory_plan device_plan(const model_config& cfg, const llama_options& opt);

// "cudnn" or "native": how attention runs for these options (see above).
std::string attention_impl(const model_config& cfg, const llama_options& opt);

// Why the model cannot run on CUDA here, empty when it can: no CUDA device / driver, not enough
// free device memory (with both numbers). Cheap: no allocation.
std::string unavailable_reason(const model_config& cfg, const llama_options& opt);

class llama_cuda {
public:
  // On the current device; throws backend_error naming what failed (allocation, cuBLASLt, cuDNN).
  llama_cuda(const model_config& cfg, const llama_options& opt);
  ~llama_cuda();
  llama_cuda(const llama_cuda&) = delete;
  llama_cuda& operator=(const llama_cuda&) = delete;

  // The values llama_model::init_parameters(seed) draws (drawn on the host, then uploaded).
  void init_parameters(uint64_t seed);
  // num_params() floats in parameter_layout order.
  void upload_parameters(const float* host);
  void download_parameters(float* host) const;
  void download_grads(float* host) const;

  // Host token ids [B,T]; returns the mean cross-entropy (waits for the device). Blocks-only
  // models ignore both and return the probe loss, as llama_model::forward.
  float forward(const int32_t* inputs, const int32_t* targets);
  void zero_grad();
  // grads += d(loss * loss_scale)/d(params) for the last forward.
  void backward(float loss_scale = 1.0f);
  // Global L2 norm of the gradients before clipping (torch.nn.utils.clip_grad_norm_ semantics).
  double clip_grad_norm(double max_norm);
  // One AdamW update of every parameter (weight decay on matrices only), as adamw::step.
  void adamw_step(double lr, const adamw_config& c);
  void synchronize();

  size_t num_params() const;
  const std::vector<param_tensor>& tensors() const;
  const model_config& config() const;
  const llama_options& options() const;
  // The engines that ran: GEMM library and math mode, attention implementation.
  std::string implementation() const;

private:
  struct impl;
  std::unique_ptr<impl> m;
};

// One optimizer step on the GPU (train_step's protocol): grad_accum micro batches, clipping,
// AdamW at lr = schedule(step). The breakdown is timed between device synchronisations.
step_stats train_step_cuda(llama_cuda& m, batch_loader& data, const train_hparams& hp, int64_t step);

// Throughput mode on the GPU (measure_throughput's protocol).
throughput_result measure_throughput_cuda(llama_cuda& m, const train_hparams& hp, const source_factory& data,
                                          uint64_t seed, int64_t warmup_steps, int64_t steps);

} // namespace accelbench::training::cuda
