// train.llama's cpu backend: the CPU model (cpu_trainable), summing with MPI across ranks.
#include "workloads/training/cpu/cpu_trainable.hpp"
#include "workloads/training/training_backend.hpp"

namespace accelbench::training {

namespace {

class cpu_backend : public training_backend {
public:
  std::string name() const override { return "cpu"; }
  backend_status status() const override { return cpu_backend_status(); }
  bool host_memory_bound() const override { return true; }
  std::unique_ptr<trainable> make_model(const model_config& m,
                                        const llama_options& o) const override {
    return std::make_unique<cpu_trainable>(m, o);
  }
  std::unique_ptr<dp_trainable> make_dp(const model_config& m, const llama_options& o,
                                        const dp_options& dp) const override {
    return make_cpu_data_parallel(m, o, dp);
  }
  throughput_measurement measure_throughput(const train_settings& s, const source_factory& data,
                                            uint64_t seed, run& out) const override {
    cpu_trainable model(s.model, s.options);
    auto res = training::measure_throughput(model, s.hp, data, seed, s.warmup_steps, s.steps);
    out.extra["implementation"] = model.implementation();
    return {std::move(res), model.num_params()};
  }
  kernel_peak record_peak(const train_settings& s, run& out) const override {
    return cpu_probe_peak(s.options.dtype);
  }
};

} // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }

} // namespace accelbench::training
