#pragma once
// The training's cuBLASLt matmuls (lt_gemm), private to accelbench::training_cuda: one
// descriptor set and heuristic choice per shape and operand alignment, cached.
#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "harness/device/device.hpp"

namespace accelbench::training::cuda {

constexpr uint64_t kLtWorkspace = 32ull << 20;

void check_lt(cublasStatus_t s, const std::string& what);

// Column-major cuBLASLt matmuls, D[m,n] = op(A)[m,k] op(B)[k,n] + beta C (C and D the same
// type and layout; C may be D), fp32 accumulation (CUBLAS_COMPUTE_32F, no TF32). A and B fp32
// or bf16; C and D fp32 or bf16. One descriptor set and heuristic choice per shape, cached.
class lt_gemm {
public:
  lt_gemm() : m_ws(kLtWorkspace) { check_lt(cublasLtCreate(&m_h), "create"); }
  ~lt_gemm() {
    for (auto& [k, p] : m_plans) {
      cublasLtMatrixLayoutDestroy(p.a);
      cublasLtMatrixLayoutDestroy(p.b);
      cublasLtMatrixLayoutDestroy(p.c);
      cublasLtMatmulDescDestroy(p.d);
    }
    if (m_h)
      cublasLtDestroy(m_h);
  }
  lt_gemm(const lt_gemm&) = delete;
  lt_gemm& operator=(const lt_gemm&) = delete;

  struct operands {
    const void* a;
    int64_t lda;
    const void* b;
    int64_t ldb;
    const void* c; // read when beta != 0
    void* d;
    int64_t ldc;
    bool in_bf16, out_bf16;
  };
  void run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const operands& o, float beta,
           void* stream);

private:
  using key_t =
      std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, int>;
  static int alignment(const void* p);
  struct plan {
    cublasLtMatmulDesc_t d = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  plan make_plan(const key_t& key);
  void fill_plan(const key_t& key, plan& p);

  cublasLtHandle_t m_h = nullptr;
  device::device_buffer m_ws;
  std::map<key_t, plan> m_plans;
};

} // namespace accelbench::training::cuda
