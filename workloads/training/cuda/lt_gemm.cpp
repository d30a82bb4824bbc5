// lt_gemm (lt_gemm.hpp): the plans, made on first use of a shape, and the matmul.
#include "workloads/training/cuda/lt_gemm.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::training::cuda {

void check_lt(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw backend_error(fmt::format("cuBLASLt {} failed (status {})", what, (int)s));
}

void lt_gemm::run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const operands& o, float beta,
                  void* stream) {
  // The heuristic assumes 256-byte aligned operands unless told otherwise: tell it the truth
  // (a pointer into a tensor need not be), and keep one plan per alignment.
  const int align = std::min({alignment(o.a), alignment(o.b), alignment(o.c), alignment(o.d)});
  const key_t key{ta, tb, m, n, k, o.lda, o.ldb, o.ldc, o.in_bf16, o.out_bf16, align};
  auto it = m_plans.find(key);
  if (it == m_plans.end())
    it = m_plans.emplace(key, make_plan(key)).first;
  const plan& p = it->second;
  const float alpha = 1.0f;
  check_lt(cublasLtMatmul(m_h, p.d, &alpha, o.a, p.a, o.b, p.b, &beta, o.c, p.c, o.d, p.c, &p.algo,
                          m_ws.get(), kLtWorkspace, static_cast<cudaStream_t>(stream)),
           fmt::format("matmul m={} n={} k={}", m, n, k));
}

int lt_gemm::alignment(const void* p) {
  if (!p)
    return 256;
  const auto v = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && v % uintptr_t(a) != 0)
    a /= 2;
  return a;
}

lt_gemm::plan lt_gemm::make_plan(const key_t& key) {
  plan p;
  try {
    fill_plan(key, p);
  } catch (...) { // release what was created before the failure
    if (p.a)
      cublasLtMatrixLayoutDestroy(p.a);
    if (p.b)
      cublasLtMatrixLayoutDestroy(p.b);
    if (p.c)
      cublasLtMatrixLayoutDestroy(p.c);
    if (p.d)
      cublasLtMatmulDescDestroy(p.d);
    throw;
  }
  return p;
}

void lt_gemm::fill_plan(const key_t& key, plan& p) {
  auto [ta, tb, m, n, k, lda, ldb, ldc, bf16, out_bf16, align] = key;
  const std::string shape = fmt::format("m={} n={} k={} ({} -> {})", m, n, k,
                                        bf16 ? "bf16" : "fp32", out_bf16 ? "bf16" : "fp32");
  check_lt(cublasLtMatmulDescCreate(&p.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor " + shape);
  cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(p.d, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa),
           "transa");
  check_lt(cublasLtMatmulDescSetAttribute(p.d, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb),
           "transb");
  const cudaDataType_t in = bf16 ? CUDA_R_16BF : CUDA_R_32F;
  check_lt(cublasLtMatrixLayoutCreate(&p.a, in, ta ? k : m, ta ? m : k, lda), "layout A " + shape);
  check_lt(cublasLtMatrixLayoutCreate(&p.b, in, tb ? n : k, tb ? k : n, ldb), "layout B " + shape);
  check_lt(cublasLtMatrixLayoutCreate(&p.c, out_bf16 ? CUDA_R_16BF : CUDA_R_32F, m, n, ldc),
           "layout C " + shape);
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  uint64_t ws = kLtWorkspace;
  const uint32_t al = uint32_t(align);
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  for (auto [attr, value, size] :
       {std::tuple{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, (const void*)&ws, sizeof ws},
        std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, (const void*)&al, sizeof al},
        std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, (const void*)&al, sizeof al},
        std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, (const void*)&al, sizeof al},
        std::tuple{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, (const void*)&al, sizeof al}})
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attr, value, size);
  cublasLtMatmulHeuristicResult_t res{};
  int count = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(m_h, p.d, p.a, p.b, p.c, p.c, pref, 1, &res, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || count == 0)
    throw backend_error(fmt::format(
        "cuBLASLt has no algorithm for the matmul {} (operands {}-byte aligned)", shape, align));
  p.algo = res.algo;
}

} // namespace accelbench::training::cuda
