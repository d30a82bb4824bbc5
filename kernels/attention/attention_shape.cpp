#include "kernels/attention/attention_shape.hpp"

#include <cmath>
#include <string>

#include "harness/core/error.hpp"

namespace accelbench::attention {

float attention_shape::effective_scale() const {
  return scale != 0 ? scale : 1.f / std::sqrt(float(head_dim));
}

attention_shape attention_shape_of(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q,
                                   int64_t seq_k, int64_t head_dim, bool causal) {
  return {.batch = batch,
          .heads = heads,
          .kv_heads = kv_heads,
          .seq_q = seq_q,
          .seq_k = seq_k,
          .head_dim = head_dim,
          .causal = causal};
}

void check_shape(const attention_shape& s) {
  auto bad = [](const char* name, int64_t v) {
    throw input_error("attention: " + std::string(name) + " must be positive, got " +
                      std::to_string(v));
  };
  if (s.batch <= 0)
    bad("batch", s.batch);
  if (s.heads <= 0)
    bad("heads", s.heads);
  if (s.kv_heads <= 0)
    bad("kv_heads", s.kv_heads);
  if (s.seq_q <= 0)
    bad("seq_q", s.seq_q);
  if (s.seq_k <= 0)
    bad("seq_k", s.seq_k);
  if (s.head_dim <= 0)
    bad("head_dim", s.head_dim);
  if (s.heads % s.kv_heads != 0)
    throw input_error("attention: heads (" + std::to_string(s.heads) +
                      ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) + ")");
  if (!(s.scale >= 0) || !std::isfinite(s.scale))
    throw input_error("attention: scale must be >= 0 (0 = 1/sqrt(head_dim)), got " +
                      std::to_string(s.scale));
}

double attention_pairs(const attention_shape& s) {
  const double sq = double(s.seq_q), sk = double(s.seq_k);
  if (!s.causal)
    return sq * sk;
  // Summed over the rows, min(seq_k, max(0, i + seq_k - seq_q + 1)) visible keys each.
  if (s.seq_q <= s.seq_k)
    return sq * sk - sq * (sq - 1) / 2;
  return sk * (sk + 1) / 2;
}

double attention_forward_flops(const attention_shape& s) {
  return 4.0 * double(s.batch) * double(s.heads) * double(s.head_dim) * attention_pairs(s);
}

double attention_backward_flops(const attention_shape& s) {
  return 2.5 * attention_forward_flops(s);
}

} // namespace accelbench::attention
