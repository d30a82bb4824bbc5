// The attention workload's cpu backend: the fused kernels of kernels/attention/cpu.
#include "workloads/attention/attention_backend.hpp"

namespace accelbench::attention {

namespace {

class cpu_backend : public attention_backend {
public:
  std::string name() const override { return "cpu"; }
  backend_status status() const override { return cpu_backend_status(); }
  std::string default_impl() const override { return "native"; }

  std::string refusal(const attention_params& p, const config& cfg) const override {
    if (cfg.values.count("impl") && cfg.at("impl") == "cudnn")
      return "impl cudnn needs --backend cuda";
    return {};
  }

  void execute(const attention_params& p, run& out, run_context& ctx,
               const output_hook& hook) const override {
    attention_cpu_execute(p, out, ctx, hook);
  }
};

} // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }

} // namespace accelbench::attention
