// cuDNN fused SDPA, forward and backward, through the cuDNN 9 backend graph API. The
// cudnn_frontend C++ library is not installed and must not be vendored, so the graphs are built
// here from their description as data (sdpa_graph.hpp: the patterns of the frontend's composite
// SDPA nodes, tensor by tensor), after the support rules (sdpa_rules.hpp) have been checked, so
// that a config cuDNN cannot run names the rule it breaks. cuDNN's runtime-fusion engines
// recognise these patterns and run each as one fused flash-attention kernel. Strides describe
// our [B, S, H, D] memory layout, so no transposes are needed.
#include "kernels/attention/cuda/attention_kernels.hpp"

#include "harness/device/device.hpp"

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

// The cuDNN type of a graph tensor: the types sdpa_graph.cpp uses, nothing else.
cudnnDataType_t cudnn_type(sdpa_type t) {
  if (!t)
    return CUDNN_DATA_BOOLEAN;
  switch (*t) {
  case dtype::bf16:
    return CUDNN_DATA_BFLOAT16;
  case dtype::fp16:
    return CUDNN_DATA_HALF;
  case dtype::int32:
    return CUDNN_DATA_INT32;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

cudnnPointwiseMode_t pointwise_mode(sdpa_mode m) {
  switch (m) {
  case sdpa_mode::mul:
    return CUDNN_POINTWISE_MUL;
  case sdpa_mode::sub:
    return CUDNN_POINTWISE_SUB;
  case sdpa_mode::add:
    return CUDNN_POINTWISE_ADD;
  case sdpa_mode::div:
    return CUDNN_POINTWISE_DIV;
  case sdpa_mode::exp:
    return CUDNN_POINTWISE_EXP;
  case sdpa_mode::log:
    return CUDNN_POINTWISE_LOG;
  case sdpa_mode::gen_index:
    return CUDNN_POINTWISE_GEN_INDEX;
  case sdpa_mode::cmp_ge:
    return CUDNN_POINTWISE_CMP_GE;
  case sdpa_mode::binary_select:
    return CUDNN_POINTWISE_BINARY_SELECT;
  default:
    return CUDNN_POINTWISE_IDENTITY;
  }
}

// The backend descriptors of one described graph (sdpa_graph.hpp), one per tensor and operation.
struct graph_builder {
  std::deque<desc> tensors, ops, aux; // deque: references stay valid

  void tensor(const sdpa_tensor& t) {
    desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t align = 16;
    const cudnnDataType_t dt = cudnn_type(t.type);
    d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, t.uid)
        .set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dt)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, align)
        .set_array(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, t.dims)
        .set_array(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, t.strides)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, t.is_virtual)
        .set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, t.by_value)
        .finalize("tensor descriptor");
    tensors.push_back(std::move(d));
  }

  void pointwise(const sdpa_op& o) {
    desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnPointwiseMode_t mode = pointwise_mode(o.mode);
    const cudnnDataType_t prec = cudnn_type(o.compute);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, prec);
    if (o.axis >= 0)
      pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, o.axis);
    pw.finalize("pointwise descriptor");
    desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, at(o.x))
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, at(o.y));
    if (o.b >= 0)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, at(o.b));
    if (o.t >= 0)
      op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, at(o.t));
    op.finalize("pointwise operation");
    aux.push_back(std::move(pw));
    ops.push_back(std::move(op));
  }

  void reduction(const sdpa_op& o) {
    desc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnReduceTensorOp_t mode =
        o.mode == sdpa_mode::reduce_max ? CUDNN_REDUCE_TENSOR_MAX : CUDNN_REDUCE_TENSOR_ADD;
    const cudnnDataType_t prec = cudnn_type(o.compute);
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, prec)
        .finalize("reduction descriptor");
    desc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, at(o.x))
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, at(o.y))
        .finalize("reduction operation");
    aux.push_back(std::move(r));
    ops.push_back(std::move(op));
  }

  void reshape(const sdpa_op& o) {
    desc op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, at(o.x))
        .set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, at(o.y))
        .finalize("reshape operation");
    ops.push_back(std::move(op));
  }

  void matmul(const sdpa_op& o) {
    desc m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t prec = cudnn_type(o.compute);
    m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, prec).finalize("matmul descriptor");
    desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, at(o.x))
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, at(o.b))
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, at(o.y))
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize("matmul operation");
    aux.push_back(std::move(m));
    ops.push_back(std::move(op));
  }

  // Every tensor, then every operation, in the description's order.
  void build(const sdpa_graph& g) {
    for (const auto& t : g.tensors)
      tensor(t);
    for (const auto& o : g.ops) {
      switch (o.kind) {
      case sdpa_op_kind::matmul:
        matmul(o);
        break;
      case sdpa_op_kind::pointwise:
        pointwise(o);
        break;
      case sdpa_op_kind::reduction:
        reduction(o);
        break;
      case sdpa_op_kind::reshape:
        reshape(o);
        break;
      }
    }
  }

private:
  const desc& at(int index) const { return tensors[size_t(index)]; }
};

// The facts the rules need, from the loaded cuDNN and the current device (0 where unknown).
sdpa_env current_env() {
  sdpa_env e;
  e.cudnn_version = int64_t(cudnnGetVersion());
  e.cudnn_cudart_version = int64_t(cudnnGetCudartVersion());
  e.built_cuda_version = CUDART_VERSION;
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess)
    e.sm = 10 * major + minor;
  else
    (void)cudaGetLastError(); // no device: clear the sticky error, the rule is then not checked
  return e;
}

// Throws backend_error naming the first rule the config or the installation breaks.
void require_supported(const attention_shape& s, dtype t, bool backward) {
  if (auto f = check_sdpa(s, t, backward, current_env()))
    throw backend_error(f->message());
}

// A graph runs the tensors of the type it was built for.
void require_type(const char* graph, dtype built, dtype given) {
  if (given != built)
    throw backend_error(fmt::format("cuDNN SDPA {}: built for {}, given {} tensors", graph,
                                    to_string(built), to_string(given)));
}

} // namespace

sdpa_env environment() { return current_env(); }

std::string library_path() { return device::cudnn_library_path(); }

std::string unsupported_reason(const attention_shape& s, dtype t, bool backward) {
  // Installation rules (cuDNN's CUDA major, version, GPU) fail the run when it builds its graph;
  // here only what the config asks.
  const auto f = check_sdpa(s, t, backward, current_env());
  return f && f->kind == sdpa_rule_kind::config ? f->message() : std::string();
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

  // The backend descriptors of the described graph, then the plan.
  void build(const sdpa_graph& graph, const char* what) {
    g.build(graph);
    finalize(what);
  }

  // Every named rule held (require_supported ran first), so this is cuDNN's own refusal.
  static std::string no_engine(const char* what, const std::string& why) {
    const sdpa_env e = current_env();
    return fmt::format("cuDNN {} (built for CUDA {}) found no engine for the {} graph on sm_{} "
                       "although every named SDPA rule held: {}",
                       cudnn_version_string(e.cudnn_version),
                       cuda_version_text(e.cudnn_cudart_version), what, e.sm, why);
  }

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
      throw backend_error(no_engine(what, "the heuristics returned no engine config"));
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
      throw backend_error(no_engine(what, "no engine config finalised: " + last_error));
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
  void execute(std::vector<int64_t> uids, const std::vector<void*>& ptrs, void* stream,
               const char* what) {
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
  dtype type = dtype::bf16;
  bool inference = false;
};

sdpa_forward::sdpa_forward(const attention_shape& s, dtype t, bool inference) {
  require_supported(s, t, false);
  auto owner = std::make_unique<impl>(); // freed if building the graph throws
  owner->p.scale = s.effective_scale();
  owner->p.causal = s.causal;
  owner->type = t;
  owner->inference = inference;
  owner->p.build(describe_forward(s, t, !inference),
                 inference ? "SDPA inference forward" : "SDPA forward");
  m_impl = std::move(owner);
}

sdpa_forward::~sdpa_forward() = default;
sdpa_forward::sdpa_forward(sdpa_forward&&) noexcept = default;
sdpa_forward& sdpa_forward::operator=(sdpa_forward&&) noexcept = default;

std::string sdpa_forward::engine() const { return m_impl->p.engine; }
int sdpa_forward::variant_packs_built() const { return m_impl->p.packs_built; }

void sdpa_forward::run(const attention_tensors& io, void* stream) {
  require_type("forward", m_impl->type, io.type);
  std::vector<void*> ptrs = {const_cast<void*>(io.q), const_cast<void*>(io.k),
                             const_cast<void*>(io.v), io.o};
  std::vector<int64_t> uids = {u_q, u_k, u_v, u_o};
  if (!m_impl->inference) {
    uids.push_back(u_stats);
    ptrs.push_back(io.lse);
  }
  m_impl->p.execute(std::move(uids), ptrs, stream, "SDPA forward execute");
}

// ---------------------------------------------------------------------------------------------
struct sdpa_backward::impl {
  sdpa_plan p;
  dtype type = dtype::bf16;
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

sdpa_backward::sdpa_backward(const attention_shape& s, dtype t) {
  require_supported(s, t, true);
  auto owner = std::make_unique<impl>(); // freed if building the graph throws
  auto& I = *owner;
  I.p.scale = s.effective_scale();
  I.p.causal = s.causal;
  I.type = t;
  I.p.build(describe_backward(s, t), "SDPA backward");

  const int64_t B = s.batch, H = s.heads, Sq = s.seq_q, D = s.head_dim;
  I.sum_bytes = (uint64_t)(B * H * Sq) * 4;
  I.dq_accum_bytes = (uint64_t)(B * H * Sq * D) * 4;
  if (cudaMalloc(&I.sum, I.sum_bytes) != cudaSuccess ||
      cudaMalloc(&I.dq_accum, I.dq_accum_bytes) != cudaSuccess)
    throw backend_error(fmt::format("cudaMalloc of the SDPA backward scratch ({} bytes) failed",
                                    I.sum_bytes + I.dq_accum_bytes));
  m_impl = std::move(owner);
}

sdpa_backward::~sdpa_backward() = default;
sdpa_backward::sdpa_backward(sdpa_backward&&) noexcept = default;
sdpa_backward& sdpa_backward::operator=(sdpa_backward&&) noexcept = default;

std::string sdpa_backward::engine() const { return m_impl->p.engine; }
int sdpa_backward::variant_packs_built() const { return m_impl->p.packs_built; }

void sdpa_backward::run(const attention_tensors& io, void* stream) {
  auto& I = *m_impl;
  require_type("backward", I.type, io.type);
  // Before cuDNN 9.6 the caller zeroed the dQ accumulator (the frontend did it for its users).
  if (cudnnGetVersion() < 90600)
    if (cudaMemsetAsync(I.dq_accum, 0, I.dq_accum_bytes, static_cast<cudaStream_t>(stream)) !=
        cudaSuccess)
      throw backend_error("cudaMemsetAsync of the SDPA dQ accumulator failed");
  I.p.execute({u_q, u_k, u_v, u_o, u_do, u_stats, u_dq, u_dk, u_dv, u_sum, u_dq_accum, u_one},
              {const_cast<void*>(io.q), const_cast<void*>(io.k), const_cast<void*>(io.v), io.o,
               const_cast<void*>(io.d_o), io.lse, io.dq, io.dk, io.dv, I.sum, I.dq_accum, &I.p.one},
              stream, "SDPA backward execute");
}

} // namespace accelbench::attention::cudnn
