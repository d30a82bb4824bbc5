// cuDNN fused SDPA forward through the cuDNN 9 backend graph API (issue 8 §4). The cudnn_frontend
// C++ library is not installed and must not be vendored, so the graph is built here the way the
// frontend's SDPA node builds it (cudnn_frontend, "scaled_dot_product_flash_attention" node):
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
// cuDNN's runtime-fusion engines recognise this pattern and run it as one fused flash-attention
// kernel. Strides describe our [B, S, H, D] memory layout, so no transposes are needed.
#include "workloads/attention/cuda/attention_cuda.hpp"

#include <cudnn_graph.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::attention::cudnn {

namespace {

[[noreturn]] void fail(cudnnStatus_t st, const char* what) {
  char msg[1024] = {0};
  cudnnGetLastErrorString(msg, sizeof msg);
  throw backend_error(fmt::format("cuDNN {} failed: {} ({}){}", what, cudnnGetErrorString(st), (int)st,
                                  msg[0] ? std::string(": ") + msg : std::string()));
}
void check(cudnnStatus_t st, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS) fail(st, what);
}

// A backend descriptor (move-only RAII).
class desc {
public:
  explicit desc(cudnnBackendDescriptorType_t t) {
    check(cudnnBackendCreateDescriptor(t, &m_d), "create descriptor");
  }
  ~desc() {
    if (m_d) cudnnBackendDestroyDescriptor(m_d);
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
  desc& set_array(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const std::vector<T>& v) {
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
enum uid : int64_t { u_q = 1, u_k, u_v, u_o, u_stats, u_scale, u_neg_inf, u_first_virtual = 100 };

struct graph_builder {
  std::deque<desc> tensors, ops, aux;  // deque: references stay valid
  int64_t next_uid = u_first_virtual;

  desc& tensor(int64_t id, std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t dt,
               bool is_virtual, bool by_value = false) {
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
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw.finalize("pointwise descriptor");
    desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
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

} // namespace

std::string unsupported_reason(const attention_shape& s, bool bf16, bool backward) {
  if (backward)
    return "impl=cudnn runs the forward pass only in this build (the SDPA backward graph is not "
           "written yet); use impl=native for pass=bwd/fwd_bwd";
  if (!bf16) return "impl=cudnn fused attention needs dtype=bf16 (cuDNN's flash-attention engines take fp16/bf16)";
  if (s.head_dim % 8 != 0 || s.head_dim > 256)
    return fmt::format("impl=cudnn needs head_dim a multiple of 8 and at most 256 (got head_dim={})", s.head_dim);
  if (s.causal && s.seq_q != s.seq_k)
    return fmt::format("impl=cudnn here masks top-left only: causal needs seq_q == seq_k (got seq_q={} seq_k={}); "
                       "use impl=native", s.seq_q, s.seq_k);
  return {};
}

struct sdpa_forward::impl {
  cudnnHandle_t handle = nullptr;
  graph_builder g;
  std::vector<desc> keep;  // graph, heuristics, configs, plan
  cudnnBackendDescriptor_t plan = nullptr;
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
  float scale = 1.0f;
  float neg_inf = -INFINITY;
  std::string engine;
  ~impl() {
    if (workspace) cudaFree(workspace);
    keep.clear();
    if (handle) cudnnDestroy(handle);
  }
};

sdpa_forward::sdpa_forward(const attention_shape& s) : m_impl(new impl) {
  auto& I = *m_impl;
  auto& g = I.g;
  check(cudnnCreate(&I.handle), "cudnnCreate");
  I.scale = s.effective_scale();
  const int64_t B = s.batch, H = s.heads, KH = s.kv_heads, Sq = s.seq_q, Sk = s.seq_k, D = s.head_dim;

  // Memory is [B, S, heads, D]; the logical dims are [B, heads, S, D].
  auto& q = g.tensor(u_q, {B, H, Sq, D}, {Sq * H * D, D, H * D, 1}, CUDNN_DATA_BFLOAT16, false);
  auto& kt = g.tensor(u_k, {B, KH, D, Sk}, {Sk * KH * D, D, 1, KH * D}, CUDNN_DATA_BFLOAT16, false);
  auto& v = g.tensor(u_v, {B, KH, Sk, D}, {Sk * KH * D, D, KH * D, 1}, CUDNN_DATA_BFLOAT16, false);
  auto& o = g.tensor(u_o, {B, H, Sq, D}, {Sq * H * D, D, H * D, 1}, CUDNN_DATA_BFLOAT16, false);
  auto& stats = g.tensor(u_stats, {B, H, Sq, 1}, {H * Sq, Sq, 1, 1}, CUDNN_DATA_FLOAT, false);
  auto& scale = g.tensor(u_scale, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);

  auto& s1 = g.virt({B, H, Sq, Sk});
  g.matmul(q, kt, s1);
  auto& s2 = g.virt({B, H, Sq, Sk});
  g.pointwise(CUDNN_POINTWISE_MUL, s1, &scale, s2);
  const desc* logits = &s2;
  if (s.causal) {
    auto& neg = g.tensor(u_neg_inf, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
    auto& row = g.virt({B, H, Sq, Sk}, CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s2, nullptr, row, nullptr, 2);
    auto& col = g.virt({B, H, Sq, Sk}, CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s2, nullptr, col, nullptr, 3);
    auto& keep_mask = g.virt({B, H, Sq, Sk}, CUDNN_DATA_BOOLEAN);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep_mask);
    auto& masked = g.virt({B, H, Sq, Sk});
    // select(x, b, t): y = t ? x : b
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, s2, &neg, masked, &keep_mask);
    logits = &masked;
  }
  auto& mx = g.virt({B, H, Sq, 1});
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, *logits, mx);
  auto& sub = g.virt({B, H, Sq, Sk});
  g.pointwise(CUDNN_POINTWISE_SUB, *logits, &mx, sub);
  auto& ex = g.virt({B, H, Sq, Sk});
  g.pointwise(CUDNN_POINTWISE_EXP, sub, nullptr, ex);
  auto& sum = g.virt({B, H, Sq, 1});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  auto& lg = g.virt({B, H, Sq, 1});
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, lg);
  g.pointwise(CUDNN_POINTWISE_ADD, mx, &lg, stats);
  auto& p = g.virt({B, H, Sq, Sk});  // fp32, as the frontend's intermediates
  g.pointwise(CUDNN_POINTWISE_DIV, ex, &sum, p);
  g.matmul(p, v, o);

  // Operation graph -> heuristics (mode A) -> first engine config that finalises into a plan.
  desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops;
  for (auto& op : g.ops) ops.push_back(op.get());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, I.handle)
      .set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
      .finalize("operation graph");
  desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
      .finalize("engine heuristics");
  int64_t count = 0;
  check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                 &count, nullptr),
        "heuristic result count");
  if (count <= 0) throw backend_error("cuDNN found no engine for the SDPA forward graph");
  std::vector<desc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(cfgs.back().get());
  }
  check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                 &count, raw.data()),
        "heuristic results");
  std::string last_error;
  for (int64_t i = 0; i < count && !I.plan; ++i) {
    desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, I.handle)
        .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[i]);
    cudnnStatus_t st = cudnnBackendFinalize(plan.get());
    if (st != CUDNN_STATUS_SUCCESS) {
      char msg[512] = {0};
      cudnnGetLastErrorString(msg, sizeof msg);
      last_error = fmt::format("{} {}", cudnnGetErrorString(st), msg);
      continue;
    }
    int64_t n = 0;
    check(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                   &I.workspace_bytes),
          "plan workspace size");
    // The engine's global index names the kernel family in cuDNN's logs.
    desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t got = 0;
    cudnnBackendDescriptor_t ed = engine.get();
    int64_t gidx = -1;
    if (cudnnBackendGetAttribute(cfgs[i].get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                                 &ed) == CUDNN_STATUS_SUCCESS)
      cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &gidx);
    I.engine = fmt::format("cuDNN {} engine {} (heuristic rank {})", cudnnGetVersion(), gidx, i);
    I.plan = plan.get();
    I.keep.push_back(std::move(plan));
    I.keep.push_back(std::move(engine));
  }
  if (!I.plan) throw backend_error("cuDNN could not build any engine for the SDPA forward graph: " + last_error);
  I.keep.push_back(std::move(graph));
  I.keep.push_back(std::move(heur));
  for (auto& c : cfgs) I.keep.push_back(std::move(c));
  if (I.workspace_bytes > 0 && cudaMalloc(&I.workspace, (size_t)I.workspace_bytes) != cudaSuccess)
    throw backend_error(fmt::format("cudaMalloc of the cuDNN workspace ({} bytes) failed", I.workspace_bytes));
}

sdpa_forward::~sdpa_forward() { delete m_impl; }
sdpa_forward::sdpa_forward(sdpa_forward&& o) noexcept : m_impl(o.m_impl) { o.m_impl = nullptr; }
sdpa_forward& sdpa_forward::operator=(sdpa_forward&& o) noexcept {
  std::swap(m_impl, o.m_impl);
  return *this;
}

std::string sdpa_forward::engine() const { return m_impl->engine; }

void sdpa_forward::run(const void* q, const void* k, const void* v, void* o, float* lse, void* stream) {
  auto& I = *m_impl;
  check(cudnnSetStream(I.handle, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  std::vector<int64_t> uids = {u_q, u_k, u_v, u_o, u_stats, u_scale};
  std::vector<void*> ptrs = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, lse, &I.scale};
  // By-value tensors are bound to host memory; only the causal graph has the -inf constant.
  bool has_neg = false;
  for (auto& t : I.g.tensors) {
    int64_t id = 0, n = 0;
    cudnnBackendGetAttribute(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &id);
    if (id == u_neg_inf) has_neg = true;
  }
  if (has_neg) {
    uids.push_back(u_neg_inf);
    ptrs.push_back(&I.neg_inf);
  }
  desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids)
      .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, I.workspace)
      .finalize("variant pack");
  check(cudnnBackendExecute(I.handle, I.plan, pack.get()), "SDPA forward execute");
}

} // namespace accelbench::attention::cudnn
