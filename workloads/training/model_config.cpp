#include "workloads/training/model_config.hpp"

#include <algorithm>

#include "harness/core/error.hpp"
#include "harness/core/model_catalogue.hpp"
#include "harness/core/model_flops.hpp"

namespace accelbench::training {

namespace {
std::string dims_text(const model_config& m) {
  return "model '" + m.name + "' (dim " + std::to_string(m.dim) + ", heads " +
         std::to_string(m.n_heads) + ", kv_heads " + std::to_string(m.n_kv_heads) + ")";
}
} // namespace

void model_config::validate() const {
  auto positive = [&](const char* what, int64_t v) {
    if (v <= 0)
      throw input_error(std::string("train.llama: ") + what + " must be positive in model '" +
                        name + "', got " + std::to_string(v));
  };
  positive("dim", dim);
  positive("n_layers", n_layers);
  positive("n_heads", n_heads);
  positive("n_kv_heads", n_kv_heads);
  positive("ffn_dim", ffn_dim);
  positive("vocab_size", vocab_size);
  positive("max_seq_len", max_seq_len);
  if (dim % n_heads != 0)
    throw input_error("train.llama: heads (" + std::to_string(n_heads) + ") do not divide dim (" +
                      std::to_string(dim) + ") in " + dims_text(*this));
  if (n_heads % n_kv_heads != 0)
    throw input_error("train.llama: kv_heads (" + std::to_string(n_kv_heads) +
                      ") do not divide heads (" + std::to_string(n_heads) + ") in " +
                      dims_text(*this));
  // RoPE rotates pairs of channels (i, i + head_dim/2), so the head dimension must be even.
  if (head_dim() % 2 != 0)
    throw input_error("train.llama: head_dim " + std::to_string(head_dim()) +
                      " is odd (RoPE rotates channel pairs) in " + dims_text(*this));
  if (!(rope_theta > 0) || !(norm_eps > 0))
    throw input_error("train.llama: rope_theta and norm_eps must be positive in model '" + name +
                      "'");
}

int64_t model_config::block_params() const { return decoder_block_params(dim, kv_dim(), ffn_dim); }

int64_t model_config::total_params(int64_t layers) const {
  if (layers <= 0)
    layers = n_layers;
  return embedding_params() + layers * block_params() + head_params();
}

double model_flops_per_token(const model_config& m, int64_t layers, int64_t seq, bool with_head) {
  if (layers <= 0)
    layers = m.n_layers;
  double n = double(layers) * double(m.block_params());
  if (with_head)
    n += double(m.head_params());
  return training_flops_per_token(n, layers, m.n_heads, m.head_dim(), seq);
}

double model_flops_per_token_causal(const model_config& m, int64_t layers, int64_t seq,
                                    bool with_head) {
  if (layers <= 0)
    layers = m.n_layers;
  double n = double(layers) * double(m.block_params());
  if (with_head)
    n += double(m.head_params());
  return training_flops_per_token_causal(n, layers, m.n_heads, m.head_dim(), seq);
}

// The entries are read by the core's model catalogue (the report reads the same one); the checks
// a model must pass to be trained stay here.
std::map<std::string, model_config> load_model_configs(const std::filesystem::path& file) {
  model_catalogue catalogue;
  try {
    catalogue = model_catalogue::load(file);
  } catch (const input_error& e) {
    throw input_error(std::string("train.llama: ") + e.what());
  }
  std::map<std::string, model_config> out;
  for (const auto& [name, d] : catalogue.models()) {
    model_config m;
    m.name = name;
    m.dim = d.dim;
    m.n_layers = d.n_layers;
    m.n_heads = d.n_heads;
    m.n_kv_heads = d.n_kv_heads;
    m.ffn_dim = d.ffn_dim;
    m.vocab_size = d.vocab_size;
    m.max_seq_len = d.max_seq_len;
    m.rope_theta = d.rope_theta;
    m.norm_eps = d.norm_eps;
    m.validate();
    out.emplace(name, m);
  }
  return out;
}

model_config find_model(const std::filesystem::path& models_json, const std::string& name) {
  auto all = load_model_configs(models_json);
  auto it = all.find(name);
  if (it == all.end()) {
    std::string known;
    for (auto& [n, m] : all)
      known += (known.empty() ? "" : ", ") + n;
    throw input_error("train.llama: unknown model '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

compute_dtype parse_compute_dtype(const std::string& name) {
  const auto d = dtype_from_name(name);
  if (d &&
      std::find(k_training_dtypes.begin(), k_training_dtypes.end(), *d) != k_training_dtypes.end())
    return *d;
  throw input_error("train.llama: dtype must be fp32 or bf16, got '" + name + "'");
}

} // namespace accelbench::training
