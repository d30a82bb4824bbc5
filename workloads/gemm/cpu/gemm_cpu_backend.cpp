// The gemm workload's cpu backend: oneDNN or OpenBLAS, fp32 or bf16 inputs, fp32 C.
#include <fmt/format.h>

#include "workloads/gemm/gemm_backend.hpp"

namespace accelbench::gemm {

namespace {

class cpu_backend : public gemm_backend {
public:
  std::string name() const override { return "cpu"; }
  backend_status status() const override { return cpu_backend_status(); }
  std::vector<std::string> dtypes() const override { return {"fp32", "bf16"}; }

  std::string refusal(const gemm_shape& s, const config& cfg) const override {
    if (auto why = dtype_refusal(to_string(s.type)); !why.empty())
      return why;
    if (cfg.at("library") == "cublaslt")
      return "library cublaslt needs --backend cuda";
    if (s.out != dtype::fp32)
      return fmt::format("out_dtype {} is not supported by the cpu backend (its libraries write "
                         "fp32 C here; out_dtype=fp32 or unstated)",
                         dtype_name(s.out));
    if (cfg.at("library") == "openblas" && s.type == dtype::bf16 && !openblas_has_bf16())
      return "OpenBLAS in this build has no bfloat16 GEMM (cblas_sbgemm); use library=onednn for "
             "bf16";
    return {};
  }

  void execute(const gemm_shape& s, const config& cfg, run& out, run_context& ctx,
               const output_hook& hook) const override {
    gemm_cpu_execute(s, cfg.key(), cfg.at("library"), out, ctx, hook);
  }
};

} // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }

} // namespace accelbench::gemm
