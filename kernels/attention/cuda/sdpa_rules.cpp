// cuDNN fused SDPA's support surface as named rules (sdpa_rules.hpp).
#include "kernels/attention/cuda/sdpa_rules.hpp"

#include <fmt/format.h>

namespace accelbench::attention::cudnn {

namespace {
constexpr auto config = sdpa_rule_kind::config;
constexpr auto install = sdpa_rule_kind::install;
} // namespace

const std::vector<sdpa_rule>& sdpa_rules() {
  static const std::vector<sdpa_rule> rules = {
      {"cudart_major", install,
       "the loaded cuDNN built for the CUDA major version this binary was built with "
       "(cudnnGetCudartVersion; cuDNN 9 keeps the soname libcudnn.so.9 across CUDA 12 and 13)"},
      {"cudnn_version", install,
       "cuDNN 9.0.0 or newer, and not 9.10.0/9.10.1 (fp16/bf16 SDPA has known bugs there)"},
      {"gpu_arch", install, "compute capability 8.0 (Ampere) or newer"},
      {"io_dtype", config, "dtype=bf16 (cuDNN's fused flash-attention engines take fp16/bf16)"},
      {"gqa_heads", config, "heads a multiple of kv_heads"},
      {"head_dim", config,
       "head_dim a multiple of 8 (16-byte rows) and at most the limit for the GPU, cuDNN "
       "version and pass (forward 256 from Hopper on and on Ampere/Blackwell from cuDNN 9.9; "
       "backward 256 on Hopper, 128 elsewhere)"},
      {"causal_alignment", config,
       "causal with seq_q == seq_k (the graph masks top-left; the reference masks bottom-right)"},
      {"seq_len", config, "backward: not seq_q == seq_k == 1"},
      {"layout", config,
       "every tensor in memory with unit stride on its last (head_dim) axis and 16-byte "
       "aligned strides"},
      {"bmm2_operand_dtype", config,
       "the probabilities P (forward P·V) and the transposed P and dS (backward) in the I/O type"},
      {"stats", config, "softmax stats (log-sum-exp) fp32 [B,H,Sq,1], packed"},
  };
  return rules;
}

std::string sdpa_rule_failure::message() const {
  std::string req;
  for (const auto& r : sdpa_rules())
    if (rule == r.name)
      req = r.requires_;
  return fmt::format("impl=cudnn: cuDNN SDPA rule '{}' failed: {} (requires {})", rule, detail,
                     req);
}

std::string cudnn_version_string(int64_t v) {
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}
std::string cuda_version_text(int64_t v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

int64_t sdpa_max_head_dim(bool backward, int sm, int64_t cudnn_version) {
  const int major = sm / 10;
  if (backward)
    return major == 9 ? 256 : 128;
  if (major == 9)
    return 256;
  if ((major == 8 || major == 10) && cudnn_version > 0 && cudnn_version < 90900)
    return 128;
  return 256;
}

namespace {

sdpa_rule_failure fail(const char* rule, std::string detail) {
  sdpa_rule_failure f;
  f.rule = rule;
  f.detail = std::move(detail);
  for (const auto& r : sdpa_rules())
    if (f.rule == r.name)
      f.kind = r.kind;
  return f;
}

std::optional<sdpa_rule_failure> check_install(const sdpa_env& env) {
  const int64_t built_major = env.built_cuda_version / 1000,
                loaded_major = env.cudnn_cudart_version / 1000;
  if (built_major > 0 && loaded_major > 0 && built_major != loaded_major)
    return fail("cudart_major",
                fmt::format("the loaded cuDNN {} was built for CUDA {}, this binary for CUDA {}",
                            cudnn_version_string(env.cudnn_version),
                            cuda_version_text(env.cudnn_cudart_version),
                            cuda_version_text(env.built_cuda_version)));
  if (env.cudnn_version > 0 &&
      (env.cudnn_version < 90000 || env.cudnn_version == 91000 || env.cudnn_version == 91001))
    return fail("cudnn_version", "loaded cuDNN " + cudnn_version_string(env.cudnn_version));
  if (env.sm > 0 && env.sm < 80)
    return fail("gpu_arch", fmt::format("compute capability {}.{}", env.sm / 10, env.sm % 10));
  return std::nullopt;
}

} // namespace

std::optional<sdpa_rule_failure> check_sdpa(const attention_shape& s, dtype io, bool backward,
                                            const sdpa_env& env) {
  if (auto f = check_install(env))
    return f;
  if (io != dtype::bf16 && io != dtype::fp16)
    return fail("io_dtype", fmt::format("dtype={}", to_string(io)));
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0)
    return fail("gqa_heads", fmt::format("heads={} kv_heads={}", s.heads, s.kv_heads));
  // Without a known GPU the widest limit any GPU has; the device's own is checked once known.
  const int64_t max_d = env.sm > 0 ? sdpa_max_head_dim(backward, env.sm, env.cudnn_version) : 256;
  if (s.head_dim % 8 != 0 || s.head_dim > max_d)
    return fail("head_dim",
                fmt::format("head_dim={} (limit {} for the {} pass{})", s.head_dim, max_d,
                            backward ? "backward" : "forward",
                            env.sm > 0 ? fmt::format(" on sm_{}", env.sm) : std::string()));
  if (s.causal && s.seq_q != s.seq_k)
    return fail("causal_alignment",
                fmt::format("causal with seq_q={} seq_k={}; use impl=native", s.seq_q, s.seq_k));
  if (backward && s.seq_q == 1 && s.seq_k == 1)
    return fail("seq_len", "seq_q=1 seq_k=1");
  return check_sdpa_graph(backward ? describe_backward(s, io) : describe_forward(s, io), backward);
}

namespace {

bool in_memory(const sdpa_tensor& t) { return !t.is_virtual && !t.by_value; }

std::optional<sdpa_rule_failure> check_layout(const sdpa_graph& g) {
  for (const auto& t : g.tensors) {
    if (!in_memory(t))
      continue;
    const bool io16 = t.type == dtype::bf16 || t.type == dtype::fp16;
    const int64_t align = io16 ? 8 : 4; // elements per 16 bytes
    const size_t last = t.dims.size() - 1;
    // K^T and V^T are transposed views: their unit stride is on the head_dim axis (dims[2]).
    const size_t unit = t.name.back() == 'T' ? 2 : last;
    if (t.strides[unit] != 1)
      return fail("layout",
                  fmt::format("{} has stride {} on its head_dim axis", t.name, t.strides[unit]));
    for (size_t i = 0; i < t.strides.size(); ++i)
      if (i != unit && t.dims[i] > 1 && t.strides[i] % align != 0 && t.name != "Stats" &&
          t.name != "softmax_sum")
        return fail("layout", fmt::format("{} stride {} on axis {} is not 16-byte aligned", t.name,
                                          t.strides[i], i));
  }
  return std::nullopt;
}

// The A operand of every matmul that reads probabilities (or their gradient) must be in the I/O
// type: forward P·V, backward P^T·dO and dS^T·Q.
std::optional<sdpa_rule_failure> check_operands(const sdpa_graph& g, bool backward) {
  const sdpa_type io = g.tensor("Q").type;
  for (const char* name :
       backward ? std::vector<const char*>{"P^T", "dS^T"} : std::vector<const char*>{"P"}) {
    const sdpa_tensor& t = g.tensor(name);
    if (t.type != io)
      return fail("bmm2_operand_dtype",
                  fmt::format("{} is {}, the I/O type {}", name, type_name(t.type), type_name(io)));
  }
  return std::nullopt;
}

} // namespace

std::optional<sdpa_rule_failure> check_sdpa_graph(const sdpa_graph& g, bool backward) {
  if (auto f = check_layout(g))
    return f;
  if (auto f = check_operands(g, backward))
    return f;
  if (!backward && g.producers("Stats").empty())
    return std::nullopt; // an inference forward: no stats to check
  const sdpa_tensor& st = g.tensor("Stats");
  const int64_t b = st.dims[0], h = st.dims[1], sq = st.dims[2];
  if (st.type != dtype::fp32 || st.is_virtual || st.dims.back() != 1 ||
      st.strides != std::vector<int64_t>{h * sq, sq, 1, 1})
    return fail("stats", fmt::format("Stats is {} [{},{},{},{}]", type_name(st.type), b, h, sq,
                                     st.dims.back()));
  return std::nullopt;
}

} // namespace accelbench::attention::cudnn
