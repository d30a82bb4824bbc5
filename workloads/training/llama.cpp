#include "workloads/training/llama.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "workloads/training/llama_layout.hpp"

namespace accelbench::training {

namespace {
// Each array of block_acts starts on a 256-byte boundary (64 floats): what cuBLASLt's fastest
// kernels and cuDNN's tensors assume of their operands, whatever B*T is.
int64_t padded(int64_t floats) { return (floats + 63) / 64 * 64; }
} // namespace

// The activations one block keeps for its backward pass, per token: xn1, q, att, xmid, xn2 [C];
// k, v [KVH*HD]; rstd1, rstd2 [1]; lse [NH]; h1, h3, g [F]; each array padded as above.
int64_t block_act_floats(const model_config& m, int64_t bt) {
  const int64_t c = m.dim, kv = m.kv_dim(), f = m.ffn_dim;
  return 5 * padded(bt * c) + 2 * padded(bt * kv) + 2 * padded(bt) + padded(bt * m.n_heads) +
         3 * padded(bt * f);
}

block_acts carve_block_acts(float* p, int64_t bt, const model_config& m) {
  const int64_t c = m.dim, kv = m.kv_dim(), f = m.ffn_dim;
  auto take = [&](int64_t n) {
    float* r = p;
    p += padded(bt * n);
    return r;
  };
  block_acts a;
  a.xn1 = take(c);
  a.rstd1 = take(1);
  a.q = take(c);
  a.k = take(kv);
  a.v = take(kv);
  a.att = take(c);
  a.lse = take(m.n_heads);
  a.xmid = take(c);
  a.xn2 = take(c);
  a.rstd2 = take(1);
  a.h1 = take(f);
  a.h3 = take(f);
  a.g = take(f);
  return a;
}

int64_t resolved_layers(const model_config& m, const llama_options& o) {
  return o.layers > 0 ? o.layers : m.n_layers;
}

std::vector<param_tensor> parameter_layout(const model_config& cfg, const llama_options& opt) {
  const int64_t layers = resolved_layers(cfg, opt);
  std::vector<param_tensor> tensors;
  const int64_t c = cfg.dim, kv = cfg.kv_dim(), f = cfg.ffn_dim, v = cfg.vocab_size;
  size_t off = 0;
  auto add = [&](std::string name, std::vector<int64_t> shape) {
    param_tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.size = 1;
    for (auto d : t.shape)
      t.size *= size_t(d);
    t.offset = off;
    t.decay = t.shape.size() >= 2; // nanoGPT / llm.c: decay matrices, not gains
    off += t.size;
    tensors.push_back(std::move(t));
  };
  if (opt.with_head)
    add("tok_emb", {v, c});
  for (int64_t l = 0; l < layers; l++) {
    std::string p = "layers." + std::to_string(l) + ".";
    add(p + "attn_norm", {c});
    add(p + "wq", {c, c});
    add(p + "wk", {kv, c});
    add(p + "wv", {kv, c});
    add(p + "wo", {c, c});
    add(p + "mlp_norm", {c});
    add(p + "w1", {f, c});
    add(p + "w3", {f, c});
    add(p + "w2", {c, f});
  }
  if (opt.with_head) {
    add("final_norm", {c});
    add("lm_head", {v, c});
  }
  return tensors;
}

void init_parameter_values(const model_config& cfg, const std::vector<param_tensor>& tensors,
                           uint64_t seed, float* params, float* x0, float* probe, int64_t n_resid) {
  stats::rng r(seed);
  const double out_scale = 1.0 / std::sqrt(2.0 * double(cfg.n_layers));
  for (auto& t : tensors) {
    float* p = params + t.offset;
    if (t.shape.size() == 1) {
      std::fill(p, p + t.size, 1.0f);
      continue;
    }
    bool out_proj = t.name.ends_with(".wo") || t.name.ends_with(".w2");
    double sd = 0.02 * (out_proj ? out_scale : 1.0);
    for (size_t i = 0; i < t.size; i++)
      p[i] = float(sd * r.normal());
  }
  if (x0 && probe) {
    for (int64_t i = 0; i < n_resid; i++)
      x0[i] = float(r.normal());
    for (int64_t i = 0; i < n_resid; i++)
      probe[i] = float(r.normal());
  }
}

rope_table make_rope_table(int64_t seq, int64_t head_dim, double theta) {
  rope_table r;
  r.seq = seq;
  r.half = head_dim / 2;
  r.cos.resize(size_t(seq * r.half));
  r.sin.resize(size_t(seq * r.half));
  for (int64_t t = 0; t < seq; t++)
    for (int64_t i = 0; i < r.half; i++) {
      // Angles in double: t * theta^(-2i/HD) reaches ~1e4 rad at long sequences.
      double freq = std::pow(theta, -2.0 * double(i) / double(head_dim));
      double ang = double(t) * freq;
      r.cos[size_t(t * r.half + i)] = float(std::cos(ang));
      r.sin[size_t(t * r.half + i)] = float(std::sin(ang));
    }
  return r;
}

attention::attention_shape causal_attention_shape(int64_t b, int64_t t, int64_t nh, int64_t kvh,
                                                  int64_t hd) {
  return attention::attention_shape_of(b, nh, kvh, t, t, hd, true);
}

} // namespace accelbench::training
