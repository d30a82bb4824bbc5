// The Llama model: gradients against finite differences of an independent double-precision
// reference (every coordinate of every tensor), against finite differences of the model itself,
// bf16 against fp32, and the input checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "tests/workloads/training/micro_model.hpp"
#include "tests/workloads/training/reference_llama.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/llama.hpp"

using namespace accelbench;
using namespace accelbench::training;
using accelbench::training::test::micro_config;

namespace {

void random_tokens(std::vector<int32_t>& in, std::vector<int32_t>& tg, int64_t n, int64_t v,
                   uint64_t seed) {
  stats::rng r(seed);
  in.resize(size_t(n));
  tg.resize(size_t(n));
  for (auto& x : in)
    x = int32_t(r.below(size_t(v)));
  for (auto& x : tg)
    x = int32_t(r.below(size_t(v)));
}

// Larger weights than the training init, so attention is far from uniform and every path has
// gradients well above rounding noise.
void scale_weights(llama_model& m, float s) {
  for (auto& t : m.tensors()) {
    float* p = m.params() + t.offset;
    if (t.shape.size() == 2)
      for (size_t i = 0; i < t.size; i++)
        p[i] *= s;
    else {
      stats::rng r(t.offset + 7);
      for (size_t i = 0; i < t.size; i++)
        p[i] = float(0.5 + r.uniform()); // gains != 1
    }
  }
}

} // namespace

TEST_CASE("llama loss and every gradient agree with a naive double reference",
          "[training][model]") {
  llama_options o;
  o.batch = 2;
  o.seq = 8;
  llama_model m(micro_config(), o);
  m.init_parameters(1);
  scale_weights(m, 5.0f);
  std::vector<int32_t> in, tg;
  random_tokens(in, tg, o.batch * o.seq, 32, 11);

  m.zero_grad();
  float loss = m.forward(in.data(), tg.data());
  m.backward(1.0f);

  std::vector<double> p(m.params(), m.params() + m.num_params());
  double ref = test::reference_loss(m, p, in, tg);
  CHECK(loss == Approx(ref).epsilon(1e-5));

  // Central differences of the double reference: truncation O(h^2), rounding O(1e-16/h).
  const double h = 1e-5;
  for (auto& t : m.tensors()) {
    double worst = 0, scale = 0;
    for (size_t i = 0; i < t.size; i++) {
      size_t at = t.offset + i;
      double keep = p[at];
      p[at] = keep + h;
      double up = test::reference_loss(m, p, in, tg);
      p[at] = keep - h;
      double dn = test::reference_loss(m, p, in, tg);
      p[at] = keep;
      double fd = (up - dn) / (2 * h);
      worst = std::max(worst, std::abs(fd - double(m.grads()[at])));
      scale = std::max(scale, std::abs(fd));
    }
    INFO("tensor " << t.name << ": max |grad - fd| " << worst << ", max |fd| " << scale);
    CHECK(scale > 1e-6); // the tensor does influence the loss
    CHECK(worst <= 2e-3 * scale + 1e-7);
  }
}

TEST_CASE("llama fp32 gradients match finite differences of the model itself",
          "[training][model]") {
  for (bool with_head : {true, false}) {
    llama_options o;
    o.batch = 2;
    o.seq = 8;
    o.with_head = with_head;
    llama_model m(micro_config(), o);
    m.init_parameters(3);
    scale_weights(m, 5.0f);
    std::vector<int32_t> in, tg;
    random_tokens(in, tg, o.batch * o.seq, 32, 5);
    m.zero_grad();
    m.forward(in.data(), tg.data());
    m.backward(1.0f);
    std::vector<float> g(m.grads(), m.grads() + m.num_params());
    for (auto& t : m.tensors()) {
      // The two largest-gradient coordinates of each tensor and one drawn at random.
      std::vector<size_t> idx(t.size);
      for (size_t i = 0; i < t.size; i++)
        idx[i] = i;
      std::partial_sort(idx.begin(), idx.begin() + 2, idx.end(), [&](size_t a, size_t b) {
        return std::abs(g[t.offset + a]) > std::abs(g[t.offset + b]);
      });
      stats::rng r(t.offset);
      std::vector<size_t> pick = {idx[0], idx[1], r.below(t.size)};
      double gmax = std::abs(g[t.offset + idx[0]]);
      for (size_t i : pick) {
        float* w = m.params() + t.offset + i;
        float keep = *w;
        const float h = 1e-2f;
        *w = keep + h;
        double up = m.forward(in.data(), tg.data());
        *w = keep - h;
        double dn = m.forward(in.data(), tg.data());
        *w = keep;
        double fd = (up - dn) / (2.0 * h);
        INFO((with_head ? "full model, " : "blocks only, ")
             << t.name << "[" << i << "]: grad " << g[t.offset + i] << ", fd " << fd);
        CHECK(std::abs(fd - g[t.offset + i]) <= 0.03 * gmax + 2e-5);
      }
    }
  }
}

TEST_CASE("bf16 matmuls stay close to fp32", "[training][model]") {
  llama_options o;
  o.batch = 2;
  o.seq = 8;
  llama_model a(micro_config(), o);
  o.dtype = compute_dtype::bf16;
  llama_model b(micro_config(), o);
  a.init_parameters(9);
  b.init_parameters(9);
  std::vector<int32_t> in, tg;
  random_tokens(in, tg, o.batch * o.seq, 32, 4);
  a.zero_grad();
  b.zero_grad();
  float la = a.forward(in.data(), tg.data());
  float lb = b.forward(in.data(), tg.data());
  a.backward();
  b.backward();
  CHECK(lb == Approx(la).epsilon(1e-2));
  CHECK(lb != la); // bf16 rounding did happen
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.num_params(); i++) {
    dot += double(a.grads()[i]) * b.grads()[i];
    na += double(a.grads()[i]) * a.grads()[i];
    nb += double(b.grads()[i]) * b.grads()[i];
  }
  CHECK(dot / std::sqrt(na * nb) > 0.99);
}

TEST_CASE("round_to_bf16 rounds to nearest even", "[training][model]") {
  CHECK(round_to_bf16(1.0f) == 1.0f);
  CHECK(round_to_bf16(1.0f + 1.0f / 256) == 1.0f);              // tie -> even (down)
  CHECK(round_to_bf16(1.0f + 3.0f / 256) == 1.0f + 4.0f / 256); // tie -> even (up)
  CHECK(round_to_bf16(1.0f + 1.5f / 256) == 1.0f + 2.0f / 256);
  CHECK(std::isnan(round_to_bf16(std::nanf(""))));
}

TEST_CASE("inconsistent dimensions and bad tokens are input errors", "[training][model]") {
  model_config m = micro_config();
  m.n_heads = 5;
  REQUIRE_THROWS_AS(m.validate(), input_error);
  REQUIRE_THROWS_WITH(m.validate(), Catch::Contains("heads (5) do not divide dim (16)"));
  m = micro_config();
  m.n_kv_heads = 3;
  REQUIRE_THROWS_WITH(m.validate(), Catch::Contains("kv_heads (3) do not divide heads (4)"));
  m = micro_config();
  m.n_heads = 16; // head_dim 1: RoPE needs pairs
  m.n_kv_heads = 4;
  REQUIRE_THROWS_WITH(m.validate(), Catch::Contains("head_dim 1 is odd"));

  llama_options o;
  o.batch = 1;
  o.seq = 8;
  llama_model model(micro_config(), o);
  model.init_parameters(1);
  std::vector<int32_t> in(8, 3), tg(8, 3);
  tg[5] = 32; // vocabulary is 32 tokens: ids 0..31
  REQUIRE_THROWS_AS(model.forward(in.data(), tg.data()), input_error);
  REQUIRE_THROWS_WITH(model.forward(in.data(), tg.data()), Catch::Contains("token id 32"));
}

TEST_CASE("the memory plan is what the model allocates", "[training][model]") {
  llama_options o;
  o.batch = 2;
  o.seq = 8;
  llama_model m(micro_config(), o);
  auto plan = llama_model::plan(micro_config(), o);
  CHECK(plan.params == m.num_params() * 4);
  CHECK(plan.grads == plan.params);
  CHECK(plan.optimizer == 2 * plan.params);
  CHECK(int64_t(m.num_params()) == micro_config().total_params());
  // Llama 3 8B: 8.03 billion parameters (Dubey et al. 2024).
  model_config l8;
  l8.name = "llama3-8b";
  l8.dim = 4096;
  l8.n_layers = 32;
  l8.n_heads = 32;
  l8.n_kv_heads = 8;
  l8.ffn_dim = 14336;
  l8.vocab_size = 128256;
  l8.max_seq_len = 8192;
  CHECK(double(l8.total_params()) == Approx(8.03e9).epsilon(0.005));
}
