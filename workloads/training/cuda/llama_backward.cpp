// llama_cuda's backward pass, recipe by recipe (llama_model::backward line by line).
#include <cstdint>

#include "workloads/training/cuda/llama_cuda_impl.hpp"

namespace accelbench::training::cuda {

void llama_cuda::impl::block_backward32(int64_t l, const backward_scratch& sc) {
  const auto [b, t, n, c, kv, f, nh, kvh, hd] = dims();
  void* s = stream;
  auto p = lp(params, l);
  auto gr = lp(grads, l);
  auto a = la(l);
  linear_backward(sc.dg, gr.w2, sc.dres, a.g, p.w2, f, c, false);
  K::swiglu_backward(sc.dh1, sc.dh3, sc.dg, a.h1, a.h3, n * f, s);
  linear_backward(sc.dxn, gr.w1, sc.dh1, a.xn2, p.w1, c, f, false);
  linear_backward(sc.dxn, gr.w3, sc.dh3, a.xn2, p.w3, c, f, true);
  K::rmsnorm_backward(sc.dres, gr.mlp_norm, sc.dxn, a.xmid, p.mlp_norm, a.rstd2, n, c, s);
  linear_backward(sc.datt, gr.wo, sc.dres, a.att, p.wo, c, c, false);
  attention::native::backward(attn_shape(cfg, opt), backward_io(compute_dtype::fp32, sc, a),
                              sc.delta, s);
  K::rope(sc.dq, cos_table(), sin_table(), b, t, nh, hd, -1.0f, s);
  K::rope(sc.dk, cos_table(), sin_table(), b, t, kvh, hd, -1.0f, s);
  linear_backward(sc.dxn, gr.wq, sc.dq, a.xn1, p.wq, c, c, false);
  linear_backward(sc.dxn, gr.wk, sc.dk, a.xn1, p.wk, c, kv, true);
  linear_backward(sc.dxn, gr.wv, sc.dv, a.xn1, p.wv, c, kv, true);
  K::rmsnorm_backward(sc.dres, gr.attn_norm, sc.dxn, res(l), p.attn_norm, a.rstd1, n, c, s);
}

void llama_cuda::impl::backward32(float dloss) {
  const int64_t n = bt(), c = cfg.dim, v = cfg.vocab_size;
  void* s = stream;
  const backward_scratch sc = scr();
  if (opt.with_head) {
    float* xf = head.as<float>();
    float* rf = xf + n * c;
    float* probs = rf + n;
    const size_t fn = layout.final_norm(), lm = layout.lm_head();
    K::crossentropy_softmax_backward(probs, targets(), n, v, dloss, s);
    linear_backward(sc.dxn, g_at(lm), probs, xf, p_at(lm), c, v, false);
    device::memset_async(sc.dres, 0, uint64_t(n * c) * 4, s);
    K::rmsnorm_backward(sc.dres, g_at(fn), sc.dxn, res(z.layers), p_at(fn), rf, n, c, s);
    grad_ready(fn);
  } else {
    K::scale(sc.dres, probe(), dloss, n * c, s);
  }
  for (int64_t l = z.layers - 1; l >= 0; l--) {
    block_backward32(l, sc);
    grad_ready(layout.block_offset(l));
  }
  if (opt.with_head)
    K::embedding_backward(g_at(layout.tok_emb()), sc.dres, inputs(), n, c, s);
  grad_ready(0);
}

void llama_cuda::impl::block_backward16(int64_t l, const scratch16& sc) {
  const auto [b, t, n, c, kv, f, nh, kvh, hd] = dims();
  void* s = stream;
  auto p = lp(params, l);
  auto gr = lp(grads, l);
  auto a = la16(l);
  linear16_backward(sc.dg, gr.w2, sc.dres, a.g, p.w2, f, c, false);
  K::swiglu_backward_bf16(sc.dh1, sc.dh3, sc.dg, a.h1, a.h3, n * f, s);
  linear16_backward(sc.dxn, gr.w1, sc.dh1, a.xn2, p.w1, c, f, false);
  linear16_backward(sc.dxn, gr.w3, sc.dh3, a.xn2, p.w3, c, f, true);
  K::rmsnorm_backward_bf16(sc.dres, gr.mlp_norm, sc.dxn, a.xmid, p.mlp_norm, a.rstd2, n, c, s);
  linear16_backward(sc.datt, gr.wo, sc.dres, a.att, p.wo, c, c, false);
  attention16_backward(sc, a);
  K::rope_bf16(sc.dq, cos_table(), sin_table(), b, t, nh, hd, -1.0f, s);
  K::rope_bf16(sc.dk, cos_table(), sin_table(), b, t, kvh, hd, -1.0f, s);
  linear16_backward(sc.dxn, gr.wq, sc.dq, a.xn1, p.wq, c, c, false);
  linear16_backward(sc.dxn, gr.wk, sc.dk, a.xn1, p.wk, c, kv, true);
  linear16_backward(sc.dxn, gr.wv, sc.dv, a.xn1, p.wv, c, kv, true);
  K::rmsnorm_backward_bf16(sc.dres, gr.attn_norm, sc.dxn, res16(l), p.attn_norm, a.rstd1, n, c, s);
}

void llama_cuda::impl::backward16(float dloss) {
  const int64_t n = bt(), c = cfg.dim, v = cfg.vocab_size;
  void* s = stream;
  const scratch16 sc = scr16();
  if (opt.with_head) {
    const size_t fn = layout.final_norm(), lm = layout.lm_head();
    K::crossentropy_backward_bf16(logits16(), lse_rows(), targets(), n, v, dloss, s);
    linear16_backward(sc.dxn, g_at(lm), logits16(), xf16(), p_at(lm), c, v, false);
    device::memset_async(sc.dres, 0, uint64_t(n * c) * 2, s);
    K::rmsnorm_backward_bf16(sc.dres, g_at(fn), sc.dxn, res16(z.layers), p_at(fn), rstdf(), n, c,
                             s);
    grad_ready(fn);
  } else {
    K::scale_to_bf16(sc.dres, probe(), dloss, n * c, s);
  }
  for (int64_t l = z.layers - 1; l >= 0; l--) {
    block_backward16(l, sc);
    grad_ready(layout.block_offset(l));
  }
  if (opt.with_head)
    K::embedding_backward_bf16(g_at(layout.tok_emb()), sc.dres, inputs(), n, c, s);
  grad_ready(0);
}

} // namespace accelbench::training::cuda
