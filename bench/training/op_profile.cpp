// Per-op profile of one training step of a model (`--ops`): every op of the step timed alone at
// the model's shapes, in CPU time (all threads), the kept reference op and the op the model runs
// side by side, with the share of the step each one takes. CPU time rather than wall time: on a
// shared build machine other processes take cores away from a run, not CPU time.
#include "bench/training/op_profile.hpp"

#include <algorithm>
#include <ctime>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "workloads/training/ops.hpp"
#include "workloads/training/optimizer.hpp"

namespace accelbench::bench {

using namespace accelbench::training;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

namespace {

// The least CPU time of `reps` calls (after one untimed call): the least disturbed one.
double least_cpu_s(const std::function<void()>& fn, int reps) {
  fn();
  double best = 1e30;
  for (int i = 0; i < reps; i++) {
    double t0 = cpu_seconds();
    fn();
    best = std::min(best, cpu_seconds() - t0);
  }
  return best;
}

struct op_row {
  std::string name;
  int64_t per_step = 1; // calls per training step
  std::function<void()> reference, fused;
};

struct buffers {
  std::vector<float> x, y, z, w, d1, d2, d3, big1, big2, big3, r, lse;
  std::vector<int32_t> tok;
};

std::vector<float> filled(int64_t n, float scale, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = scale * (float(s >> 8) / float(1u << 24) - 0.5f);
  }
  return v;
}

buffers make_buffers(const model_config& m, int64_t bt) {
  const int64_t c = m.dim, f = m.ffn_dim, wide = std::max({c, f, m.vocab_size});
  buffers b;
  b.x = filled(bt * c, 2.0f, 1);
  b.y = filled(bt * c, 2.0f, 2);
  b.z = filled(bt * c, 2.0f, 3);
  b.w = filled(wide * c, 0.1f, 4);
  b.d1 = filled(wide * c, 0.1f, 5);
  b.d2 = filled(wide * c, 0.1f, 6);
  b.d3 = filled(bt * wide, 0.1f, 7);
  b.big1 = filled(bt * wide, 2.0f, 8);
  b.big2 = filled(bt * wide, 2.0f, 9);
  b.big3 = filled(bt * wide, 2.0f, 10);
  b.r = filled(bt, 1.0f, 11);
  b.lse = filled(bt * m.n_heads, 1.0f, 12);
  b.tok.resize(size_t(bt));
  for (int64_t i = 0; i < bt; i++)
    b.tok[size_t(i)] = int32_t((i * 7919) % m.vocab_size);
  return b;
}

// The linear layers of one block and of the head: forward and backward.
void add_linears(std::vector<op_row>& rows, buffers& b, const model_config& m, int64_t bt,
                 int64_t layers, compute_dtype dt) {
  const int64_t c = m.dim, kv = m.kv_dim(), f = m.ffn_dim, v = m.vocab_size;
  struct lin {
    const char* name;
    int64_t in, out, count;
  };
  for (const lin& l :
       {lin{"wq,wo", c, c, 2 * layers}, lin{"wk,wv", c, kv, 2 * layers},
        lin{"w1,w3", c, f, 2 * layers}, lin{"w2", f, c, layers}, lin{"lm_head", c, v, 1}}) {
    auto fwd = [&b, l, bt, dt] {
      linear_forward(dt, b.big1.data(), b.big2.data(), b.w.data(), bt, l.in, l.out);
    };
    auto bwd = [&b, l, bt, dt] {
      linear_backward(dt, b.big1.data(), b.d1.data(), b.big2.data(), b.big3.data(), b.w.data(), bt,
                      l.in, l.out, false);
    };
    rows.push_back({fmt::format("linear {} fwd {}x{}", l.name, l.in, l.out), l.count, fwd, fwd});
    rows.push_back({fmt::format("linear {} bwd", l.name), l.count, bwd, bwd});
  }
}

} // namespace

void print_op_profile(const model_config& m, int64_t batch, int64_t seq, compute_dtype dt,
                      int reps) {
  const int64_t bt = batch * seq, c = m.dim, f = m.ffn_dim, nh = m.n_heads, kvh = m.n_kv_heads,
                hd = m.head_dim(), layers = m.n_layers;
  buffers b = make_buffers(m, bt);
  rope_table rope = make_rope_table(seq, hd, m.rope_theta);
  std::vector<op_row> rows;
  add_linears(rows, b, m, bt, layers, dt);
  auto norm_f = [&] {
    rmsnorm_forward(b.y.data(), b.r.data(), b.x.data(), b.w.data(), bt, c, 1e-5f);
  };
  auto norm_b = [&] {
    rmsnorm_backward(b.z.data(), b.d1.data(), b.y.data(), b.x.data(), b.w.data(), b.r.data(), bt,
                     c);
  };
  auto norm_f0 = [&] {
    reference::rmsnorm_forward(b.y.data(), b.r.data(), b.x.data(), b.w.data(), bt, c, 1e-5f);
  };
  auto norm_b0 = [&] {
    reference::rmsnorm_backward(b.z.data(), b.d1.data(), b.y.data(), b.x.data(), b.w.data(),
                                b.r.data(), bt, c);
  };
  rows.push_back({"rmsnorm fwd", 2 * layers + 1, norm_f0, norm_f});
  rows.push_back({"rmsnorm bwd", 2 * layers + 1, norm_b0, norm_b});
  auto glu_f = [&] { swiglu_forward(b.big3.data(), b.big1.data(), b.big2.data(), bt * f); };
  auto glu_b = [&] {
    swiglu_backward(b.d3.data(), b.big3.data(), b.d3.data(), b.big1.data(), b.big2.data(), bt * f);
  };
  auto glu_f0 = [&] {
    reference::swiglu_forward(b.big3.data(), b.big1.data(), b.big2.data(), bt * f);
  };
  auto glu_b0 = [&] {
    reference::swiglu_backward(b.d3.data(), b.big3.data(), b.d3.data(), b.big1.data(),
                               b.big2.data(), bt * f);
  };
  rows.push_back({"swiglu fwd", layers, glu_f0, glu_f});
  rows.push_back({"swiglu bwd", layers, glu_b0, glu_b});
  auto res = [&] { residual_forward(b.z.data(), b.x.data(), b.y.data(), bt * c); };
  rows.push_back({"residual", 2 * layers, res, res});
  auto rope_f = [&] {
    rope_forward(b.y.data(), rope, batch, seq, nh, hd);
    rope_forward(b.z.data(), rope, batch, seq, kvh, hd);
  };
  rows.push_back({"rope q,k (fwd or bwd)", 2 * layers, rope_f, rope_f});
  auto att_f = [&] {
    attention_forward(b.big1.data(), b.lse.data(), b.x.data(), b.y.data(), b.z.data(), batch, seq,
                      nh, kvh, hd);
  };
  rows.push_back({"attention fwd", layers, att_f, att_f});
  auto att_b = [&] {
    attention_backward(b.big2.data(), b.d3.data(), b.big3.data(), b.y.data(), b.x.data(),
                       b.y.data(), b.z.data(), b.big1.data(), b.lse.data(), batch, seq, nh, kvh,
                       hd);
  };
  rows.push_back({"attention bwd", layers, att_b, att_b});
  auto ce = [&] {
    softmax_crossentropy_forward(b.big1.data(), b.r.data(), b.tok.data(), bt, m.vocab_size);
    crossentropy_softmax_backward(b.big1.data(), b.tok.data(), bt, m.vocab_size, 1e-3f);
  };
  rows.push_back({"cross-entropy fwd+bwd", 1, ce, ce});

  double ref_total = 0, new_total = 0;
  std::vector<std::pair<double, double>> t;
  for (auto& r : rows) {
    double a = least_cpu_s(r.reference, reps) * double(r.per_step);
    double n = least_cpu_s(r.fused, reps) * double(r.per_step);
    t.emplace_back(a, n);
    ref_total += a;
    new_total += n;
  }
  fmt::print("per-op CPU time of one step ({} tokens, {}), least of {} calls, x calls per step:\n",
             bt, to_string(dt), reps);
  fmt::print("  {:<30} {:>5} {:>10} {:>10} {:>7} {:>6}\n", "op", "calls", "ref ms", "new ms",
             "ref/new", "share");
  for (size_t i = 0; i < rows.size(); i++)
    fmt::print("  {:<30} {:>5} {:>10.2f} {:>10.2f} {:>6.2f}x {:>5.1f}%\n", rows[i].name,
               rows[i].per_step, 1e3 * t[i].first, 1e3 * t[i].second, t[i].first / t[i].second,
               100.0 * t[i].second / new_total);
  fmt::print("  {:<30} {:>5} {:>10.2f} {:>10.2f} {:>6.2f}x\n", "total (ops above)", "",
             1e3 * ref_total, 1e3 * new_total, ref_total / new_total);
}

} // namespace accelbench::bench
