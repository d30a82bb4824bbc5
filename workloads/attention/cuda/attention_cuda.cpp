// The attention workload's CUDA backend: device buffers, the timed kernel, metrics and the
// correctness check against the CPU reference (attention_check.hpp).
#include "workloads/attention/cuda/attention_cuda.hpp"
#include "harness/core/hash.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/bf16.hpp"
#include "harness/core/counter_rng.hpp"
#include "harness/core/datasheet_peak.hpp"
#include "harness/core/error.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/parallel.hpp"
#include "harness/device/device.hpp"
#include "harness/device/device_kernel.hpp"
#include "harness/measure/kernel_run.hpp"
#include "workloads/attention/attention_check.hpp"

namespace accelbench::attention {

namespace {

uint64_t q_elems(const attention_shape& s) {
  return (uint64_t)(s.batch * s.seq_q * s.heads * s.head_dim);
}
uint64_t kv_elems(const attention_shape& s) {
  return (uint64_t)(s.batch * s.seq_k * s.kv_heads * s.head_dim);
}
uint64_t rows(const attention_shape& s) { return (uint64_t)(s.batch * s.heads * s.seq_q); }

// Device tensors of one run, fp32 or bf16 (the dtypes of the spec).
struct device_tensors {
  dtype type;
  size_t es;
  device::device_buffer q, k, v, o, d_o, dq, dk, dv, lse, delta;
  device_tensors(const attention_shape& s, dtype t, bool backward)
      : type(t), es(element_size(t)), q(q_elems(s) * es), k(kv_elems(s) * es), v(kv_elems(s) * es),
        o(q_elems(s) * es), lse(rows(s) * 4) {
    if (backward) {
      d_o = device::device_buffer(q_elems(s) * es);
      dq = device::device_buffer(q_elems(s) * es);
      dk = device::device_buffer(kv_elems(s) * es);
      dv = device::device_buffer(kv_elems(s) * es);
      delta = device::device_buffer(rows(s) * 4);
    }
  }
  void put(device::device_buffer& b, const std::vector<float>& x) {
    if (es == 4)
      return b.upload(x.data(), x.size() * 4);
    std::vector<uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      h[i] = float_to_bf16(x[i]);
    b.upload(h.data(), h.size() * 2);
  }
  std::vector<float> get(const device::device_buffer& b, uint64_t n) const {
    std::vector<float> x(n);
    if (es == 4) {
      b.download(x.data(), n * 4);
    } else {
      std::vector<uint16_t> h(n);
      b.download(h.data(), n * 2);
      for (uint64_t i = 0; i < n; ++i)
        x[i] = bf16_to_float(h[i]);
    }
    return x;
  }
  std::vector<float> get_lse(uint64_t n) const {
    std::vector<float> x(n);
    lse.download(x.data(), n * 4);
    return x;
  }
  // The kernels' view (the backward's buffers are null in a forward-only run).
  attention_tensors tensors() {
    return {.type = type,
            .q = q.get(),
            .dq = dq.get(),
            .k = k.get(),
            .dk = dk.get(),
            .v = v.get(),
            .dv = dv.get(),
            .o = o.get(),
            .d_o = d_o.get(),
            .lse = lse.as<float>()};
  }
};

// One timed iteration: the passes of the config.
class attention_kernel : public device::device_kernel {
public:
  attention_kernel(const attention_shape& s, pass_kind p, const std::string& impl,
                   device_tensors& t, int device_index = 0)
      : device::device_kernel(device_index), m_s(s), m_pass(p), m_t(t) {
    if (impl == "cudnn") {
      m_cudnn = std::make_unique<cudnn::sdpa_forward>(s, t.type);
      if (p != pass_kind::fwd)
        m_cudnn_bwd = std::make_unique<cudnn::sdpa_backward>(s, t.type);
    }
  }
  void forward(void* stream) {
    if (m_cudnn)
      m_cudnn->run(m_t.tensors(), stream);
    else
      native::forward(m_s, m_t.tensors(), stream);
  }
  void backward(void* stream) {
    if (m_cudnn_bwd)
      return m_cudnn_bwd->run(m_t.tensors(), stream);
    native::backward(m_s, m_t.tensors(), m_t.delta.as<float>(), stream);
  }
  void enqueue(void* stream) override {
    if (m_pass != pass_kind::bwd)
      forward(stream);
    if (m_pass != pass_kind::fwd)
      backward(stream);
  }
  std::string engine() const {
    if (!m_cudnn)
      return "accelbench native FlashAttention-2-style (" + native::kernel_name(m_s, m_t.type) +
             ")";
    if (!m_cudnn_bwd)
      return m_cudnn->engine();
    return "forward: " + m_cudnn->engine() + "; backward: " + m_cudnn_bwd->engine();
  }

private:
  attention_shape m_s;
  pass_kind m_pass;
  device_tensors& m_t;
  std::unique_ptr<cudnn::sdpa_forward> m_cudnn;
  std::unique_ptr<cudnn::sdpa_backward> m_cudnn_bwd;
};

// Normal(0, 1), as the CPU workload draws: scores then spread enough that the softmax's max and
// sum matter (uniform [-1, 1] inputs give a nearly flat softmax, which hides their errors).
// Element i is counter_rng::normal(seed, i): filled over all the host's cores (~134M elements for
// B4 H16 S4096 took seconds on one thread).
std::vector<float> random_tensor(uint64_t n, uint64_t seed, dtype t) {
  std::vector<float> x(n);
  parallel_for((int64_t)n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const float e = counter_rng::normal(seed, (uint64_t)i);
      x[i] = t == dtype::bf16 ? bf16_to_float(float_to_bf16(e)) : e;
    }
  });
  return x;
}

} // namespace

const std::vector<std::string>& cuda_attention_impls() {
  static const std::vector<std::string> v = {"cudnn", "native"};
  return v;
}

uint64_t attention_cuda_device_bytes(const attention_params& p) {
  const attention_shape& s = p.shape;
  const uint64_t es = element_size(p.type);
  uint64_t b = (2 * q_elems(s) + 2 * kv_elems(s)) * es + rows(s) * 4;
  if (p.backward())
    b += (2 * q_elems(s) + 2 * kv_elems(s)) * es + rows(s) * 4;
  // impl=cudnn backward also holds rowsum(dO*O) and an fp32 dQ accumulator (the plan's own
  // workspace is known only once cuDNN has built it; the 5% margin of memory_refusal covers it).
  if (p.backward() && p.impl == "cudnn")
    b += rows(s) * 4 + q_elems(s) * 4;
  return b;
}

std::string attention_cuda_unavailable_reason(const attention_params& p) {
  const attention_shape& s = p.shape;
  const auto& impls = cuda_attention_impls();
  if (std::find(impls.begin(), impls.end(), p.impl) == impls.end())
    return fmt::format("impl={} is not a CUDA attention implementation (cudnn, native)", p.impl);
  if (p.impl == "native" && s.head_dim > 256)
    return fmt::format("impl=native supports head_dim up to 256 (got head_dim={})", s.head_dim);
  if (p.impl == "cudnn")
    if (auto r = cudnn::unsupported_reason(s, p.type, p.backward()); !r.empty())
      return r;
  std::string why;
  if (!device::cuda_available(&why))
    return "CUDA backend: " + why;
  const auto st = device::query_cuda(true);
  return device::memory_refusal(attention_cuda_device_bytes(p), st.gpus.front().free_memory);
}

namespace native {

double executed_flops(const attention_shape& s, pass_kind p) {
  // Forward: Q K^T and P V (4*D per visible pair). Backward: the dQ kernel does Q K^T, dO V^T
  // and dS K (6*D), the dK/dV kernel Q K^T, dO V^T, P^T dO and dS^T Q (8*D).
  const double per_pair =
      2.0 * (double)s.batch * (double)s.heads * (double)s.head_dim * attention_pairs(s);
  const double fwd = 2.0 * per_pair, bwd = 7.0 * per_pair;
  return p == pass_kind::fwd ? fwd : p == pass_kind::bwd ? bwd : fwd + bwd;
}

} // namespace native

namespace {

// Seeded inputs (rounded to bf16 for a bf16 run) uploaded to the device tensors.
struct host_inputs {
  std::vector<float> q, k, v, d_o;
};
host_inputs upload_inputs(const attention_params& p, device_tensors& t, uint64_t seed) {
  const attention_shape& s = p.shape;
  host_inputs in;
  in.q = random_tensor(q_elems(s), counter_rng::stream_seed(seed, 0), p.type);
  in.k = random_tensor(kv_elems(s), counter_rng::stream_seed(seed, 1), p.type);
  in.v = random_tensor(kv_elems(s), counter_rng::stream_seed(seed, 2), p.type);
  t.put(t.q, in.q);
  t.put(t.k, in.k);
  t.put(t.v, in.v);
  if (p.backward()) {
    in.d_o = random_tensor(q_elems(s), counter_rng::stream_seed(seed, 3), p.type);
    t.put(t.d_o, in.d_o);
  }
  // The kernel stream is non-blocking: nothing may be left of the uploads when it starts (as
  // the GEMM path; device_buffer::upload also waits for its own copy).
  device::synchronize("attention inputs upload");
  return in;
}

void record_implementation(const attention_params& p, const attention_kernel& kern,
                           const device::gpu_info& gpu, run& out) {
  out.extra["implementation"] = kern.engine();
  out.extra["impl"] = p.impl;
  out.extra["device"] = gpu.to_json();
  out.extra["flops_per_iteration"] = p.flops();
  out.extra["flop_convention"] = k_flop_convention;
  if (p.impl == "native") {
    out.extra["native_kernel"] = native::kernel_name(p.shape, p.type);
    out.extra["executed_flops_per_iteration"] = native::executed_flops(p.shape, p.pass);
    out.extra["executed_flops_note"] =
        "the native backward recomputes Q K^T and dO V^T in both of its kernels (14*head_dim per "
        "visible pair against the convention's 10): tflops follows the convention, as for cuDNN";
  }
}

// What cuDNN this process loaded (a CUDA 12 build can sit under the same soname as a CUDA 13 one).
json cudnn_record() {
  const cudnn::sdpa_env e = cudnn::environment();
  return {{"version", cudnn::cudnn_version_string(e.cudnn_version)},
          {"cudart_version", cudnn::cuda_version_text(e.cudnn_cudart_version)},
          {"built_with_cuda", cudnn::cuda_version_text(e.built_cuda_version)},
          {"library", cudnn::library_path()},
          {"sm", e.sm}};
}

// Correctness against the double-precision CPU reference over the same (rounded) inputs.
void check_outputs(const attention_params& p, const device_tensors& t, const host_inputs& in,
                   run& out, const run_context& ctx, uint64_t seed) {
  const attention_shape& s = p.shape;
  device::synchronize("attention outputs");
  // The ruleset's tolerance and sample count, as on the CPU backend (one home).
  const check_options opt = check_options_for(*ctx.rules, s, to_string(p.type), seed);
  auto o = t.get(t.o, q_elems(s));
  auto lse = t.get_lse(rows(s));
  auto chk = check_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(), opt);
  if (p.backward()) {
    auto dq = t.get(t.dq, q_elems(s)), dk = t.get(t.dk, kv_elems(s)), dv = t.get(t.dv, kv_elems(s));
    chk.merge(check_backward(s, in.q.data(), in.k.data(), in.v.data(), in.d_o.data(), dq.data(),
                             dk.data(), dv.data(), opt));
  }
  out.extra["correctness"] = chk.to_json();
  if (!chk.ok())
    out.mark_invalid("correctness: " + chk.reason());
}

} // namespace

void attention_cuda_execute(const attention_params& p, run& out, run_context& ctx) {
  if (auto why = attention_cuda_unavailable_reason(p); !why.empty()) {
    out.mark_skipped(why);
    return;
  }
  const auto st = device::query_cuda();
  const auto& gpu = st.gpus.front();
  const uint64_t seed = seed_of(ctx.seed, p.key);
  try {
    device::set_device(gpu.index);
    if (p.impl == "cudnn")
      out.extra["cudnn"] = cudnn_record(); // kept when the run fails on an install rule
    device_tensors t(p.shape, p.type, p.backward());
    const host_inputs in = upload_inputs(p, t, seed);
    attention_kernel kern(p.shape, p.pass, p.impl, t, gpu.index);
    // The backward pass reads O and lse: produce them once, untimed (FlashAttention's bwd
    // benchmark does the same).
    if (p.pass == pass_kind::bwd) {
      kern.forward(kern.stream());
      device::synchronize("attention forward (setup for pass=bwd)");
    }
    measure::kernel_run_steps steps;
    steps.flops = p.flops();
    steps.peak = [&] { return datasheet_peak(gpu.name, p.type); };
    steps.describe = [&](run& r) { record_implementation(p, kern, gpu, r); };
    steps.check = [&](run& r) { check_outputs(p, t, in, r, ctx, seed); };
    measure::run_checked_kernel(out, p.key, kern, ctx, steps);
  } catch (const backend_error& e) {
    out.mark_failed(e.what());
  }
}

host_result run_forward_host(const attention_shape& s, const std::string& impl, dtype type,
                             const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, int device_index) {
  device::set_device(device_index);
  device_tensors t(s, type, false);
  t.put(t.q, q);
  t.put(t.k, k);
  t.put(t.v, v);
  device::synchronize("attention inputs upload");
  attention_kernel kern(s, pass_kind::fwd, impl, t, device_index);
  kern.run();
  host_result r;
  r.o = t.get(t.o, q_elems(s));
  r.lse = t.get_lse(rows(s));
  return r;
}

host_result run_backward_host(const attention_shape& s, const std::string& impl, dtype type,
                              const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const std::vector<float>& d_o) {
  device_tensors t(s, type, true);
  t.put(t.q, q);
  t.put(t.k, k);
  t.put(t.v, v);
  t.put(t.d_o, d_o);
  device::synchronize("attention inputs upload");
  attention_kernel kern(s, pass_kind::fwd_bwd, impl, t);
  kern.run();
  host_result r;
  r.o = t.get(t.o, q_elems(s));
  r.lse = t.get_lse(rows(s));
  r.dq = t.get(t.dq, q_elems(s));
  r.dk = t.get(t.dk, kv_elems(s));
  r.dv = t.get(t.dv, kv_elems(s));
  return r;
}

} // namespace accelbench::attention
