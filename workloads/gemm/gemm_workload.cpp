#include "workloads/gemm/gemm_workload.hpp"

#include <limits>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "workloads/gemm/gemm_backend.hpp"

namespace accelbench::gemm {

namespace {

class gemm_workload : public workload {
public:
  explicit gemm_workload(output_hook hook)
      : m_backends(built_backends(), unbuilt_backends()),
        m_spec(gemm_spec(m_backends.names(), m_backends.dtype_choices<dtype>(k_compute_dtypes))),
        m_hook(std::move(hook)) {}
  const workload_spec& spec() const override { return m_spec; }
  std::vector<const backend*> backends() const override { return m_backends.all(); }
  unbuilt_list backends_not_built() const override { return m_backends.unbuilt(); }

  void validate(const config& cfg) const override {
    auto s = shape_of(cfg);
    // BLAS takes 32-bit dimensions and leading dimensions.
    constexpr int64_t lim = std::numeric_limits<int32_t>::max();
    for (auto [name, v] : {std::pair{"M", s.m}, {"N", s.n}, {"K", s.k}})
      if (v > lim)
        throw input_error(fmt::format("parameter {} = {} exceeds the 32-bit BLAS limit", name, v));
  }

  void normalize(config& cfg) const override {
    if (const auto* b = m_backends.find(cfg.backend))
      b->normalize(cfg);
  }

  std::string unavailable_reason(const config& cfg) const override {
    return m_backends.refusal(cfg.backend,
                              [&](const gemm_backend& b) { return b.refusal(shape_of(cfg), cfg); });
  }

  // The CPU backend's buffers, or the CUDA backend's host copies for the reference check.
  uint64_t estimate_host_bytes(const config& cfg) const override { return shape_of(cfg).bytes(); }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    m_backends.get(cfg.backend).execute(shape_of(cfg), cfg, out, ctx, m_hook);
  }

private:
  backend_set<gemm_backend> m_backends;
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
