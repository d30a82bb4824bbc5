#include "harness/cli/register_all.hpp"

#include <sqlite3.h>

#include "harness/core/build_info.hpp"
#include "harness/core/environment.hpp"
#include "workloads/gemm/gemm_workload.hpp"
#ifdef ACCELBENCH_HAVE_ATTENTION
#include "workloads/attention/attention_workload.hpp"
#endif
#ifdef ACCELBENCH_HAVE_TRAINING
#include "workloads/training/train_workload.hpp"
#endif

namespace accelbench::cli {

void register_all(registry& reg) {
  register_library_version("sqlite", sqlite3_libversion());
  gemm::register_gemm(reg);
#ifdef ACCELBENCH_HAVE_ATTENTION
  attention::register_attention(reg);
#endif
#ifdef ACCELBENCH_HAVE_TRAINING
  training::register_training(reg);
#endif
}

std::vector<backend_status> backend_statuses() {
  std::vector<backend_status> out;
  auto f = detect_cpu_features();
  out.push_back({"cpu", true,
                 std::string("oneDNN and OpenBLAS; ISA ") +
                     (f.avx512f ? (f.avx512bf16 ? "AVX-512 with BF16" : "AVX-512") : (f.avx2 ? "AVX2" : "baseline")),
                 json::array()});
  backend_status cuda{"cuda", false, "", json::array()};
  if (!build_info::cuda_built())
    cuda.detail = "not built: nvcc was not found at configure time";
  else
    cuda.detail = "built, but this build has no CUDA workloads registered yet";
  out.push_back(cuda);
  return out;
}

} // namespace accelbench::cli
