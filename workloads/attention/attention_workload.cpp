#include "workloads/attention/attention_workload.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/checked_math.hpp"
#include "harness/core/error.hpp"
#include "workloads/attention/attention_backend.hpp"

namespace accelbench::attention {

namespace {

// Largest head_dim accepted: the kernels handle any size (head_dim is zero-padded to 16), but the
// per-thread tiles grow with it; 512 covers every production model (most use 64..256).
constexpr int64_t k_max_head_dim = 512;

// Largest q or k/v tensor accepted (2^40 elements, 4 TiB in fp32): bigger fits no host or device,
// and bounding it keeps every size computed from the shape far inside 64 bits.
constexpr uint64_t k_max_tensor_elems = uint64_t{1} << 40;

class attention_workload : public workload {
public:
  explicit attention_workload(output_hook hook)
      : m_backends(built_backends(), unbuilt_backends()), m_spec(attention_spec()),
        m_hook(std::move(hook)) {
    m_spec.backends = m_backends.names();
  }

  const workload_spec& spec() const override { return m_spec; }
  std::vector<const backend*> backends() const override { return m_backends.all(); }
  unbuilt_list backends_not_built() const override { return m_backends.unbuilt(); }

  void normalize(config& cfg) const override {
    const auto* b = m_backends.find(cfg.backend);
    if (b && cfg.values.count("impl") && cfg.values["impl"] == "auto")
      cfg.values["impl"] = b->default_impl();
    if (cfg.values.count("kv_heads") && cfg.values["kv_heads"] == "0")
      cfg.values["kv_heads"] = cfg.values["heads"];
    if (cfg.values.count("seq_k") && cfg.values["seq_k"] == "0")
      cfg.values["seq_k"] = cfg.values["seq_q"];
  }

  void validate(const config& cfg) const override {
    const attention_shape s = shape_of(cfg);
    for (auto [name, v] : {std::pair{"batch", s.batch},
                           {"heads", s.heads},
                           {"seq_q", s.seq_q},
                           {"head_dim", s.head_dim}})
      if (v <= 0)
        throw input_error(fmt::format("parameter {} = {} must be at least 1", name, v));
    if (s.kv_heads < 0)
      throw input_error(
          fmt::format("parameter kv_heads = {} must be >= 0 (0 = heads)", s.kv_heads));
    if (s.seq_k < 0)
      throw input_error(fmt::format("parameter seq_k = {} must be >= 0 (0 = seq_q)", s.seq_k));
    if (s.heads % s.kv_heads != 0)
      throw input_error(fmt::format("parameter heads = {} is not a multiple of kv_heads = {}",
                                    s.heads, s.kv_heads));
    if (s.head_dim > k_max_head_dim)
      throw input_error(fmt::format("parameter head_dim = {} is above the supported {}", s.head_dim,
                                    k_max_head_dim));
    // The kernels, their workspace layouts and the memory estimates count elements in 64 bits;
    // a shape beyond any memory is refused before any of them multiplies it out.
    const uint64_t q = sat_product({s.batch, s.seq_q, s.heads, s.head_dim});
    const uint64_t k = sat_product({s.batch, s.seq_k, s.kv_heads, s.head_dim});
    if (std::max(q, k) > k_max_tensor_elems)
      throw input_error(fmt::format("batch x seq x heads x head_dim = {} elements per tensor, more "
                                    "than the {} any memory holds",
                                    std::max(q, k) == k_saturated ? std::string("over 2^64")
                                                                  : std::to_string(std::max(q, k)),
                                    k_max_tensor_elems));
    if (!(s.scale >= 0) || !std::isfinite(s.scale))
      throw input_error(
          fmt::format("parameter scale = {} must be >= 0 (0 = 1/sqrt(head_dim))", cfg.at("scale")));
    pass_from_string(cfg.at("pass"));
  }

  std::string unavailable_reason(const config& cfg) const override {
    return m_backends.refusal(
        cfg.backend, [&](const attention_backend& b) { return b.refusal(params_of(cfg), cfg); });
  }

  // The CPU backend's estimate on either backend: the CUDA backend keeps host copies for its check.
  uint64_t estimate_host_bytes(const config& cfg) const override {
    return attention_cpu_host_bytes(params_of(cfg));
  }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    m_backends.get(cfg.backend).execute(params_of(cfg), out, ctx, m_hook);
  }

private:
  backend_set<attention_backend> m_backends;
  workload_spec m_spec;
  output_hook m_hook;
};

} // namespace

std::unique_ptr<workload> make_attention_workload(output_hook hook) {
  return std::make_unique<attention_workload>(std::move(hook));
}

void register_attention(registry& reg) { reg.add(make_attention_workload()); }

} // namespace accelbench::attention
