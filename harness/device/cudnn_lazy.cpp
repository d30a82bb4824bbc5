// cuDNN, loaded the first time accelbench calls it instead of at the start of every process
// (harness/device/lazy_library.hpp). Linked as a needed library, a missing or mismatched cuDNN
// stopped every program before main(): `accelbench env`, the CUDA GEMM and the CPU backends with
// it, on a GPU machine whose cuDNN is absent or built for another CUDA. Now only what calls cuDNN
// (the cuDNN attention backend, and the CUDA trainer's attention) fails, as a run whose reason
// names CUDNN_STATUS_NOT_INITIALIZED, and `accelbench env` records no cuDNN version.
//
// libcudnn.so.<CUDNN_MAJOR> is cuDNN 9's front library: it exports the whole API and loads its
// sub-libraries (graph, engines) itself. From the loader's path, else the one found at configure
// time (ACCELBENCH_CUDNN_PATH).
#include <cstring>
#include <string>

#include <cudnn_graph.h>

#include "harness/device/device.hpp"
#include "harness/device/lazy_library.hpp"

namespace {

// The library found at configure time, when the loader's path has none.
#ifndef ACCELBENCH_CUDNN_PATH
#define ACCELBENCH_CUDNN_PATH nullptr
#endif

void* cudnn_symbol(const char* name) {
  static void* const handle = accelbench::device::lazy::open_library(
      "cuDNN", "libcudnn.so." + std::to_string(CUDNN_MAJOR), ACCELBENCH_CUDNN_PATH); // once
  return accelbench::device::lazy::symbol_of(handle, name);
}

constexpr cudnnStatus_t k_missing = CUDNN_STATUS_NOT_INITIALIZED;
constexpr const char* k_missing_text = "cuDNN could not be loaded (see the message on stderr)";

} // namespace

std::string accelbench::device::cudnn_library_path() {
  // The shared object that holds the library's own cudnnGetVersion: this process's libcudnn.
  Dl_info info{};
  void* f = cudnn_symbol("cudnnGetVersion");
  if (f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
  return {};
}

#define ACCELBENCH_CUDNN_LAZY(ret, name, params, args, fail)                                       \
  ACCELBENCH_LAZY_FUNCTION(cudnn_symbol, ret, name, params, args, fail)

// Version 0 and no error text of its own when the library is missing: device.cpp records no
// version, and the attention backend's message says the library could not be loaded.
ACCELBENCH_CUDNN_LAZY(size_t, cudnnGetVersion, (void), (), size_t{0})
ACCELBENCH_CUDNN_LAZY(size_t, cudnnGetCudartVersion, (void), (), size_t{0})
ACCELBENCH_CUDNN_LAZY(const char*, cudnnGetErrorString, (cudnnStatus_t status), (status),
                      k_missing_text)

extern "C" void cudnnGetLastErrorString(char* message, size_t max_size) {
  using fn_t = decltype(&::cudnnGetLastErrorString);
  static const auto fn = reinterpret_cast<fn_t>(cudnn_symbol("cudnnGetLastErrorString"));
  if (fn != nullptr)
    return fn(message, max_size);
  if (message != nullptr && max_size > 0) {
    std::strncpy(message, k_missing_text, max_size - 1);
    message[max_size - 1] = '\0';
  }
}

ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnCreate, (cudnnHandle_t * handle), (handle), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnDestroy, (cudnnHandle_t handle), (handle), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnSetStream, (cudnnHandle_t handle, cudaStream_t stream),
                      (handle, stream), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendCreateDescriptor,
                      (cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* descriptor),
                      (type, descriptor), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendDestroyDescriptor,
                      (cudnnBackendDescriptor_t descriptor), (descriptor), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendFinalize, (cudnnBackendDescriptor_t descriptor),
                      (descriptor), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendSetAttribute,
                      (cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                       cudnnBackendAttributeType_t type, int64_t count, const void* elements),
                      (descriptor, name, type, count, elements), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendGetAttribute,
                      (cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t name,
                       cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                       void* elements),
                      (descriptor, name, type, requested, count, elements), k_missing)
ACCELBENCH_CUDNN_LAZY(cudnnStatus_t, cudnnBackendExecute,
                      (cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                       cudnnBackendDescriptor_t variant_pack),
                      (handle, plan, variant_pack), k_missing)
