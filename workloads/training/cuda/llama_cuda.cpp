// train.llama on the GPU: the model (llama_cuda.hpp), its cuBLASLt matmuls and the training step,
// in two recipes (recipe_name): fp32, and bf16-mixed-v1. The forward and backward passes follow
// llama_model::forward/backward line by line.
#include "workloads/training/cuda/llama_cuda.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "kernels/attention/cuda/attention_kernels.hpp"
#include "workloads/training/cuda/llama_kernels.hpp"
#include "workloads/training/llama_layout.hpp"

namespace accelbench::training::cuda {

namespace {

namespace K = kernels;

constexpr uint64_t kLtWorkspace = 32ull << 20;
constexpr int kPartials = 256;
constexpr int64_t kNativeMaxHeadDim = 256; // flash_native.cu's register tiles

attention::attention_shape attn_shape(const model_config& m, const llama_options& o) {
  return causal_attention_shape(o.batch, o.seq, m.n_heads, m.n_kv_heads, m.head_dim());
}

bool bf16_recipe(const llama_options& o) { return o.dtype == compute_dtype::bf16; }

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

// The bf16 recipe's per-layer bf16 activations, per token.
uint64_t acts16_per_token(const model_config& m) {
  return uint64_t(5 * m.dim + 2 * m.kv_dim() + 3 * m.ffn_dim);
}
// The bf16 recipe's backward scratch, per token: dres dxn dq datt [C], dk dv [KV], dh1 dh3 dg [F].
uint64_t scratch16_per_token(const model_config& m) {
  return uint64_t(4 * m.dim + 2 * m.kv_dim() + 3 * m.ffn_dim);
}

// The bf16 scratch's bytes, rounded up to 256 so that the fp32 delta after it is aligned.
uint64_t scratch16_bytes(const model_config& m, uint64_t bt) {
  return (bt * scratch16_per_token(m) * 2 + 255) / 256 * 256;
}

sizes sizes_of(const model_config& m, const llama_options& o) {
  sizes z;
  z.layers = resolved_layers(m, o);
  z.bt = o.batch * o.seq;
  const llama_layout layout(m, o);
  z.params = layout.num_params();
  const uint64_t bt = z.bt, c = m.dim, v = m.vocab_size;
  const uint64_t delta = uint64_t(o.batch * m.n_heads * o.seq);
  z.rope = 2 * uint64_t(o.seq * (m.head_dim() / 2)) * 4;
  if (!bf16_recipe(o)) {
    z.block_acts = uint64_t(block_act_floats(m, z.bt)) * 4;
    z.resid = (z.layers + 1) * bt * c * 4;
    z.head = (o.with_head ? bt * c + bt + bt * v + bt : bt * c) * 4;
    z.scratch = layout.scratch_floats(true) * 4;
    return z;
  }
  z.block_acts = (bt * acts16_per_token(m) * 2 + 255) / 256 * 256; // each layer 256-byte aligned
  z.block_stats = (2 * bt + delta) * 4;
  z.resid = (z.layers + 1) * bt * c * 2;
  z.head = o.with_head ? (bt * c + bt * v) * 2 : 0;
  z.head_f32 = (o.with_head ? 3 * bt : bt * c) * 4;
  z.scratch = scratch16_bytes(m, bt) + delta * 4;
  z.params_bf16 = z.params * 2;
  return z;
}

void check_lt(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw backend_error(fmt::format("cuBLASLt {} failed (status {})", what, (int)s));
}

// Column-major cuBLASLt matmuls, D[m,n] = op(A)[m,k] op(B)[k,n] + beta C (C and D the same
// type and layout; C may be D), fp32 accumulation (CUBLAS_COMPUTE_32F, no TF32). A and B fp32
// or bf16; C and D fp32 or bf16. One descriptor set and heuristic choice per shape, cached.
class lt_gemm {
public:
  lt_gemm() : m_ws(kLtWorkspace) { check_lt(cublasLtCreate(&m_h), "create"); }
  ~lt_gemm() {
    for (auto& [k, p] : m_plans) {
      cublasLtMatrixLayoutDestroy(p.a);
      cublasLtMatrixLayoutDestroy(p.b);
      cublasLtMatrixLayoutDestroy(p.c);
      cublasLtMatmulDescDestroy(p.d);
    }
    if (m_h)
      cublasLtDestroy(m_h);
  }
  lt_gemm(const lt_gemm&) = delete;
  lt_gemm& operator=(const lt_gemm&) = delete;

  struct operands {
    const void* a;
    int64_t lda;
    const void* b;
    int64_t ldb;
    const void* c; // read when beta != 0
    void* d;
    int64_t ldc;
    bool in_bf16, out_bf16;
  };
  void run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const operands& o, float beta,
           void* stream) {
    // The heuristic assumes 256-byte aligned operands unless told otherwise: tell it the truth
    // (a pointer into a tensor need not be), and keep one plan per alignment.
    const int align = std::min({alignment(o.a), alignment(o.b), alignment(o.c), alignment(o.d)});
    const key_t key{ta, tb, m, n, k, o.lda, o.ldb, o.ldc, o.in_bf16, o.out_bf16, align};
    auto it = m_plans.find(key);
    if (it == m_plans.end())
      it = m_plans.emplace(key, make_plan(key)).first;
    const plan& p = it->second;
    const float alpha = 1.0f;
    check_lt(cublasLtMatmul(m_h, p.d, &alpha, o.a, p.a, o.b, p.b, &beta, o.c, p.c, o.d, p.c,
                            &p.algo, m_ws.get(), kLtWorkspace, static_cast<cudaStream_t>(stream)),
             fmt::format("matmul m={} n={} k={}", m, n, k));
  }

private:
  using key_t =
      std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, int>;
  static int alignment(const void* p) {
    if (!p)
      return 256;
    const auto v = reinterpret_cast<uintptr_t>(p);
    int a = 256;
    while (a > 1 && v % uintptr_t(a) != 0)
      a /= 2;
    return a;
  }
  struct plan {
    cublasLtMatmulDesc_t d = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  plan make_plan(const key_t& key) {
    plan p;
    try {
      fill_plan(key, p);
    } catch (...) { // release what was created before the failure
      if (p.a)
        cublasLtMatrixLayoutDestroy(p.a);
      if (p.b)
        cublasLtMatrixLayoutDestroy(p.b);
      if (p.c)
        cublasLtMatrixLayoutDestroy(p.c);
      if (p.d)
        cublasLtMatmulDescDestroy(p.d);
      throw;
    }
    return p;
  }
  void fill_plan(const key_t& key, plan& p) {
    auto [ta, tb, m, n, k, lda, ldb, ldc, bf16, out_bf16, align] = key;
    const std::string shape = fmt::format("m={} n={} k={} ({} -> {})", m, n, k,
                                          bf16 ? "bf16" : "fp32", out_bf16 ? "bf16" : "fp32");
    check_lt(cublasLtMatmulDescCreate(&p.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor " + shape);
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(p.d, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa),
             "transa");
    check_lt(cublasLtMatmulDescSetAttribute(p.d, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb),
             "transb");
    const cudaDataType_t in = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    check_lt(cublasLtMatrixLayoutCreate(&p.a, in, ta ? k : m, ta ? m : k, lda),
             "layout A " + shape);
    check_lt(cublasLtMatrixLayoutCreate(&p.b, in, tb ? n : k, tb ? k : n, ldb),
             "layout B " + shape);
    check_lt(cublasLtMatrixLayoutCreate(&p.c, out_bf16 ? CUDA_R_16BF : CUDA_R_32F, m, n, ldc),
             "layout C " + shape);
    cublasLtMatmulPreference_t pref = nullptr;
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
    uint64_t ws = kLtWorkspace;
    const uint32_t al = uint32_t(align);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (auto [attr, value, size] :
         {std::tuple{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, (const void*)&ws, sizeof ws},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, (const void*)&al, sizeof al},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, (const void*)&al, sizeof al},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, (const void*)&al, sizeof al},
          std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, (const void*)&al, sizeof al}})
      if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, attr, value, size);
    cublasLtMatmulHeuristicResult_t res{};
    int count = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(m_h, p.d, p.a, p.b, p.c, p.c, pref, 1, &res, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || count == 0)
      throw backend_error(fmt::format(
          "cuBLASLt has no algorithm for the matmul {} (operands {}-byte aligned)", shape, align));
    p.algo = res.algo;
  }

  cublasLtHandle_t m_h = nullptr;
  device::device_buffer m_ws;
  std::map<key_t, plan> m_plans;
};

} // namespace

std::string attention_impl(const model_config& cfg, const llama_options& opt) {
  if (opt.dtype != compute_dtype::bf16)
    return "native";
  return attention::cudnn::unsupported_reason(attn_shape(cfg, opt), true, true).empty() ? "cudnn"
                                                                                        : "native";
}

std::string recipe_name(const llama_options& opt) {
  return bf16_recipe(opt) ? "bf16-mixed-v1" : "fp32";
}

memory_plan device_plan(const model_config& cfg, const llama_options& opt) {
  const sizes z = sizes_of(cfg, opt);
  memory_plan mp;
  mp.params = z.params * 4 + z.params_bf16;
  mp.grads = z.params * 4;
  mp.optimizer = z.params * 8;
  mp.activations = z.layers * (z.block_acts + z.block_stats) + z.resid + z.head + z.head_f32;
  // cuDNN's backward keeps rowsum(dO*O) and an fp32 dQ accumulator of its own.
  const uint64_t cudnn_scratch =
      attention_impl(cfg, opt) == "cudnn"
          ? (uint64_t(opt.batch * cfg.n_heads * opt.seq) + uint64_t(z.bt * cfg.dim)) * 4
          : 0;
  mp.scratch = z.scratch + z.rope + 2 * uint64_t(kPartials) * 8 + uint64_t(2 * z.bt) * 4 +
               kLtWorkspace + cudnn_scratch;
  return mp;
}

std::string unavailable_reason(const model_config& cfg, const llama_options& opt) {
  if (attention_impl(cfg, opt) == "native" && cfg.head_dim() > kNativeMaxHeadDim)
    return fmt::format(
        "train.llama on CUDA: the native attention kernel supports head_dim up to {} (model {} has "
        "head_dim {})",
        kNativeMaxHeadDim, cfg.name, cfg.head_dim());
  std::string why;
  if (!device::cuda_available(&why))
    return "CUDA backend: " + why;
  const auto st = device::query_cuda(true);
  return device::memory_refusal(device_plan(cfg, opt).total(), st.gpus.front().free_memory);
}

// ---------------------------------------------------------------------------------------------
namespace {

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

// The fused AdamW's work list: every tensor cut in runs of at most kChunk parameters.
constexpr int64_t kChunk = 1 << 14;
std::vector<K::adamw_chunk> adamw_chunks(const std::vector<param_tensor>& tensors) {
  std::vector<K::adamw_chunk> out;
  for (const auto& t : tensors)
    for (int64_t b = 0; b < int64_t(t.size); b += kChunk) {
      K::adamw_chunk ch;
      ch.begin = int64_t(t.offset) + b;
      ch.end = int64_t(t.offset) + std::min<int64_t>(int64_t(t.size), b + kChunk);
      ch.decay = t.decay ? 1 : 0;
      out.push_back(ch);
    }
  return out;
}

} // namespace

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

  impl(const model_config& c, const llama_options& o)
      : cfg(c), opt(o), z(sizes_of(c, o)), layout(c, o), bf16(bf16_recipe(o)),
        attn(attention_impl(c, o)), params(z.params * 4), grads(z.params * 4), adam_m(z.params * 4),
        adam_v(z.params * 4), acts(z.layers * z.block_acts), resid(z.resid), scratch(z.scratch),
        rope(z.rope), loss_partials(uint64_t(kPartials) * 8),
        norm_partials(uint64_t(kPartials) * 8), tokens(uint64_t(2 * z.bt) * 4), scalars(8) {
    if (bf16) {
      params_bf16 = device::device_buffer(z.params_bf16);
      stats = device::device_buffer(z.layers * z.block_stats);
      head_f32 = device::device_buffer(z.head_f32);
    }
    if (z.head)
      head = device::device_buffer(z.head);
    make_attention();
    upload_chunks();
    for (auto* b : {&acts, &stats, &resid, &head, &head_f32, &scratch, &grads, &adam_m, &adam_v})
      if (b->get())
        b->zero();
    auto table = make_rope_table(opt.seq, cfg.head_dim(), cfg.rope_theta);
    rope.upload(table.cos.data(), table.cos.size() * 4);
    rope.upload(table.sin.data(), table.sin.size() * 4, table.cos.size() * 4);
  }

  void make_attention() {
    if (attn == "cudnn") {
      try {
        sdpa_fwd = std::make_unique<attention::cudnn::sdpa_forward>(attn_shape(cfg, opt));
        sdpa_bwd = std::make_unique<attention::cudnn::sdpa_backward>(attn_shape(cfg, opt));
      } catch (const backend_error& e) {
        // cuDNN has no engine for this shape on this GPU: our kernel runs attention instead (in
        // bf16 too), and the run record says why.
        sdpa_fwd.reset();
        sdpa_bwd.reset();
        attn = "native";
        attn_note = e.what();
      }
    }
    if (attn == "native" && cfg.head_dim() > kNativeMaxHeadDim)
      throw backend_error(fmt::format(
          "train.llama on CUDA: the native attention kernel supports head_dim up to {} "
          "(got {}){}",
          kNativeMaxHeadDim, cfg.head_dim(), attn_note.empty() ? "" : "; cuDNN: " + attn_note));
  }

  void upload_chunks() {
    const auto list = adamw_chunks(layout.tensors());
    chunk_count = int64_t(list.size());
    chunks = device::device_buffer(std::max<uint64_t>(1, list.size()) * sizeof(K::adamw_chunk));
    chunks.upload(list.data(), list.size() * sizeof(K::adamw_chunk));
  }

  // Every wait of the host for the device goes through here or counts itself (host_waits).
  void wait(const char* what) {
    host_waits++;
    device::synchronize(what);
  }

  int64_t bt() const { return z.bt; }
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
  acts16 la16(int64_t l) const {
    const int64_t n = bt(), c = cfg.dim, kv = cfg.kv_dim(), f = cfg.ffn_dim;
    uint16_t* p = acts.as<uint16_t>() + l * (z.block_acts / 2);
    acts16 a{};
    for (auto [dst, len] : {std::pair{&a.xn1, c},
                            {&a.q, c},
                            {&a.k, kv},
                            {&a.v, kv},
                            {&a.att, c},
                            {&a.xmid, c},
                            {&a.xn2, c},
                            {&a.h1, f},
                            {&a.h3, f},
                            {&a.g, f}}) {
      *dst = p;
      p += n * len;
    }
    float* s = stats.as<float>() + l * (z.block_stats / 4);
    a.rstd1 = s;
    a.rstd2 = s + n;
    a.lse = s + 2 * n;
    return a;
  }
  scratch16 scr16() const {
    const int64_t n = bt(), c = cfg.dim, kv = cfg.kv_dim(), f = cfg.ffn_dim;
    uint16_t* p = scratch.as<uint16_t>();
    scratch16 s{};
    for (auto [dst, len] : {std::pair{&s.dres, c},
                            {&s.dxn, c},
                            {&s.dq, c},
                            {&s.datt, c},
                            {&s.dk, kv},
                            {&s.dv, kv},
                            {&s.dh1, f},
                            {&s.dh3, f},
                            {&s.dg, f}}) {
      *dst = p;
      p += n * len;
    }
    s.delta = reinterpret_cast<float*>(scratch.as<char>() + scratch16_bytes(cfg, uint64_t(n)));
    return s;
  }
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
    if (attn == "cudnn")
      sdpa_fwd->run(a.q, a.k, a.v, a.att, a.lse, stream);
    else
      attention::native::forward(attn_shape(cfg, opt), true, a.q, a.k, a.v, a.att, a.lse, stream);
  }
  void attention16_backward(const scratch16& s, const acts16& a) {
    if (attn == "cudnn")
      sdpa_bwd->run(a.q, a.k, a.v, a.att, s.datt, a.lse, s.dq, s.dk, s.dv, stream);
    else
      attention::native::backward(attn_shape(cfg, opt), true, a.q, a.k, a.v, a.att, s.datt, a.lse,
                                  s.delta, s.dq, s.dk, s.dv, stream);
  }

  // The host's token ids, checked against the vocabulary.
  void check_tokens(const int32_t* inputs, const int32_t* targets) const {
    const int64_t v = cfg.vocab_size;
    for (int64_t i = 0; i < bt(); i++)
      if (inputs[i] < 0 || inputs[i] >= v || targets[i] < 0 || targets[i] >= v)
        throw input_error(
            fmt::format("train.llama: token id {} is outside the vocabulary of {} tokens",
                        inputs[i] < 0 || inputs[i] >= v ? inputs[i] : targets[i], v));
  }

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

void llama_cuda::impl::forward_blocks32() {
  const int64_t b = opt.batch, t = opt.seq, n = bt(), c = cfg.dim, kv = cfg.kv_dim(),
                f = cfg.ffn_dim, nh = cfg.n_heads, kvh = cfg.n_kv_heads, hd = cfg.head_dim();
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
    attention::native::forward(attn_shape(cfg, opt), false, a.q, a.k, a.v, a.att, a.lse, s);
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
  const int64_t b = opt.batch, t = opt.seq, n = bt(), c = cfg.dim, kv = cfg.kv_dim(),
                f = cfg.ffn_dim, nh = cfg.n_heads, kvh = cfg.n_kv_heads, hd = cfg.head_dim();
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

void llama_cuda::impl::block_backward32(int64_t l, const backward_scratch& sc) {
  const int64_t b = opt.batch, t = opt.seq, n = bt(), c = cfg.dim, kv = cfg.kv_dim(),
                f = cfg.ffn_dim, nh = cfg.n_heads, kvh = cfg.n_kv_heads, hd = cfg.head_dim();
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
  attention::native::backward(attn_shape(cfg, opt), false, a.q, a.k, a.v, a.att, sc.datt, a.lse,
                              sc.delta, sc.dq, sc.dk, sc.dv, s);
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
  const int64_t b = opt.batch, t = opt.seq, n = bt(), c = cfg.dim, kv = cfg.kv_dim(),
                f = cfg.ffn_dim, nh = cfg.n_heads, kvh = cfg.n_kv_heads, hd = cfg.head_dim();
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

// One launch: clipping from the norm's partial sums (null: none) and AdamW over every
// parameter, writing the bf16 weight copies in the bf16 recipe.
void llama_cuda::impl::optimizer(double lr, const adamw_config& c, const double* norm,
                                 double max_norm, float* norm_out) {
  adam_t++;
  K::adamw_args a{};
  a.p = params.as<float>();
  a.m = adam_m.as<float>();
  a.v = adam_v.as<float>();
  a.g = grads.as<float>();
  a.p_bf16 = bf16 ? params_bf16.as<uint16_t>() : nullptr;
  a.chunks = chunks.as<K::adamw_chunk>();
  a.chunk_count = chunk_count;
  a.lr = float(lr);
  a.b1 = float(c.beta1);
  a.b2 = float(c.beta2);
  a.eps = float(c.eps);
  a.wd = float(c.weight_decay);
  a.bc1 = float(1.0 - std::pow(c.beta1, double(adam_t)));
  a.bc2 = float(1.0 - std::pow(c.beta2, double(adam_t)));
  a.norm_partials = norm;
  a.partials_count = kPartials;
  a.max_norm = max_norm;
  a.norm_out = norm_out;
  K::adamw_fused(a, stream);
}

llama_cuda::llama_cuda(const model_config& cfg, const llama_options& opt) {
  cfg.validate();
  if (opt.batch <= 0 || opt.seq <= 0)
    throw input_error(fmt::format(
        "train.llama: batch and seq must be positive, got batch {}, seq {}", opt.batch, opt.seq));
  m = std::make_unique<impl>(cfg, opt);
}
llama_cuda::~llama_cuda() = default;

size_t llama_cuda::num_params() const { return m->z.params; }
float* llama_cuda::device_grads() { return m->grads.as<float>(); }
void* llama_cuda::stream() const { return m->stream; }
void llama_cuda::set_grad_ready(std::function<void(size_t)> fn) {
  m->on_grad_ready = std::move(fn);
}
const float* llama_cuda::host_params(std::vector<float>& buf) {
  buf.resize(m->z.params);
  download_parameters(buf.data());
  return buf.data();
}
const std::vector<param_tensor>& llama_cuda::tensors() const { return m->layout.tensors(); }
const model_config& llama_cuda::config() const { return m->cfg; }
const llama_options& llama_cuda::options() const { return m->opt; }
void llama_cuda::synchronize() { m->wait("train.llama step"); }
nlohmann::json llama_cuda::step_facts() { return device::clock_facts(m->device); }
std::string llama_cuda::recipe() const { return recipe_name(m->opt); }
int64_t llama_cuda::host_waits() const { return m->host_waits; }

std::string llama_cuda::implementation() const {
  const bool bf16 = m->bf16;
  std::string g = bf16 ? "cuBLASLt, bf16 in / bf16 out (weight gradients: bf16 in, accumulated "
                         "into fp32), fp32 accumulation (CUBLAS_COMPUTE_32F), residual adds in "
                         "the epilogue"
                       : "cuBLASLt, fp32 (CUBLAS_COMPUTE_32F, no TF32)";
  std::string a =
      m->attn == "cudnn"
          ? "cuDNN fused SDPA (bf16): " + m->sdpa_fwd->engine() + " / " + m->sdpa_bwd->engine()
          : std::string("accelbench native FlashAttention-2-style "
                        "kernel (") +
                (bf16 ? "bf16" : "fp32") + ")" +
                (m->attn_note.empty() ? std::string()
                                      : " (cuDNN could not run it: " + m->attn_note + ")");
  std::string other = bf16 ? "accelbench CUDA kernels (bf16 in/out, fp32 statistics, casts fused)"
                           : "accelbench CUDA kernels (fp32)";
  return "recipe " + recipe() + "; matmuls: " + g + "; attention: " + a +
         "; other layers: " + other +
         "; optimizer: one fused AdamW launch with on-device gradient-norm clipping (fp32 "
         "master weights and moments)";
}

void llama_cuda::init_parameters(uint64_t seed) {
  std::vector<float> p(m->z.params);
  const int64_t n = m->bt() * m->cfg.dim;
  std::vector<float> x0, probe;
  if (!m->opt.with_head) {
    x0.resize(size_t(n));
    probe.resize(size_t(n));
  }
  init_parameter_values(m->cfg, m->layout.tensors(), seed, p.data(),
                        x0.empty() ? nullptr : x0.data(), probe.empty() ? nullptr : probe.data(),
                        n);
  upload_parameters(p.data());
  if (!m->opt.with_head) {
    m->host_waits += 2; // the two uploads below (pageable copies)
    if (m->bf16) {      // x0 rounded to bf16 once: the bf16 recipe's residual stream starts there
      device::device_buffer tmp(uint64_t(n) * 4);
      tmp.upload(x0.data(), uint64_t(n) * 4);
      K::to_bf16(m->res16(0), tmp.as<float>(), n, m->stream);
      m->wait("train.llama init");
    } else {
      m->resid.upload(x0.data(), uint64_t(n) * 4);
    }
    m->head_f32.get() ? m->head_f32.upload(probe.data(), uint64_t(n) * 4)
                      : m->head.upload(probe.data(), uint64_t(n) * 4);
  }
  m->adam_m.zero();
  m->adam_v.zero();
  m->adam_t = 0;
  m->pending_clip = 0;
  m->have_forward = false;
}

void llama_cuda::upload_parameters(const float* host) {
  m->host_waits++;
  m->params.upload(host, m->z.params * 4);
  m->refresh_weights_bf16();
}
void llama_cuda::download_parameters(float* host) const {
  m->host_waits++;
  m->params.download(host, m->z.params * 4);
}
void llama_cuda::download_grads(float* host) const {
  m->host_waits++;
  m->grads.download(host, m->z.params * 4);
}
void llama_cuda::zero_grad() {
  device::memset_async(m->grads.get(), 0, m->z.params * 4, m->stream);
}

void llama_cuda::forward_async(const int32_t* inputs, const int32_t* targets, float loss_weight,
                               int64_t slot) {
  auto& I = *m;
  if (slot >= I.log_slots)
    throw error(
        fmt::format("train.llama: step log slot {} beyond the {} reserved", slot, I.log_slots));
  if (I.opt.with_head) {
    I.check_tokens(inputs, targets);
    const uint64_t bytes = uint64_t(I.bt()) * 4;
    auto s = static_cast<cudaStream_t>(I.stream);
    device::check_cuda(cudaMemcpyAsync(I.inputs(), inputs, bytes, cudaMemcpyHostToDevice, s),
                       "train.llama token upload");
    device::check_cuda(cudaMemcpyAsync(I.targets(), targets, bytes, cudaMemcpyHostToDevice, s),
                       "train.llama token upload");
  }
  I.bf16 ? I.forward_blocks16() : I.forward_blocks32();
  I.forward_loss(I.slot_at(slot), loss_weight);
  I.have_forward = true;
}

float llama_cuda::forward(const int32_t* inputs, const int32_t* targets) {
  auto& I = *m;
  if (I.opt.with_head) {
    I.check_tokens(inputs, targets);
    I.host_waits++; // a copy from pageable memory
    I.tokens.upload(inputs, uint64_t(I.bt()) * 4);
    I.tokens.upload(targets, uint64_t(I.bt()) * 4, uint64_t(I.bt()) * 4);
  }
  device::memset_async(I.slot_at(-1), 0, 4, I.stream);
  I.bf16 ? I.forward_blocks16() : I.forward_blocks32();
  I.forward_loss(I.slot_at(-1), 1.0f);
  I.have_forward = true;
  float loss = 0;
  I.host_waits++;
  I.scalars.download(&loss, 4);
  return loss;
}

void llama_cuda::backward(float loss_scale) {
  auto& I = *m;
  if (!I.have_forward)
    throw error("train.llama: backward() called without a forward()");
  const float dloss = loss_scale / float(I.bt());
  I.bf16 ? I.backward16(dloss) : I.backward32(dloss);
  // The logits were turned into dlogits in place: a second backward needs a new forward.
  I.have_forward = false;
}

double llama_cuda::clip_grad_norm(double max_norm) {
  auto& I = *m;
  K::dot_partials(I.norm_partials.as<double>(), kPartials, I.grads.as<float>(), nullptr,
                  (int64_t)I.z.params, I.stream);
  std::vector<double> h(kPartials);
  I.host_waits++;
  I.norm_partials.download(h.data(), uint64_t(kPartials) * 8);
  double s = 0;
  for (double x : h)
    s += x;
  I.pending_clip = max_norm; // applied inside the next optimizer step, from the same partials
  return std::sqrt(s);
}

void llama_cuda::adamw_step(double lr, const adamw_config& c) {
  auto& I = *m;
  const bool clip = I.pending_clip > 0;
  I.optimizer(lr, c, clip ? I.norm_partials.as<double>() : nullptr, I.pending_clip, nullptr);
  I.pending_clip = 0;
}

void llama_cuda::step_async(double max_norm, double lr, const adamw_config& c, int64_t slot) {
  auto& I = *m;
  K::dot_partials(I.norm_partials.as<double>(), kPartials, I.grads.as<float>(), nullptr,
                  (int64_t)I.z.params, I.stream);
  I.optimizer(lr, c, I.norm_partials.as<double>(), max_norm, I.slot_at(slot) + 1);
}

void llama_cuda::reserve_step_log(int64_t slots) {
  auto& I = *m;
  I.log = device::device_buffer(uint64_t(std::max<int64_t>(1, slots)) * 8);
  device::memset_async(I.log.get(), 0, I.log.size(), I.stream);
  I.log_slots = slots;
}

std::vector<float> llama_cuda::read_step_log() const {
  std::vector<float> out(size_t(2 * m->log_slots));
  m->host_waits++;
  if (!out.empty())
    m->log.download(out.data(), out.size() * 4);
  return out;
}

} // namespace accelbench::training::cuda
