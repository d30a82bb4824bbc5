#include "workloads/training/cpu/cpu_trainable.hpp"

namespace accelbench::training {

cpu_trainable::cpu_trainable(const model_config& cfg, const llama_options& opt)
    : m_model(cfg, opt), m_opt(m_model.num_params()) {}

void cpu_trainable::init(uint64_t seed) {
  m_model.init_parameters(seed);
  m_opt = adamw(m_model.num_params());
}

double cpu_trainable::clip_grad_norm(double max_norm) {
  return training::clip_grad_norm(m_model.grads(), m_model.num_params(), max_norm);
}

void cpu_trainable::optimizer_step(double lr, const adamw_config& c) {
  m_opt.step(m_model.params(), m_model.grads(), m_model.tensors(), lr, c);
}

std::string cpu_trainable::implementation() const {
  return m_model.options().dtype == compute_dtype::bf16
             ? "matmuls: oneDNN, bf16 inputs, fp32 accumulation; attention: accelbench fused "
               "FlashAttention-2 "
               "kernels (fp32); other layers: accelbench (fp32)"
             : "matmuls: oneDNN (fp32); attention: accelbench fused FlashAttention-2 kernels "
               "(fp32); other "
               "layers: accelbench (fp32)";
}

} // namespace accelbench::training
