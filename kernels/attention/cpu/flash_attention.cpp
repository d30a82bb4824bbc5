// Dispatch of the fused attention kernels to an ISA variant, their workspace, the bf16 entry
// points and the double-precision references.
#include "kernels/attention/cpu/flash_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include <omp.h>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "kernels/attention/cpu/flash_kernels.hpp"

namespace accelbench::attention {

namespace detail {

namespace {
int64_t thread_stride_of(int64_t floats) { return round_up(floats, 64); } // own cache lines

// The tiles of a shape, common to both passes: padded sizes and tile counts.
workspace_layout tiled(const attention_shape& s, int threads) {
  workspace_layout L;
  L.threads = threads;
  L.dp = round_up(s.head_dim, pad_d);
  L.skp = round_up(s.seq_k, tile_k);
  L.sqp = round_up(s.seq_q, tile_q);
  L.n_kt = L.skp / tile_k;
  L.n_qt = L.sqp / tile_q;
  return L;
}
} // namespace

workspace_layout forward_layout(const attention_shape& s, int threads) {
  workspace_layout L = tiled(s, threads);
  const int64_t kv = s.batch * s.kv_heads * L.skp * L.dp;
  L.kt = 0;
  L.vp = L.kt + kv;
  L.thread = L.vp + kv;
  // + tile_q * tile_k: the bf16 variant's P tile (half of it used).
  L.thread_stride = thread_stride_of(2 * tile_q * L.dp + 2 * tile_q * tile_k + 3 * tile_q + L.dp);
  L.total = L.thread + threads * L.thread_stride;
  return L;
}

workspace_layout backward_layout(const attention_shape& s, int threads) {
  workspace_layout L = tiled(s, threads);
  // Split a head's key tiles only when batch x heads cannot keep the threads busy (each split
  // costs one more dQ partial of seq_q x head_dim).
  const int64_t bh = s.batch * s.heads;
  L.splits = bh >= 2 * int64_t(threads)
                 ? 1
                 : std::min<int64_t>(L.n_kt, ceil_div(2 * int64_t(threads), bh));
  const int64_t kv = s.batch * s.kv_heads * L.skp * L.dp;
  const int64_t qh = s.batch * s.heads * L.sqp * L.dp;
  const int64_t kh = s.batch * s.heads * L.skp * L.dp;
  L.kt = 0;
  L.kp = L.kt + kv;
  L.vt = L.kp + kv;
  L.qp = L.vt + kv;
  L.dop = L.qp + qh;
  L.dvec = L.dop + qh;
  L.lse2 = L.dvec + s.batch * s.heads * L.sqp;
  L.dq = round_up(L.lse2 + s.batch * s.heads * L.sqp, 16);
  L.dkh = L.dq + L.splits * qh;
  L.dvh = L.dkh + kh;
  L.thread = L.dvh + kh;
  // + 2 * tile_q * tile_k: the bf16 variant's P and dS tiles (three bf16 copies).
  L.thread_stride = thread_stride_of(4 * tile_q * tile_k + 2 * tile_k * L.dp + 2 * L.dp);
  L.total = L.thread + threads * L.thread_stride;
  return L;
}

namespace {

const kernel_variant* variant_by_name(const std::string& name) {
  if (name == "avx512")
    return &variant_avx512;
  if (name == "avx2")
    return &variant_avx2;
  if (name == "generic")
    return &variant_generic;
  return nullptr;
}

bool cpu_has(const std::string& name) {
  __builtin_cpu_init();
  if (name == "avx512_bf16")
    return cpu_has("avx512") && __builtin_cpu_supports("avx512bf16");
  if (name == "avx512")
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("fma");
  if (name == "avx2")
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return name == "generic";
}

std::atomic<const kernel_variant*> g_variant{nullptr};

const kernel_variant& current() {
  const kernel_variant* v = g_variant.load();
  if (v)
    return *v;
  // ACCELBENCH_ATTN_ISA selects a variant this CPU can run; otherwise the best one.
  if (const char* env = std::getenv("ACCELBENCH_ATTN_ISA"))
    if (variant_by_name(env) && cpu_has(env))
      v = variant_by_name(env);
  for (const char* name : {"avx512", "avx2", "generic"})
    if (!v && cpu_has(name))
      v = variant_by_name(name);
  if (!v)
    v = &variant_generic;
  g_variant.store(v);
  return *v;
}

// The requested bf16 path: "avx512_bf16" unless ACCELBENCH_ATTN_BF16=fp32 or the CPU lacks it.
std::atomic<bool> g_bf16_native{false};
std::atomic<bool> g_bf16_resolved{false};

bool bf16_native_requested() {
  if (!g_bf16_resolved.load()) {
    const char* env = std::getenv("ACCELBENCH_ATTN_BF16");
    const bool forced_fp32 = env && std::string(env) == "fp32";
    g_bf16_native.store(!forced_fp32 && cpu_has("avx512_bf16"));
    g_bf16_resolved.store(true);
  }
  return g_bf16_native.load();
}

// The variant a call of element type e runs: bf16 calls take the native bf16 kernels when they
// are requested and the AVX-512 kernels are current.
const kernel_variant& variant_for(dtype e) {
  const kernel_variant& v = current();
  if (e == dtype::bf16 && &v == &variant_avx512 && bf16_native_requested())
    return variant_avx512_bf16;
  return v;
}

struct free_deleter {
  void operator()(float* p) const { std::free(p); }
};
struct workspace {
  std::unique_ptr<float, free_deleter> data;
  int64_t floats = 0;
  float* get(int64_t n) {
    if (n > floats) {
      data.reset();
      const size_t bytes = size_t(round_up(n, 16)) * sizeof(float);
      data.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data)
        throw backend_error("attention: cannot allocate a workspace of " + std::to_string(bytes) +
                            " bytes");
      floats = n;
    }
    return data.get();
  }
};
thread_local workspace t_workspace;

// The element types the kernels read and write (the math is fp32 for both).
void require_cpu_dtype(dtype t) { require_dtype("attention (cpu)", t, {dtype::fp32, dtype::bf16}); }

void run_forward(const attention_shape& s, const attention_tensors& io) {
  check_shape(s);
  require_cpu_dtype(io.type);
  const workspace_layout L = forward_layout(s, omp_get_max_threads());
  variant_for(io.type).forward(s, io, t_workspace.get(L.total), L);
}

void run_backward(const attention_shape& s, const attention_tensors& io) {
  check_shape(s);
  require_cpu_dtype(io.type);
  const workspace_layout L = backward_layout(s, omp_get_max_threads());
  variant_for(io.type).backward(s, io, t_workspace.get(L.total), L);
}

} // namespace
} // namespace detail

std::string kernel_isa() { return detail::current().isa; }

std::vector<std::string> available_isas() {
  std::vector<std::string> out;
  for (const char* name : {"avx512", "avx2", "generic"})
    if (detail::cpu_has(name))
      out.emplace_back(name);
  return out;
}

void set_kernel_isa(const std::string& isa) {
  const detail::kernel_variant* v = detail::variant_by_name(isa);
  if (!v)
    throw input_error("attention: unknown kernel ISA '" + isa + "' (avx512, avx2, generic)");
  if (!detail::cpu_has(isa))
    throw input_error("attention: this CPU cannot run the '" + isa + "' kernels");
  detail::g_variant.store(v);
}

std::string bf16_path() {
  return &detail::variant_for(dtype::bf16) == &detail::variant_avx512_bf16 ? "avx512_bf16" : "fp32";
}

std::vector<std::string> available_bf16_paths() {
  std::vector<std::string> out;
  if (detail::cpu_has("avx512_bf16"))
    out.emplace_back("avx512_bf16");
  out.emplace_back("fp32");
  return out;
}

void set_bf16_path(const std::string& path) {
  if (path == "auto") {
    detail::g_bf16_resolved.store(false);
    return;
  }
  if (path != "avx512_bf16" && path != "fp32")
    throw input_error("attention: unknown bf16 path '" + path + "' (avx512_bf16, fp32, auto)");
  if (path == "avx512_bf16" && !detail::cpu_has(path))
    throw input_error("attention: this CPU cannot run the 'avx512_bf16' kernels (no AVX512-BF16)");
  detail::g_bf16_native.store(path == "avx512_bf16");
  detail::g_bf16_resolved.store(true);
}

uint64_t forward_workspace_bytes(const attention_shape& s) {
  return uint64_t(detail::forward_layout(s, omp_get_max_threads()).total) * sizeof(float);
}
uint64_t backward_workspace_bytes(const attention_shape& s) {
  return uint64_t(detail::backward_layout(s, omp_get_max_threads()).total) * sizeof(float);
}

void reserve_workspace(const attention_shape& s) {
  const int threads = omp_get_max_threads();
  detail::t_workspace.get(std::max(detail::forward_layout(s, threads).total,
                                   detail::backward_layout(s, threads).total));
}

void flash_forward(const attention_shape& s, const attention_tensors& io) {
  detail::run_forward(s, io);
}
void flash_backward(const attention_shape& s, const attention_tensors& io) {
  detail::run_backward(s, io);
}

void flash_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                   float* o, float* lse) {
  flash_forward(s, {.type = dtype::fp32, .q = q, .k = k, .v = v, .o = o, .lse = lse});
}
// The pointer overloads of a backward, fp32 and bf16 alike. (A backward reads o and lse, which
// attention_tensors holds as a forward's outputs: the casts below never lead to a write.)
template <class T>
void backward_of(const attention_shape& s, dtype type, const T* q, const T* k, const T* v,
                 const T* o, const T* d_o, const float* lse, T* dq, T* dk, T* dv) {
  flash_backward(s, {.type = type,
                     .q = q,
                     .dq = dq,
                     .k = k,
                     .dk = dk,
                     .v = v,
                     .dv = dv,
                     .o = const_cast<T*>(o),
                     .d_o = d_o,
                     .lse = const_cast<float*>(lse)});
}
void flash_backward(const attention_shape& s, const float* q, const float* k, const float* v,
                    const float* o, const float* d_o, const float* lse, float* dq, float* dk,
                    float* dv) {
  backward_of(s, dtype::fp32, q, k, v, o, d_o, lse, dq, dk, dv);
}
void flash_forward_bf16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v,
                        bf16* o, float* lse) {
  flash_forward(s, {.type = dtype::bf16, .q = q, .k = k, .v = v, .o = o, .lse = lse});
}
void flash_backward_bf16(const attention_shape& s, const bf16* q, const bf16* k, const bf16* v,
                         const bf16* o, const bf16* d_o, const float* lse, bf16* dq, bf16* dk,
                         bf16* dv) {
  backward_of(s, dtype::bf16, q, k, v, o, d_o, lse, dq, dk, dv);
}

// ---------------------------------------------------------------------------------------------
void to_float(const bf16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = accelbench::bf16_to_float(in[i]);
}
void to_bf16(const float* in, bf16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = accelbench::float_to_bf16(in[i]);
}

} // namespace accelbench::attention
