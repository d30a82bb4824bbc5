// Per-op profile of one training step of a model (`--ops`): every op of the step timed alone at
// the model's shapes, in CPU time (all threads), the kept reference op and the op the model runs
// side by side, with the share of the step each one takes. CPU time rather than wall time: on a
// shared build machine other processes take cores away from a run, not CPU time.
#include "bench/training/op_profile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "harness/core/peak.hpp"
#include "workloads/training/cpu/adamw.hpp"
#include "workloads/training/cpu/cpu_trainable.hpp"
#include "workloads/training/cpu/ops.hpp"
#include "workloads/training/trainer.hpp"

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

// Global-norm clipping and AdamW over every parameter of the model.
void add_optimizer(std::vector<op_row>& rows, const model_config& m) {
  llama_options o;
  auto layout = std::make_shared<std::vector<param_tensor>>(parameter_layout(m, o));
  const size_t n = layout->back().offset + layout->back().size;
  auto p = std::make_shared<std::vector<float>>(filled(int64_t(n), 0.1f, 13));
  auto g = std::make_shared<std::vector<float>>(filled(int64_t(n), 0.01f, 14));
  auto opt = std::make_shared<adamw>(n);
  auto clip = [g, n] { clip_grad_norm(g->data(), n, 1e-3); };
  auto step = [p, g, opt, layout] { opt->step(p->data(), g->data(), *layout, 1e-4, {}); };
  rows.push_back({"clip_grad_norm", 1, clip, clip});
  rows.push_back({"adamw step", 1, step, step});
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
  const auto att_s = causal_attention_shape(batch, seq, nh, kvh, hd);
  const attention_io att_io = {.q = b.x.data(),
                               .dq = b.big2.data(),
                               .k = b.y.data(),
                               .dk = b.d3.data(),
                               .v = b.z.data(),
                               .dv = b.big3.data(),
                               .out = b.big1.data(),
                               .dout = b.y.data(),
                               .lse = b.lse.data()};
  auto att_f = [&] { attention_forward(dt, att_s, att_io); };
  rows.push_back({"attention fwd", layers, att_f, att_f});
  auto att_b = [&] { attention_backward(dt, att_s, att_io); };
  rows.push_back({"attention bwd", layers, att_b, att_b});
  auto ce = [&] {
    softmax_crossentropy_forward(b.big1.data(), b.r.data(), b.tok.data(), bt, m.vocab_size);
    crossentropy_softmax_backward(b.big1.data(), b.tok.data(), bt, m.vocab_size, 1e-3f);
  };
  rows.push_back({"cross-entropy fwd+bwd", 1, ce, ce});
  add_optimizer(rows, m);

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

namespace {

struct step_times {
  std::vector<double> cpu_s, wall_s;
  std::vector<float> loss;
};

// One optimizer step as train_step runs it (zero_grad, forward, backward, clip, AdamW), timed.
void timed_step(cpu_trainable& m, const std::vector<int32_t>& in, const std::vector<int32_t>& tg,
                step_times& out) {
  const double c0 = cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  m.zero_grad();
  out.loss.push_back(m.forward(in.data(), tg.data()));
  m.backward(1.0f);
  m.clip_grad_norm(1.0);
  m.optimizer_step(1e-3, adamw_config{});
  out.wall_s.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  out.cpu_s.push_back(cpu_seconds() - c0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

void print_step_comparison(const model_config& m, const llama_options& o, int steps) {
  llama_options o_ref = o;
  o_ref.reference_ops = true;
  cpu_trainable fast(m, o), ref(m, o_ref);
  fast.init(1);
  ref.init(1);
  const int64_t batch = o.batch, seq = o.seq, layers = resolved_layers(m, o);
  const compute_dtype dt = o.dtype;
  const int64_t bt = batch * seq;
  std::vector<int32_t> in(static_cast<size_t>(bt)), tg(static_cast<size_t>(bt));
  for (int64_t i = 0; i < bt; i++) {
    in[size_t(i)] = int32_t((i * 7919 + 13) % m.vocab_size);
    tg[size_t(i)] = int32_t((i * 104729 + 7) % m.vocab_size);
  }
  step_times tf, tr;
  for (int s = 0; s < steps + 1; s++) { // alternating, so both see the same load
    timed_step(ref, in, tg, tr);
    timed_step(fast, in, tg, tf);
  }
  double worst = 0; // the losses' largest relative difference
  for (size_t i = 0; i < tf.loss.size(); i++)
    worst = std::max(worst, double(std::abs(tf.loss[i] - tr.loss[i]) / std::abs(tr.loss[i])));
  for (auto* t : {&tf, &tr}) { // the first step warms caches and primitives: not counted
    t->cpu_s.erase(t->cpu_s.begin());
    t->wall_s.erase(t->wall_s.begin());
  }
  const cpu_peak pk = cached_cpu_peak();
  const double per_thread = (dt == compute_dtype::bf16 ? pk.bf16_tflops : pk.fp32_tflops) /
                            std::max(1, pk.threads) * 1e12;
  const double flops = model_flops_per_token(m, layers, seq, o.with_head) * double(bt);
  fmt::print("{} {} layer(s){}: ", m.name, layers, o.with_head ? "" : " (blocks only)");
  fmt::print("whole step ({} tokens, {}), median of {} alternating steps; MFU in CPU time "
             "against the probe's per-thread peak {:.3f} TFLOP/s:\n",
             bt, to_string(dt), steps, per_thread / 1e12);
  for (auto [name, t] : {std::pair{"reference ops", &tr}, std::pair{"fast ops", &tf}})
    fmt::print("  {:<14} CPU {:8.1f} ms  wall {:8.1f} ms  {:8.0f} tokens per CPU-s  MFU(CPU) "
               "{:5.1f}%\n",
               name, 1e3 * median(t->cpu_s), 1e3 * median(t->wall_s), double(bt) / median(t->cpu_s),
               100.0 * flops / median(t->cpu_s) / per_thread);
  fmt::print("  reference / fast: CPU {:.2f}x, wall {:.2f}x; losses differ by {:.2e} at the first "
             "step, at most {:.2e} over all (relative; AdamW carries the difference on)\n",
             median(tr.cpu_s) / median(tf.cpu_s), median(tr.wall_s) / median(tf.wall_s),
             double(std::abs(tf.loss[0] - tr.loss[0]) / std::abs(tr.loss[0])), worst);
}

} // namespace accelbench::bench
