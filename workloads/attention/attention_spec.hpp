#pragma once
// The attention workload's spec: its axes, the config parsed once into attention_params (what the
// CPU backend, cpu/, and the CUDA backend, cuda/, receive), and the FLOP accounting. The checker
// is attention_check.hpp; the kernels are kernels/attention.
#include <cstdint>
#include <string>

#include "harness/core/dtype.hpp"
#include "harness/core/workload.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace accelbench::attention {

// Which passes one iteration runs.
enum class pass_kind { fwd, bwd, fwd_bwd };
pass_kind pass_from_string(const std::string& s); // throws input_error
inline bool needs_backward(pass_kind p) { return p != pass_kind::fwd; }

// The config's shape. Axis conventions: kv_heads = 0 means "= heads" (multi-head attention),
// seq_k = 0 means "= seq_q" (self-attention), scale = 0 means 1/sqrt(head_dim).
attention_shape shape_of(const config& cfg);

// FLOPs of one iteration (attention_forward_flops / attention_backward_flops, per unmasked
// (query, key) pair; fwd_bwd is their sum, 3.5x the forward), for the CPU and CUDA backends.
double attention_flops(const attention_shape& s, pass_kind p);

// The convention of attention_forward_flops in one line, stored with every run.
inline constexpr const char* k_flop_convention =
    "4*batch*heads*head_dim per unmasked (query, key) pair (causal: exact count, bottom-right "
    "aligned); bwd 2.5x (FlashAttention: 5 matmuls), fwd_bwd 3.5x";

// One config, parsed once at the boundary (params_of) and passed to the backends.
struct attention_params {
  attention_shape shape;
  pass_kind pass = pass_kind::fwd;
  dtype type = dtype::fp32;
  std::string impl; // the "impl" axis as normalized; "cudnn" when the config has none
  std::string key;  // config::key(): the seed of the inputs and the name of the measurement
  bool bf16() const { return type == dtype::bf16; }
  bool backward() const { return needs_backward(pass); }
  double flops() const { return attention_flops(shape, pass); }
};
attention_params params_of(const config& cfg); // throws input_error

// The workload's spec: name, axes (with their choices); backends {"cpu"}, which the workload
// replaces by the names of its backend objects (attention_backend.hpp).
workload_spec attention_spec();

} // namespace accelbench::attention
