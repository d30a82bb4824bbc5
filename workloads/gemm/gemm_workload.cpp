#include "workloads/gemm/gemm_workload.hpp"

#include <limits>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#ifdef ACCELBENCH_HAVE_CUDA
#include "workloads/gemm/cuda/gemm_cuda.hpp"
#endif

namespace accelbench::gemm {

namespace {

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
      return gemm_cuda_unavailable_reason(shape_of(cfg));
#endif
    const dtype dt = shape_of(cfg).type;
    if (dt != dtype::fp32 && dt != dtype::bf16)
      return fmt::format("dtype {} is not supported by the cpu backend (fp32, bf16)",
                         dtype_name(dt));
    if (cfg.at("library") == "cublaslt")
      return "library cublaslt needs --backend cuda";
    if (const gemm_shape s = shape_of(cfg); s.out != dtype::fp32)
      return fmt::format("out_dtype {} is not supported by the cpu backend (its libraries write "
                         "fp32 C here; out_dtype=fp32 or unstated)",
                         dtype_name(s.out));
    if (cfg.at("library") == "openblas" && dt == dtype::bf16 && !openblas_has_bf16())
      return "OpenBLAS in this build has no bfloat16 GEMM (cblas_sbgemm); use library=onednn for "
             "bf16";
    return {};
  }

  // The CPU backend's buffers, or the CUDA backend's host copies for the reference check.
  uint64_t estimate_host_bytes(const config& cfg) const override { return shape_of(cfg).bytes(); }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    const gemm_shape s = shape_of(cfg);
#ifdef ACCELBENCH_HAVE_CUDA
    if (cfg.backend == "cuda")
      return gemm_cuda_execute(s, cfg.key(), out, ctx);
#endif
    gemm_cpu_execute(s, cfg.key(), cfg.at("library"), out, ctx, m_hook);
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
