#pragma once
// train.llama on the GPU: the CPU model of workloads/training/llama.hpp, layer for
// layer, on one CUDA device. Same parameter layout (parameter_layout), same initial values
// (init_parameter_values). Two recipes, named in every run (recipe_name):
//  - "fp32" (dtype fp32): fp32 master weights, gradients, AdamW state and activations; matmuls
//    through cuBLASLt in fp32 (CUBLAS_COMPUTE_32F, no TF32); our FlashAttention-2-style kernel
//    in fp32. The CPU model's fp32 numbers.
//  - "bf16-mixed-v1" (dtype bf16): fp32 master weights, fp32 gradients and fp32 AdamW moments;
//    bf16 copies of the weights, written by the optimizer step; bf16 activations and activation
//    gradients everywhere; matmuls bf16 in / bf16 out with fp32 accumulation (cuBLASLt), the
//    residual adds in the GEMM epilogue, the weight gradients bf16 in and accumulated into the
//    fp32 gradients; the casts fused into the RMSNorm, RoPE, SwiGLU, embedding and cross-entropy
//    kernels, whose statistics (RMS, softmax, logsumexp, loss) are fp32; attention by cuDNN's
//    fused SDPA in bf16 (our kernel in bf16 where cuDNN cannot); gradient-norm clipping (1.0 by
//    the rulesets) computed on the device and applied inside the fused AdamW.
// Both recipes: AdamW is one launch over every parameter, with the clipping; in throughput mode
// (forward_async, step_async) nothing waits for the device inside a step. Data parallel
// (data_parallel_cuda.hpp) all-reduces the fp32 gradients.
//
// Plain C++ interface: no CUDA type appears here (DESIGN.md, "Layers").
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/training/llama.hpp"
#include "workloads/training/optimizer.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training::cuda {

// Device bytes the model allocates (parameters, gradients, AdamW moments, activations, scratch,
// the cuBLASLt workspace), computed without allocating. The constructor allocates this, plus the
// workspace of cuDNN's attention plans, known only once cuDNN has built them (the 5% margin of
// the memory check is for it).
memory_plan device_plan(const model_config& cfg, const llama_options& opt);

// "fp32" or "bf16-mixed-v1": the recipe these options train with (see above).
std::string recipe_name(const llama_options& opt);

// "cudnn" or "native": how attention runs for these options (see above).
std::string attention_impl(const model_config& cfg, const llama_options& opt);

// Why the model cannot run on CUDA here, empty when it can: no CUDA device / driver, head_dim
// beyond the native attention kernel, not enough free device memory (with both numbers). Cheap:
// no allocation.
std::string unavailable_reason(const model_config& cfg, const llama_options& opt);

class llama_cuda final : public trainable {
public:
  // On the current device; throws backend_error naming what failed (allocation, cuBLASLt, cuDNN).
  llama_cuda(const model_config& cfg, const llama_options& opt);
  ~llama_cuda() override;
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
  float forward(const int32_t* inputs, const int32_t* targets) override;

  // Throughput mode, without a host wait (measure_throughput_cuda, throughput_cuda.hpp):
  //  - forward_async: tokens from page-locked host memory (copied on the stream; the host must
  //    keep them until the step is done), the loss * loss_weight added to the step log's slot;
  //  - step_async: the gradient norm on the device (into the slot), clipping to max_norm (<= 0:
  //    none) and AdamW in one launch;
  //  - reserve_step_log: slots for that many steps, zeroed; read_step_log: (loss, grad_norm) per
  //    slot, waiting for the device once.
  void forward_async(const int32_t* inputs, const int32_t* targets, float loss_weight,
                     int64_t slot);
  void step_async(double max_norm, double lr, const adamw_config& c, int64_t slot);
  void reserve_step_log(int64_t slots);
  std::vector<float> read_step_log() const;
  // Times the host has waited for the device (synchronize, a download, a pageable upload, the
  // synchronous forward and clip_grad_norm) since construction.
  int64_t host_waits() const;
  std::string recipe() const;
  void zero_grad() override;
  // grads += d(loss * loss_scale)/d(params) for the last forward.
  void backward(float loss_scale = 1.0f) override;
  // Global L2 norm of the gradients before clipping (torch.nn.utils.clip_grad_norm_ semantics;
  // waits for the device). The clipping itself is applied by the next adamw_step, on the device.
  double clip_grad_norm(double max_norm) override;
  // One AdamW update of every parameter (weight decay on matrices only), as adamw::step.
  void adamw_step(double lr, const adamw_config& c);
  void synchronize() override;
  // device::clock_facts of the model's device after the step (SM clock, throttle reasons).
  nlohmann::json step_facts() override;

  // trainable: init = init_parameters (which also resets the AdamW state), optimizer_step =
  // adamw_step.
  void init(uint64_t seed) override { init_parameters(seed); }
  void optimizer_step(double lr, const adamw_config& c) override { adamw_step(lr, c); }

  // Data parallel: the device's gradient buffer (num_params() floats, parameter_layout order), the
  // stream the step's kernels run on (a cudaStream_t: the legacy default stream), the hook.
  float* device_grads();
  void* stream() const;
  void set_grad_ready(std::function<void(size_t)> fn) override;
  const float* host_params(std::vector<float>& buf) override;

  size_t num_params() const override;
  const std::vector<param_tensor>& tensors() const;
  const model_config& config() const;
  const llama_options& options() const override;
  // The engines that ran: GEMM library and math mode, attention implementation.
  std::string implementation() const override;

private:
  struct impl;
  std::unique_ptr<impl> m;
};

} // namespace accelbench::training::cuda
