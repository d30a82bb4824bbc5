// The vectorised layers (ops.cpp, optimizer.cpp) against the kept reference versions: bit for bit
// where the arithmetic is the same, within the bound ops.hpp states where the order of a sum or
// the exp changes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tests/workloads/training/micro_model.hpp"
#include "workloads/training/cpu/adamw.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/cpu/ops.hpp"
#include "workloads/training/llama.hpp"

using namespace accelbench::training;

namespace {

std::vector<float> wave(size_t n, double f, double a) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++)
    v[i] = float(a * std::sin(f * double(i) + 0.3));
  return v;
}

// |a - b| <= rel * (|b| + scale[i]) + abs, element by element (scale: the size of the terms that
// cancel in b, where they do); returns the number of violations.
int outside(const std::vector<float>& a, const std::vector<float>& b, double rel, double abs,
            const std::vector<float>& scale = {}) {
  int bad = 0;
  for (size_t i = 0; i < a.size(); i++)
    if (!(std::abs(double(a[i]) - b[i]) <=
          rel * (std::abs(double(b[i])) + (scale.empty() ? 0.0 : std::abs(scale[i]))) + abs)) {
      UNSCOPED_INFO("element " << i << ": " << a[i] << " vs " << b[i]);
      bad++;
    }
  return bad;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("fast RMSNorm agrees with the reference: gain gradient bit for bit, the rest to 2e-6",
          "[training][fastops]") {
  // Widths with a tail after the 16 lanes (100), several 64-channel gain blocks (200), and 256.
  for (int64_t c : {100, 200, 256}) {
    const int64_t bt = 37;
    auto x = wave(size_t(bt * c), 0.37, 3.0), w = wave(size_t(c), 0.11, 1.0);
    auto dy = wave(size_t(bt * c), 0.53, 0.5);
    std::vector<float> y0(x.size()), y1(x.size()), r0(static_cast<size_t>(bt)),
        r1(static_cast<size_t>(bt));
    reference::rmsnorm_forward(y0.data(), r0.data(), x.data(), w.data(), bt, c, 1e-5f);
    rmsnorm_forward(y1.data(), r1.data(), x.data(), w.data(), bt, c, 1e-5f);
    CHECK(outside(r1, r0, 2e-6, 0) == 0);
    CHECK(outside(y1, y0, 2e-6, 1e-7) == 0);
    std::vector<float> dx0 = wave(x.size(), 0.7, 0.1), dx1 = dx0, dw0 = w, dw1 = w;
    reference::rmsnorm_backward(dx0.data(), dw0.data(), dy.data(), x.data(), w.data(), r0.data(),
                                bt, c);
    rmsnorm_backward(dx1.data(), dw1.data(), dy.data(), x.data(), w.data(), r0.data(), bt, c);
    CHECK(same_bits(dw1, dw0)); // the same products summed in the same order
    CHECK(outside(dx1, dx0, 2e-6, 1e-6) == 0);
  }
}

// dh1 = dout h3 s (1 + x (1 - s)) cancels near x = -1.28: there the bound is relative to dout h3.
TEST_CASE("fast SwiGLU agrees with the reference to 1e-6 relative, extremes included",
          "[training][fastops]") {
  auto h1 = wave(10007, 0.013, 12.0), h3 = wave(10007, 0.029, 2.0);
  auto dout = wave(10007, 0.041, 1.0);
  const float inf = std::numeric_limits<float>::infinity();
  for (float e : {-100.0f, -87.5f, -20.0f, -1e-30f, 0.0f, 1e-30f, 20.0f, 88.5f, 100.0f})
    h1.push_back(e), h3.push_back(1.5f), dout.push_back(0.25f);
  const size_t n = h1.size();
  std::vector<float> g0(n), g1(n), a0(n), a1(n), b0(n), b1(n);
  reference::swiglu_forward(g0.data(), h1.data(), h3.data(), int64_t(n));
  swiglu_forward(g1.data(), h1.data(), h3.data(), int64_t(n));
  CHECK(outside(g1, g0, 1e-6, 1e-30) == 0);
  reference::swiglu_backward(a0.data(), b0.data(), dout.data(), h1.data(), h3.data(), int64_t(n));
  swiglu_backward(a1.data(), b1.data(), dout.data(), h1.data(), h3.data(), int64_t(n));
  std::vector<float> terms(n);
  for (size_t i = 0; i < n; i++)
    terms[i] = dout[i] * h3[i];
  CHECK(outside(a1, a0, 1e-6, 1e-30, terms) == 0);
  CHECK(outside(b1, b0, 1e-6, 1e-30) == 0);
  // NaN in, NaN out; infinities as far as the reference defines them.
  std::vector<float> nan_in = {std::nanf(""), -inf}, three = {1.0f, 1.0f}, out(2);
  swiglu_forward(out.data(), nan_in.data(), three.data(), 2);
  CHECK(std::isnan(out[0]));
}

TEST_CASE("vectorised AdamW gives the bits of the scalar update", "[training][fastops]") {
  // Three tensors, one longer than a chunk of the parallel loop, with and without decay.
  std::vector<param_tensor> t(3);
  t[0] = {"a", 0, {300, 100}, 30000, true};
  t[1] = {"b", 30000, {77}, 77, false};
  t[2] = {"c", 30077, {5, 3}, 15, true};
  const size_t n = 30092;
  auto p = wave(n, 0.17, 0.2), ref = p;
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  adamw opt(n);
  const adamw_config c{0.9, 0.95, 1e-8, 0.1};
  for (int step = 1; step <= 3; step++) {
    auto g = wave(n, 0.31 * step, 0.01 * step);
    opt.step(p.data(), g.data(), t, 1e-3, c);
    const float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, lr = 1e-3f;
    const float bc1 = float(1.0 - std::pow(0.9, step)), bc2 = float(1.0 - std::pow(0.95, step));
    for (const auto& ten : t)
      for (size_t i = ten.offset; i < ten.offset + ten.size; i++) {
        const float wd = ten.decay ? 0.1f : 0.0f;
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        float mhat = m[i] / bc1, vhat = v[i] / bc2;
        ref[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + wd * ref[i]);
      }
  }
  CHECK(same_bits(p, ref));
}

TEST_CASE("a model on the fast ops trains as on the reference ops, losses within 1e-5",
          "[training][fastops]") {
  const auto cfg = test::micro_config();
  llama_options o;
  o.batch = 2;
  o.seq = 8;
  llama_options o_ref = o;
  o_ref.reference_ops = true;
  llama_model fast(cfg, o), ref(cfg, o_ref);
  fast.init_parameters(3);
  ref.init_parameters(3);
  std::vector<int32_t> in(16), tg(16);
  for (int i = 0; i < 16; i++)
    in[size_t(i)] = (i * 7) % 32, tg[size_t(i)] = (i * 11 + 3) % 32;
  adamw of(fast.num_params()), orf(ref.num_params());
  for (int step = 0; step < 4; step++) {
    fast.zero_grad();
    ref.zero_grad();
    const float lf = fast.forward(in.data(), tg.data()), lr = ref.forward(in.data(), tg.data());
    CHECK(std::abs(lf - lr) <= 1e-5 * std::abs(lr));
    fast.backward();
    ref.backward();
    of.step(fast.params(), fast.grads(), fast.tensors(), 1e-2, {});
    orf.step(ref.params(), ref.grads(), ref.tensors(), 1e-2, {});
  }
}

TEST_CASE("the bf16 recipe's attention runs on bf16 (O and dQ/dK/dV are bf16 values) and stays "
          "near fp32's",
          "[training][fastops]") {
  // b1 t70 (a partial tile) nh4 kvh2 hd32: q, out [1,70,4,32]; k, v [1,70,2,32]; lse [1,4,70].
  const int64_t b = 1, t = 70, nh = 4, kvh = 2, hd = 32, nq = b * t * nh * hd,
                nk = b * t * kvh * hd;
  const std::vector<float> q = wave(size_t(nq), 0.37, 1.0), k = wave(size_t(nk), 0.23, 1.0),
                           v = wave(size_t(nk), 0.11, 1.0), d_o = wave(size_t(nq), 0.05, 1.0);
  std::vector<float> o32(static_cast<size_t>(nq)), o16(static_cast<size_t>(nq)),
      lse32(static_cast<size_t>(b * nh * t)), lse16(static_cast<size_t>(b * nh * t));
  const auto s = causal_attention_shape(b, t, nh, kvh, hd);
  std::vector<float> g32(static_cast<size_t>(nq + 2 * nk)), g16(static_cast<size_t>(nq + 2 * nk));
  auto io = [&](std::vector<float>& o, std::vector<float>& lse, std::vector<float>& g) {
    return attention_io{.q = q.data(),
                        .dq = g.data(),
                        .k = k.data(),
                        .dk = g.data() + nq,
                        .v = v.data(),
                        .dv = g.data() + nq + nk,
                        .out = o.data(),
                        .dout = d_o.data(),
                        .lse = lse.data()};
  };
  attention_forward(compute_dtype::fp32, s, io(o32, lse32, g32));
  attention_forward(compute_dtype::bf16, s, io(o16, lse16, g16));
  attention_backward(compute_dtype::fp32, s, io(o32, lse32, g32));
  attention_backward(compute_dtype::bf16, s, io(o16, lse16, g16));
  int not_bf16 = 0;
  for (const auto* x : {&o16, &g16})
    for (float f : *x)
      not_bf16 += round_to_bf16(f) != f;
  CHECK(not_bf16 == 0);
  CHECK_FALSE(same_bits(o16, o32));
  // bf16 inputs and P: within the bf16 attention tolerance (2e-2 of max(|ref|, rms)) of fp32.
  CHECK(outside(o16, o32, 2e-2, 2e-2) == 0);
  CHECK(outside(g16, g32, 2e-2, 2e-2) == 0);
}
