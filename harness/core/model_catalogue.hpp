#pragma once
// The model catalogue (workloads/training/models.json, embedded at build time): Llama-style
// decoder dimensions by name, and the model FLOPs per token that follow from them. The one reader
// of that file's entries: the training workload builds its model configs from it
// (workloads/training/model_config.cpp), and the report takes the FLOPs per token of training
// figures from it (a reporter reads no workload file).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

struct model_dims {
  std::string name;
  int64_t dim = 0;        // model width
  int64_t n_layers = 0;   // decoder blocks
  int64_t n_heads = 0;    // query heads
  int64_t n_kv_heads = 0; // key/value heads (grouped-query attention)
  int64_t ffn_dim = 0;    // SwiGLU hidden width
  int64_t vocab_size = 0;
  int64_t max_seq_len = 0; // 0: not stated
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  std::string source; // where the dimensions come from (the entry's "source"), "" unless stated

  // Positive sizes and heads dividing dim: what the FLOPs per token need.
  bool countable() const;
  int64_t head_dim() const { return n_heads > 0 ? dim / n_heads : 0; }
  // Parameters that take part in matmuls: the blocks plus the untied LM head and the final norm
  // gain, as the training workload counts them (the embedding table is a lookup).
  double non_embedding_params() const;
  // Model FLOPs per token of a training step at sequence length `seq` (harness/core/model_flops.hpp
  // training_flops_per_token; seq <= 0: attention left out, a lower bound). Needs countable().
  double training_flops_per_token(int64_t seq) const;
};

// Reads one entry ({"dim": ..., "n_layers": ..., ...}) into `out` (named `name`): "" or what is
// wrong (not an object, a size absent or not an integer). max_seq_len, rope_theta, norm_eps and
// source are optional.
std::string read_model_dims(const json& entry, const std::string& name, model_dims& out);

class model_catalogue {
public:
  model_catalogue() = default;
  // {"models": {name: {...}}}; throws input_error naming `origin` and the entry that is wrong.
  static model_catalogue from_json(const json& doc, const std::string& origin);
  static model_catalogue load(const std::filesystem::path& file); // throws input_error
  // workloads/training/models.json as this binary was built with it (embedded, parsed once).
  static const model_catalogue& builtin();
  const model_dims* find(const std::string& name) const; // nullptr: not in the catalogue
  const std::map<std::string, model_dims>& models() const { return m_models; }

private:
  std::map<std::string, model_dims> m_models;
};

} // namespace accelbench
