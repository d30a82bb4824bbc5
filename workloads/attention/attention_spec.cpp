#include "workloads/attention/attention_spec.hpp"

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::attention {

pass_kind pass_from_string(const std::string& s) {
  if (s == "fwd")
    return pass_kind::fwd;
  if (s == "bwd")
    return pass_kind::bwd;
  if (s == "fwd_bwd")
    return pass_kind::fwd_bwd;
  throw input_error(fmt::format("parameter pass = '{}' is not one of fwd, bwd, fwd_bwd", s));
}

attention_shape shape_of(const config& cfg) {
  attention_shape s;
  s.batch = cfg.get_int("batch");
  s.heads = cfg.get_int("heads");
  s.kv_heads = cfg.get_int("kv_heads");
  if (s.kv_heads == 0)
    s.kv_heads = s.heads;
  s.seq_q = cfg.get_int("seq_q");
  s.seq_k = cfg.get_int("seq_k");
  if (s.seq_k == 0)
    s.seq_k = s.seq_q;
  s.head_dim = cfg.get_int("head_dim");
  s.causal = cfg.get_bool("causal");
  s.scale = float(cfg.get_number("scale"));
  return s;
}

double attention_flops(const attention_shape& s, pass_kind p) {
  switch (p) {
  case pass_kind::fwd:
    return attention_forward_flops(s);
  case pass_kind::bwd:
    return attention_backward_flops(s);
  default:
    return attention_forward_flops(s) + attention_backward_flops(s);
  }
}

attention_params params_of(const config& cfg) {
  attention_params p;
  p.shape = shape_of(cfg);
  p.pass = pass_from_string(cfg.at("pass"));
  p.type = parse_dtype(cfg.at("dtype"));
  auto it = cfg.values.find("impl");
  p.impl = it == cfg.values.end() ? "cudnn" : it->second;
  p.key = cfg.key();
  return p;
}

workload_spec attention_spec() {
  workload_spec s;
  s.name = "attention";
  s.family = "kernel";
  s.description =
      "Scaled dot-product attention softmax(Q K^T * scale) V, fused (FlashAttention-2); "
      "FLOPs 4*batch*heads*head_dim per unmasked (query, key) pair (seq_q*seq_k, fewer when "
      "causal); bwd x2.5, fwd_bwd x3.5";
  s.backends = {"cpu"};
  s.default_ruleset = "kernel-v1";
  s.primary_metric = "tflops";
  s.axes = {
      {"batch", axis_type::integer, "1", {}, 1, "sequences per batch"},
      {"heads", axis_type::integer, "16", {}, 1, "query heads"},
      {"kv_heads",
       axis_type::integer,
       "0",
       {},
       0,
       "key/value heads (grouped-query attention); heads must be a multiple; 0 = heads"},
      {"seq_q", axis_type::integer, "2048", {}, 1, "query length"},
      {"seq_k", axis_type::integer, "0", {}, 0, "key/value length; 0 = seq_q"},
      {"head_dim", axis_type::integer, "128", {}, 1, "head dimension (1..512)"},
      {"causal",
       axis_type::boolean,
       "0",
       {},
       0,
       "causal mask, bottom-right aligned when seq_q != seq_k (FlashAttention >= 2.1)"},
      {"dtype",
       axis_type::string,
       "fp32",
       {"fp32", "bf16"},
       1,
       "storage type of Q, K, V, O and gradients; math is fp32 for both"},
      {"pass",
       axis_type::string,
       "fwd",
       {"fwd", "bwd", "fwd_bwd"},
       1,
       "timed passes: forward, backward (given O and lse), or both"},
      {"scale", axis_type::number, "0", {}, 0, "softmax scale; 0 = 1/sqrt(head_dim)"},
      {"impl",
       axis_type::string,
       "auto",
       {"auto", "native", "cudnn"},
       1,
       "implementation: native (our fused kernel: CPU, or the FlashAttention-2-style CUDA "
       "kernel), "
       "cudnn (cuDNN fused SDPA, cuda only); auto = cudnn on cuda, native on cpu"},
  };
  return s;
}

} // namespace accelbench::attention
