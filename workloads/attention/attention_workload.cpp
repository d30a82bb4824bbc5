#include "workloads/attention/attention_workload.hpp"
#include "harness/core/hash.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/checked_math.hpp"
#include "harness/core/error.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/stats.hpp"
#include "harness/measure/measure.hpp"
#ifdef ACCELBENCH_HAVE_CUDA
#include "workloads/attention/cuda/attention_cuda.hpp"
#endif
#include "workloads/attention/attention_check.hpp"
#include "workloads/attention/cpu/flash_kernels.hpp"

namespace accelbench::attention {

pass_kind pass_from_string(const std::string& s) {
  if (s == "fwd")
    return pass_kind::fwd;
  if (s == "bwd")
    return pass_kind::bwd;
  if (s == "fwd_bwd")
    return pass_kind::fwd_bwd;
  throw input_error(fmt::format("parameter pass = '{}' is not one of fwd, bwd, fwd_bwd", s));
}

attention_shape shape_of(const config& cfg) {
  attention_shape s;
  s.batch = cfg.get_int("batch");
  s.heads = cfg.get_int("heads");
  s.kv_heads = cfg.get_int("kv_heads");
  if (s.kv_heads == 0)
    s.kv_heads = s.heads;
  s.seq_q = cfg.get_int("seq_q");
  s.seq_k = cfg.get_int("seq_k");
  if (s.seq_k == 0)
    s.seq_k = s.seq_q;
  s.head_dim = cfg.get_int("head_dim");
  s.causal = cfg.get_bool("causal");
  s.scale = float(cfg.get_number("scale"));
  return s;
}

double attention_flops(const attention_shape& s, pass_kind p) {
  switch (p) {
  case pass_kind::fwd:
    return attention_forward_flops(s);
  case pass_kind::bwd:
    return attention_backward_flops(s);
  default:
    return attention_forward_flops(s) + attention_backward_flops(s);
  }
}

namespace {

// Largest head_dim accepted: the kernels handle any size (head_dim is zero-padded to 16), but the
// per-thread tiles grow with it; 512 covers every production model (most use 64..256).
constexpr int64_t k_max_head_dim = 512;

// Largest q or k/v tensor accepted (2^40 elements, 4 TiB in fp32): bigger fits no host or device,
// and bounding it keeps every size computed from the shape far inside 64 bits.
constexpr uint64_t k_max_tensor_elems = uint64_t{1} << 40;

uint64_t seed_of(const std::string& key) { // FNV-1a 64, as the GEMM workload seeds its inputs
  return fnv1a64(key);
}

bool needs_backward(pass_kind p) { return p != pass_kind::fwd; }

int64_t q_elems(const attention_shape& s) { return s.batch * s.seq_q * s.heads * s.head_dim; }
int64_t k_elems(const attention_shape& s) { return s.batch * s.seq_k * s.kv_heads * s.head_dim; }

// Standard normal inputs: with the 1/sqrt(head_dim) scale, scores are ~N(0, 1), a realistic
// softmax (neither uniform nor one-hot), so errors in either the max or the sum show.
void fill(std::vector<float>& x, int64_t n, stats::rng& g) {
  x.resize(size_t(n));
  for (float& e : x)
    e = float(g.normal());
}

attention_buffers make_buffers(const attention_shape& s, pass_kind p, bool bf16, uint64_t seed) {
  attention_buffers b;
  b.bf16 = bf16;
  stats::rng g(seed);
  const int64_t nq = q_elems(s), nk = k_elems(s);
  std::vector<float> q, k, v, d_o;
  fill(q, nq, g);
  fill(k, nk, g);
  fill(v, nk, g);
  if (needs_backward(p))
    fill(d_o, nq, g);
  b.lse.assign(size_t(s.batch * s.heads * s.seq_q), 0.f);
  if (!bf16) {
    b.q = std::move(q);
    b.k = std::move(k);
    b.v = std::move(v);
    b.d_o = std::move(d_o);
    b.o.assign(size_t(nq), 0.f);
    if (needs_backward(p)) {
      b.dq.assign(size_t(nq), 0.f);
      b.dk.assign(size_t(nk), 0.f);
      b.dv.assign(size_t(nk), 0.f);
    }
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
  b.o16.assign(size_t(nq), 0);
  if (needs_backward(p)) {
    b.dq16.assign(size_t(nq), 0);
    b.dk16.assign(size_t(nk), 0);
    b.dv16.assign(size_t(nk), 0);
  }
  return b;
}

void run_forward(const attention_shape& s, attention_buffers& b) {
  if (b.bf16)
    flash_forward_bf16(s, b.q16.data(), b.k16.data(), b.v16.data(), b.o16.data(), b.lse.data());
  else
    flash_forward(s, b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data());
}

void run_backward(const attention_shape& s, attention_buffers& b) {
  if (b.bf16)
    flash_backward_bf16(s, b.q16.data(), b.k16.data(), b.v16.data(), b.o16.data(), b.do16.data(),
                        b.lse.data(), b.dq16.data(), b.dk16.data(), b.dv16.data());
  else
    flash_backward(s, b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.d_o.data(), b.lse.data(),
                   b.dq.data(), b.dk.data(), b.dv.data());
}

class attention_kernel : public measure::kernel {
public:
  attention_kernel(const attention_shape& s, pass_kind p, attention_buffers& b)
      : m_shape(s), m_pass(p), m_buf(b) {}
  void run() override {
    if (m_pass != pass_kind::bwd)
      run_forward(m_shape, m_buf);
    if (m_pass != pass_kind::fwd)
      run_backward(m_shape, m_buf);
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
  if (!b.bf16) {
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

class attention_workload : public workload {
public:
  explicit attention_workload(output_hook hook) : m_hook(std::move(hook)) {
    m_spec.name = "attention";
    m_spec.family = "kernel";
    m_spec.description =
        "Scaled dot-product attention softmax(Q K^T * scale) V, fused (FlashAttention-2); "
        "FLOPs 4*batch*heads*head_dim per unmasked (query, key) pair (seq_q*seq_k, fewer when "
        "causal); bwd x2.5, fwd_bwd x3.5";
    m_spec.backends = {"cpu"};
    m_spec.default_ruleset = "kernel-v1";
    m_spec.primary_metric = "tflops";
    m_spec.axes = {
        {"batch", axis_type::integer, "1", {}, 1, "sequences per batch"},
        {"heads", axis_type::integer, "16", {}, 1, "query heads"},
        {"kv_heads",
         axis_type::integer,
         "0",
         {},
         0,
         "key/value heads (grouped-query attention); heads must be a multiple; 0 = heads"},
        {"seq_q", axis_type::integer, "2048", {}, 1, "query length"},
        {"seq_k", axis_type::integer, "0", {}, 0, "key/value length; 0 = seq_q"},
        {"head_dim", axis_type::integer, "128", {}, 1, "head dimension (1..512)"},
        {"causal",
         axis_type::boolean,
         "0",
         {},
         0,
         "causal mask, bottom-right aligned when seq_q != seq_k (FlashAttention >= 2.1)"},
        {"dtype",
         axis_type::string,
         "fp32",
         {"fp32", "bf16"},
         1,
         "storage type of Q, K, V, O and gradients; math is fp32 for both"},
        {"pass",
         axis_type::string,
         "fwd",
         {"fwd", "bwd", "fwd_bwd"},
         1,
         "timed passes: forward, backward (given O and lse), or both"},
        {"scale", axis_type::number, "0", {}, 0, "softmax scale; 0 = 1/sqrt(head_dim)"},
        {"impl",
         axis_type::string,
         "auto",
         {"auto", "native", "cudnn"},
         1,
         "implementation: native (our fused kernel: CPU, or the FlashAttention-2-style CUDA "
         "kernel), "
         "cudnn (cuDNN fused SDPA, cuda only); auto = cudnn on cuda, native on cpu"},
    };
#ifdef ACCELBENCH_HAVE_CUDA
    m_spec.backends.push_back("cuda");
#endif
  }

  const workload_spec& spec() const override { return m_spec; }

  void normalize(config& cfg) const override {
    if (cfg.values.count("impl") && cfg.values["impl"] == "auto")
      cfg.values["impl"] = cfg.backend == "cuda" ? "cudnn" : "native";
    if (cfg.values.count("kv_heads") && cfg.values["kv_heads"] == "0")
      cfg.values["kv_heads"] = cfg.values["heads"];
    if (cfg.values.count("seq_k") && cfg.values["seq_k"] == "0")
      cfg.values["seq_k"] = cfg.values["seq_q"];
  }

  void validate(const config& cfg) const override {
    const attention_shape s = shape_of(cfg);
    for (auto [name, v] : {std::pair{"batch", s.batch},
                           {"heads", s.heads},
                           {"seq_q", s.seq_q},
                           {"head_dim", s.head_dim}})
      if (v <= 0)
        throw input_error(fmt::format("parameter {} = {} must be at least 1", name, v));
    if (s.kv_heads < 0)
      throw input_error(
          fmt::format("parameter kv_heads = {} must be >= 0 (0 = heads)", s.kv_heads));
    if (s.seq_k < 0)
      throw input_error(fmt::format("parameter seq_k = {} must be >= 0 (0 = seq_q)", s.seq_k));
    if (s.heads % s.kv_heads != 0)
      throw input_error(fmt::format("parameter heads = {} is not a multiple of kv_heads = {}",
                                    s.heads, s.kv_heads));
    if (s.head_dim > k_max_head_dim)
      throw input_error(fmt::format("parameter head_dim = {} is above the supported {}", s.head_dim,
                                    k_max_head_dim));
    // The kernels, their workspace layouts and the memory estimates count elements in 64 bits;
    // a shape beyond any memory is refused before any of them multiplies it out.
    const uint64_t q = sat_product({s.batch, s.seq_q, s.heads, s.head_dim});
    const uint64_t k = sat_product({s.batch, s.seq_k, s.kv_heads, s.head_dim});
    if (std::max(q, k) > k_max_tensor_elems)
      throw input_error(fmt::format("batch x seq x heads x head_dim = {} elements per tensor, more "
                                    "than the {} any memory holds",
                                    std::max(q, k) == k_saturated ? std::string("over 2^64")
                                                                  : std::to_string(std::max(q, k)),
                                    k_max_tensor_elems));
    if (!(s.scale >= 0) || !std::isfinite(s.scale))
      throw input_error(
          fmt::format("parameter scale = {} must be >= 0 (0 = 1/sqrt(head_dim))", cfg.at("scale")));
    pass_from_string(cfg.at("pass"));
  }

  std::string unavailable_reason(const config& cfg) const override {
#ifdef ACCELBENCH_HAVE_CUDA
    if (cfg.backend == "cuda")
      return attention_cuda_unavailable_reason(cfg);
#endif
    if (cfg.values.count("impl") && cfg.at("impl") == "cudnn")
      return "impl cudnn needs --backend cuda";
    return {};
  }

  uint64_t estimate_host_bytes(const config& cfg) const override {
    const attention_shape s = shape_of(cfg);
    const pass_kind p = pass_from_string(cfg.at("pass"));
    const bool bf16 = cfg.at("dtype") == "bf16";
    // validate() bounds every tensor to 2^40 elements, so these sums stay far inside 64 bits.
    const uint64_t nq = uint64_t(q_elems(s)), nk = uint64_t(k_elems(s));
    const uint64_t el = bf16 ? 2 : 4;
    uint64_t tensors = 2 * nq + 2 * nk; // q, o, k, v
    if (needs_backward(p))
      tensors += 2 * nq + 2 * nk; // d_o, dq, dk, dv
    uint64_t bytes = tensors * el + uint64_t(s.batch * s.heads * s.seq_q) * 4;
    bytes += needs_backward(p) ? backward_workspace_bytes(s) : forward_workspace_bytes(s);
    if (bf16)
      bytes += tensors * 4; // fp32 copies for the correctness check
    return bytes;
  }

  void execute(const config& cfg, run& out, run_context& ctx) override {
#ifdef ACCELBENCH_HAVE_CUDA
    if (cfg.backend == "cuda")
      return attention_cuda_execute(cfg, out, ctx);
#endif
    const attention_shape s = shape_of(cfg);
    const pass_kind p = pass_from_string(cfg.at("pass"));
    const std::string dtype = cfg.at("dtype");
    const uint64_t seed = seed_of(cfg.key());
    attention_buffers buf = make_buffers(s, p, dtype == "bf16", seed);
    // The backward consumes the forward's O and lse: computed once, outside the timed region.
    if (p == pass_kind::bwd)
      run_forward(s, buf);

    attention_kernel k(s, p, buf);
    const measurement_settings m = ctx.rules->measurement();
    if (!measure::measure_into(out, cfg.key(), k, m))
      return;
    const double flops = attention_flops(s, p);
    out.extra["flops_per_iteration"] = flops;
    out.extra["implementation"] = fmt::format("accelbench flash-attention-2 cpu ({}, tiles {}x{})",
                                              kernel_isa(), detail::tile_q, detail::tile_k);
    out.extra["flop_convention"] = k_flop_convention;
    out.extra["resolved"] = {
        {"kv_heads", s.kv_heads}, {"seq_k", s.seq_k}, {"scale", s.effective_scale()}};

    std::vector<double> t;
    for (const sample& smp : out.samples)
      t.push_back(smp.value);
    const stats::summary sum = stats::summarize(t);
    const cpu_peak peak = cached_cpu_peak();
    const double tflops = flops / sum.median / 1e12;
    const double pk = peak_tflops_for(peak, dtype);
    out.add_metric("time", sum.median, "s", direction::lower_is_better);
    out.add_metric("tflops", tflops, "TFLOP/s", direction::higher_is_better);
    out.add_metric("tflops_ci_low", flops / sum.ci_high / 1e12, "TFLOP/s",
                   direction::higher_is_better);
    out.add_metric("tflops_ci_high", flops / sum.ci_low / 1e12, "TFLOP/s",
                   direction::higher_is_better);
    out.add_metric("pct_of_peak", pk > 0 ? 100.0 * tflops / pk : 0.0, "%",
                   direction::higher_is_better);
    out.add_metric("cv", sum.cv, "", direction::lower_is_better);
    out.extra["peak"] = {{"tflops", pk},
                         {"dtype", dtype},
                         {"source", "accelbench FMA probe"},
                         {"probe", peak.to_json()}};

    if (m_hook)
      m_hook(s, buf);
    check_options opt;
    opt.tolerance = ctx.rules->tolerance(dtype);
    // The ruleset counts sampled output elements; a sampled row holds head_dim of them.
    opt.sample_rows =
        std::max<int64_t>(8, (ctx.rules->correctness_samples() + s.head_dim - 1) / s.head_dim);
    opt.seed = seed;
    const float_views f = views_of(buf);
    check_result all = check_forward(s, f.q, f.k, f.v, f.o, buf.lse.data(), opt);
    json detail = {{"forward", all.to_json()}};
    if (needs_backward(p)) {
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

private:
  workload_spec m_spec;
  output_hook m_hook;
};

} // namespace

std::unique_ptr<workload> make_attention_workload(output_hook hook) {
  return std::make_unique<attention_workload>(std::move(hook));
}

void register_attention(registry& reg) { reg.add(make_attention_workload()); }

} // namespace accelbench::attention
