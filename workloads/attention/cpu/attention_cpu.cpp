// The attention workload's CPU backend (attention_cpu.hpp).
#include "workloads/attention/cpu/attention_cpu.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/hash.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/stats.hpp"
#include "harness/measure/kernel_run.hpp"
#include "kernels/attention/cpu/flash_kernels.hpp"
#include "workloads/attention/attention_check.hpp"

namespace accelbench::attention {

namespace {

int64_t q_elems(const attention_shape& s) { return s.batch * s.seq_q * s.heads * s.head_dim; }
int64_t k_elems(const attention_shape& s) { return s.batch * s.seq_k * s.kv_heads * s.head_dim; }

// Standard normal inputs: with the 1/sqrt(head_dim) scale, scores are ~N(0, 1), a realistic
// softmax (neither uniform nor one-hot), so errors in either the max or the sum show.
void fill(std::vector<float>& x, int64_t n, stats::rng& g) {
  x.resize(size_t(n));
  for (float& e : x)
    e = float(g.normal());
}

// Zeroed outputs of `n_q` and `n_k` elements: o always, the gradients when the pass has a backward.
template <class T>
void zero_outputs(std::vector<T>& o, std::vector<T>& dq, std::vector<T>& dk, std::vector<T>& dv,
                  pass_kind p, int64_t n_q, int64_t n_k) {
  o.assign(size_t(n_q), T(0));
  if (needs_backward(p)) {
    dq.assign(size_t(n_q), T(0));
    dk.assign(size_t(n_k), T(0));
    dv.assign(size_t(n_k), T(0));
  }
}

// The seeded fp32 inputs, kept or rounded to the run's dtype.
attention_buffers make_buffers(const attention_shape& s, pass_kind p, dtype type, uint64_t seed) {
  attention_buffers b;
  b.type = type;
  stats::rng g(seed);
  const int64_t nq = q_elems(s), nk = k_elems(s);
  std::vector<float> q, k, v, d_o;
  fill(q, nq, g);
  fill(k, nk, g);
  fill(v, nk, g);
  if (needs_backward(p))
    fill(d_o, nq, g);
  b.lse.assign(size_t(s.batch * s.heads * s.seq_q), 0.f);
  if (type != dtype::bf16) {
    b.q = std::move(q);
    b.k = std::move(k);
    b.v = std::move(v);
    b.d_o = std::move(d_o);
    zero_outputs(b.o, b.dq, b.dk, b.dv, p, nq, nk);
    return b;
  }
  auto cvt = [](const std::vector<float>& in, std::vector<uint16_t>& out) {
    out.resize(in.size());
    to_bf16(in.data(), out.data(), int64_t(in.size()));
  };
  cvt(q, b.q16);
  cvt(k, b.k16);
  cvt(v, b.v16);
  cvt(d_o, b.do16);
  zero_outputs(b.o16, b.dq16, b.dk16, b.dv16, p, nq, nk);
  return b;
}

class attention_kernel : public measure::kernel {
public:
  attention_kernel(const attention_shape& s, pass_kind p, attention_buffers& b)
      : m_shape(s), m_pass(p), m_buf(b) {}
  void run() override {
    const attention_tensors io = m_buf.tensors();
    if (m_pass != pass_kind::bwd)
      flash_forward(m_shape, io);
    if (m_pass != pass_kind::fwd)
      flash_backward(m_shape, io);
  }

private:
  attention_shape m_shape;
  pass_kind m_pass;
  attention_buffers& m_buf;
};

// fp32 views of the buffers for the checker (bf16 widens exactly: the reference sees the very
// inputs the kernel read).
struct float_views {
  std::vector<float> store[8];
  const float* q;
  const float* k;
  const float* v;
  const float* o;
  const float* d_o;
  const float* dq;
  const float* dk;
  const float* dv;
};
float_views views_of(const attention_buffers& b) {
  float_views f;
  if (b.type != dtype::bf16) {
    f.q = b.q.data();
    f.k = b.k.data();
    f.v = b.v.data();
    f.o = b.o.data();
    f.d_o = b.d_o.data();
    f.dq = b.dq.data();
    f.dk = b.dk.data();
    f.dv = b.dv.data();
    return f;
  }
  const std::vector<uint16_t>* src[8] = {&b.q16,  &b.k16,  &b.v16,  &b.o16,
                                         &b.do16, &b.dq16, &b.dk16, &b.dv16};
  for (int t = 0; t < 8; ++t) {
    f.store[t].resize(src[t]->size());
    to_float(src[t]->data(), f.store[t].data(), int64_t(src[t]->size()));
  }
  f.q = f.store[0].data();
  f.k = f.store[1].data();
  f.v = f.store[2].data();
  f.o = f.store[3].data();
  f.d_o = f.store[4].data();
  f.dq = f.store[5].data();
  f.dk = f.store[6].data();
  f.dv = f.store[7].data();
  return f;
}

// The correctness of the outputs against the reference; the run is INVALID when they are wrong.
void check_outputs(const attention_params& p, const attention_buffers& buf, run& out,
                   const run_context& ctx, uint64_t seed) {
  const attention_shape& s = p.shape;
  const check_options opt = check_options_for(*ctx.rules, s, to_string(p.type), seed);
  const float_views f = views_of(buf);
  check_result all = check_forward(s, f.q, f.k, f.v, f.o, buf.lse.data(), opt);
  json detail = {{"forward", all.to_json()}};
  if (p.backward()) {
    const check_result b = check_backward(s, f.q, f.k, f.v, f.d_o, f.dq, f.dk, f.dv, opt);
    detail["backward"] = b.to_json();
    all.merge(b);
  }
  json c = all.to_json();
  c["passes"] = detail;
  out.extra["correctness"] = c;
  if (!all.ok())
    out.mark_invalid("correctness: " + all.reason());
}

// What ran: the kernels' ISA and tiles, bf16's arithmetic, the FLOP convention, the shape resolved.
void describe(const attention_params& p, run& out) {
  const attention_shape& s = p.shape;
  out.extra["flops_per_iteration"] = p.flops();
  out.extra["implementation"] = fmt::format("accelbench flash-attention-2 cpu ({}, tiles {}x{})",
                                            kernel_isa(), detail::tile_q, detail::tile_k);
  // Which arithmetic bf16 ran on: "avx512_bf16" (native bf16 dot products) or "fp32" (widened
  // to fp32: a CPU without AVX512-BF16, or ACCELBENCH_ATTN_BF16=fp32).
  if (p.bf16())
    out.extra["bf16_path"] = bf16_path();
  out.extra["flop_convention"] = k_flop_convention;
  out.extra["resolved"] = {
      {"kv_heads", s.kv_heads}, {"seq_k", s.seq_k}, {"scale", s.effective_scale()}};
}

} // namespace

attention_tensors attention_buffers::tensors() {
  if (type == dtype::bf16)
    return {.type = type,
            .q = q16.data(),
            .dq = dq16.data(),
            .k = k16.data(),
            .dk = dk16.data(),
            .v = v16.data(),
            .dv = dv16.data(),
            .o = o16.data(),
            .d_o = do16.data(),
            .lse = lse.data()};
  return {.type = type,
          .q = q.data(),
          .dq = dq.data(),
          .k = k.data(),
          .dk = dk.data(),
          .v = v.data(),
          .dv = dv.data(),
          .o = o.data(),
          .d_o = d_o.data(),
          .lse = lse.data()};
}

uint64_t attention_cpu_host_bytes(const attention_params& p) {
  const attention_shape& s = p.shape;
  // validate() bounds every tensor to 2^40 elements, so these sums stay far inside 64 bits.
  const uint64_t nq = uint64_t(q_elems(s)), nk = uint64_t(k_elems(s));
  const uint64_t el = element_size(p.type);
  uint64_t tensors = 2 * nq + 2 * nk; // q, o, k, v
  if (p.backward())
    tensors += 2 * nq + 2 * nk; // d_o, dq, dk, dv
  uint64_t bytes = tensors * el + uint64_t(s.batch * s.heads * s.seq_q) * 4;
  bytes += p.backward() ? backward_workspace_bytes(s) : forward_workspace_bytes(s);
  if (p.bf16())
    bytes += tensors * 4; // fp32 copies for the correctness check
  return bytes;
}

void attention_cpu_execute(const attention_params& p, run& out, run_context& ctx,
                           const output_hook& hook) {
  const attention_shape& s = p.shape;
  const uint64_t seed = seed_of(ctx.seed, p.key);
  attention_buffers buf = make_buffers(s, p.pass, p.type, seed);
  // The backward consumes the forward's O and lse: computed once, outside the timed region.
  if (p.pass == pass_kind::bwd)
    flash_forward(s, buf.tensors());

  attention_kernel k(s, p.pass, buf);
  measure::kernel_run_steps steps;
  steps.flops = p.flops();
  steps.peak = [&] { return cpu_probe_peak(p.type); };
  steps.describe = [&](run& r) { describe(p, r); };
  steps.check = [&](run& r) {
    if (hook)
      hook(s, buf);
    check_outputs(p, buf, r, ctx, seed);
  };
  measure::run_checked_kernel(out, p.key, k, ctx, steps);
}

} // namespace accelbench::attention
