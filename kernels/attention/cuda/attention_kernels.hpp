#pragma once
// Attention kernels on CUDA, shared by the attention workload's CUDA backend
// (workloads/attention/cuda) and train.llama's CUDA model (workloads/training/cuda). Plain C++
// interface (no CUDA types): pointers are device pointers, streams are cudaStream_t passed as
// void*. Layouts and conventions are every backend's (kernels/attention/attention_shape.hpp).
//
//   native  FlashAttention-2-style kernels of our own: forward and backward, causal, GQA.
//           bf16/fp16 at head_dim 64 and 128 on tensor cores (flash_tc.cu, mma.sync); fp32
//           (and bf16 at other head dims <= 256) on CUDA cores (flash_native.cu, the reference).
//   cudnn   cuDNN's fused SDPA through the cuDNN 9 backend graph API (cudnn_sdpa.cpp): forward
//           and backward, bf16 or fp16, causal (top-left), GQA.
#include <memory>
#include <string>

#include "kernels/attention/attention_shape.hpp"
#include "kernels/attention/attention_tensors.hpp"
#include "kernels/attention/cuda/sdpa_rules.hpp"

namespace accelbench::attention {

namespace native {
// How many (device, kernel) shared-memory opt-ins this process has made (each is made once per
// device: the attribute is per device, so one made on device 0 does not hold on device 1).
int smem_opt_ins();
// Whether forward/backward run the tensor-core kernels (flash_tc.cu: bf16 or fp16 at head_dim
// 64 or 128) rather than the fp32 CUDA-core reference kernels (flash_native.cu), and which one
// in words (for a run's record). fp16 elsewhere is refused with backend_error.
bool uses_tensor_cores(const attention_shape& s, dtype t);
std::string kernel_name(const attention_shape& s, dtype t);
// Device tensors of element type io.type (lse and delta are always fp32): fp32 and bf16 at any
// head_dim <= 256, fp16 at the head dims of the tensor-core kernels; another dtype is refused
// with backend_error naming it. `delta` is B*H*Sq floats of scratch.
void forward(const attention_shape& s, const attention_tensors& io, void* stream);
void backward(const attention_shape& s, const attention_tensors& io, float* delta, void* stream);
} // namespace native

namespace cudnn {
// Why cuDNN's SDPA cannot run this config in element type `t`, naming the rule of
// sdpa_rules.hpp it breaks (io_dtype: only bf16 and fp16); empty when it can. Rules about the
// installation (cuDNN's CUDA major, version, GPU) are left to the constructors below, which
// throw: a broken installation fails the run rather than skipping it.
std::string unsupported_reason(const attention_shape& s, dtype t, bool backward);
// What this process loaded: cuDNN's version and the CUDA it was built for, the CUDA this binary
// was built with, the current device's compute capability (sdpa_env; 0 where unknown).
sdpa_env environment();
// The path of the libcudnn shared object this process loaded (empty when unknown).
std::string library_path();

// A built cuDNN SDPA forward graph (execution plan + workspace) for one shape and element type;
// move-only.
class sdpa_forward {
public:
  // Throws backend_error naming the failed rule (sdpa_rules.hpp), or with cuDNN's message.
  // `inference`: cuDNN's is_inference forward, without the softmax stats (run's lse unused).
  sdpa_forward(const attention_shape& s, dtype t, bool inference = false);
  ~sdpa_forward();
  sdpa_forward(sdpa_forward&&) noexcept;
  sdpa_forward& operator=(sdpa_forward&&) noexcept;
  // q, k, v, o of the graph's type; fp32 lse ([B, H, Sq], natural log; ignored by an inference
  // forward). Another io.type is refused with backend_error.
  void run(const attention_tensors& io, void* stream);
  std::string engine() const; // engine id and knobs chosen by the heuristic
  // Variant packs built so far: one per distinct set of buffers, not one per run.
  int variant_packs_built() const;

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

// A built cuDNN SDPA backward graph for one shape and element type, with its scratch
// (rowsum(dO*O), an fp32 dQ accumulator, the plan's workspace); move-only.
class sdpa_backward {
public:
  sdpa_backward(const attention_shape& s, dtype t); // throws as sdpa_forward's
  ~sdpa_backward();
  sdpa_backward(sdpa_backward&&) noexcept;
  sdpa_backward& operator=(sdpa_backward&&) noexcept;
  // q, k, v, o, d_o, dq, dk, dv of the graph's type in our [B, S, heads, D] layout; lse from the
  // forward.
  void run(const attention_tensors& io, void* stream);
  std::string engine() const;
  int variant_packs_built() const; // as sdpa_forward's
private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};
} // namespace cudnn

} // namespace accelbench::attention
