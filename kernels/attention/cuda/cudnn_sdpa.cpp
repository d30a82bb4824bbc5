// cuDNN fused SDPA, forward and backward, through the cuDNN 9 backend graph API. The
// cudnn_frontend C++ library is not installed and must not be vendored, so the graphs are built
// here the way the frontend's SDPA nodes build them (cudnn_frontend, "scaled_dot_product_flash_
// attention" forward and backward nodes). Forward:
//
//   S    = matmul(Q, K^T)                      Q [B,H,Sq,D], K^T [B,KVH,D,Sk] (GQA: broadcast)
//   S    = S * attn_scale                      by-value scalar
//   mask = gen_index(S, axis 2) >= gen_index(S, axis 3)      (causal only)
//   S    = select(S, -inf, mask)
//   M    = reduce_max(S) over keys            [B,H,Sq,1]
//   E    = exp(S - M);  L = reduce_add(E)
//   Stats= M + log(L)                          output, fp32 [B,H,Sq,1]
//   P    = E / L
//   O    = matmul(P, V)                        V [B,KVH,Sk,D]
//
// Backward (FlashAttention-2's backward, Dao 2023, Algorithm 2), Stats from the forward:
//
//   sum  = reduce_add(dO * O) * 1              output-sized workspace, fp32 [B,H,Sq,1]
//   P    = exp(mask(matmul(Q, K^T) * scale) - Stats)
//   dV   = matmul(reshape(P)^T, dO)            GQA: per query head [B,H,Sk,D], then reduce_add
//                                              over each group of H/KVH heads into [B,KVH,Sk,D]
//   dS   = (matmul(dO, V^T) - sum) * P * scale
//   dK   = matmul(reshape(dS)^T, Q)            GQA: as dV
//   dQacc= matmul(dS, reshape(K^T))            fp32 workspace [B,H,Sq,D]
//   dQ   = identity(dQacc)                     cast to bf16 in our layout
//
// cuDNN's runtime-fusion engines recognise these patterns and run each as one fused
// flash-attention kernel. Strides describe our [B, S, H, D] memory layout, so no transposes are
// needed.
#include "kernels/attention/cuda/attention_kernels.hpp"

#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::attention::cudnn {

namespace {

[[noreturn]] void fail(cudnnStatus_t st, const char* what) {
  char msg[1024] = {0};
  cudnnGetLastErrorString(msg, sizeof msg);
  throw backend_error(fmt::format("cuDNN {} failed: {} ({}){}", what, cudnnGetErrorString(st),
                                  (int)st, msg[0] ? std::string(": ") + msg : std::string()));
}
void check(cudnnStatus_t st, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS)
    fail(st, what);
}

// A backend descriptor (move-only RAII).
class desc {
public:
  explicit desc(cudnnBackendDescriptorType_t t) {
    check(cudnnBackendCreateDescriptor(t, &m_d), "create descriptor");
  }
  ~desc() {
    if (m_d)
      cudnnBackendDestroyDescriptor(m_d);
  }
  desc(desc&& o) noexcept : m_d(o.m_d) { o.m_d = nullptr; }
  desc(const desc&) = delete;
  desc& operator=(const desc&) = delete;
  cudnnBackendDescriptor_t get() const { return m_d; }
  cudnnBackendDescriptor_t* ptr() { return &m_d; }

  template <class T>
  desc& set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const T& v) {
    check(cudnnBackendSetAttribute(m_d, a, t, 1, &v), "set attribute");
    return *this;
  }
  template <class T>
  desc& set_array(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
                  const std::vector<T>& v) {
    check(cudnnBackendSetAttribute(m_d, a, t, (int64_t)v.size(), v.data()), "set attribute");
    return *this;
  }
  desc& set_desc(cudnnBackendAttributeName_t a, const desc& d) {
    auto p = d.get();
    return set(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, p);
  }
  desc& finalize(const char* what) {
    check(cudnnBackendFinalize(m_d), what);
    return *this;
  }

private:
  cudnnBackendDescriptor_t m_d = nullptr;
};

// uids of the non-virtual tensors (the variant pack binds pointers by uid).
enum uid : int64_t {
  u_q = 1,
  u_k,
  u_v,
  u_o,
  u_stats,
  u_scale,
  u_neg_inf,
  u_do,
  u_dq,
  u_dk,
  u_dv,
  u_sum,
  u_dq_accum,
  u_one,
  u_first_virtual = 100
};

struct graph_builder {
  std::deque<desc> tensors, ops, aux; // deque: references stay valid
  int64_t next_uid = u_first_virtual;

  desc& tensor(int64_t id, std::vector<int64_t> dims, std::vector<int64_t> strides,
               cudnnDataType_t dt, bool is_virtual, bool by_value = false) {
    desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = 16;
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, id)
        .set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dt)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, align)
        .set_array(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
        .set_array(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual)
        .set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, by_value)
        .finalize("tensor descriptor");
    tensors.push_back(std::move(t));
    return tensors.back();
  }
  // A virtual fp32 (or `dt`) tensor, packed strides.
  desc& virt(std::vector<int64_t> dims, cudnnDataType_t dt = CUDNN_DATA_FLOAT) {
    std::vector<int64_t> st(dims.size());
    int64_t s = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      st[i] = s;
      s *= dims[i];
    }
    return tensor(next_uid++, dims, st, dt, true);
  }

  void pointwise(cudnnPointwiseMode_t mode, const desc& x, const desc* b, const desc& y,
                 const desc* t = nullptr, int64_t axis = -1) {
    desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, prec);
    if (axis >= 0)
      pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw.finalize("pointwise descriptor");
    desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.finalize("pointwise operation");
    aux.push_back(std::move(pw));
    ops.push_back(std::move(op));
  }

  void reduction(cudnnReduceTensorOp_t mode, const desc& x, const desc& y) {
    desc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, prec)
        .finalize("reduction descriptor");
    desc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .finalize("reduction operation");
    aux.push_back(std::move(r));
    ops.push_back(std::move(op));
  }

  void reshape(const desc& x, const desc& y) {
    desc op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y)
        .finalize("reshape operation");
    ops.push_back(std::move(op));
  }

  // A virtual tensor with explicit strides (the transposed views of reshape).
  desc& virt_strided(std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t dt) {
    return tensor(next_uid++, dims, strides, dt, true);
  }

  void matmul(const desc& a, const desc& b, const desc& c) {
    desc m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, prec).finalize("matmul descriptor");
    desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize("matmul operation");
    aux.push_back(std::move(m));
    ops.push_back(std::move(op));
  }
};

// Our [B, S, heads, D] memory seen as the logical [B, heads, S, D] (and its transpose [B, heads,
// D, S]) that cuDNN's SDPA patterns use.
std::vector<int64_t> bshd_strides(int64_t heads, int64_t s, int64_t d) {
  return {s * heads * d, d, heads * d, 1};
}
std::vector<int64_t> bshd_strides_t(int64_t heads, int64_t s, int64_t d) {
  return {s * heads * d, d, 1, heads * d};
}

// logits -> logits with the keys after each query set to -inf (top-left causal mask).
const desc& causal_mask(graph_builder& g, const desc& logits, const std::vector<int64_t>& dims) {
  auto& neg = g.tensor(u_neg_inf, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
  auto& row = g.virt(dims, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, logits, nullptr, row, nullptr, 2);
  auto& col = g.virt(dims, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, logits, nullptr, col, nullptr, 3);
  auto& keep_mask = g.virt(dims, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep_mask);
  auto& masked = g.virt(dims);
  // select(x, b, t): y = t ? x : b
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, logits, &neg, masked, &keep_mask);
  return masked;
}

} // namespace

std::string unsupported_reason(const attention_shape& s, bool bf16, bool backward) {
  (void)backward; // forward and backward have the same support here
  if (!bf16)
    return "impl=cudnn fused attention needs dtype=bf16 (cuDNN's flash-attention engines take "
           "fp16/bf16)";
  if (s.head_dim % 8 != 0 || s.head_dim > 256)
    return fmt::format(
        "impl=cudnn needs head_dim a multiple of 8 and at most 256 (got head_dim={})", s.head_dim);
  if (s.causal && s.seq_q != s.seq_k)
    return fmt::format(
        "impl=cudnn here masks top-left only: causal needs seq_q == seq_k (got seq_q={} seq_k={}); "
        "use impl=native",
        s.seq_q, s.seq_k);
  return {};
}

// A finalised cuDNN execution plan for one graph, with its workspace and the by-value scalars the
// variant pack binds.
struct sdpa_plan {
  cudnnHandle_t handle = nullptr;
  graph_builder g;
  std::vector<desc> keep; // graph, heuristics, configs, plan
  cudnnBackendDescriptor_t plan = nullptr;
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
  // The masked logit: -inf from cuDNN 9.10 on; before that the frontend used the lowest finite
  // float, which those engines expect.
  float scale = 1.0f,
        neg_inf = cudnnGetVersion() < 91000 ? std::numeric_limits<float>::lowest() : -INFINITY,
        one = 1.0f;
  bool causal = false;
  std::string engine;

  sdpa_plan() { check(cudnnCreate(&handle), "cudnnCreate"); }
  ~sdpa_plan() {
    if (workspace)
      cudaFree(workspace);
    keep.clear();
    g.ops.clear();
    g.tensors.clear();
    g.aux.clear();
    if (handle)
      cudnnDestroy(handle);
  }
  sdpa_plan(const sdpa_plan&) = delete;
  sdpa_plan& operator=(const sdpa_plan&) = delete;

  // Operation graph -> heuristics (mode A) -> the first engine config that finalises into a plan.
  void finalize(const char* what) {
    desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> ops;
    for (auto& op : g.ops)
      ops.push_back(op.get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
        .set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
        .finalize("operation graph");
    desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
        .finalize("engine heuristics");
    int64_t count = 0;
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
          "heuristic result count");
    if (count <= 0)
      throw backend_error(fmt::format("cuDNN found no engine for the {} graph", what));
    std::vector<desc> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(cfgs.back().get());
    }
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()),
          "heuristic results");
    std::string last_error;
    for (int64_t i = 0; i < count && !plan; ++i) {
      desc p(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      p.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle)
          .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[i]);
      cudnnStatus_t st = cudnnBackendFinalize(p.get());
      if (st != CUDNN_STATUS_SUCCESS) {
        char msg[512] = {0};
        cudnnGetLastErrorString(msg, sizeof msg);
        last_error = fmt::format("{} {}", cudnnGetErrorString(st), msg);
        continue;
      }
      int64_t n = 0;
      check(cudnnBackendGetAttribute(p.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &n, &workspace_bytes),
            "plan workspace size");
      // The engine's global index names the kernel family in cuDNN's logs.
      desc engine_desc(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      int64_t got = 0, gidx = -1;
      cudnnBackendDescriptor_t ed = engine_desc.get();
      if (cudnnBackendGetAttribute(cfgs[i].get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                                   &ed) == CUDNN_STATUS_SUCCESS)
        cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got,
                                 &gidx);
      engine = fmt::format("cuDNN {} engine {} (heuristic rank {})", cudnnGetVersion(), gidx, i);
      plan = p.get();
      keep.push_back(std::move(p));
      keep.push_back(std::move(engine_desc));
    }
    if (!plan)
      throw backend_error(
          fmt::format("cuDNN could not build any engine for the {} graph: {}", what, last_error));
    keep.push_back(std::move(graph));
    keep.push_back(std::move(heur));
    for (auto& c : cfgs)
      keep.push_back(std::move(c));
    if (workspace_bytes > 0 && cudaMalloc(&workspace, (size_t)workspace_bytes) != cudaSuccess)
      throw backend_error(
          fmt::format("cudaMalloc of the cuDNN workspace ({} bytes) failed", workspace_bytes));
  }

  // The variant pack of the last execute and the pointers it binds: built once per set of buffers,
  // so that a timed loop over the same buffers only executes the plan (no descriptor is created
  // or finalised inside the timed span, whose time would otherwise count host work).
  std::unique_ptr<desc> pack;
  std::vector<void*> pack_ptrs;
  int packs_built = 0;

  // Binds device pointers (and the host by-value scalars) by uid and runs the plan on `stream`.
  void execute(std::vector<int64_t> uids, std::vector<void*> ptrs, void* stream, const char* what) {
    check(cudnnSetStream(handle, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
    if (!pack || ptrs != pack_ptrs)
      build_pack(std::move(uids), ptrs);
    check(cudnnBackendExecute(handle, plan, pack->get()), what);
  }

  void build_pack(std::vector<int64_t> uids, const std::vector<void*>& ptrs) {
    std::vector<void*> all = ptrs;
    uids.push_back(u_scale);
    all.push_back(&scale);
    if (causal) {
      uids.push_back(u_neg_inf);
      all.push_back(&neg_inf);
    }
    auto p = std::make_unique<desc>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    p->set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids)
        .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, all)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
        .finalize("variant pack");
    pack = std::move(p);
    pack_ptrs = ptrs;
    ++packs_built;
  }
};

// ---------------------------------------------------------------------------------------------
struct sdpa_forward::impl {
  sdpa_plan p;
};

sdpa_forward::sdpa_forward(const attention_shape& s) {
  auto owner = std::make_unique<impl>(); // freed if building the graph throws
  auto& P = owner->p;
  auto& g = P.g;
  P.scale = s.effective_scale();
  P.causal = s.causal;
  const int64_t B = s.batch, H = s.heads, KH = s.kv_heads, Sq = s.seq_q, Sk = s.seq_k,
                D = s.head_dim;
  const std::vector<int64_t> sdims = {B, H, Sq, Sk};

  auto& q = g.tensor(u_q, {B, H, Sq, D}, bshd_strides(H, Sq, D), CUDNN_DATA_BFLOAT16, false);
  auto& kt = g.tensor(u_k, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), CUDNN_DATA_BFLOAT16, false);
  auto& v = g.tensor(u_v, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), CUDNN_DATA_BFLOAT16, false);
  auto& o = g.tensor(u_o, {B, H, Sq, D}, bshd_strides(H, Sq, D), CUDNN_DATA_BFLOAT16, false);
  auto& stats = g.tensor(u_stats, {B, H, Sq, 1}, {H * Sq, Sq, 1, 1}, CUDNN_DATA_FLOAT, false);
  auto& scale = g.tensor(u_scale, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);

  auto& s1 = g.virt(sdims);
  g.matmul(q, kt, s1);
  auto& s2 = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_MUL, s1, &scale, s2);
  const desc* logits = s.causal ? &causal_mask(g, s2, sdims) : &s2;
  auto& mx = g.virt({B, H, Sq, 1});
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, *logits, mx);
  auto& sub = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_SUB, *logits, &mx, sub);
  auto& ex = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_EXP, sub, nullptr, ex);
  auto& sum = g.virt({B, H, Sq, 1});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  auto& lg = g.virt({B, H, Sq, 1});
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, lg);
  g.pointwise(CUDNN_POINTWISE_ADD, mx, &lg, stats);
  auto& pr = g.virt(sdims); // fp32, as the frontend's intermediates
  g.pointwise(CUDNN_POINTWISE_DIV, ex, &sum, pr);
  g.matmul(pr, v, o);
  P.finalize("SDPA forward");
  m_impl = owner.release();
}

sdpa_forward::~sdpa_forward() { delete m_impl; }
sdpa_forward::sdpa_forward(sdpa_forward&& o) noexcept : m_impl(o.m_impl) { o.m_impl = nullptr; }
sdpa_forward& sdpa_forward::operator=(sdpa_forward&& o) noexcept {
  std::swap(m_impl, o.m_impl);
  return *this;
}

std::string sdpa_forward::engine() const { return m_impl->p.engine; }
int sdpa_forward::variant_packs_built() const { return m_impl->p.packs_built; }

void sdpa_forward::run(const void* q, const void* k, const void* v, void* o, float* lse,
                       void* stream) {
  m_impl->p.execute({u_q, u_k, u_v, u_o, u_stats},
                    {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, lse},
                    stream, "SDPA forward execute");
}

// ---------------------------------------------------------------------------------------------
struct sdpa_backward::impl {
  sdpa_plan p;
  void* sum = nullptr;      // fp32 [B,H,Sq]: rowsum(dO * O)
  void* dq_accum = nullptr; // fp32 [B,H,Sq,D]
  uint64_t sum_bytes = 0, dq_accum_bytes = 0;
  ~impl() {
    if (sum)
      cudaFree(sum);
    if (dq_accum)
      cudaFree(dq_accum);
  }
};

namespace {

// The backward graph's tensors in memory (bound by the variant pack) and its by-value scalars.
struct backward_io {
  const desc &q, &kt, &vt, &o, &d_o, &stats, &dq, &dk, &dv, &scale, &one, &sum, &dq_accum;
};

backward_io declare_backward_io(graph_builder& g, const attention_shape& s) {
  const int64_t B = s.batch, H = s.heads, KH = s.kv_heads, Sq = s.seq_q, Sk = s.seq_k,
                D = s.head_dim;
  const auto bf16 = CUDNN_DATA_BFLOAT16;
  const auto f32 = CUDNN_DATA_FLOAT;
  // A braced list is evaluated in order: the descriptors are made in the order written.
  return {g.tensor(u_q, {B, H, Sq, D}, bshd_strides(H, Sq, D), bf16, false),
          g.tensor(u_k, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), bf16, false),
          g.tensor(u_v, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), bf16, false),
          g.tensor(u_o, {B, H, Sq, D}, bshd_strides(H, Sq, D), bf16, false),
          g.tensor(u_do, {B, H, Sq, D}, bshd_strides(H, Sq, D), bf16, false),
          g.tensor(u_stats, {B, H, Sq, 1}, {H * Sq, Sq, 1, 1}, f32, false),
          g.tensor(u_dq, {B, H, Sq, D}, bshd_strides(H, Sq, D), bf16, false),
          g.tensor(u_dk, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), bf16, false),
          g.tensor(u_dv, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), bf16, false),
          g.tensor(u_scale, {1, 1, 1, 1}, {1, 1, 1, 1}, f32, false, true),
          g.tensor(u_one, {1, 1, 1, 1}, {1, 1, 1, 1}, f32, false, true),
          g.tensor(u_sum, {B, H, Sq, 1}, {H * Sq, Sq, 1, 1}, f32, false),
          g.tensor(u_dq_accum, {B, H, Sq, D}, {H * Sq * D, Sq * D, D, 1}, f32, false)};
}

std::vector<int64_t> score_dims(const attention_shape& s) {
  return {s.batch, s.heads, s.seq_q, s.seq_k};
}

// sum = rowsum(dO * O)  (FlashAttention-2's D)
void add_row_sum(graph_builder& g, const backward_io& t, const attention_shape& s) {
  auto& do_o = g.virt({s.batch, s.heads, s.seq_q, s.head_dim});
  g.pointwise(CUDNN_POINTWISE_MUL, t.d_o, &t.o, do_o);
  auto& rs = g.virt({s.batch, s.heads, s.seq_q, 1});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, rs);
  g.pointwise(CUDNN_POINTWISE_MUL, rs, &t.one, t.sum);
}

// P = exp(mask(Q K^T * scale) - Stats)
const desc& add_probabilities(graph_builder& g, const backward_io& t, const attention_shape& s) {
  const std::vector<int64_t> sdims = score_dims(s);
  auto& s1 = g.virt(sdims);
  g.matmul(t.q, t.kt, s1);
  auto& s2 = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_MUL, s1, &t.scale, s2);
  const desc* logits = s.causal ? &causal_mask(g, s2, sdims) : &s2;
  auto& s3 = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_SUB, *logits, &t.stats, s3);
  auto& p = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_EXP, s3, nullptr, p);
  return p;
}

// out = x^T y for scores x [B,H,Sq,Sk] (dV = P^T dO, dK = dS^T Q): per query head, then summed
// over each GQA group.
void add_transposed_product(graph_builder& g, const desc& x, const desc& y, const desc& out,
                            const attention_shape& s) {
  const int64_t B = s.batch, H = s.heads, Sq = s.seq_q, Sk = s.seq_k;
  auto& xt = g.virt_strided({B, H, Sk, Sq}, {H * Sq * Sk, Sq * Sk, 1, Sk}, CUDNN_DATA_BFLOAT16);
  g.reshape(x, xt);
  if (s.heads == s.kv_heads) {
    g.matmul(xt, y, out);
    return;
  }
  auto& full = g.virt({B, H, Sk, s.head_dim}, CUDNN_DATA_BFLOAT16);
  g.matmul(xt, y, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

// dS = (dO V^T - sum) * P * scale
const desc& add_score_grad(graph_builder& g, const backward_io& t, const desc& p,
                           const attention_shape& s) {
  const std::vector<int64_t> sdims = score_dims(s);
  auto& dp = g.virt(sdims);
  g.matmul(t.d_o, t.vt, dp);
  auto& t1 = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, &t.sum, t1);
  auto& t2 = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_MUL, t1, &p, t2);
  auto& ds = g.virt(sdims);
  g.pointwise(CUDNN_POINTWISE_MUL, t2, &t.scale, ds);
  return ds;
}

// dQ = dS K, accumulated in fp32, then cast into our layout
void add_query_grad(graph_builder& g, const backward_io& t, const desc& ds,
                    const attention_shape& s) {
  auto& k = g.virt_strided({s.batch, s.kv_heads, s.seq_k, s.head_dim},
                           bshd_strides(s.kv_heads, s.seq_k, s.head_dim), CUDNN_DATA_BFLOAT16);
  g.reshape(t.kt, k);
  g.matmul(ds, k, t.dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, t.dq_accum, nullptr, t.dq);
}

} // namespace

sdpa_backward::sdpa_backward(const attention_shape& s) {
  auto owner = std::make_unique<impl>(); // freed if building the graph throws
  auto& I = *owner;
  auto& P = I.p;
  auto& g = P.g;
  P.scale = s.effective_scale();
  P.causal = s.causal;
  const backward_io t = declare_backward_io(g, s);
  add_row_sum(g, t, s);
  const desc& p = add_probabilities(g, t, s);
  add_transposed_product(g, p, t.d_o, t.dv, s); // dV = P^T dO
  const desc& ds = add_score_grad(g, t, p, s);
  add_transposed_product(g, ds, t.q, t.dk, s); // dK = dS^T Q
  add_query_grad(g, t, ds, s);
  P.finalize("SDPA backward");

  const int64_t B = s.batch, H = s.heads, Sq = s.seq_q, D = s.head_dim;
  I.sum_bytes = (uint64_t)(B * H * Sq) * 4;
  I.dq_accum_bytes = (uint64_t)(B * H * Sq * D) * 4;
  if (cudaMalloc(&I.sum, I.sum_bytes) != cudaSuccess ||
      cudaMalloc(&I.dq_accum, I.dq_accum_bytes) != cudaSuccess)
    throw backend_error(fmt::format("cudaMalloc of the SDPA backward scratch ({} bytes) failed",
                                    I.sum_bytes + I.dq_accum_bytes));
  m_impl = owner.release();
}

sdpa_backward::~sdpa_backward() { delete m_impl; }
sdpa_backward::sdpa_backward(sdpa_backward&& o) noexcept : m_impl(o.m_impl) { o.m_impl = nullptr; }
sdpa_backward& sdpa_backward::operator=(sdpa_backward&& o) noexcept {
  std::swap(m_impl, o.m_impl);
  return *this;
}

std::string sdpa_backward::engine() const { return m_impl->p.engine; }
int sdpa_backward::variant_packs_built() const { return m_impl->p.packs_built; }

void sdpa_backward::run(const void* q, const void* k, const void* v, const void* o, const void* d_o,
                        const float* lse, void* dq, void* dk, void* dv, void* stream) {
  auto& I = *m_impl;
  // Before cuDNN 9.6 the caller zeroed the dQ accumulator (the frontend did it for its users).
  if (cudnnGetVersion() < 90600)
    if (cudaMemsetAsync(I.dq_accum, 0, I.dq_accum_bytes, static_cast<cudaStream_t>(stream)) !=
        cudaSuccess)
      throw backend_error("cudaMemsetAsync of the SDPA dQ accumulator failed");
  I.p.execute({u_q, u_k, u_v, u_o, u_do, u_stats, u_dq, u_dk, u_dv, u_sum, u_dq_accum, u_one},
              {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v),
               const_cast<void*>(o), const_cast<void*>(d_o), const_cast<float*>(lse), dq, dk, dv,
               I.sum, I.dq_accum, &I.p.one},
              stream, "SDPA backward execute");
}

} // namespace accelbench::attention::cudnn
