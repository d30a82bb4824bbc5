#include "workloads/training/llama_layout.hpp"

namespace accelbench::training {

llama_layout::llama_layout(const model_config& cfg, const llama_options& opt)
    : m_cfg(cfg), m_opt(opt), m_layers(resolved_layers(cfg, opt)), m_with_head(opt.with_head),
      m_tensors(parameter_layout(cfg, opt)) {
  m_num_params = m_tensors.empty() ? 0 : m_tensors.back().offset + m_tensors.back().size;
}

block_tensors llama_layout::block(float* base, int64_t l) const {
  const size_t first = first_of_block(l);
  auto at = [&](size_t i) { return base + m_tensors[first + i].offset; };
  return {at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8)};
}

size_t llama_layout::scratch_floats(bool with_delta) const {
  const int64_t bt = m_opt.batch * m_opt.seq;
  int64_t n = bt * (4 * m_cfg.dim + 2 * m_cfg.kv_dim() + 3 * m_cfg.ffn_dim);
  if (with_delta)
    n += m_opt.batch * m_cfg.n_heads * m_opt.seq;
  return size_t(n);
}

backward_scratch llama_layout::scratch(float* base, bool with_delta) const {
  const int64_t bt = m_opt.batch * m_opt.seq;
  const int64_t c = m_cfg.dim, kv = m_cfg.kv_dim(), f = m_cfg.ffn_dim;
  auto take = [&](int64_t n) {
    float* r = base;
    base += n;
    return r;
  };
  backward_scratch s;
  s.dres = take(bt * c);
  s.dxn = take(bt * c);
  s.dq = take(bt * c);
  s.datt = take(bt * c);
  s.dk = take(bt * kv);
  s.dv = take(bt * kv);
  s.dh1 = take(bt * f);
  s.dh3 = take(bt * f);
  s.dg = take(bt * f);
  s.delta = with_delta ? base : nullptr;
  return s;
}

} // namespace accelbench::training
