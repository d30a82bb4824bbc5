#pragma once
// An independent, deliberately plain Llama forward pass for the tests: naive loops, double
// precision, the attention matrix materialised. It shares nothing with the model but the
// parameter layout (tensor offsets by name), so agreement with it checks the real thing.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/llama.hpp"

namespace accelbench::training::test {

// Mean cross-entropy over B*T positions of the model described by `m` with parameters `p`
// (the model's flat layout, in double).
inline double reference_loss(const llama_model& m, const std::vector<double>& p,
                             const std::vector<int32_t>& in, const std::vector<int32_t>& tg) {
  const auto& cfg = m.config();
  const int64_t B = m.options().batch, T = m.options().seq, C = cfg.dim, NH = cfg.n_heads,
                KVH = cfg.n_kv_heads, HD = cfg.head_dim(), F = cfg.ffn_dim, V = cfg.vocab_size,
                L = m.layers();
  auto W = [&](const std::string& name) { return p.data() + m.tensor(name).offset; };
  using vec = std::vector<double>;
  auto rmsnorm = [&](const vec& x, const double* w) {
    vec y(x.size());
    for (int64_t r = 0; r < B * T; r++) {
      double ss = 0;
      for (int64_t j = 0; j < C; j++)
        ss += x[r * C + j] * x[r * C + j];
      double rs = 1.0 / std::sqrt(ss / C + cfg.norm_eps);
      for (int64_t j = 0; j < C; j++)
        y[r * C + j] = x[r * C + j] * rs * w[j];
    }
    return y;
  };
  // y[BT,O] = x[BT,I] * w[O,I]^T
  auto linear = [&](const vec& x, const double* w, int64_t I, int64_t O) {
    vec y(size_t(B * T * O), 0.0);
    for (int64_t r = 0; r < B * T; r++)
      for (int64_t o = 0; o < O; o++) {
        double s = 0;
        for (int64_t i = 0; i < I; i++)
          s += x[r * I + i] * w[o * I + i];
        y[r * O + o] = s;
      }
    return y;
  };
  auto rope = [&](vec& x, int64_t heads) {
    for (int64_t b = 0; b < B; b++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < heads; h++) {
          double* v = x.data() + ((b * T + t) * heads + h) * HD;
          for (int64_t i = 0; i < HD / 2; i++) {
            double ang = double(t) * std::pow(cfg.rope_theta, -2.0 * double(i) / double(HD));
            double a = v[i], c = v[i + HD / 2];
            v[i] = a * std::cos(ang) - c * std::sin(ang);
            v[i + HD / 2] = c * std::cos(ang) + a * std::sin(ang);
          }
        }
  };
  vec x(size_t(B * T * C));
  for (int64_t r = 0; r < B * T; r++)
    for (int64_t j = 0; j < C; j++)
      x[r * C + j] = W("tok_emb")[in[r] * C + j];
  for (int64_t l = 0; l < L; l++) {
    std::string pre = "layers." + std::to_string(l) + ".";
    vec xn = rmsnorm(x, W(pre + "attn_norm"));
    vec q = linear(xn, W(pre + "wq"), C, NH * HD);
    vec k = linear(xn, W(pre + "wk"), C, KVH * HD);
    vec v = linear(xn, W(pre + "wv"), C, KVH * HD);
    rope(q, NH);
    rope(k, KVH);
    vec att(size_t(B * T * C), 0.0);
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < NH; h++) {
        int64_t kh = h / (NH / KVH);
        for (int64_t i = 0; i < T; i++) {
          vec s(size_t(i + 1));
          double mx = -1e300;
          for (int64_t j = 0; j <= i; j++) {
            double d = 0;
            for (int64_t e = 0; e < HD; e++)
              d += q[((b * T + i) * NH + h) * HD + e] * k[((b * T + j) * KVH + kh) * HD + e];
            s[j] = d / std::sqrt(double(HD));
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (auto& e : s)
            z += (e = std::exp(e - mx));
          for (int64_t j = 0; j <= i; j++)
            for (int64_t e = 0; e < HD; e++)
              att[((b * T + i) * NH + h) * HD + e] +=
                  s[j] / z * v[((b * T + j) * KVH + kh) * HD + e];
        }
      }
    vec ao = linear(att, W(pre + "wo"), C, C);
    for (size_t i = 0; i < x.size(); i++)
      x[i] += ao[i];
    vec xn2 = rmsnorm(x, W(pre + "mlp_norm"));
    vec h1 = linear(xn2, W(pre + "w1"), C, F);
    vec h3 = linear(xn2, W(pre + "w3"), C, F);
    for (size_t i = 0; i < h1.size(); i++)
      h1[i] = h1[i] / (1.0 + std::exp(-h1[i])) * h3[i];
    vec mo = linear(h1, W(pre + "w2"), F, C);
    for (size_t i = 0; i < x.size(); i++)
      x[i] += mo[i];
  }
  vec xf = rmsnorm(x, W("final_norm"));
  vec logits = linear(xf, W("lm_head"), C, V);
  double loss = 0;
  for (int64_t r = 0; r < B * T; r++) {
    double mx = -1e300, z = 0;
    for (int64_t j = 0; j < V; j++)
      mx = std::max(mx, logits[r * V + j]);
    for (int64_t j = 0; j < V; j++)
      z += std::exp(logits[r * V + j] - mx);
    loss += std::log(z) + mx - logits[r * V + tg[r]];
  }
  return loss / double(B * T);
}

} // namespace accelbench::training::test
