// train.llama on the GPU: the model (llama_cuda.hpp), its cuBLASLt matmuls and the training step.
// The forward and backward passes follow llama_model::forward/backward line by line.
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

// Floats of every device array, in one place: the constructor allocates from these and
// device_plan adds them up, so the estimate is the allocation.
struct sizes {
  int64_t bt = 0, layers = 0;
  uint64_t params = 0;
  uint64_t block_acts =
      0; // per layer: xn1 q att xmid xn2 [C], k v [KV], rstd1 rstd2 [1], lse [NH], h1 h3 g [F]
  uint64_t resid = 0;     // (layers + 1) * BT * C
  uint64_t head = 0;      // xf [BT*C], rstdf [BT], logits [BT*V], losses [BT]; or probe [BT*C]
  uint64_t scratch = 0;   // backward_scratch with delta (llama_layout.hpp)
  uint64_t rope = 0;      // cos, sin [T, HD/2]
  uint64_t bf16_gemm = 0; // bf16 elements of each of the two matmul-operand buffers (dtype bf16)
  uint64_t bf16_attn = 0; // bf16 elements: q o do dq [C], k v dk dv [KV] per token (impl cudnn)
  uint64_t cudnn_scratch =
      0; // bytes: rowsum(dO*O) and the fp32 dQ accumulator of the SDPA backward
};

sizes sizes_of(const model_config& m, const llama_options& o) {
  sizes z;
  z.layers = resolved_layers(m, o);
  z.bt = o.batch * o.seq;
  const llama_layout layout(m, o);
  z.params = layout.num_params();
  const uint64_t bt = z.bt, c = m.dim, kv = m.kv_dim(), f = m.ffn_dim, v = m.vocab_size;
  z.block_acts = uint64_t(block_act_floats(m, z.bt));
  z.resid = (z.layers + 1) * bt * c;
  z.head = o.with_head ? bt * c + bt + bt * v + bt : bt * c;
  z.scratch = layout.scratch_floats(true);
  z.rope = 2 * uint64_t(o.seq * (m.head_dim() / 2));
  if (o.dtype == compute_dtype::bf16) {
    const uint64_t widest = std::max<uint64_t>({c, f, o.with_head ? v : 0});
    const uint64_t weight = widest * c; // every weight matrix is [widest or less, C] or [C, F]
    z.bf16_gemm = std::max(weight, bt * widest);
  }
  if (attention_impl(m, o) == "cudnn") {
    z.bf16_attn = bt * (4 * c + 4 * kv);
    z.cudnn_scratch = (uint64_t(o.batch * m.n_heads * o.seq) + bt * c) * 4;
  }
  return z;
}

void check_lt(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw backend_error(fmt::format("cuBLASLt {} failed (status {})", what, (int)s));
}

// Column-major cuBLASLt matmuls, C[m,n] = op(A)[m,k] op(B)[k,n] + beta C, fp32 output and
// accumulation; A and B fp32 or bf16. One descriptor set and heuristic choice per shape, cached.
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

  void run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
           const void* b, int64_t ldb, float* c, int64_t ldc, float beta, bool bf16, void* stream) {
    // The heuristic assumes 256-byte aligned operands unless told otherwise: tell it the truth
    // (a pointer into a tensor need not be), and keep one plan per alignment.
    const int align = std::min({alignment(a), alignment(b), alignment(c)});
    const key_t key{ta, tb, m, n, k, lda, ldb, ldc, bf16, align};
    auto it = m_plans.find(key);
    if (it == m_plans.end())
      it = m_plans.emplace(key, make_plan(key)).first;
    const plan& p = it->second;
    const float alpha = 1.0f;
    check_lt(cublasLtMatmul(m_h, p.d, &alpha, a, p.a, b, p.b, &beta, c, p.c, c, p.c, &p.algo,
                            m_ws.get(), kLtWorkspace, static_cast<cudaStream_t>(stream)),
             fmt::format("matmul m={} n={} k={}", m, n, k));
  }

private:
  using key_t =
      std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int>;
  static int alignment(const void* p) {
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
    auto [ta, tb, m, n, k, lda, ldb, ldc, bf16, align] = key;
    const std::string shape = fmt::format("m={} n={} k={} ({})", m, n, k, bf16 ? "bf16" : "fp32");
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
    check_lt(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, m, n, ldc), "layout C " + shape);
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

memory_plan device_plan(const model_config& cfg, const llama_options& opt) {
  const sizes z = sizes_of(cfg, opt);
  memory_plan mp;
  mp.params = z.params * 4;
  mp.grads = z.params * 4;
  mp.optimizer = z.params * 8;
  mp.activations = (z.layers * z.block_acts + z.resid + z.head) * 4;
  mp.scratch = (z.scratch + z.rope) * 4 + uint64_t(kPartials) * 8 + uint64_t(2 * z.bt) * 4 +
               2 * z.bf16_gemm * 2 + (z.bf16_gemm ? z.params * 2 : 0) + z.bf16_attn * 2 +
               z.cudnn_scratch + kLtWorkspace;
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
struct llama_cuda::impl {
  int device = device::current_device(); // the device the model lives on
  model_config cfg;
  llama_options opt;
  sizes z;
  llama_layout layout;
  std::string attn, attn_note; // attn_note: why cuDNN was not used after all
  device::device_buffer params, grads, adam_m, adam_v, acts, resid, head, scratch, rope, partials,
      tokens, bf16_a, bf16_b, bf16_attn, params_bf16;
  lt_gemm gemm;
  std::unique_ptr<attention::cudnn::sdpa_forward> sdpa_fwd;
  std::unique_ptr<attention::cudnn::sdpa_backward> sdpa_bwd;
  int64_t adam_t = 0;
  bool have_forward = false;
  void* stream = nullptr;                    // the default stream
  std::function<void(size_t)> on_grad_ready; // data parallel: llama_cuda::set_grad_ready

  void grad_ready(size_t from_offset) {
    if (on_grad_ready)
      on_grad_ready(from_offset);
  }

  impl(const model_config& c, const llama_options& o)
      : cfg(c), opt(o), z(sizes_of(c, o)), layout(c, o), attn(attention_impl(c, o)),
        params(z.params * 4), grads(z.params * 4), adam_m(z.params * 4), adam_v(z.params * 4),
        acts(z.layers * z.block_acts * 4), resid(z.resid * 4), head(z.head * 4),
        scratch(z.scratch * 4), rope(z.rope * 4), partials(uint64_t(kPartials) * 8),
        tokens(uint64_t(2 * z.bt) * 4) {
    if (z.bf16_gemm) {
      bf16_a = device::device_buffer(z.bf16_gemm * 2);
      bf16_b = device::device_buffer(z.bf16_gemm * 2);
      params_bf16 = device::device_buffer(z.params * 2);
    }
    if (attn == "cudnn") {
      bf16_attn = device::device_buffer(z.bf16_attn * 2);
      try {
        sdpa_fwd = std::make_unique<attention::cudnn::sdpa_forward>(attn_shape(cfg, opt));
        sdpa_bwd = std::make_unique<attention::cudnn::sdpa_backward>(attn_shape(cfg, opt));
      } catch (const backend_error& e) {
        // cuDNN has no engine for this shape on this GPU: our kernel runs attention instead, and
        // the run record says why.
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
    acts.zero();
    resid.zero();
    head.zero();
    scratch.zero();
    grads.zero();
    adam_m.zero();
    adam_v.zero();
    auto table = make_rope_table(opt.seq, cfg.head_dim(), cfg.rope_theta);
    rope.upload(table.cos.data(), table.cos.size() * 4);
    rope.upload(table.sin.data(), table.sin.size() * 4, table.cos.size() * 4);
  }

  int64_t bt() const { return z.bt; }
  float* p_at(size_t offset) const { return params.as<float>() + offset; }
  float* g_at(size_t offset) const { return grads.as<float>() + offset; }
  block_tensors lp(const device::device_buffer& base, int64_t l) const {
    return layout.block(base.as<float>(), l);
  }
  backward_scratch scr() const { return layout.scratch(scratch.as<float>(), true); }
  block_acts la(int64_t l) const {
    return carve_block_acts(acts.as<float>() + l * z.block_acts, bt(), cfg);
  }
  float* res(int64_t l) const { return resid.as<float>() + l * bt() * cfg.dim; }
  const float* cos_table() const { return rope.as<float>(); }
  const float* sin_table() const { return rope.as<float>() + z.rope / 2; }
  int32_t* inputs() const { return tokens.as<int32_t>(); }
  int32_t* targets() const { return tokens.as<int32_t>() + bt(); }

  // The bf16 copy of the parameter at `p` (dtype bf16), or null when `p` is not a parameter.
  const uint16_t* weight_bf16(const float* p) const {
    const float* base = params.as<float>();
    if (!params_bf16.get() || p < base || p >= base + z.params)
      return nullptr;
    return params_bf16.as<uint16_t>() + (p - base);
  }
  // After every change of the fp32 master weights: one cast, instead of one per matmul.
  void refresh_weights_bf16() {
    if (params_bf16.get())
      K::to_bf16(params_bf16.as<uint16_t>(), params.as<float>(), (int64_t)z.params, stream);
  }

  // Row-major C[M,N] (= or +=) op(A) op(B) through the column-major library: C^T = op(B)^T op(A)^T.
  // a_elems / b_elems: elements of the stored A and B (what a bf16 cast must convert).
  void matmul_rm(bool ta, bool tb, int64_t mm, int64_t nn, int64_t kk, const float* a, int64_t lda,
                 uint64_t a_elems, const float* b, int64_t ldb, uint64_t b_elems, float* c,
                 int64_t ldc, bool accumulate) {
    const bool bf16 = opt.dtype == compute_dtype::bf16;
    const void* pa = a;
    const void* pb = b;
    if (bf16) {
      K::to_bf16(bf16_a.as<uint16_t>(), a, (int64_t)a_elems, stream);
      pa = bf16_a.get();
      if (const uint16_t* w = weight_bf16(b)) {
        pb = w; // a weight: its bf16 copy is kept up to date by the optimizer step
      } else {
        K::to_bf16(bf16_b.as<uint16_t>(), b, (int64_t)b_elems, stream);
        pb = bf16_b.get();
      }
    }
    gemm.run(tb, ta, nn, mm, kk, pb, ldb, pa, lda, c, ldc, accumulate ? 1.0f : 0.0f, bf16, stream);
  }
  // out[BT,OC] = inp[BT,C] w[OC,C]^T
  void linear_forward(float* out, const float* inp, const float* w, int64_t c, int64_t oc) {
    matmul_rm(false, true, bt(), oc, c, inp, c, uint64_t(bt() * c), w, c, uint64_t(oc * c), out, oc,
              false);
  }
  // dinp[BT,C] (= or +=) dout[BT,OC] w[OC,C];  dw[OC,C] += dout^T inp
  void linear_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                       int64_t c, int64_t oc, bool accumulate_dinp) {
    matmul_rm(false, false, bt(), c, oc, dout, oc, uint64_t(bt() * oc), w, c, uint64_t(oc * c),
              dinp, c, accumulate_dinp);
    matmul_rm(true, false, oc, c, bt(), dout, oc, uint64_t(bt() * oc), inp, c, uint64_t(bt() * c),
              dw, c, true);
  }

  // The bf16 copies cuDNN attention reads and writes: q o do dq [BT*C], k v dk dv [BT*KVH*HD].
  struct bf16_views {
    int64_t nq, nk;
    uint16_t *q, *k, *v, *o, *d_o, *dq, *dk, *dv;
  };
  bf16_views attn_bf16() const {
    bf16_views b;
    b.nq = bt() * cfg.dim;
    b.nk = bt() * cfg.kv_dim();
    b.q = bf16_attn.as<uint16_t>();
    b.k = b.q + b.nq;
    b.v = b.k + b.nk;
    b.o = b.v + b.nk;
    b.d_o = b.o + b.nq;
    b.dq = b.d_o + b.nq;
    b.dk = b.dq + b.nq;
    b.dv = b.dk + b.nk;
    return b;
  }

  // Attention forward / backward in the configured implementation.
  void attention_forward(const block_acts& a) {
    const auto s = attn_shape(cfg, opt);
    if (attn == "native") {
      attention::native::forward(s, false, a.q, a.k, a.v, a.att, a.lse, stream);
      return;
    }
    const auto b = attn_bf16();
    K::to_bf16(b.q, a.q, b.nq, stream);
    K::to_bf16(b.k, a.k, b.nk, stream);
    K::to_bf16(b.v, a.v, b.nk, stream);
    sdpa_fwd->run(b.q, b.k, b.v, b.o, a.lse, stream);
    K::from_bf16(a.att, b.o, b.nq, stream);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* datt, const block_acts& a,
                          float* delta) {
    const auto s = attn_shape(cfg, opt);
    if (attn == "native") {
      attention::native::backward(s, false, a.q, a.k, a.v, a.att, datt, a.lse, delta, dq, dk, dv,
                                  stream);
      return;
    }
    const auto b = attn_bf16();
    K::to_bf16(b.q, a.q, b.nq, stream);
    K::to_bf16(b.k, a.k, b.nk, stream);
    K::to_bf16(b.v, a.v, b.nk, stream);
    K::to_bf16(b.o, a.att, b.nq, stream); // exact: att came from bf16
    K::to_bf16(b.d_o, datt, b.nq, stream);
    sdpa_bwd->run(b.q, b.k, b.v, b.o, b.d_o, a.lse, b.dq, b.dk, b.dv, stream);
    K::from_bf16(dq, b.dq, b.nq, stream);
    K::from_bf16(dk, b.dk, b.nk, stream);
    K::from_bf16(dv, b.dv, b.nk, stream);
  }

  double sum_partials(const float* a, const float* b, int64_t n) {
    K::dot_partials(partials.as<double>(), kPartials, a, b, n, stream);
    std::vector<double> h(kPartials);
    partials.download(h.data(), uint64_t(kPartials) * 8); // synchronous copy: waits for the kernel
    double s = 0;
    for (double x : h)
      s += x;
    return s;
  }
};

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
void llama_cuda::synchronize() { device::synchronize("train.llama step"); }
nlohmann::json llama_cuda::step_facts() { return device::clock_facts(m->device); }

std::string llama_cuda::implementation() const {
  std::string g =
      m->opt.dtype == compute_dtype::bf16
          ? "cuBLASLt, bf16 inputs (weights cast once per optimizer step), fp32 accumulation "
            "(CUBLAS_COMPUTE_32F)"
          : "cuBLASLt, fp32 (CUBLAS_COMPUTE_32F, no TF32)";
  std::string a =
      m->attn == "cudnn"
          ? "cuDNN fused SDPA (bf16): " + m->sdpa_fwd->engine() + " / " + m->sdpa_bwd->engine()
          : "accelbench native FlashAttention-2-style kernel (fp32)" +
                (m->attn_note.empty() ? std::string()
                                      : " (cuDNN could not run it: " + m->attn_note + ")");
  return "matmuls: " + g + "; attention: " + a + "; other layers: accelbench CUDA kernels (fp32)";
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
    m->resid.upload(x0.data(), uint64_t(n) * 4);
    m->head.upload(probe.data(), uint64_t(n) * 4);
  }
  m->adam_m.zero();
  m->adam_v.zero();
  m->adam_t = 0;
  m->have_forward = false;
}

void llama_cuda::upload_parameters(const float* host) {
  m->params.upload(host, m->z.params * 4);
  m->refresh_weights_bf16();
}
void llama_cuda::download_parameters(float* host) const {
  m->params.download(host, m->z.params * 4);
}
void llama_cuda::download_grads(float* host) const { m->grads.download(host, m->z.params * 4); }
void llama_cuda::zero_grad() {
  device::memset_async(m->grads.get(), 0, m->z.params * 4, m->stream);
}

float llama_cuda::forward(const int32_t* inputs, const int32_t* targets) {
  auto& I = *m;
  const int64_t b = I.opt.batch, t = I.opt.seq, bt = I.bt(), c = I.cfg.dim, kv = I.cfg.kv_dim(),
                f = I.cfg.ffn_dim, v = I.cfg.vocab_size, nh = I.cfg.n_heads, kvh = I.cfg.n_kv_heads,
                hd = I.cfg.head_dim();
  const float eps = float(I.cfg.norm_eps);
  float* tmp = I.scr().dres; // [BT,C]; free during forward
  void* s = I.stream;

  if (I.opt.with_head) {
    for (int64_t i = 0; i < bt; i++)
      if (inputs[i] < 0 || inputs[i] >= v || targets[i] < 0 || targets[i] >= v)
        throw input_error(
            fmt::format("train.llama: token id {} is outside the vocabulary of {} tokens",
                        inputs[i] < 0 || inputs[i] >= v ? inputs[i] : targets[i], v));
    I.tokens.upload(inputs, uint64_t(bt) * 4);
    I.tokens.upload(targets, uint64_t(bt) * 4, uint64_t(bt) * 4);
    K::embedding_forward(I.res(0), I.inputs(), I.p_at(I.layout.tok_emb()), bt, c, s);
  }

  for (int64_t l = 0; l < I.z.layers; l++) {
    auto p = I.lp(I.params, l);
    auto a = I.la(l);
    const float* x = I.res(l);
    K::rmsnorm_forward(a.xn1, a.rstd1, x, p.attn_norm, bt, c, eps, s);
    I.linear_forward(a.q, a.xn1, p.wq, c, c);
    I.linear_forward(a.k, a.xn1, p.wk, c, kv);
    I.linear_forward(a.v, a.xn1, p.wv, c, kv);
    K::rope(a.q, I.cos_table(), I.sin_table(), b, t, nh, hd, 1.0f, s);
    K::rope(a.k, I.cos_table(), I.sin_table(), b, t, kvh, hd, 1.0f, s);
    I.attention_forward(a);
    I.linear_forward(tmp, a.att, p.wo, c, c);
    K::add(a.xmid, x, tmp, bt * c, s);
    K::rmsnorm_forward(a.xn2, a.rstd2, a.xmid, p.mlp_norm, bt, c, eps, s);
    I.linear_forward(a.h1, a.xn2, p.w1, c, f);
    I.linear_forward(a.h3, a.xn2, p.w3, c, f);
    K::swiglu_forward(a.g, a.h1, a.h3, bt * f, s);
    I.linear_forward(tmp, a.g, p.w2, f, c);
    K::add(I.res(l + 1), a.xmid, tmp, bt * c, s);
  }

  double loss = 0;
  if (I.opt.with_head) {
    float* xf = I.head.as<float>();
    float* rstdf = xf + bt * c;
    float* logits = rstdf + bt;
    float* losses = logits + bt * v;
    K::rmsnorm_forward(xf, rstdf, I.res(I.z.layers), I.p_at(I.layout.final_norm()), bt, c, eps, s);
    I.linear_forward(logits, xf, I.p_at(I.layout.lm_head()), c, v);
    K::softmax_crossentropy_forward(logits, losses, I.targets(), bt, v, s);
    std::vector<float> h(static_cast<size_t>(bt));
    I.head.download(h.data(), uint64_t(bt) * 4, uint64_t(bt * c + bt + bt * v) * 4);
    for (float x : h)
      loss += x; // serial, as the CPU model
  } else {
    loss = I.sum_partials(I.res(I.z.layers), I.head.as<float>(), bt * c);
  }
  device::synchronize("train.llama forward");
  I.have_forward = true;
  return float(loss / double(bt));
}

void llama_cuda::backward(float loss_scale) {
  auto& I = *m;
  if (!I.have_forward)
    throw error("train.llama: backward() called without a forward()");
  const int64_t b = I.opt.batch, t = I.opt.seq, bt = I.bt(), c = I.cfg.dim, kv = I.cfg.kv_dim(),
                f = I.cfg.ffn_dim, v = I.cfg.vocab_size, nh = I.cfg.n_heads, kvh = I.cfg.n_kv_heads,
                hd = I.cfg.head_dim();
  void* s = I.stream;
  const backward_scratch sc = I.scr();
  float *dres = sc.dres, *dxn = sc.dxn, *dq = sc.dq, *datt = sc.datt, *dk = sc.dk, *dv = sc.dv,
        *dh1 = sc.dh1, *dh3 = sc.dh3, *dg = sc.dg, *delta = sc.delta;
  const float dloss = loss_scale / float(bt);

  if (I.opt.with_head) {
    float* xf = I.head.as<float>();
    float* rstdf = xf + bt * c;
    float* probs = rstdf + bt;
    const size_t fn = I.layout.final_norm(), head = I.layout.lm_head();
    K::crossentropy_softmax_backward(probs, I.targets(), bt, v, dloss, s);
    I.linear_backward(dxn, I.g_at(head), probs, xf, I.p_at(head), c, v, false);
    device::memset_async(dres, 0, uint64_t(bt * c) * 4, s);
    K::rmsnorm_backward(dres, I.g_at(fn), dxn, I.res(I.z.layers), I.p_at(fn), rstdf, bt, c, s);
    I.grad_ready(fn);
  } else {
    K::scale(dres, I.head.as<float>(), dloss, bt * c, s);
  }

  for (int64_t l = I.z.layers - 1; l >= 0; l--) {
    auto p = I.lp(I.params, l);
    auto gr = I.lp(I.grads, l);
    auto a = I.la(l);
    I.linear_backward(dg, gr.w2, dres, a.g, p.w2, f, c, false);
    K::swiglu_backward(dh1, dh3, dg, a.h1, a.h3, bt * f, s);
    I.linear_backward(dxn, gr.w1, dh1, a.xn2, p.w1, c, f, false);
    I.linear_backward(dxn, gr.w3, dh3, a.xn2, p.w3, c, f, true);
    K::rmsnorm_backward(dres, gr.mlp_norm, dxn, a.xmid, p.mlp_norm, a.rstd2, bt, c, s);
    I.linear_backward(datt, gr.wo, dres, a.att, p.wo, c, c, false);
    I.attention_backward(dq, dk, dv, datt, a, delta);
    K::rope(dq, I.cos_table(), I.sin_table(), b, t, nh, hd, -1.0f, s);
    K::rope(dk, I.cos_table(), I.sin_table(), b, t, kvh, hd, -1.0f, s);
    I.linear_backward(dxn, gr.wq, dq, a.xn1, p.wq, c, c, false);
    I.linear_backward(dxn, gr.wk, dk, a.xn1, p.wk, c, kv, true);
    I.linear_backward(dxn, gr.wv, dv, a.xn1, p.wv, c, kv, true);
    K::rmsnorm_backward(dres, gr.attn_norm, dxn, I.res(l), p.attn_norm, a.rstd1, bt, c, s);
    I.grad_ready(I.layout.block_offset(l));
  }
  if (I.opt.with_head)
    K::embedding_backward(I.g_at(I.layout.tok_emb()), dres, I.inputs(), bt, c, s);
  I.grad_ready(0);
  // The probabilities were turned into dlogits in place: a second backward needs a new forward.
  I.have_forward = false;
}

double llama_cuda::clip_grad_norm(double max_norm) {
  const double norm =
      std::sqrt(m->sum_partials(m->grads.as<float>(), nullptr, (int64_t)m->z.params));
  if (max_norm > 0 && norm > max_norm)
    K::scale(m->grads.as<float>(), m->grads.as<float>(), float(max_norm / (norm + 1e-6)),
             (int64_t)m->z.params, m->stream);
  return norm;
}

void llama_cuda::adamw_step(double lr, const adamw_config& c) {
  auto& I = *m;
  I.adam_t++;
  const float bc1 = float(1.0 - std::pow(c.beta1, double(I.adam_t)));
  const float bc2 = float(1.0 - std::pow(c.beta2, double(I.adam_t)));
  for (const auto& t : I.layout.tensors())
    K::adamw(I.params.as<float>() + t.offset, I.grads.as<float>() + t.offset,
             I.adam_m.as<float>() + t.offset, I.adam_v.as<float>() + t.offset, (int64_t)t.size,
             float(lr), float(c.beta1), float(c.beta2), float(c.eps),
             t.decay ? float(c.weight_decay) : 0.0f, bc1, bc2, I.stream);
  I.refresh_weights_bf16();
}

} // namespace accelbench::training::cuda
