#include "workloads/gemm/gemm_workload.hpp"
#include "harness/core/hash.hpp"

#include <limits>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/stats.hpp"
#include "harness/measure/measure.hpp"
#ifdef ACCELBENCH_HAVE_CUDA
#include "workloads/gemm/cuda/gemm_cuda.hpp"
#endif

namespace accelbench::gemm {

gemm_shape shape_of(const config& cfg) {
  gemm_shape s;
  s.m = cfg.get_int("M");
  s.n = cfg.get_int("N");
  s.k = cfg.get_int("K");
  s.trans_a = cfg.get_bool("trans_a");
  s.trans_b = cfg.get_bool("trans_b");
  s.dtype = cfg.at("dtype");
  return s;
}

namespace {

uint64_t seed_of(const std::string& key) { return fnv1a64(key); }

class gemm_kernel : public measure::kernel {
public:
  gemm_kernel(cpu_gemm& impl, gemm_buffers& buf) : m_impl(impl), m_buf(buf) {}
  void run() override { m_impl.run(m_buf); }

private:
  cpu_gemm& m_impl;
  gemm_buffers& m_buf;
};

// The dtypes the build can run: the CPU's two, or every dtype of the CUDA backend (a superset;
// the CPU backend refuses the others in unavailable_reason).
std::vector<std::string> dtype_choices() {
#ifdef ACCELBENCH_HAVE_CUDA
  return cuda_gemm_dtypes();
#else
  return {"fp32", "bf16"};
#endif
}

// The spec is built complete in one place: the axes first, their choices with them (filling the
// dtype choices before the axes existed left a CUDA build accepting only fp32 and bf16).
workload_spec gemm_spec() {
  workload_spec s;
  s.name = "gemm";
  s.family = "kernel";
  s.description = "Dense matrix multiply C = op(A)·op(B), FLOPs 2·M·N·K";
  s.backends = {"cpu"};
#ifdef ACCELBENCH_HAVE_CUDA
  s.backends.push_back("cuda");
#endif
  s.default_ruleset = "kernel-v1";
  s.primary_metric = "tflops";
  s.axes = {
      {"M", axis_type::integer, "1024", {}, 1, "rows of C"},
      {"N", axis_type::integer, "1024", {}, 1, "columns of C"},
      {"K", axis_type::integer, "1024", {}, 1, "reduction length"},
      {"dtype", axis_type::string, "fp32", dtype_choices(), 1,
       "input type; bf16 accumulates and writes fp32"},
      {"library",
       axis_type::string,
       "onednn",
       {"onednn", "openblas", "cublaslt"},
       1,
       "GEMM library: onednn or openblas on the CPU, cublaslt on CUDA (the cuda backend always "
       "uses cuBLASLt)"},
      {"trans_a", axis_type::boolean, "0", {}, 0, "A stored transposed ([K,M])"},
      {"trans_b", axis_type::boolean, "0", {}, 0, "B stored transposed ([N,K])"},
  };
  return s;
}

class gemm_workload : public workload {
public:
  explicit gemm_workload(output_hook hook) : m_spec(gemm_spec()), m_hook(std::move(hook)) {}
  const workload_spec& spec() const override { return m_spec; }

  void validate(const config& cfg) const override {
    auto s = shape_of(cfg);
    // BLAS takes 32-bit dimensions and leading dimensions.
    constexpr int64_t lim = std::numeric_limits<int32_t>::max();
    for (auto [name, v] : {std::pair{"M", s.m}, {"N", s.n}, {"K", s.k}})
      if (v > lim)
        throw input_error(fmt::format("parameter {} = {} exceeds the 32-bit BLAS limit", name, v));
  }

  void normalize(config& cfg) const override {
    // The cuda backend always runs cuBLASLt: record that rather than the CPU default library.
    if (cfg.backend == "cuda")
      cfg.values["library"] = "cublaslt";
  }

  std::string unavailable_reason(const config& cfg) const override {
#ifdef ACCELBENCH_HAVE_CUDA
    if (cfg.backend == "cuda")
      return gemm_cuda_unavailable_reason(cfg);
#endif
    const std::string& dt = cfg.at("dtype");
    if (dt != "fp32" && dt != "bf16")
      return fmt::format("dtype {} is not supported by the cpu backend (fp32, bf16)", dt);
    if (cfg.at("library") == "cublaslt")
      return "library cublaslt needs --backend cuda";
    if (cfg.at("library") == "openblas" && cfg.at("dtype") == "bf16" && !openblas_has_bf16())
      return "OpenBLAS in this build has no bfloat16 GEMM (cblas_sbgemm); use library=onednn for "
             "bf16";
    return {};
  }

  uint64_t estimate_host_bytes(const config& cfg) const override {
    auto s = shape_of(cfg);
    if (cfg.backend == "cuda")
      return s.bytes(); // host copies for the reference check
    return s.bytes();
  }

  void execute(const config& cfg, run& out, run_context& ctx) override {
#ifdef ACCELBENCH_HAVE_CUDA
    if (cfg.backend == "cuda")
      return gemm_cuda_execute(cfg, out, ctx);
#endif
    auto s = shape_of(cfg);
    const std::string& library = cfg.at("library");
    auto impl = make_cpu_gemm(library, s);
    uint64_t seed = seed_of(cfg.key());
    auto buf = make_buffers(s, seed);
    gemm_kernel k(*impl, buf);
    auto m = ctx.rules->measurement();
    if (!measure::measure_into(out, cfg.key(), k, m))
      return;
    out.extra["implementation"] = impl->implementation();
    out.extra["flops_per_iteration"] = s.flops();
    out.extra["bytes_per_iteration"] = s.bytes();

    std::vector<double> t;
    for (const auto& smp : out.samples)
      t.push_back(smp.value);
    auto sum = stats::summarize(t);
    auto peak = cached_cpu_peak();
    double tflops = s.flops() / sum.median / 1e12;
    double pk = peak_tflops_for(peak, s.dtype);
    out.add_metric("time", sum.median, "s", direction::lower_is_better);
    out.add_metric("tflops", tflops, "TFLOP/s", direction::higher_is_better);
    out.add_metric("tflops_ci_low", s.flops() / sum.ci_high / 1e12, "TFLOP/s",
                   direction::higher_is_better);
    out.add_metric("tflops_ci_high", s.flops() / sum.ci_low / 1e12, "TFLOP/s",
                   direction::higher_is_better);
    out.add_metric("pct_of_peak", 100.0 * tflops / pk, "%", direction::higher_is_better);
    out.add_metric("cv", sum.cv, "", direction::lower_is_better);
    out.extra["peak"] = {{"tflops", pk},
                         {"dtype", s.dtype},
                         {"source", "accelbench FMA probe"},
                         {"probe", peak.to_json()}};

    if (m_hook)
      m_hook(s, buf);
    const gemm_check chk = check_gemm(s, buf, ctx.rules->correctness_samples(), seed);
    out.extra["correctness"] = chk.to_json();
    out.extra["correctness"]["ruleset_tolerance"] = k_ruleset_tolerance_note;
    if (!chk.ok())
      out.mark_invalid("correctness: " + chk.reason());
  }

private:
  workload_spec m_spec;
  output_hook m_hook;
};

} // namespace

std::unique_ptr<workload> make_gemm_workload(output_hook hook) {
  return std::make_unique<gemm_workload>(std::move(hook));
}

void register_gemm(registry& reg) {
  register_library_version("onednn", onednn_version());
  register_library_version("openblas", openblas_version());
  reg.add(make_gemm_workload());
}

} // namespace accelbench::gemm
