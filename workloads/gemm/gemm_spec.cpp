#include "workloads/gemm/gemm_spec.hpp"

#include <string>
#include <vector>

namespace accelbench::gemm {

gemm_shape shape_of(const config& cfg) {
  gemm_shape s;
  s.m = cfg.get_int("M");
  s.n = cfg.get_int("N");
  s.k = cfg.get_int("K");
  s.trans_a = cfg.get_bool("trans_a");
  s.trans_b = cfg.get_bool("trans_b");
  s.type = parse_dtype(cfg.at("dtype"));
  const auto out = cfg.values.find("out_dtype");
  s.out_stated = out != cfg.values.end();
  s.out = s.out_stated ? parse_dtype(out->second) : dtype::fp32;
  return s;
}

dtype torch_out_dtype(dtype input) {
  if (is_fp8(input) || is_block_scaled(input))
    return dtype::bf16;
  return input == dtype::tf32 ? dtype::fp32 : input;
}

// The spec is built complete in one place: the axes first, their choices with them (filling the
// dtype choices before the axes existed left a CUDA build accepting only fp32 and bf16).
workload_spec gemm_spec(std::vector<std::string> backends, std::vector<std::string> dtypes) {
  return workload_spec{
      .name = "gemm",
      .family = "kernel",
      .description = "Dense matrix multiply C = op(A)·op(B), FLOPs 2·M·N·K",
      .axes =
          {
              {"M", axis_type::integer, "1024", {}, 1, "rows of C"},
              {"N", axis_type::integer, "1024", {}, 1, "columns of C"},
              {"K", axis_type::integer, "1024", {}, 1, "reduction length"},
              {"dtype", axis_type::string, "fp32", std::move(dtypes), 1,
               "input type (fp32 accumulation; C's type is out_dtype)"},
              {"library",
               axis_type::string,
               "onednn",
               {"onednn", "openblas", "cublaslt"},
               1,
               "GEMM library: onednn or openblas on the CPU, cublaslt on CUDA (the cuda backend "
               "always "
               "uses cuBLASLt)"},
              {"trans_a", axis_type::boolean, "0", {}, 0, "A stored transposed ([K,M])"},
              {"trans_b", axis_type::boolean, "0", {}, 0, "B stored transposed ([N,K])"},
              {"out_dtype",
               axis_type::string,
               "",
               {"fp32", "bf16", "fp16"},
               0,
               "C's type; unstated: the input type on CUDA (as torch.matmul; bf16 for "
               "fp8/mxfp8/nvfp4), "
               "fp32 on the CPU; in the config key only when stated",
               true},
          },
      .backends = std::move(backends),
      .default_ruleset = "kernel-v1",
      .primary_metric = "tflops",
  };
}

} // namespace accelbench::gemm
