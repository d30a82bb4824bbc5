// llama_cuda's forward pass, recipe by recipe, and the loss (llama_model::forward line by line).
#include "workloads/training/cuda/llama_cuda_impl.hpp"

namespace accelbench::training::cuda {

void llama_cuda::impl::forward_blocks32() {
  const auto [b, t, n, c, kv, f, nh, kvh, hd] = dims();
  const float eps = float(cfg.norm_eps);
  float* tmp = scr().dres; // [BT,C]; free during forward
  void* s = stream;
  if (opt.with_head)
    K::embedding_forward(res(0), inputs(), p_at(layout.tok_emb()), n, c, s);
  for (int64_t l = 0; l < z.layers; l++) {
    auto p = lp(params, l);
    auto a = la(l);
    const float* x = res(l);
    K::rmsnorm_forward(a.xn1, a.rstd1, x, p.attn_norm, n, c, eps, s);
    linear_forward(a.q, a.xn1, p.wq, c, c);
    linear_forward(a.k, a.xn1, p.wk, c, kv);
    linear_forward(a.v, a.xn1, p.wv, c, kv);
    K::rope(a.q, cos_table(), sin_table(), b, t, nh, hd, 1.0f, s);
    K::rope(a.k, cos_table(), sin_table(), b, t, kvh, hd, 1.0f, s);
    attention::native::forward(attn_shape(cfg, opt), forward_io(compute_dtype::fp32, a), s);
    linear_forward(tmp, a.att, p.wo, c, c);
    K::add(a.xmid, x, tmp, n * c, s);
    K::rmsnorm_forward(a.xn2, a.rstd2, a.xmid, p.mlp_norm, n, c, eps, s);
    linear_forward(a.h1, a.xn2, p.w1, c, f);
    linear_forward(a.h3, a.xn2, p.w3, c, f);
    K::swiglu_forward(a.g, a.h1, a.h3, n * f, s);
    linear_forward(tmp, a.g, p.w2, f, c);
    K::add(res(l + 1), a.xmid, tmp, n * c, s);
  }
}

// Every activation bf16, every cast inside a kernel or a GEMM's output type; the residual adds
// are the epilogues of the wo and w2 GEMMs.
void llama_cuda::impl::forward_blocks16() {
  const auto [b, t, n, c, kv, f, nh, kvh, hd] = dims();
  const float eps = float(cfg.norm_eps);
  void* s = stream;
  if (opt.with_head)
    K::embedding_forward_bf16(res16(0), inputs(), p_at(layout.tok_emb()), n, c, s);
  for (int64_t l = 0; l < z.layers; l++) {
    auto p = lp(params, l);
    auto a = la16(l);
    const uint16_t* x = res16(l);
    K::rmsnorm_forward_bf16(a.xn1, a.rstd1, x, p.attn_norm, n, c, eps, s);
    linear16_forward(a.q, a.xn1, p.wq, c, c);
    linear16_forward(a.k, a.xn1, p.wk, c, kv);
    linear16_forward(a.v, a.xn1, p.wv, c, kv);
    K::rope_bf16(a.q, cos_table(), sin_table(), b, t, nh, hd, 1.0f, s);
    K::rope_bf16(a.k, cos_table(), sin_table(), b, t, kvh, hd, 1.0f, s);
    attention16_forward(a);
    linear16_forward(a.xmid, a.att, p.wo, c, c, x);
    K::rmsnorm_forward_bf16(a.xn2, a.rstd2, a.xmid, p.mlp_norm, n, c, eps, s);
    linear16_forward(a.h1, a.xn2, p.w1, c, f);
    linear16_forward(a.h3, a.xn2, p.w3, c, f);
    K::swiglu_forward_bf16(a.g, a.h1, a.h3, n * f, s);
    linear16_forward(res16(l + 1), a.g, p.w2, f, c, a.xmid);
  }
}

// The loss of the forward just queued, * weight / BT, added to *loss_out on the device.
void llama_cuda::impl::forward_loss(float* loss_out, float weight) {
  const int64_t n = bt(), c = cfg.dim, v = cfg.vocab_size;
  const float eps = float(cfg.norm_eps);
  const size_t fn = layout.final_norm(), lm = layout.lm_head();
  void* s = stream;
  double* part = loss_partials.as<double>();
  if (!opt.with_head) {
    if (bf16)
      K::dot_partials_bf16(part, kPartials, res16(z.layers), probe(), n * c, s);
    else
      K::dot_partials(part, kPartials, res(z.layers), probe(), n * c, s);
  } else if (bf16) {
    K::rmsnorm_forward_bf16(xf16(), rstdf(), res16(z.layers), p_at(fn), n, c, eps, s);
    linear16_forward(logits16(), xf16(), p_at(lm), c, v);
    K::crossentropy_forward_bf16(logits16(), lse_rows(), row_losses(), targets(), n, v, s);
    K::sum_partials(part, kPartials, row_losses(), n, s);
  } else {
    float* xf = head.as<float>();
    float* rf = xf + n * c;
    float* logits = rf + n;
    float* losses = logits + n * v;
    K::rmsnorm_forward(xf, rf, res(z.layers), p_at(fn), n, c, eps, s);
    linear_forward(logits, xf, p_at(lm), c, v);
    K::softmax_crossentropy_forward(logits, losses, targets(), n, v, s);
    K::sum_partials(part, kPartials, losses, n, s);
  }
  K::accumulate_partials(loss_out, part, kPartials, double(weight) / double(n), s);
}

} // namespace accelbench::training::cuda
