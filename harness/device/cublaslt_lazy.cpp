// cuBLASLt, loaded the first time accelbench calls it instead of at the start of every process.
//
// Linked as a needed library, libcublasLt's initialisation ran before main() in every accelbench
// process: 0.3 of the 0.42 s of `accelbench --version` (perf: 37% of the samples in libcublasLt,
// most of the kernel's page faults its own), paid by every command, GPU or not, and by every test
// that runs the executable. Here each cuBLASLt function accelbench uses is defined with the
// header's own declaration (a signature that differs from it does not compile), and forwards to
// the library's, opened with dlopen on the first call: libcublasLt.so.<CUBLAS_VER_MAJOR> from the
// loader's path, else the toolkit's found at configure time (ACCELBENCH_CUBLASLT_PATH). When it
// cannot be opened every function answers CUBLAS_STATUS_NOT_INITIALIZED (and the version 0),
// which the GEMM and training backends already report as a failed run with the status's name.
#include <string>

#include <cublasLt.h>

#include "harness/device/lazy_library.hpp"

namespace {

// The library found at configure time, when the loader's path has none.
#ifndef ACCELBENCH_CUBLASLT_PATH
#define ACCELBENCH_CUBLASLT_PATH nullptr
#endif

void* cublaslt_symbol(const char* name) {
  static void* const handle = accelbench::device::lazy::open_library(
      "cuBLASLt", "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR),
      ACCELBENCH_CUBLASLT_PATH); // once
  return accelbench::device::lazy::symbol_of(handle, name);
}

} // namespace

#define ACCELBENCH_CUBLASLT_LAZY(ret, name, params, args, fail)                                    \
  ACCELBENCH_LAZY_FUNCTION(cublaslt_symbol, ret, name, params, args, fail)

namespace {
constexpr cublasStatus_t k_missing = CUBLAS_STATUS_NOT_INITIALIZED;
}

ACCELBENCH_CUBLASLT_LAZY(size_t, cublasLtGetVersion, (), (), size_t{0})
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * h), (h), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t h), (h), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulDescCreate,
                         (cublasLtMatmulDesc_t * d, cublasComputeType_t c, cudaDataType_t s),
                         (d, c, s), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d),
                         k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulDescSetAttribute,
                         (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* b,
                          size_t n),
                         (d, a, b, n), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatrixLayoutCreate,
                         (cublasLtMatrixLayout_t * l, cudaDataType t, uint64_t rows, uint64_t cols,
                          int64_t ld),
                         (l, t, rows, cols, ld), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l),
                         (l), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulPreferenceCreate,
                         (cublasLtMatmulPreference_t * p), (p), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulPreferenceDestroy,
                         (cublasLtMatmulPreference_t p), (p), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,
                         (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                          const void* b, size_t n),
                         (p, a, b, n), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
                         (cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                          cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                          cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t p, int requested,
                          cublasLtMatmulHeuristicResult_t results[], int* returned),
                         (h, op, a, b, c, d, p, requested, results, returned), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmulAlgoConfigGetAttribute,
                         (const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t a,
                          void* b, size_t n, size_t* written),
                         (algo, a, b, n, written), k_missing)
ACCELBENCH_CUBLASLT_LAZY(cublasStatus_t, cublasLtMatmul,
                         (cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void* alpha,
                          const void* A, cublasLtMatrixLayout_t a, const void* B,
                          cublasLtMatrixLayout_t b, const void* beta, const void* C,
                          cublasLtMatrixLayout_t c, void* D, cublasLtMatrixLayout_t d,
                          const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                          cudaStream_t stream),
                         (h, op, alpha, A, a, B, b, beta, C, c, D, d, algo, workspace,
                          workspace_bytes, stream),
                         k_missing)
