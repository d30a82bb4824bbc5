#pragma once
// The CPU backend of the training loop (trainer.hpp's trainable): the CPU model and its AdamW
// state.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "workloads/training/cpu/adamw.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training {

// The CPU model (llama_model) with its AdamW state.
class cpu_trainable final : public trainable {
public:
  cpu_trainable(const model_config& cfg, const llama_options& opt);
  llama_model& model() { return m_model; }
  const llama_options& options() const override { return m_model.options(); }
  size_t num_params() const override { return m_model.num_params(); }
  void init(uint64_t seed) override;
  float forward(const int32_t* inputs, const int32_t* targets) override {
    return m_model.forward(inputs, targets);
  }
  void zero_grad() override { m_model.zero_grad(); }
  void backward(float loss_scale) override { m_model.backward(loss_scale); }
  double clip_grad_norm(double max_norm) override;
  void optimizer_step(double lr, const adamw_config& c) override;
  std::string implementation() const override;
  void set_grad_ready(std::function<void(size_t)> fn) override {
    m_model.set_grad_ready(std::move(fn));
  }
  const float* host_params(std::vector<float>&) override { return m_model.params(); }

private:
  llama_model m_model;
  adamw m_opt;
};

} // namespace accelbench::training
