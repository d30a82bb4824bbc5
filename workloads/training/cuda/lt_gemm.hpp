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
// Not yet shared with the GEMM workload's cuBLASLt wrapper (workloads/gemm/cuda/gemm_cuda.cpp,
// also lt_gemm); a shared one (in harness/device) must keep, for the calls made here: the
// explicit leading dimensions and C != D (the bf16 residual adds); the MIN_ALIGNMENT_A/B/C/D
// preferences from the operands' real alignment, in the plan's key (the GEMM workload sets only
// MAX_WORKSPACE and so lets cuBLASLt assume 256); no TF32, FP8 or block-scale attributes; the
// first heuristic result taken without the GEMM's check of its state (there a NOT_SUPPORTED,
// zero results or a failed state is a skip). Before merging, a GPU run must show the same
// algorithm (CUBLASLT_ALGO_CONFIG_* of each plan) for every shape of both recipes, and
// bit-identical losses and gradients after a few steps, old build against new.
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
