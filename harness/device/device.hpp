#pragma once
// CUDA device helper: what GPUs this process can see, their clocks (NVML, loaded at run time),
// device memory and the rules about which dtype needs which compute capability.
//
// docs/architecture.md, "Layers": nothing above workloads/*/cuda and harness/device includes a CUDA
// header, so this header speaks plain C++ only. Every query here is safe on a machine without a GPU
// driver: the CUDA runtime then answers with an error, which becomes a reason, never a crash.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {
// harness/core/backend.hpp, declared only: .cu sources include this header, and nvcc does not
// compile the fmt calls of that one.
struct backend_status;
} // namespace accelbench

namespace accelbench::device {

// One GPU as the CUDA runtime and NVML see it.
struct gpu_info {
  int index = 0;                  // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;               // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;         // "0000:18:00.0"
  int cc_major = 0, cc_minor = 0; // compute capability
  int sms = 0;                    // streaming multiprocessors
  uint64_t total_memory = 0;      // bytes
  uint64_t free_memory = 0;       // bytes, at query time
  uint64_t l2_bytes = 0;
  int sm_clock_mhz = 0;                   // NVML current SM clock (0: NVML unavailable)
  int reference_clock_mhz = 0;            // NVML default application clock, else max SM clock
  int mem_clock_mhz = 0;                  // NVML current memory clock
  std::string compute_capability() const; // "9.0"
  json to_json() const;
};

// The CUDA stack of this process, or why there is none.
struct cuda_status {
  bool built = false;         // this binary has the CUDA backends
  bool available = false;     // at least one usable device
  std::string reason;         // why not available: "not built" / "no driver" / "no device"
  int driver_version = 0;     // cudaDriverGetVersion (12080 = 12.8); 0: no driver
  int runtime_version = 0;    // cudaRuntimeGetVersion
  std::string driver_release; // NVML's driver release ("570.124.06"), empty without NVML
  std::string cublas_version; // "13.1.0"
  std::string cudnn_version;  // "9.19.0"
  // The CUDA the loaded cuDNN was built for (cudnnGetCudartVersion: 13010 = 13.1); 0 unknown.
  int cudnn_cudart_version = 0;
  std::vector<gpu_info> gpus;
  json to_json() const; // the "accelerator" section for `accelbench env`
};

// Queries the runtime, cuBLASLt, cuDNN and NVML. Never throws; cached after the first call
// except for free memory and clocks, which `refresh` re-reads.
cuda_status query_cuda(bool refresh = false);

// True when a device can run kernels; otherwise `why` (if given) receives the reason.
bool cuda_available(std::string* why = nullptr);

// The cuda backends' status in `accelbench env` (each workload's cuda backend answers with it):
// the GPUs, driver, runtime, cuBLASLt and cuDNN, or why there is none (re-read: query_cuda(true)).
backend_status cuda_backend_status();
// What the build made of the cuda backends, in `accelbench --version`: "sm 90 100", the
// architectures their kernels were compiled for. Asks no device.
std::string cuda_build_detail();

// "12.8" from 12080 (the CUDA version encoding, 1000*major + 10*minor).
std::string cuda_version_string(int v);

// The file of the cuDNN this process loaded (cudnn_lazy.cpp; opened here when nothing has opened
// it yet): "" when none could be loaded.
std::string cudnn_library_path();

// ---- NVML (libnvidia-ml.so.1 through dlopen; no NVML header exists on the build machines) ----
struct clock_reading {
  bool ok = false;
  int sm_mhz = 0;
  int reference_mhz = 0;      // default application clock, or the max SM clock when no default
  std::string reference_kind; // "default_application" | "max"
  bool reasons_ok = false;    // NVML gave the clock event (throttle) reasons
  uint64_t reasons = 0;       // nvmlClocksEventReason* bit mask
};
// Current SM clock of CUDA device `index` (matched to NVML by PCI bus id).
clock_reading read_sm_clock(int index);

// The throttle rule: a sample is "throttled" when the SM clock is below 90% of the
// reference clock. Both clocks 0 (unknown) is not throttled.
bool is_throttled(int sm_mhz, int reference_mhz);
// The per-sample clock facts of CUDA device `index`: {"sm_clock_mhz", "reference_clock_mhz",
// "reference_clock", "throttle_reasons" (where NVML gives them), "throttled"}; {} without NVML.
// throttled: the clock is below 90% of the reference (is_throttled), or NVML names a reason that
// slows the clock (reasons_throttle). Every CUDA workload records these with each sample.
json clock_facts(int index);
// The current device of this thread (cudaGetDevice); throws backend_error on failure.
int current_device();
// The names of the NVML clock event (throttle) reason bits set in `mask` ("sw_power_cap",
// "hw_thermal_slowdown", ...; unknown bits as "unknown_0x..").
std::vector<std::string> throttle_reason_names(uint64_t mask);
// True when `mask` holds a reason that lowers the clock under load (power cap, hardware, thermal
// or power-brake slowdown); idle, sync boost and clock settings are not throttling.
bool reasons_throttle(uint64_t mask);

// ---- which dtype needs which device ----
// GEMM dtypes and the compute capability they need (tensor-core support in cuBLASLt):
// fp32 any; tf32/bf16 sm_80 (Ampere); fp16 sm_70; fp8_e4m3/fp8_e5m2 sm_89 (Ada, Hopper);
// mxfp8/nvfp4 sm_100 (Blackwell block-scaled tensor cores).
struct dtype_requirement {
  std::string dtype;
  int min_major = 0, min_minor = 0;
  std::string why; // "FP8 tensor cores", ...
};
const std::vector<dtype_requirement>& gemm_dtype_table();
// Empty when `dtype` runs on compute capability major.minor; otherwise the reason, e.g.
// "dtype nvfp4 needs compute capability 10.0 or newer (Blackwell block-scaled tensor cores);
//  this device (NVIDIA H100) is 9.0". Unknown dtype: a reason naming the known ones.
std::string dtype_unsupported_reason(const std::string& dtype, int cc_major, int cc_minor,
                                     const std::string& device_name = {});

// ---- peak rates ----
// Dense tensor-core peak (TFLOP/s) from NVIDIA's datasheets: the device catalogue's
// (results/devices.json through harness/core/device_catalogue, the report's source too), matched
// from the device name (NVL, PCIe and SXM parts apart); 0 when the device or dtype is not in it
// (then no pct_of_peak is reported rather than a guess).
// dtype: fp32 | tf32 | fp16 | bf16 | fp8_e4m3 | fp8_e5m2 | mxfp8 | nvfp4.
double datasheet_peak_tflops(const std::string& gpu_name, const std::string& dtype);

// ---- memory ----
// Empty when `bytes` fit in `free_bytes` keeping a 5% margin (the CUDA context, cuBLAS and cuDNN
// workspaces also live there); otherwise the reason with both numbers in GiB.
std::string memory_refusal(uint64_t bytes, uint64_t free_bytes);
// Free bytes on the current device (cudaMemGetInfo); 0 when unavailable.
uint64_t free_device_memory();

// Selects `index` as the current device for this thread; throws backend_error on failure.
void set_device(int index);

// A cudaMalloc'ed buffer (move-only). Throws backend_error naming the size on failure.
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(uint64_t bytes);
  ~device_buffer();
  device_buffer(device_buffer&& o) noexcept;
  device_buffer& operator=(device_buffer&& o) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  void* get() const { return m_ptr; }
  template <class T> T* as() const { return static_cast<T*>(m_ptr); }
  uint64_t size() const { return m_bytes; }
  void upload(const void* host, uint64_t bytes, uint64_t offset = 0);
  void download(void* host, uint64_t bytes, uint64_t offset = 0) const;
  void zero();

private:
  void* m_ptr = nullptr;
  uint64_t m_bytes = 0;
};

// Throws backend_error "CUDA error <name> (<text>) in <what>" when `code` (a cudaError_t) is
// not cudaSuccess. For the .cu/.cpp files of workloads/*/cuda.
void check_cuda(int code, const char* what);
// cudaMemsetAsync on `stream` (a cudaStream_t); for tests and simple kernels.
void memset_async(void* ptr, int value, uint64_t bytes, void* stream);
// Waits for the device and reports an asynchronous kernel error (throws backend_error).
void synchronize(const char* what);

} // namespace accelbench::device
