// train.llama's cuda backend: the CUDA model (llama_cuda) on this rank's GPU, summing with NCCL
// across ranks when the build has it.
#include <fmt/format.h>

#include "harness/core/checked_math.hpp"
#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "harness/dist/dist.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/cuda/llama_cuda.hpp"
#include "workloads/training/cuda/throughput_cuda.hpp"
#include "workloads/training/training_backend.hpp"
#ifdef ACCELBENCH_HAVE_NCCL
#include "workloads/training/cuda/data_parallel_cuda.hpp"
#endif

namespace accelbench::training {

namespace {

// Data parallelism on CUDA sums over NCCL (cuda/data_parallel_cuda.cpp, built with it).
#ifdef ACCELBENCH_HAVE_NCCL
constexpr bool k_nccl = true;
#else
constexpr bool k_nccl = false;
#endif

class cuda_backend : public training_backend {
public:
  std::string name() const override { return "cuda"; }
  backend_status status() const override { return device::cuda_backend_status(); }
  std::string build_detail() const override { return device::cuda_build_detail(); }
  std::string unavailable_reason() const override {
    std::string why;
    return device::cuda_available(&why) ? std::string() : "CUDA backend: " + why;
  }

  void validate(const config& cfg) const override {
    if (!k_nccl && dist::distributed())
      throw input_error(fmt::format(
          "train.llama --backend cuda across ranks (world size {}) needs NCCL, and this accelbench "
          "was built without it (nccl.h and libnccl in the CUDA toolkit, and MPI); use --backend "
          "cpu or one process",
          dist::size()));
  }

  // The host holds the data buffers and one copy of the parameters (initialisation), not the
  // CPU model's.
  uint64_t host_bytes(const train_settings& s, uint64_t cpu_bytes) const override {
    if (cpu_bytes == k_saturated)
      return k_saturated;
    uint64_t params = 0;
    for (const auto& t : parameter_layout(s.model, s.options))
      params += t.size;
    return cpu_bytes - llama_model::plan(s.model, s.options).total() + params * 4 + (64ull << 20);
  }

  std::string refusal(const train_settings& s) const override {
    return cuda::unavailable_reason(s.model, s.options);
  }

  std::unique_ptr<trainable> make_model(const model_config& m,
                                        const llama_options& o) const override {
    return std::make_unique<cuda::llama_cuda>(m, o);
  }

  std::unique_ptr<dp_trainable> make_dp(const model_config& m, const llama_options& o,
                                        const dp_options& dp) const override {
#ifdef ACCELBENCH_HAVE_NCCL
    return cuda::make_data_parallel(m, o, dp);
#else
    throw error("train.llama: data parallel on CUDA needs NCCL (refused by validate)");
#endif
  }

  throughput_measurement measure_throughput(const train_settings& s, const source_factory& data,
                                            uint64_t seed, run& out) const override {
    const auto st = device::query_cuda(true);
    device::set_device(st.gpus.front().index);
    cuda::llama_cuda model(s.model, s.options);
    auto res = cuda::measure_throughput_cuda(model, s.hp, data, seed, s.warmup_steps, s.steps);
    out.extra["implementation"] = model.implementation();
    out.extra["device_memory_bytes"] = cuda::device_plan(s.model, s.options).total();
    out.extra["host_waits_in_timed_steps"] = res.host_waits_in_timed_steps;
    return {std::move(res.result), model.num_params()};
  }

  // This rank's GPU's datasheet peak, recorded with the device, the recipe and the attention.
  kernel_peak record_peak(const train_settings& s, run& out) const override {
    const std::string dt = to_string(s.options.dtype);
    const auto gpus = device::query_cuda(true).gpus;
    auto gpu = gpus.front();
    for (const auto& g : gpus)
      if (g.index == device::current_device())
        gpu = g;
    const double pk = device::datasheet_peak_tflops(gpu.name, dt);
    out.extra["device"] = gpu.to_json();
    out.extra["recipe"] = cuda::recipe_name(s.options);
    out.extra["attention_impl"] = cuda::attention_impl(s.model, s.options);
    out.extra["peak"] = {{"tflops", pk},
                         {"dtype", dt},
                         {"source", pk > 0 ? "NVIDIA datasheet, dense" : "unknown device"}};
    kernel_peak p;
    p.source = peak_source::datasheet;
    p.tflops = pk;
    p.record = out.extra["peak"];
    p.what = p.record.value("source", std::string("datasheet"));
    return p;
  }

  void setup_time_to_train(const train_settings& s, ttt_setup& setup, run& out) const override {
    const auto gpu = device::query_cuda(true).gpus.front();
    device::set_device(gpu.index);
    setup.platform = gpu.name;
    setup.make_model = [](const model_config& m,
                          const llama_options& o) -> std::unique_ptr<trainable> {
      return std::make_unique<cuda::llama_cuda>(m, o);
    };
    out.extra["device"] = gpu.to_json();
    out.extra["recipe"] = cuda::recipe_name(s.options);
    out.extra["attention_impl"] = cuda::attention_impl(s.model, s.options);
  }
};

} // namespace

std::unique_ptr<backend> make_cuda_backend() { return std::make_unique<cuda_backend>(); }

} // namespace accelbench::training
