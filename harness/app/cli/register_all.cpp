#include "harness/app/cli/register_all.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
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

std::vector<backend_status> backend_statuses() {
  std::vector<backend_status> out;
  auto f = detect_cpu_features();
  out.push_back({"cpu", true,
                 std::string("oneDNN and OpenBLAS; ISA ") +
                     (f.avx512f ? (f.avx512bf16 ? "AVX-512 with BF16" : "AVX-512")
                                : (f.avx2 ? "AVX2" : "baseline")),
                 json::array()});
  backend_status cuda{"cuda", false, "", json::array()};
  if (!build_info::cuda_built()) {
    cuda.detail = "not built: nvcc was not found at configure time";
  } else {
#ifdef ACCELBENCH_HAVE_DEVICE
    auto cs = device::query_cuda(true);
    cuda.available = cs.available;
    json j = cs.to_json();
    cuda.devices = j.value("gpus", json::array());
    if (cs.available) {
      cuda.detail = fmt::format(
          "{} GPU(s); driver {}, CUDA runtime {}, cuBLASLt {}, cuDNN {}", cs.gpus.size(),
          cs.driver_release.empty() ? device::cuda_version_string(cs.driver_version)
                                    : cs.driver_release,
          device::cuda_version_string(cs.runtime_version), cs.cublas_version, cs.cudnn_version);
      for (const auto& g : cs.gpus)
        cuda.detail +=
            fmt::format("; {} (sm_{}{}, {} SMs, {:.0f} GiB, SM clock {} MHz)", g.name, g.cc_major,
                        g.cc_minor, g.sms, g.total_memory / 1073741824.0, g.sm_clock_mhz);
    } else {
      cuda.detail = "built (sm_90, sm_100) but unavailable: " + cs.reason;
    }
#else
    cuda.detail = "built, but the device helper is missing from this build";
#endif
  }
  out.push_back(cuda);
  return out;
}

} // namespace accelbench::cli
