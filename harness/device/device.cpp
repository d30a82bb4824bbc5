#include "harness/device/device.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "harness/core/backend.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/datasheet_peak.hpp"
#include "harness/core/error.hpp"

namespace accelbench::device {

std::string gpu_info::compute_capability() const {
  return fmt::format("{}.{}", cc_major, cc_minor);
}

json gpu_info::to_json() const {
  return {{"index", index},
          {"name", name},
          {"pci_bus_id", pci_bus_id},
          {"compute_capability", compute_capability()},
          {"sms", sms},
          {"memory_bytes", total_memory},
          {"memory_free_bytes", free_memory},
          {"l2_bytes", l2_bytes},
          {"sm_clock_mhz", sm_clock_mhz},
          {"reference_clock_mhz", reference_clock_mhz},
          {"mem_clock_mhz", mem_clock_mhz}};
}

json cuda_status::to_json() const {
  json g = json::array();
  for (const auto& x : gpus)
    g.push_back(x.to_json());
  json j = {{"cuda_built", built}, {"available", available}, {"gpus", g}};
  if (!reason.empty())
    j["reason"] = reason;
  if (driver_version)
    j["cuda_driver"] = cuda_version_string(driver_version);
  if (runtime_version)
    j["cuda_runtime"] = cuda_version_string(runtime_version);
  if (!driver_release.empty())
    j["driver_release"] = driver_release;
  if (!cublas_version.empty())
    j["cublas"] = cublas_version;
  if (!cudnn_version.empty())
    j["cudnn"] = cudnn_version;
  if (cudnn_cudart_version) // the CUDA the loaded cuDNN was built for (cudnnGetCudartVersion)
    j["cudnn_cudart"] = cuda_version_string(cudnn_cudart_version);
  return j;
}

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

namespace {

// "sm_90, sm_100": the architectures this binary's kernels were built for.
std::string built_architectures() {
  std::vector<std::string> out;
  std::string all = build_info::cuda_architectures();
  for (size_t at = 0; at < all.size();) {
    const size_t end = std::min(all.find(' ', at), all.size());
    if (end > at)
      out.push_back("sm_" + all.substr(at, end - at));
    at = end + 1;
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// "1 GPU(s); driver 570.124.06, CUDA runtime 12.8, cuBLASLt ..., cuDNN ...; <each GPU>".
std::string available_detail(const cuda_status& cs) {
  std::string d = fmt::format(
      "{} GPU(s); driver {}, CUDA runtime {}, cuBLASLt {}, cuDNN {}", cs.gpus.size(),
      cs.driver_release.empty() ? cuda_version_string(cs.driver_version) : cs.driver_release,
      cuda_version_string(cs.runtime_version), cs.cublas_version, cs.cudnn_version);
  for (const auto& g : cs.gpus)
    d += fmt::format("; {} (sm_{}{}, {} SMs, {:.0f} GiB, SM clock {} MHz)", g.name, g.cc_major,
                     g.cc_minor, g.sms, g.total_memory / 1073741824.0, g.sm_clock_mhz);
  return d;
}

} // namespace

backend_status cuda_backend_status() {
  const cuda_status cs = query_cuda(true);
  return {"cuda", cs.available,
          cs.available
              ? available_detail(cs)
              : fmt::format("built ({}) but unavailable: {}", built_architectures(), cs.reason),
          cs.to_json().value("gpus", json::array())};
}

std::string cuda_build_detail() { return fmt::format("sm {}", build_info::cuda_architectures()); }

// ---------------------------------------------------------------------------------------------
// NVML through dlopen. The declarations follow nvml.h's documented C signatures; nvmlDevice_t is
// an opaque pointer and nvmlReturn_t an int-sized enum (NVML_SUCCESS = 0).
namespace {

using nvml_device = struct nvml_device_st*;
using nvml_return = int;
constexpr int nvml_clock_sm = 1;  // NVML_CLOCK_SM
constexpr int nvml_clock_mem = 2; // NVML_CLOCK_MEM

struct nvml_api {
  bool ok = false;
  nvml_return (*init)() = nullptr;                             // nvmlInit_v2
  nvml_return (*by_pci)(const char*, nvml_device*) = nullptr;  // ..HandleByPciBusId_v2
  nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr; // ..GetClockInfo
  nvml_return (*default_app_clock)(nvml_device, int,
                                   unsigned*) = nullptr;           // ..GetDefaultApplicationsClock
  nvml_return (*max_clock)(nvml_device, int, unsigned*) = nullptr; // ..GetMaxClockInfo
  nvml_return (*driver)(char*, unsigned) = nullptr;                // nvmlSystemGetDriverVersion
  nvml_return (*reasons)(nvml_device,
                         unsigned long long*) = nullptr; // ..GetCurrentClocksEventReasons
};

// Loaded once and kept for the process: nvmlShutdown at exit would race the measurement of other
// threads, and the driver cleans up with the process anyway.
const nvml_api& nvml() {
  static nvml_api api = [] {
    nvml_api a;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
      return a;
    auto sym = [h](const char* n) { return dlsym(h, n); };
    a.init = reinterpret_cast<decltype(a.init)>(sym("nvmlInit_v2"));
    a.by_pci = reinterpret_cast<decltype(a.by_pci)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    a.clock = reinterpret_cast<decltype(a.clock)>(sym("nvmlDeviceGetClockInfo"));
    a.default_app_clock = reinterpret_cast<decltype(a.default_app_clock)>(
        sym("nvmlDeviceGetDefaultApplicationsClock"));
    a.max_clock = reinterpret_cast<decltype(a.max_clock)>(sym("nvmlDeviceGetMaxClockInfo"));
    a.driver = reinterpret_cast<decltype(a.driver)>(sym("nvmlSystemGetDriverVersion"));
    // The event-reasons name is the current one (driver 535+); the throttle-reasons one is its
    // older, same-signature alias.
    a.reasons =
        reinterpret_cast<decltype(a.reasons)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!a.reasons)
      a.reasons =
          reinterpret_cast<decltype(a.reasons)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
    a.ok = a.init && a.clock && a.by_pci && a.init() == 0;
    return a;
  }();
  return api;
}

// NVML numbers devices by PCI order, CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID and after
// CUDA_VISIBLE_DEVICES: match by PCI bus id only. Without a match there is no clock reading at all
// (a clock of another GPU, found by index, would be worse than none).
bool nvml_handle(int cuda_index, nvml_device* dev) {
  const auto& a = nvml();
  if (!a.ok || !a.by_pci)
    return false;
  char bus[32] = {0};
  return cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_index) == cudaSuccess &&
         a.by_pci(bus, dev) == 0;
}

std::string version3(size_t v) {
  // cuBLASLt and cuDNN 9 both encode major*10000 + minor*100 + patch; 0 is a library that could
  // not be loaded (cublaslt_lazy.cpp, cudnn_lazy.cpp): no version.
  if (v == 0)
    return "";
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

} // namespace

clock_reading read_sm_clock(int index) {
  clock_reading r;
  nvml_device dev = nullptr;
  if (!nvml_handle(index, &dev))
    return r;
  const auto& a = nvml();
  unsigned mhz = 0, ref = 0;
  if (a.clock(dev, nvml_clock_sm, &mhz) != 0)
    return r;
  r.ok = true;
  r.sm_mhz = (int)mhz;
  if (a.default_app_clock && a.default_app_clock(dev, nvml_clock_sm, &ref) == 0 && ref > 0) {
    r.reference_mhz = (int)ref;
    r.reference_kind = "default_application";
  } else if (a.max_clock && a.max_clock(dev, nvml_clock_sm, &ref) == 0) {
    r.reference_mhz = (int)ref;
    r.reference_kind = "max";
  }
  unsigned long long mask = 0;
  if (a.reasons && a.reasons(dev, &mask) == 0) {
    r.reasons_ok = true;
    r.reasons = mask;
  }
  return r;
}

std::vector<std::string> throttle_reason_names(uint64_t mask) {
  // nvml.h's nvmlClocksEventReason* bits.
  static const std::pair<uint64_t, const char*> names[] = {{0x1, "gpu_idle"},
                                                           {0x2, "applications_clocks_setting"},
                                                           {0x4, "sw_power_cap"},
                                                           {0x8, "hw_slowdown"},
                                                           {0x10, "sync_boost"},
                                                           {0x20, "sw_thermal_slowdown"},
                                                           {0x40, "hw_thermal_slowdown"},
                                                           {0x80, "hw_power_brake_slowdown"},
                                                           {0x100, "display_clock_setting"}};
  std::vector<std::string> v;
  for (const auto& [bit, name] : names)
    if (mask & bit)
      v.emplace_back(name);
  if (uint64_t known = 0x1ff; mask & ~known)
    v.push_back(fmt::format("unknown_0x{:x}", mask & ~known));
  return v;
}

json clock_facts(int index) {
  auto c = read_sm_clock(index);
  if (!c.ok)
    return json::object();
  json j = {{"sm_clock_mhz", c.sm_mhz},
            {"reference_clock_mhz", c.reference_mhz},
            {"reference_clock", c.reference_kind}};
  bool throttled = is_throttled(c.sm_mhz, c.reference_mhz);
  if (c.reasons_ok) {
    j["throttle_reasons"] = throttle_reason_names(c.reasons);
    throttled = throttled || reasons_throttle(c.reasons);
  }
  j["throttled"] = throttled;
  return j;
}

bool reasons_throttle(uint64_t mask) {
  // Power cap, hardware slowdown, thermal and power-brake slowdowns lower the clock below what the
  // kernel would get; idle, sync boost and the display/application clock settings do not.
  constexpr uint64_t slowing = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
  return (mask & slowing) != 0;
}

bool is_throttled(int sm_mhz, int reference_mhz) {
  if (sm_mhz <= 0 || reference_mhz <= 0)
    return false;
  // Throttled: below 90% of the default (or max) application clock.
  return (double)sm_mhz < 0.9 * (double)reference_mhz;
}

// ---------------------------------------------------------------------------------------------
namespace {

std::string runtime_error_reason(cudaError_t e) {
  switch (e) {
  case cudaErrorInsufficientDriver:
    return "no driver: the NVIDIA driver is missing or older than this CUDA runtime (" +
           std::string(cudaGetErrorString(e)) + ")";
  case cudaErrorNoDevice:
    return "no device: the driver sees no CUDA-capable GPU (check CUDA_VISIBLE_DEVICES)";
  default:
    return fmt::format("no usable device: cudaGetDeviceCount failed with {} ({})",
                       cudaGetErrorName(e), cudaGetErrorString(e));
  }
}

cuda_status query_uncached() {
  cuda_status s;
  s.built = true;
  cudaDriverGetVersion(&s.driver_version);
  cudaRuntimeGetVersion(&s.runtime_version);
  s.cublas_version = version3(cublasLtGetVersion());
  s.cudnn_version = version3(cudnnGetVersion());
  s.cudnn_cudart_version = int(cudnnGetCudartVersion());
  if (nvml().ok && nvml().driver) {
    char buf[96] = {0};
    if (nvml().driver(buf, sizeof buf) == 0)
      s.driver_release = buf;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError(); // clear the sticky-free error so later calls start clean
    s.reason = runtime_error_reason(e);
    return s;
  }
  if (n == 0) {
    s.reason = "no device: the driver sees no CUDA-capable GPU";
    return s;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess)
      continue;
    gpu_info g;
    g.index = i;
    g.name = p.name;
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.sms = p.multiProcessorCount;
    g.total_memory = p.totalGlobalMem;
    g.l2_bytes = (uint64_t)p.l2CacheSize;
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess)
      g.pci_bus_id = bus;
    int cur = 0;
    if (cudaGetDevice(&cur) == cudaSuccess && cudaSetDevice(i) == cudaSuccess) {
      size_t fr = 0, tot = 0;
      if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        g.free_memory = fr;
      cudaSetDevice(cur);
    }
    auto c = read_sm_clock(i);
    g.sm_clock_mhz = c.sm_mhz;
    g.reference_clock_mhz = c.reference_mhz;
    nvml_device dev = nullptr;
    unsigned mem = 0;
    if (nvml_handle(i, &dev) && nvml().clock(dev, nvml_clock_mem, &mem) == 0)
      g.mem_clock_mhz = (int)mem;
    s.gpus.push_back(std::move(g));
  }
  s.available = !s.gpus.empty();
  if (!s.available)
    s.reason = "no device: no GPU answered cudaGetDeviceProperties";
  return s;
}

} // namespace

cuda_status query_cuda(bool refresh) {
  static std::mutex mu;
  static bool have = false;
  static cuda_status cached;
  std::lock_guard lock(mu);
  if (!have || refresh) {
    cached = query_uncached();
    have = true;
  }
  return cached;
}

bool cuda_available(std::string* why) {
  auto s = query_cuda();
  if (!s.available && why)
    *why = s.reason;
  return s.available;
}

// ---------------------------------------------------------------------------------------------
const std::vector<dtype_requirement>& gemm_dtype_table() {
  static const std::vector<dtype_requirement> t = {
      {"fp32", 0, 0, "CUDA cores"},
      {"fp16", 7, 0, "FP16 tensor cores (Volta)"},
      {"bf16", 8, 0, "BF16 tensor cores (Ampere)"},
      {"tf32", 8, 0, "TF32 tensor cores (Ampere)"},
      {"fp8_e4m3", 8, 9, "FP8 tensor cores (Ada, Hopper)"},
      {"fp8_e5m2", 8, 9, "FP8 tensor cores (Ada, Hopper)"},
      {"mxfp8", 10, 0, "block-scaled tensor cores (Blackwell)"},
      {"nvfp4", 10, 0, "block-scaled FP4 tensor cores (Blackwell)"},
  };
  return t;
}

std::string dtype_unsupported_reason(const std::string& dtype, int cc_major, int cc_minor,
                                     const std::string& device_name) {
  const auto& t = gemm_dtype_table();
  auto it = std::find_if(t.begin(), t.end(), [&](const auto& r) { return r.dtype == dtype; });
  if (it == t.end()) {
    std::string known;
    for (const auto& r : t)
      known += (known.empty() ? "" : ", ") + r.dtype;
    return fmt::format("dtype {} is not a CUDA GEMM dtype (known: {})", dtype, known);
  }
  if (cc_major * 10 + cc_minor >= it->min_major * 10 + it->min_minor)
    return {};
  return fmt::format(
      "dtype {} needs compute capability {}.{} or newer ({}); this device{} is {}.{}", dtype,
      it->min_major, it->min_minor, it->why, device_name.empty() ? "" : " (" + device_name + ")",
      cc_major, cc_minor);
}

double datasheet_peak_tflops(const std::string& gpu_name, const std::string& dtype) {
  // The one table (harness/core/datasheet_peak.hpp, over results/devices.json): the CUDA
  // backends and the report read the same figures.
  return accelbench::datasheet_peak_tflops(gpu_name, dtype);
}

std::string memory_refusal(uint64_t bytes, uint64_t free_bytes) {
  // 5% margin: the context, cuBLASLt/cuDNN workspaces and the L2 flush buffer share the device.
  if ((double)bytes <= 0.95 * (double)free_bytes)
    return {};
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  return fmt::format("config needs {:.2f} GiB of device memory but only {:.2f} GiB are free "
                     "(95% usable); refused before allocating",
                     (double)bytes / gib, (double)free_bytes / gib);
}

uint64_t free_device_memory() {
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return fr;
}

void check_cuda(int code, const char* what) {
  if (code == cudaSuccess)
    return;
  auto e = static_cast<cudaError_t>(code);
  throw backend_error(
      fmt::format("CUDA error {} ({}) in {}", cudaGetErrorName(e), cudaGetErrorString(e), what));
}

void synchronize(const char* what) {
  check_cuda(cudaGetLastError(), what);
  check_cuda(cudaDeviceSynchronize(), what);
}

void memset_async(void* ptr, int value, uint64_t bytes, void* stream) {
  check_cuda(cudaMemsetAsync(ptr, value, bytes, static_cast<cudaStream_t>(stream)),
             "cudaMemsetAsync");
}

void set_device(int index) { check_cuda(cudaSetDevice(index), "cudaSetDevice"); }

int current_device() {
  int d = 0;
  check_cuda(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

device_buffer::device_buffer(uint64_t bytes) : m_bytes(bytes) {
  if (bytes == 0)
    return;
  cudaError_t e = cudaMalloc(&m_ptr, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    m_ptr = nullptr;
    throw backend_error(
        fmt::format("cudaMalloc of {} bytes failed: {}", bytes, cudaGetErrorString(e)));
  }
}

device_buffer::~device_buffer() {
  if (m_ptr)
    cudaFree(m_ptr);
}

device_buffer::device_buffer(device_buffer&& o) noexcept : m_ptr(o.m_ptr), m_bytes(o.m_bytes) {
  o.m_ptr = nullptr;
  o.m_bytes = 0;
}

device_buffer& device_buffer::operator=(device_buffer&& o) noexcept {
  if (this != &o) {
    if (m_ptr)
      cudaFree(m_ptr);
    m_ptr = o.m_ptr;
    m_bytes = o.m_bytes;
    o.m_ptr = nullptr;
    o.m_bytes = 0;
  }
  return *this;
}

void device_buffer::upload(const void* host, uint64_t bytes, uint64_t offset) {
  if (offset + bytes > m_bytes)
    throw backend_error(
        fmt::format("upload of {} bytes at {} overflows a {}-byte buffer", bytes, offset, m_bytes));
  check_cuda(cudaMemcpy(static_cast<char*>(m_ptr) + offset, host, bytes, cudaMemcpyHostToDevice),
             "upload");
  // From pageable memory cudaMemcpy returns once the bytes are staged, before the DMA has landed,
  // and work on a non-blocking stream (every device_kernel's) is not ordered after it: wait here,
  // so that the data is on the device when upload returns.
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "upload (synchronise)");
}

void device_buffer::download(void* host, uint64_t bytes, uint64_t offset) const {
  if (offset + bytes > m_bytes)
    throw backend_error(fmt::format("download of {} bytes at {} overflows a {}-byte buffer", bytes,
                                    offset, m_bytes));
  check_cuda(
      cudaMemcpy(host, static_cast<const char*>(m_ptr) + offset, bytes, cudaMemcpyDeviceToHost),
      "download");
}

void device_buffer::zero() {
  if (!m_ptr)
    return;
  check_cuda(cudaMemset(m_ptr, 0, m_bytes), "cudaMemset");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaMemset (synchronise)"); // as upload
}

} // namespace accelbench::device
