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
  s.out = s.out_stated ? parse_dtype(out->second) : default_out_dtype(s.type, cfg.backend);
  return s;
}

dtype default_out_dtype(dtype input, const std::string& backend) {
  if (backend != "cuda")
    return dtype::fp32;
  if (is_fp8(input) || is_block_scaled(input))
    return dtype::bf16;
  return input == dtype::tf32 ? dtype::fp32 : input;
}

namespace {

// The dtypes the build can run: the CPU's two, or every dtype of the CUDA backend (a superset;
// the CPU backend refuses the others in unavailable_reason).
std::vector<std::string> dtype_choices() {
#ifdef ACCELBENCH_HAVE_CUDA
  std::vector<std::string> all;
  all.reserve(k_compute_dtypes.size());
  for (dtype d : k_compute_dtypes)
    all.push_back(to_string(d));
  return all;
#else
  return {"fp32", "bf16"};
#endif
}

} // namespace

// The spec is built complete in one place: the axes first, their choices with them (filling the
// dtype choices before the axes existed left a CUDA build accepting only fp32 and bf16).
workload_spec gemm_spec() {
  workload_spec s;
  s.name = "gemm";
  s.family = "kernel";
  s.description = "Dense matrix multiply C = op(A)·op(B), FLOPs 2·M·N·K";
  s.backends = {"cpu"};
#ifdef ACCELBENCH_HAVE_CUDA
  s.backends.emplace_back("cuda");
#endif
  s.default_ruleset = "kernel-v1";
  s.primary_metric = "tflops";
  s.axes = {
      {"M", axis_type::integer, "1024", {}, 1, "rows of C"},
      {"N", axis_type::integer, "1024", {}, 1, "columns of C"},
      {"K", axis_type::integer, "1024", {}, 1, "reduction length"},
      {"dtype", axis_type::string, "fp32", dtype_choices(), 1,
       "input type (fp32 accumulation; C's type is out_dtype)"},
      {"library",
       axis_type::string,
       "onednn",
       {"onednn", "openblas", "cublaslt"},
       1,
       "GEMM library: onednn or openblas on the CPU, cublaslt on CUDA (the cuda backend always "
       "uses cuBLASLt)"},
      {"trans_a", axis_type::boolean, "0", {}, 0, "A stored transposed ([K,M])"},
      {"trans_b", axis_type::boolean, "0", {}, 0, "B stored transposed ([N,K])"},
      {"out_dtype",
       axis_type::string,
       "",
       {"fp32", "bf16", "fp16"},
       0,
       "C's type; unstated: the input type on CUDA (as torch.matmul; bf16 for fp8/mxfp8/nvfp4), "
       "fp32 on the CPU; in the config key only when stated",
       true},
  };
  return s;
}

} // namespace accelbench::gemm
