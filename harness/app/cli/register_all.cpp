#include "harness/app/cli/register_all.hpp"

#include <sqlite3.h>

#include "harness/core/environment.hpp"
#include "harness/store/store.hpp"
#include "workloads/external/external_workload.hpp"
#ifdef ACCELBENCH_HAVE_MLPERF
#include "harness/app/cli/mlperf_log_judge.hpp"
#endif
#ifdef ACCELBENCH_HAVE_DEVICE
#include "harness/device/device.hpp"
#endif

namespace accelbench::cli {

void register_all(registry& reg) {
  register_library_version("sqlite", sqlite3_libversion());
  register_library_version("libpq", store::libpq_version());
#ifdef ACCELBENCH_HAVE_DEVICE
  // Read when an environment is captured, not at every start: the query loads cuBLASLt and cuDNN
  // and starts the CUDA driver (query_cuda caches what it read).
  register_library_version("cuda_runtime", [] {
    const int v = device::query_cuda().runtime_version;
    return v ? device::cuda_version_string(v) : std::string();
  });
  register_library_version("cublaslt", [] { return device::query_cuda().cublas_version; });
  register_library_version("cudnn", [] { return device::query_cuda().cudnn_version; });
  register_library_version("cudnn_cudart", [] { // a CUDA 12 cuDNN has the soname of a CUDA 13 one
    const int v = device::query_cuda().cudnn_cudart_version;
    return v ? device::cuda_version_string(v) : std::string();
  });
#endif
  register_workloads(reg);
#ifdef ACCELBENCH_HAVE_MLPERF
  external::register_external(reg, external_judges());
#else
  external::register_external(reg);
#endif
}

} // namespace accelbench::cli
