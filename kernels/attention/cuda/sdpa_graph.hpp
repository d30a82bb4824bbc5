#pragma once
// The cuDNN SDPA forward and backward operation graphs as plain data (no cuDNN or CUDA type):
// every tensor with its uid, dims, strides, data type and whether it is virtual or passed by
// value, and every operation in the order cudnn_sdpa.cpp creates it. cudnn_sdpa.cpp turns this
// description into backend descriptors one to one, so a CPU-only test can check the graph cuDNN
// gets (P in the I/O type before P·V, stats fp32 [B,H,Sq,1], the strides of our layout, the
// backward's order of operations) without a GPU.
//
// The patterns are cuDNN 9's "Fused Attention fprop/bprop" as the cuDNN frontend's composite
// SDPA nodes build them (cudnn_frontend, node/scaled_dot_product_flash_attention.h):
//
// Forward (training mode writes the softmax stats, which the backward and our check read; the
// inference mode, cuDNN's is_inference, leaves Stats and its log/add out):
//   S     = matmul(Q, K^T) * attn_scale             fp32 virtual [B,H,Sq,Sk]
//   S     = select(S, -inf, row >= col)             causal only (top-left)
//   M     = reduce_max(S);  E = exp(S - M);  L = reduce_add(E)
//   Stats = M + log(L)                              fp32 output [B,H,Sq,1]
//   P     = E / L                                   virtual, in the I/O type (bf16): the
//                                                   second matmul's A operand must be
//   O     = matmul(P, V)
// Backward:
//   sum   = reduce_add(dO * O) * 1                  fp32, in memory [B,H,Sq,1]
//   S     = matmul(Q, K^T) * attn_scale - Stats     then the causal mask, after the subtraction
//   P     = exp(S)                                  fp32 virtual
//   dV    = matmul(reshape(P)^T in I/O type, dO)    GQA: [B,H,Sk,D] then reduce_add per group
//   dS    = (matmul(dO, V^T) - sum) * P * attn_scale
//   dK    = matmul(reshape(dS)^T in I/O type, Q)    GQA: as dV
//   dQacc = matmul(dS, reshape(K^T))                fp32 in memory [B,H,Sq,D]
//   dQ    = identity(dQacc)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace accelbench::attention::cudnn {

// A graph tensor's element type: the harness's (harness/core/dtype.hpp), or none for the one
// boolean tensor, the causal mask's comparison (cuDNN's BOOLEAN), which no workload stores.
using sdpa_type = std::optional<dtype>;
inline constexpr sdpa_type sdpa_boolean = std::nullopt;
std::string type_name(sdpa_type t); // "bf16", ..., "boolean"

// uids of the tensors the variant pack binds (in memory or by value); virtual ones start at
// u_first_virtual.
enum sdpa_uid : int64_t {
  u_q = 1,
  u_k,
  u_v,
  u_o,
  u_stats,
  u_scale,
  u_neg_inf,
  u_do,
  u_dq,
  u_dk,
  u_dv,
  u_sum,
  u_dq_accum,
  u_one,
  u_first_virtual = 100
};

struct sdpa_tensor {
  std::string name; // "Q", "K^T", "P", ... (unique in a graph)
  int64_t uid = 0;
  std::vector<int64_t> dims, strides;
  sdpa_type type = dtype::fp32;
  bool is_virtual = false;
  bool by_value = false;
  // The logical dimensions from the largest stride to the smallest, as letters of "BHSD" for
  // [B, H, S, D] tensors ("BSHD" is our memory layout); dims of extent 1 keep their place.
  std::string stride_order(const std::string& letters = "BHSD") const;
};

enum class sdpa_op_kind { matmul, pointwise, reduction, reshape };
enum class sdpa_mode {
  none, // matmul, reshape
  mul,
  sub,
  add,
  div,
  exp,
  log,
  identity,
  gen_index,
  cmp_ge,
  binary_select,
  reduce_max,
  reduce_add
};
const char* to_string(sdpa_mode m);

// One operation: y = op(x [, b [, t]]); indexes into sdpa_graph::tensors (-1: none).
struct sdpa_op {
  sdpa_op_kind kind = sdpa_op_kind::pointwise;
  sdpa_mode mode = sdpa_mode::none;
  int x = -1, b = -1, t = -1, y = -1;
  sdpa_type compute = dtype::fp32; // math precision / compute type
  int64_t axis = -1;               // gen_index only
};

struct sdpa_graph {
  std::vector<sdpa_tensor> tensors;
  std::vector<sdpa_op> ops;
  // The tensor named `name`; throws std::out_of_range when there is none.
  const sdpa_tensor& tensor(const std::string& name) const;
  // The operations whose output is `name`, or whose inputs include it.
  std::vector<const sdpa_op*> producers(const std::string& name) const;
  std::vector<const sdpa_op*> consumers(const std::string& name) const;
};

// The graphs for one shape with Q, K, V, O (and dO, dQ, dK, dV) in `io` (bf16 or fp16) in our
// [B, S, heads, D] memory layout.
sdpa_graph describe_forward(const attention_shape& s, dtype io = dtype::bf16,
                            bool generate_stats = true);
sdpa_graph describe_backward(const attention_shape& s, dtype io = dtype::bf16);

} // namespace accelbench::attention::cudnn
