#pragma once
// Model FLOPs of training a Llama-style decoder, per token: the one formula behind the training
// workload's MFU and the report's plausibility check of published tokens/s figures (a reporter
// must not link the workloads, so the formula lives here).
#include <cstdint>

namespace accelbench {

// Parameters of one decoder block: two RMSNorm gains, Wq, Wk, Wv, Wo and the SwiGLU W1 (gate),
// W3 (up), W2 (down). kv_dim = kv_heads x head_dim (grouped-query attention).
inline int64_t decoder_block_params(int64_t dim, int64_t kv_dim, int64_t ffn_dim) {
  return 2 * dim              // attention and MLP RMSNorm gains
         + dim * dim          // Wq
         + 2 * kv_dim * dim   // Wk, Wv
         + dim * dim          // Wo
         + 3 * ffn_dim * dim; // W1, W3, W2
}

// Model FLOPs per token of a training step (PaLM, Chowdhery et al. 2022, appendix B):
// 6 N + 12 L H Q T, with N the non-embedding parameters that take part in matmuls (blocks and the
// LM head; the embedding table is a lookup), L layers, H query heads, Q head dim, T sequence
// length. 6 N: forward 2 N, backward 4 N. 12 L H Q T: the attention score and value products,
// counted over the full T x T matrix as PaLM does, also for causal masks. seq <= 0 (sequence length
// unknown): 6 N only, a lower bound.
inline double training_flops_per_token(double non_embedding_params, int64_t layers, int64_t heads,
                                       int64_t head_dim, int64_t seq) {
  double f = 6.0 * non_embedding_params;
  if (seq > 0)
    f += 12.0 * double(layers) * double(heads) * double(head_dim) * double(seq);
  return f;
}

// The same count with causal attention at the work a causal kernel does: of the T x T score
// matrix only the T (T + 1) / 2 visible pairs, so 12 L H Q (T + 1) / 2 per token. Behind the
// mfu_causal metric, reported beside PaLM's mfu (which stays the headline, as in the literature).
inline double training_flops_per_token_causal(double non_embedding_params, int64_t layers,
                                              int64_t heads, int64_t head_dim, int64_t seq) {
  double f = 6.0 * non_embedding_params;
  if (seq > 0)
    f += 12.0 * double(layers) * double(heads) * double(head_dim) * double(seq + 1) / 2.0;
  return f;
}

} // namespace accelbench
