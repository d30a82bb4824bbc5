#include "workloads/training/model_config.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/core/error.hpp"
#include "harness/core/model_flops.hpp"
#include "harness/core/text_input.hpp"

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

std::map<std::string, model_config> load_model_configs(const std::filesystem::path& file) {
  nlohmann::json doc = read_json_file(file, "model catalogue");
  if (!doc.contains("models") || !doc["models"].is_object())
    throw input_error("train.llama: " + file.string() + " has no \"models\" object");
  std::map<std::string, model_config> out;
  for (auto& [name, j] : doc["models"].items()) {
    model_config m;
    m.name = name;
    try {
      m.dim = j.at("dim").get<int64_t>();
      m.n_layers = j.at("n_layers").get<int64_t>();
      m.n_heads = j.at("n_heads").get<int64_t>();
      m.n_kv_heads = j.at("n_kv_heads").get<int64_t>();
      m.ffn_dim = j.at("ffn_dim").get<int64_t>();
      m.vocab_size = j.at("vocab_size").get<int64_t>();
      m.max_seq_len = j.at("max_seq_len").get<int64_t>();
      m.rope_theta = j.value("rope_theta", 10000.0);
      m.norm_eps = j.value("norm_eps", 1e-5);
    } catch (const nlohmann::json::exception& e) {
      throw input_error("train.llama: model '" + name + "' in " + file.string() +
                        " is malformed: " + e.what());
    }
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

} // namespace accelbench::training
