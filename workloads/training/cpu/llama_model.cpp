#include "workloads/training/cpu/llama_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "workloads/training/llama_layout.hpp"

namespace accelbench::training {

namespace {

// Floats of the global (non-block) activations: the residual stream at every block boundary, and
// with the head the final norm, the logits/probabilities and per-token losses; blocks-only
// models keep a loss probe instead.
int64_t global_act_floats(const model_config& m, const llama_options& o, int64_t layers) {
  const int64_t bt = o.batch * o.seq;
  int64_t n = (layers + 1) * bt * m.dim;
  if (o.with_head)
    n += bt * m.dim + bt + bt * m.vocab_size + bt;
  else
    n += bt * m.dim;
  return n;
}

// The element-wise layers a model runs: the fast ones or the kept references (ops.hpp).
struct elementwise_ops {
  decltype(&rmsnorm_forward) norm_fwd;
  decltype(&rmsnorm_backward) norm_bwd;
  decltype(&swiglu_forward) glu_fwd;
  decltype(&swiglu_backward) glu_bwd;
};
elementwise_ops ops_for(const llama_options& o) {
  if (o.reference_ops)
    return {reference::rmsnorm_forward, reference::rmsnorm_backward, reference::swiglu_forward,
            reference::swiglu_backward};
  return {rmsnorm_forward, rmsnorm_backward, swiglu_forward, swiglu_backward};
}
} // namespace

memory_plan llama_model::plan(const model_config& cfg, const llama_options& opt) {
  const int64_t layers = resolved_layers(cfg, opt);
  const int64_t bt = opt.batch * opt.seq;
  const uint64_t p =
      uint64_t(opt.with_head ? cfg.total_params(layers) : layers * cfg.block_params());
  memory_plan mp;
  mp.params = p * 4;
  mp.grads = p * 4;
  mp.optimizer = p * 8; // AdamW first and second moments, fp32
  mp.activations =
      uint64_t(layers * block_act_floats(cfg, bt) + global_act_floats(cfg, opt, layers)) * 4;
  uint64_t scratch = uint64_t(llama_layout(cfg, opt).scratch_floats(false)) * 4;
  if (opt.dtype == compute_dtype::bf16) {
    // bf16 copies of the two matmul inputs, at most the largest activation and weight matrix.
    int64_t widest = std::max({cfg.dim, cfg.ffn_dim, opt.with_head ? cfg.vocab_size : 0});
    int64_t weight = widest * cfg.dim; // every weight matrix is [widest or less, C] or [C, F]
    scratch += uint64_t(bt * widest + std::max(weight, bt * widest)) * 2;
  }
  // The fused attention kernels' workspace (packed K/V, backward accumulators; grow-only, so the
  // backward's, which is the larger), the RoPE table, and a fixed allowance for oneDNN's
  // scratchpads and the runtime's own arenas.
  const auto as =
      causal_attention_shape(opt.batch, opt.seq, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim());
  scratch +=
      std::max(attention::forward_workspace_bytes(as), attention::backward_workspace_bytes(as));
  if (opt.dtype == compute_dtype::bf16) // the backward's bf16 copies: Q, O, dO, dQ; K, V, dK, dV
    scratch += uint64_t(bt * 4 * (cfg.dim + cfg.n_kv_heads * cfg.head_dim())) * 2;
  scratch += uint64_t(opt.seq * cfg.head_dim()) * 4 + (64ull << 20);
  mp.scratch = scratch;
  return mp;
}

llama_model::llama_model(const model_config& cfg, const llama_options& opt)
    : m_cfg(cfg), m_opt(opt), m_layers(resolved_layers(cfg, opt)) {
  cfg.validate();
  if (opt.batch <= 0 || opt.seq <= 0)
    throw input_error("train.llama: batch and seq must be positive, got batch " +
                      std::to_string(opt.batch) + ", seq " + std::to_string(opt.seq));
  m_layout = std::make_unique<const llama_layout>(cfg, opt);
  m_num_params = m_layout->num_params();
  const int64_t bt = opt.batch * opt.seq;
  m_acts_floats =
      size_t(m_layers * block_act_floats(cfg, bt) + global_act_floats(cfg, opt, m_layers));
  m_scratch_floats = m_layout->scratch_floats(false);
  // new float[] without value-initialisation: pages are touched when first written.
  m_params.reset(new float[m_num_params]);
  m_grads.reset(new float[m_num_params]);
  m_acts.reset(new float[m_acts_floats]);
  m_scratch.reset(new float[m_scratch_floats]);
  std::memset(m_acts.get(), 0, m_acts_floats * sizeof(float));
  std::memset(m_scratch.get(), 0, m_scratch_floats * sizeof(float));
  zero_grad();
  m_rope = make_rope_table(opt.seq, cfg.head_dim(), cfg.rope_theta);
  m_inputs.resize(size_t(bt));
  m_targets.resize(size_t(bt));
  // The attention kernels' workspace is part of the plan above: taken now, not at the first step.
  attention::reserve_workspace(
      causal_attention_shape(opt.batch, opt.seq, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim()));
}

llama_model::~llama_model() = default;

const std::vector<param_tensor>& llama_model::tensors() const { return m_layout->tensors(); }

const param_tensor& llama_model::tensor(const std::string& name) const {
  for (auto& t : m_layout->tensors())
    if (t.name == name)
      return t;
  throw input_error("train.llama: no parameter tensor named '" + name + "'");
}

block_acts llama_model::la(int64_t l) const {
  const int64_t bt = m_opt.batch * m_opt.seq;
  return carve_block_acts(m_acts.get() + size_t(l * block_act_floats(m_cfg, bt)), bt, m_cfg);
}

void llama_model::init_parameters(uint64_t seed) {
  float* x0 = nullptr;
  float* probe = nullptr;
  const int64_t n = m_opt.batch * m_opt.seq * m_cfg.dim;
  if (!m_opt.with_head) {
    // Fixed input residual stream and loss probe for blocks-only models.
    x0 = m_acts.get() + size_t(m_layers * block_act_floats(m_cfg, m_opt.batch * m_opt.seq));
    probe = x0 + (m_layers + 1) * n;
  }
  init_parameter_values(m_cfg, m_layout->tensors(), seed, m_params.get(), x0, probe, n);
  m_have_forward = false;
}

void llama_model::zero_grad() { std::memset(m_grads.get(), 0, m_num_params * sizeof(float)); }

float llama_model::forward(const int32_t* inputs, const int32_t* targets) {
  const int64_t b = m_opt.batch, t = m_opt.seq, bt = b * t, c = m_cfg.dim, kv = m_cfg.kv_dim(),
                f = m_cfg.ffn_dim, v = m_cfg.vocab_size, nh = m_cfg.n_heads, kvh = m_cfg.n_kv_heads,
                hd = m_cfg.head_dim();
  const compute_dtype dt = m_opt.dtype;
  const float eps = float(m_cfg.norm_eps);
  const elementwise_ops ops = ops_for(m_opt);
  float* g = m_acts.get() + size_t(m_layers * block_act_floats(m_cfg, bt));
  auto res = [&](int64_t l) { return g + l * bt * c; };
  float* tmp = m_layout->scratch(m_scratch.get(), false).dres; // [BT,C]; free during forward

  if (m_opt.with_head) {
    for (int64_t i = 0; i < bt; i++) {
      if (inputs[i] < 0 || inputs[i] >= v || targets[i] < 0 || targets[i] >= v)
        throw input_error("train.llama: token id " +
                          std::to_string(inputs[i] < 0 || inputs[i] >= v ? inputs[i] : targets[i]) +
                          " is outside the vocabulary of " + std::to_string(v) + " tokens");
    }
    std::copy(inputs, inputs + bt, m_inputs.begin());
    std::copy(targets, targets + bt, m_targets.begin());
    embedding_forward(res(0), inputs, m_params.get() + m_layout->tok_emb(), bt, c);
  }

  for (int64_t l = 0; l < m_layers; l++) {
    block_tensors p = m_layout->block(m_params.get(), l);
    block_acts a = la(l);
    const float* x = res(l);
    ops.norm_fwd(a.xn1, a.rstd1, x, p.attn_norm, bt, c, eps);
    linear_forward(dt, a.q, a.xn1, p.wq, bt, c, c);
    linear_forward(dt, a.k, a.xn1, p.wk, bt, c, kv);
    linear_forward(dt, a.v, a.xn1, p.wv, bt, c, kv);
    rope_forward(a.q, m_rope, b, t, nh, hd);
    rope_forward(a.k, m_rope, b, t, kvh, hd);
    attention_forward(dt, causal_attention_shape(b, t, nh, kvh, hd),
                      {.q = a.q, .k = a.k, .v = a.v, .out = a.att, .lse = a.lse});
    linear_forward(dt, tmp, a.att, p.wo, bt, c, c);
    residual_forward(a.xmid, x, tmp, bt * c);
    ops.norm_fwd(a.xn2, a.rstd2, a.xmid, p.mlp_norm, bt, c, eps);
    linear_forward(dt, a.h1, a.xn2, p.w1, bt, c, f);
    linear_forward(dt, a.h3, a.xn2, p.w3, bt, c, f);
    ops.glu_fwd(a.g, a.h1, a.h3, bt * f);
    linear_forward(dt, tmp, a.g, p.w2, bt, f, c);
    residual_forward(res(l + 1), a.xmid, tmp, bt * c);
  }

  double loss = 0;
  if (m_opt.with_head) {
    float* xf = res(m_layers + 1);
    float* rstdf = xf + bt * c;
    float* logits = rstdf + bt;
    float* losses = logits + bt * v;
    const float* final_norm = m_params.get() + m_layout->final_norm();
    const float* lm_head = m_params.get() + m_layout->lm_head();
    ops.norm_fwd(xf, rstdf, res(m_layers), final_norm, bt, c, eps);
    linear_forward(dt, logits, xf, lm_head, bt, c, v);
    softmax_crossentropy_forward(logits, losses, targets, bt, v);
    for (int64_t i = 0; i < bt; i++)
      loss += losses[i]; // serial: deterministic
  } else {
    const float* xl = res(m_layers);
    const float* probe = res(m_layers + 1);
    for (int64_t i = 0; i < bt * c; i++)
      loss += double(xl[i]) * probe[i];
  }
  m_have_forward = true;
  return float(loss / double(bt));
}

void llama_model::backward(float loss_scale) {
  if (!m_have_forward)
    throw error("train.llama: backward() called without a forward()");
  const int64_t b = m_opt.batch, t = m_opt.seq, bt = b * t, c = m_cfg.dim, kv = m_cfg.kv_dim(),
                f = m_cfg.ffn_dim, v = m_cfg.vocab_size, nh = m_cfg.n_heads, kvh = m_cfg.n_kv_heads,
                hd = m_cfg.head_dim();
  const compute_dtype dt = m_opt.dtype;
  const elementwise_ops ops = ops_for(m_opt);
  float* g = m_acts.get() + size_t(m_layers * block_act_floats(m_cfg, bt));
  auto res = [&](int64_t l) { return g + l * bt * c; };
  const llama_layout& L = *m_layout;
  const backward_scratch sc = L.scratch(m_scratch.get(), false);
  float *dres = sc.dres, *dxn = sc.dxn, *dq = sc.dq, *datt = sc.datt, *dk = sc.dk, *dv = sc.dv,
        *dh1 = sc.dh1, *dh3 = sc.dh3, *dg = sc.dg;
  const float dloss = loss_scale / float(bt); // the loss is a mean over B*T tokens

  if (m_opt.with_head) {
    float* xf = res(m_layers + 1);
    float* rstdf = xf + bt * c;
    float* probs = rstdf + bt;
    const float* final_norm = m_params.get() + L.final_norm();
    const float* lm_head = m_params.get() + L.lm_head();
    float* d_final_norm = m_grads.get() + L.final_norm();
    float* d_lm_head = m_grads.get() + L.lm_head();
    crossentropy_softmax_backward(probs, m_targets.data(), bt, v, dloss);
    linear_backward(dt, dxn, d_lm_head, probs, xf, lm_head, bt, c, v, false);
    std::memset(dres, 0, size_t(bt * c) * sizeof(float));
    ops.norm_bwd(dres, d_final_norm, dxn, res(m_layers), final_norm, rstdf, bt, c);
    if (m_grad_ready)
      m_grad_ready(L.final_norm());
  } else {
    const float* probe = res(m_layers + 1);
    for (int64_t i = 0; i < bt * c; i++)
      dres[i] = probe[i] * dloss;
  }

  for (int64_t l = m_layers - 1; l >= 0; l--) {
    block_tensors p = L.block(m_params.get(), l);
    block_tensors gr = L.block(m_grads.get(), l);
    block_acts a = la(l);
    // MLP: out = xmid + swiglu(xn2 W1^T, xn2 W3^T) W2^T
    linear_backward(dt, dg, gr.w2, dres, a.g, p.w2, bt, f, c, false);
    ops.glu_bwd(dh1, dh3, dg, a.h1, a.h3, bt * f);
    linear_backward(dt, dxn, gr.w1, dh1, a.xn2, p.w1, bt, c, f, false);
    linear_backward(dt, dxn, gr.w3, dh3, a.xn2, p.w3, bt, c, f, true);
    ops.norm_bwd(dres, gr.mlp_norm, dxn, a.xmid, p.mlp_norm, a.rstd2, bt, c);
    // attention: xmid = x + attention(rope(xn1 Wq^T), rope(xn1 Wk^T), xn1 Wv^T) Wo^T
    linear_backward(dt, datt, gr.wo, dres, a.att, p.wo, bt, c, c, false);
    attention_backward(dt, causal_attention_shape(b, t, nh, kvh, hd),
                       {.q = a.q,
                        .dq = dq,
                        .k = a.k,
                        .dk = dk,
                        .v = a.v,
                        .dv = dv,
                        .out = a.att,
                        .dout = datt,
                        .lse = a.lse});
    rope_backward(dq, m_rope, b, t, nh, hd);
    rope_backward(dk, m_rope, b, t, kvh, hd);
    linear_backward(dt, dxn, gr.wq, dq, a.xn1, p.wq, bt, c, c, false);
    linear_backward(dt, dxn, gr.wk, dk, a.xn1, p.wk, bt, c, kv, true);
    linear_backward(dt, dxn, gr.wv, dv, a.xn1, p.wv, bt, c, kv, true);
    ops.norm_bwd(dres, gr.attn_norm, dxn, res(l), p.attn_norm, a.rstd1, bt, c);
    if (m_grad_ready)
      m_grad_ready(L.block_offset(l));
  }

  if (m_opt.with_head)
    embedding_backward(m_grads.get() + L.tok_emb(), dres, m_inputs.data(), bt, c);
  if (m_grad_ready)
    m_grad_ready(0);
  // The probabilities were turned into dlogits in place: a second backward needs a new forward.
  m_have_forward = false;
}

} // namespace accelbench::training
