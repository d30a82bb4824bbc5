// The model catalogue: workloads/training/models.json, embedded at build time (models_json.hpp).
#include "harness/core/model_catalogue.hpp"

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/model_flops.hpp"
#include "harness/core/text_input.hpp"
#include "models_json.hpp"

namespace accelbench {

bool model_dims::countable() const {
  return dim > 0 && n_layers > 0 && n_heads > 0 && n_kv_heads > 0 && ffn_dim > 0 &&
         vocab_size > 0 && dim % n_heads == 0;
}

double model_dims::non_embedding_params() const {
  const int64_t kv_dim = n_kv_heads * head_dim();
  return double(n_layers) * double(decoder_block_params(dim, kv_dim, ffn_dim)) +
         double(vocab_size) * double(dim) + double(dim);
}

double model_dims::training_flops_per_token(int64_t seq) const {
  return accelbench::training_flops_per_token(non_embedding_params(), n_layers, n_heads, head_dim(),
                                              seq);
}

std::string read_model_dims(const json& entry, const std::string& name, model_dims& out) {
  if (!entry.is_object())
    return "not an object";
  model_dims m;
  m.name = name;
  const std::pair<const char*, int64_t*> sizes[] = {
      {"dim", &m.dim},         {"n_layers", &m.n_layers},
      {"n_heads", &m.n_heads}, {"n_kv_heads", &m.n_kv_heads},
      {"ffn_dim", &m.ffn_dim}, {"vocab_size", &m.vocab_size}};
  for (const auto& [key, field] : sizes) {
    if (!entry.contains(key) || !entry[key].is_number_integer())
      return fmt::format("'{}' is absent or not an integer", key);
    *field = entry[key].get<int64_t>();
  }
  if (entry.contains("max_seq_len")) {
    if (!entry["max_seq_len"].is_number_integer())
      return "'max_seq_len' is not an integer";
    m.max_seq_len = entry["max_seq_len"].get<int64_t>();
  }
  for (const auto& [key, field] :
       {std::pair<const char*, double*>{"rope_theta", &m.rope_theta}, {"norm_eps", &m.norm_eps}})
    if (entry.contains(key)) {
      if (!entry[key].is_number())
        return fmt::format("'{}' is not a number", key);
      *field = entry[key].get<double>();
    }
  if (entry.contains("source") && entry["source"].is_string())
    m.source = entry["source"].get<std::string>();
  out = std::move(m);
  return "";
}

model_catalogue model_catalogue::from_json(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_object())
    throw input_error(fmt::format("{} has no \"models\" object", origin));
  model_catalogue out;
  for (const auto& [name, entry] : doc["models"].items()) {
    model_dims m;
    if (std::string why = read_model_dims(entry, name, m); !why.empty())
      throw input_error(fmt::format("model '{}' in {} is malformed: {}", name, origin, why));
    out.m_models.emplace(name, std::move(m));
  }
  return out;
}

model_catalogue model_catalogue::load(const std::filesystem::path& file) {
  return from_json(read_json_file(file, "model catalogue"), file.string());
}

const model_catalogue& model_catalogue::builtin() {
  static const model_catalogue cat =
      from_json(parse_json_input(k_models_json, "built-in workloads/training/models.json"),
                "built-in workloads/training/models.json");
  return cat;
}

const model_dims* model_catalogue::find(const std::string& name) const {
  auto it = m_models.find(name);
  return it == m_models.end() ? nullptr : &it->second;
}

} // namespace accelbench
