// The GEMM workload's CPU backend run: seeded inputs and the library's kernel, run by the one
// kernel-run sequence (harness/measure/kernel_run.hpp), checked against the error bound of
// cpu_error_model (gemm_tolerance.hpp).
#include "workloads/gemm/cpu/gemm_cpu.hpp"

#include "harness/core/hash.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/peak.hpp"
#include "harness/measure/kernel_run.hpp"

namespace accelbench::gemm {

namespace {

class gemm_kernel : public measure::kernel {
public:
  gemm_kernel(cpu_gemm& impl, gemm_buffers& buf) : m_impl(impl), m_buf(buf) {}
  void run() override { m_impl.run(m_buf); }

private:
  cpu_gemm& m_impl;
  gemm_buffers& m_buf;
};

} // namespace

void gemm_cpu_execute(const gemm_shape& s, const std::string& key, const std::string& library,
                      run& out, run_context& ctx, const output_hook& hook) {
  auto impl = make_cpu_gemm(library, s);
  const uint64_t seed = seed_of(ctx.seed, key);
  auto buf = make_buffers(s, seed);
  gemm_kernel k(*impl, buf);
  measure::kernel_run_steps steps;
  steps.flops = s.flops();
  steps.peak = [&] { return cpu_probe_peak(s.type); };
  steps.describe = [&](run& r) {
    r.extra["implementation"] = impl->implementation();
    r.extra["flops_per_iteration"] = s.flops();
    r.extra["bytes_per_iteration"] = s.bytes();
  };
  steps.check = [&](run& r) {
    if (hook)
      hook(s, buf);
    const gemm_check chk = check_gemm(s, buf, ctx.rules->correctness_samples(), seed);
    record_check(r, chk);
  };
  measure::run_checked_kernel(out, key, k, ctx, steps);
}

} // namespace accelbench::gemm
