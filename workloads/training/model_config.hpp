#pragma once
// Llama-style model configurations as data (workloads/training/models.json), their checks, and
// the counts that follow from the dimensions: parameters, FLOPs per token, memory.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "harness/core/dtype.hpp"

namespace accelbench::training {

// fp32: every matmul in fp32. bf16: matmul inputs rounded to bfloat16 (round to nearest even),
// products accumulated in fp32 (oneDNN bf16 matmul); everything else (norms, softmax, attention,
// optimizer, master weights) stays fp32 — mixed precision as in Micikevicius et al. 2018.
// The core's typed dtype (harness/core/dtype.hpp, named by its to_string); training runs two of
// its values, and parse_compute_dtype refuses the others where the config is read.
using compute_dtype = accelbench::dtype;
inline constexpr std::array<compute_dtype, 2> k_training_dtypes = {dtype::fp32, dtype::bf16};
// The config's "dtype" -> fp32 or bf16; throws input_error naming any other value.
compute_dtype parse_compute_dtype(const std::string& name);

struct model_config {
  std::string name;
  int64_t dim = 0;        // C: model width
  int64_t n_layers = 0;   // L
  int64_t n_heads = 0;    // NH: query heads
  int64_t n_kv_heads = 0; // KVH: key/value heads (grouped-query attention)
  int64_t ffn_dim = 0;    // F: SwiGLU hidden width
  int64_t vocab_size = 0; // V
  int64_t max_seq_len = 0;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;

  int64_t head_dim() const { return dim / n_heads; }
  int64_t kv_dim() const { return n_kv_heads * head_dim(); }

  // Throws input_error naming the inconsistent dimension (heads not dividing dim, kv_heads not
  // dividing heads, odd head_dim which RoPE cannot rotate in pairs, non-positive sizes).
  void validate() const;

  // Parameters of one decoder block: two RMSNorm gains, Wq, Wk, Wv, Wo, W1 (gate), W3 (up), W2.
  int64_t block_params() const;
  // Token embedding table (V x C): a lookup, no FLOPs.
  int64_t embedding_params() const { return vocab_size * dim; }
  // Untied LM head (V x C) and the final norm gain.
  int64_t head_params() const { return vocab_size * dim + dim; }
  // All parameters of the full model with `layers` blocks (0: n_layers).
  int64_t total_params(int64_t layers = 0) const;
};

// Model FLOPs per token (PaLM, Chowdhery et al. 2022, appendix B; the formula is
// training_flops_per_token in harness/core/model_flops.hpp): 6*N + 12*L*H*Q*T, with N the
// non-embedding parameters (the blocks plus, when `with_head`, the LM head, which is a matmul;
// the embedding table is a lookup and is excluded), L layers, H heads, Q head dim, T sequence.
double model_flops_per_token(const model_config& m, int64_t layers, int64_t seq, bool with_head);
// As model_flops_per_token with causal attention counted at the visible pairs only (mfu_causal).
double model_flops_per_token_causal(const model_config& m, int64_t layers, int64_t seq,
                                    bool with_head);

// Loads {"models": {name: {...}}} from a models.json; throws input_error on a malformed file.
std::map<std::string, model_config> load_model_configs(const std::filesystem::path& file);
// Looks `name` up in a models.json; throws input_error listing the known names when absent.
model_config find_model(const std::filesystem::path& models_json, const std::string& name);

} // namespace accelbench::training
