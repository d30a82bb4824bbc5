#pragma once
// Correctness check of attention outputs against the double-precision reference
// (attention_reference.hpp): whole tensors for small shapes, sampled rows for
// large ones. Works on any buffers (the fast kernel's, a GPU's copied back, a deliberately wrong
// one), so the checker itself can be tested.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/attention/attention_shape.hpp"

namespace accelbench {
struct ruleset; // harness/core/ruleset.hpp
}

namespace accelbench::attention {

struct check_options {
  double tolerance = 1e-4; // ruleset.tolerance(dtype)
  // Rows sampled per checked tensor when the shape is too large for the full reference; the
  // first and last rows are always among them (causal edge cases).
  int64_t sample_rows = 16;
  // Full reference when batch * heads * seq_q * seq_k * head_dim is at most this.
  int64_t full_limit = int64_t(1) << 24;
  uint64_t seed = 1;
};

// The options of a run's check under `rules`, the one home of them for every backend (CPU and
// CUDA): the tolerance of `dtype`, the ruleset's correctness_samples (sampled output elements) as
// sampled rows of head_dim elements each (at least 8), and the run's seed.
check_options check_options_for(const ruleset& rules, const attention_shape& s,
                                const std::string& dtype, uint64_t seed);

// Error measure, per element: |x - ref| / max(|ref|, rms(ref)), rms over the compared elements
// of that tensor. A relative error where values are typical or large, and an error relative to
// the tensor's typical size where they are near zero (attention outputs and gradients cross
// zero, where a pure relative error is meaningless). NaN counts as an infinite error; a +inf lse
// (a row with no visible key) must be +inf in both.
struct check_result {
  double max_error = 0;
  double tolerance = 0;
  int64_t points = 0;
  bool sampled = false;
  std::string worst; // "dq[b=0,i=17,h=3,d=5] = 0.1234, reference 0.1201"
  bool ok() const { return max_error <= tolerance; }
  // "max error 3.1e-02 > tolerance 1e-04 at dq[b=0,i=17,h=3,d=5] = ..."
  std::string reason() const;
  nlohmann::json to_json() const;
  void merge(const check_result& other); // keeps the worst, adds points
};

// Forward: o [batch, seq_q, heads, head_dim] and lse [batch, heads, seq_q].
check_result check_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const check_options& opt);

// Backward: dq, dk, dv for the upstream gradient d_o, from q, k, v, d_o alone: the reference
// never reads the kernel's O or lse (a forward wrong in rows the forward check does not sample
// would otherwise make a reference agree with the gradients computed from it). Full mode
// recomputes everything; sampled mode checks dq rows from scratch and dk/dv rows of two
// (batch, kv head) pairs, the first and the last, whose query heads' lse and D_i it computes
// with its own forward pass (reference_row_stats: a forward pass of those heads in double).
check_result check_backward(const attention_shape& s, const float* q, const float* k,
                            const float* v, const float* d_o, const float* dq, const float* dk,
                            const float* dv, const check_options& opt);

} // namespace accelbench::attention
