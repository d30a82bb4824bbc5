#pragma once
// The inside of llama_cuda (llama_cuda.hpp), shared by its sources: the device arrays and how
// they are carved (llama_buffers.cpp), the forward pass (llama_forward.cpp), the backward pass
// (llama_backward.cpp), the optimizer step and the public calls (llama_cuda.cpp). Private to
// accelbench::training_cuda.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "harness/device/device.hpp"
#include "kernels/attention/cuda/attention_kernels.hpp"
#include "workloads/training/cuda/llama_cuda.hpp"
#include "workloads/training/cuda/llama_kernels.hpp"
#include "workloads/training/cuda/lt_gemm.hpp"
#include "workloads/training/llama_layout.hpp"

namespace accelbench::training::cuda {

namespace K = kernels;

constexpr int kPartials = 256;

inline attention::attention_shape attn_shape(const model_config& m, const llama_options& o) {
  return causal_attention_shape(o.batch, o.seq, m.n_heads, m.n_kv_heads, m.head_dim());
}

inline bool bf16_recipe(const llama_options& o) { return o.dtype == compute_dtype::bf16; }

// Bytes of every device array, in one place: the constructor allocates these and device_plan
// adds them up, so the estimate is the allocation. Recipe fp32: fp32 activations (llama.hpp's
// block_acts, llama_layout's backward scratch). Recipe bf16-mixed-v1: bf16 activations and
// activation gradients, fp32 statistics (rstd, lse), a bf16 copy of the weights.
struct sizes {
  int64_t bt = 0, layers = 0;
  uint64_t params = 0; // elements
  uint64_t block_acts =
      0; // bytes per layer: fp32 block_acts, or bf16 xn1 q k v att xmid xn2 h1 h3 g
  uint64_t block_stats = 0; // bytes per layer (bf16 recipe): fp32 rstd1 rstd2 [BT], lse [B*NH*T]
  uint64_t resid = 0;       // bytes: (layers + 1) * BT * C
  uint64_t head = 0;        // bytes: fp32 xf rstdf logits losses (or probe); bf16 xf logits
  uint64_t head_f32 = 0;    // bytes (bf16 recipe): rstdf lse losses [BT], probe [BT*C]
  uint64_t scratch = 0;     // bytes: backward_scratch (fp32 with delta), or bf16 copies + delta
  uint64_t rope = 0;        // bytes: cos, sin [T, HD/2]
  uint64_t params_bf16 = 0; // bytes (bf16 recipe)
};

// One block's saved activations in the bf16 recipe: bf16 tensors, fp32 statistics.
struct acts16 {
  uint16_t *xn1, *q, *k, *v, *att, *xmid, *xn2, *h1, *h3, *g;
  float *rstd1, *rstd2, *lse;
};
// The bf16 recipe's backward scratch (shared by all blocks) and the attention's delta.
struct scratch16 {
  uint16_t *dres, *dxn, *dq, *datt, *dk, *dv, *dh1, *dh3, *dg;
  float* delta;
};

// The attention's tensors of one block in either recipe: a, the block's saved activations
// (block_acts or acts16); s, the backward scratch (backward_scratch or scratch16).
template <class A> attention::attention_tensors forward_io(compute_dtype type, const A& a) {
  return {.type = type, .q = a.q, .k = a.k, .v = a.v, .o = a.att, .lse = a.lse};
}
template <class S, class A>
attention::attention_tensors backward_io(compute_dtype type, const S& s, const A& a) {
  return {.type = type,
          .q = a.q,
          .dq = s.dq,
          .k = a.k,
          .dk = s.dk,
          .v = a.v,
          .dv = s.dv,
          .o = a.att,
          .d_o = s.datt,
          .lse = a.lse};
}

struct llama_cuda::impl {
  int device = device::current_device(); // the device the model lives on
  model_config cfg;
  llama_options opt;
  sizes z;
  llama_layout layout;
  bool bf16;
  std::string attn, attn_note; // attn_note: why cuDNN was not used after all
  device::device_buffer params, grads, adam_m, adam_v, params_bf16, acts, stats, resid, head,
      head_f32, scratch, rope, loss_partials, norm_partials, tokens, scalars, log, chunks;
  int64_t chunk_count = 0, log_slots = 0;
  lt_gemm gemm;
  std::unique_ptr<attention::cudnn::sdpa_forward> sdpa_fwd;
  std::unique_ptr<attention::cudnn::sdpa_backward> sdpa_bwd;
  int64_t adam_t = 0;
  double pending_clip = 0; // clip_grad_norm's max_norm, applied by the next optimizer step
  bool have_forward = false;
  int64_t host_waits = 0;
  void* stream = nullptr;                    // the default stream
  std::function<void(size_t)> on_grad_ready; // data parallel: llama_cuda::set_grad_ready

  void grad_ready(size_t from_offset) {
    if (on_grad_ready)
      on_grad_ready(from_offset);
  }

  impl(const model_config& c, const llama_options& o);

  void make_attention();
  void upload_chunks();

  // Every wait of the host for the device goes through here or counts itself (host_waits).
  void wait(const char* what) {
    host_waits++;
    device::synchronize(what);
  }

  int64_t bt() const { return z.bt; }
  // The shapes every pass uses: batch, seq, tokens (B*T), width, K/V width, FFN width, heads,
  // K/V heads, head width.
  struct dims_t {
    int64_t b, t, n, c, kv, f, nh, kvh, hd;
  };
  dims_t dims() const {
    return {opt.batch,   opt.seq,     bt(),           cfg.dim,       cfg.kv_dim(),
            cfg.ffn_dim, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim()};
  }
  float* p_at(size_t offset) const { return params.as<float>() + offset; }
  float* g_at(size_t offset) const { return grads.as<float>() + offset; }
  block_tensors lp(const device::device_buffer& base, int64_t l) const {
    return layout.block(base.as<float>(), l);
  }
  const float* cos_table() const { return rope.as<float>(); }
  const float* sin_table() const { return rope.as<float>() + z.rope / 8; }
  int32_t* inputs() const { return tokens.as<int32_t>(); }
  int32_t* targets() const { return tokens.as<int32_t>() + bt(); }
  // The loss and gradient-norm slot `slot` of the step log; slot < 0: the synchronous calls' own.
  float* slot_at(int64_t slot) const {
    return slot < 0 ? scalars.as<float>() : log.as<float>() + 2 * slot;
  }

  // ---- recipe fp32: fp32 activations (llama.hpp's block_acts) ----
  backward_scratch scr() const { return layout.scratch(scratch.as<float>(), true); }
  block_acts la(int64_t l) const {
    return carve_block_acts(acts.as<float>() + l * (z.block_acts / 4), bt(), cfg);
  }
  float* res(int64_t l) const { return resid.as<float>() + l * bt() * cfg.dim; }

  // ---- recipe bf16-mixed-v1: bf16 activations ----
  acts16 la16(int64_t l) const;
  scratch16 scr16() const;
  uint16_t* res16(int64_t l) const { return resid.as<uint16_t>() + l * bt() * cfg.dim; }
  // head (bf16): xf [BT,C], logits [BT,V]; head_f32: rstdf lse losses [BT] (or the probe)
  uint16_t* xf16() const { return head.as<uint16_t>(); }
  uint16_t* logits16() const { return head.as<uint16_t>() + bt() * cfg.dim; }
  float* rstdf() const { return head_f32.as<float>(); }
  float* lse_rows() const { return head_f32.as<float>() + bt(); }
  float* row_losses() const { return head_f32.as<float>() + 2 * bt(); }
  float* probe() const { return bf16 ? head_f32.as<float>() : head.as<float>(); }

  // The bf16 copy of the parameter at `p`, written by the optimizer step.
  const uint16_t* weight_bf16(const float* p) const {
    return params_bf16.as<uint16_t>() + (p - params.as<float>());
  }
  void refresh_weights_bf16() {
    if (bf16)
      K::to_bf16(params_bf16.as<uint16_t>(), params.as<float>(), (int64_t)z.params, stream);
  }

  // Row-major D[M,N] = op(A) op(B) + beta C through the column-major library:
  // D^T = op(B)^T op(A)^T.
  void matmul_rm(bool ta, bool tb, int64_t mm, int64_t nn, int64_t kk, const void* a, int64_t lda,
                 const void* b, int64_t ldb, const void* c, void* d, int64_t ldc, float beta,
                 bool in_bf16, bool out_bf16) {
    gemm.run(tb, ta, nn, mm, kk, {b, ldb, a, lda, c, d, ldc, in_bf16, out_bf16}, beta, stream);
  }

  // fp32: out[BT,OC] = inp[BT,C] w[OC,C]^T
  void linear_forward(float* out, const float* inp, const float* w, int64_t c, int64_t oc) {
    matmul_rm(false, true, bt(), oc, c, inp, c, w, c, out, out, oc, 0.0f, false, false);
  }
  // fp32: dinp[BT,C] (= or +=) dout[BT,OC] w[OC,C];  dw[OC,C] += dout^T inp
  void linear_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                       int64_t c, int64_t oc, bool accumulate_dinp) {
    matmul_rm(false, false, bt(), c, oc, dout, oc, w, c, dinp, dinp, c,
              accumulate_dinp ? 1.0f : 0.0f, false, false);
    matmul_rm(true, false, oc, c, bt(), dout, oc, inp, c, dw, dw, c, 1.0f, false, false);
  }
  // bf16: out[BT,OC] = inp[BT,C] w16[OC,C]^T (+ residual[BT,OC], in the GEMM's epilogue)
  void linear16_forward(uint16_t* out, const uint16_t* inp, const float* w, int64_t c, int64_t oc,
                        const uint16_t* residual = nullptr) {
    matmul_rm(false, true, bt(), oc, c, inp, c, weight_bf16(w), c, residual ? residual : out, out,
              oc, residual ? 1.0f : 0.0f, true, true);
  }
  // bf16: dinp[BT,C] (= or +=) dout w16, bf16 out; dw[OC,C] += dout^T inp into the fp32
  // gradient (bf16 operands, fp32 output: the accumulation PyTorch does in .grad, fused).
  void linear16_backward(uint16_t* dinp, float* dw, const uint16_t* dout, const uint16_t* inp,
                         const float* w, int64_t c, int64_t oc, bool accumulate_dinp) {
    matmul_rm(false, false, bt(), c, oc, dout, oc, weight_bf16(w), c, dinp, dinp, c,
              accumulate_dinp ? 1.0f : 0.0f, true, true);
    matmul_rm(true, false, oc, c, bt(), dout, oc, inp, c, dw, dw, c, 1.0f, true, false);
  }

  void attention16_forward(const acts16& a) {
    const attention::attention_tensors io = forward_io(compute_dtype::bf16, a);
    if (attn == "cudnn")
      sdpa_fwd->run(io, stream);
    else
      attention::native::forward(attn_shape(cfg, opt), io, stream);
  }
  void attention16_backward(const scratch16& s, const acts16& a) {
    const attention::attention_tensors io = backward_io(compute_dtype::bf16, s, a);
    if (attn == "cudnn")
      sdpa_bwd->run(io, stream);
    else
      attention::native::backward(attn_shape(cfg, opt), io, s.delta, stream);
  }

  // The host's token ids, checked against the vocabulary.
  void check_tokens(const int32_t* inputs, const int32_t* targets) const;

  void forward_blocks32();
  void forward_blocks16();
  void forward_loss(float* loss_out, float weight);
  void backward32(float dloss);
  void block_backward32(int64_t l, const backward_scratch& sc);
  void backward16(float dloss);
  void block_backward16(int64_t l, const scratch16& sc);
  void optimizer(double lr, const adamw_config& c, const double* norm, double max_norm,
                 float* norm_out);
};

} // namespace accelbench::training::cuda
