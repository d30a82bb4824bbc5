#pragma once
// A shared library of NVIDIA's opened with dlopen on the first call of one of its functions instead
// of linked as a needed library (cublaslt_lazy.cpp, cudnn_lazy.cpp): a missing or mismatched
// library then fails only what calls it, as a failed run naming the status, never the start of
// every program (`accelbench env`, the CPU backends, the GEMM of a machine without cuDNN).
//
// Each function is defined with the header's own declaration (a signature that differs from it
// does not compile) and forwards to the library's.
#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace accelbench::device::lazy {

// Opens `soname` from the loader's path, else `fallback` (the library found at configure time, or
// nullptr); says why on stderr when neither opens. nullptr then.
inline void* open_library(const char* what, const std::string& soname, const char* fallback) {
  void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr && fallback != nullptr)
    h = dlopen(fallback, RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr)
    std::fprintf(stderr, "accelbench: cannot load %s (%s): %s\n", what, soname.c_str(), dlerror());
  return h;
}

// `name` in the library `handle` opened, nullptr when it did not open or lacks it.
inline void* symbol_of(void* handle, const char* name) {
  return handle == nullptr ? nullptr : dlsym(handle, name);
}

} // namespace accelbench::device::lazy

// Defines `name` with the header's signature (`params`, `args`), forwarding to the symbol that
// `symbol_of(#name)` finds; `fail` when the library or the symbol is missing.
#define ACCELBENCH_LAZY_FUNCTION(symbol_of, ret, name, params, args, fail)                         \
  extern "C" ret name params {                                                                     \
    static const auto fn = reinterpret_cast<decltype(&::name)>(symbol_of(#name));                  \
    return fn == nullptr ? (fail) : fn args;                                                       \
  }
