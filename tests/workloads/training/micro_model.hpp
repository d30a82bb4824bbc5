#pragma once
// The micro Llama of the training tests: small enough for exact CPU references in milliseconds,
// with grouped-query attention (4 query heads over 2 kv heads).
#include <cstdint>

#include "workloads/training/model_config.hpp"

namespace accelbench::training::test {

inline model_config micro_config(int64_t layers = 2) {
  model_config m;
  m.name = "micro";
  m.dim = 16;
  m.n_layers = layers;
  m.n_heads = 4;
  m.n_kv_heads = 2; // grouped-query: two query heads per kv head
  m.ffn_dim = 24;
  m.vocab_size = 32;
  m.max_seq_len = 8;
  m.rope_theta = 10000;
  m.norm_eps = 1e-5;
  return m;
}

} // namespace accelbench::training::test
