#pragma once
// The support surface of cuDNN's fused SDPA (bf16/fp16, forward and backward) as named rules, in
// one place: cudnn_sdpa.cpp checks them before it builds a graph, so a config cuDNN cannot run
// is refused with the rule that failed instead of "no engine found". Plain C++ (no cuDNN or CUDA
// type): a CPU-only test checks every rule. The limits are those the cuDNN frontend enforces
// before it builds its SDPA graphs (node/sdpa_support_surface.h, the backward node's
// pre_validate_node), for the features used here: no bias, dropout, padding or paging.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention/attention_shape.hpp"
#include "kernels/attention/cuda/sdpa_graph.hpp"

namespace accelbench::attention::cudnn {

// What the process runs with; 0 where unknown (no device, no library): rules that need a fact
// that is unknown are not checked.
struct sdpa_env {
  int64_t cudnn_version = 0;        // cudnnGetVersion(): 91900 = 9.19.0
  int64_t cudnn_cudart_version = 0; // cudnnGetCudartVersion(): the CUDA cuDNN was built for
  int64_t built_cuda_version = 0;   // CUDART_VERSION this binary was compiled with (13000)
  int sm = 0;                       // compute capability as 10 * major + minor (90 = Hopper)
};

// Whether a failed rule is about the config (the config cannot run here: skipped) or about the
// installation (the loaded cuDNN cannot serve this binary or GPU: the run fails).
enum class sdpa_rule_kind { config, install };

struct sdpa_rule {
  const char* name; // "head_dim"
  sdpa_rule_kind kind;
  const char* requires_; // what it requires, in words
};

// Every rule, in the order they are checked.
const std::vector<sdpa_rule>& sdpa_rules();

struct sdpa_rule_failure {
  std::string rule;   // one of sdpa_rules()' names
  std::string detail; // the offending values
  sdpa_rule_kind kind = sdpa_rule_kind::config;
  // "impl=cudnn: cuDNN SDPA rule 'head_dim' failed: ... (requires ...)"
  std::string message() const;
};

// The first rule the config or the environment breaks, none when all hold.
std::optional<sdpa_rule_failure> check_sdpa(const attention_shape& s, dtype io, bool backward,
                                            const sdpa_env& env);

// The rules about the graph itself (layout, operand types): the described graph must be the
// documented pattern. Checked on describe_forward / describe_backward's output.
std::optional<sdpa_rule_failure> check_sdpa_graph(const sdpa_graph& g, bool backward);

// The largest head_dim cuDNN's fused SDPA takes for this pass, GPU and cuDNN version.
int64_t sdpa_max_head_dim(bool backward, int sm, int64_t cudnn_version);

// "9.19.0" from cuDNN's 91900; "13.0" from a CUDA version 13000.
std::string cudnn_version_string(int64_t v);
std::string cuda_version_text(int64_t v);

} // namespace accelbench::attention::cudnn
