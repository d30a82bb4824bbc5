#pragma once
// The GEMM workload's spec: its axes, the config parsed once into gemm_shape (what the CPU
// backend, cpu/, and the CUDA backend, cuda/, receive), FLOP and byte accounting. The checker and
// its error models are gemm_tolerance.hpp.
//
// C[M,N] = op(A)[M,K] · op(B)[K,N], row-major. A is stored [M,K] (or [K,M] when trans_a), B is
// stored [K,N] (or [N,K] when trans_b).
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/checked_math.hpp"
#include "harness/core/dtype.hpp"
#include "harness/core/workload.hpp"

namespace accelbench::gemm {

struct gemm_shape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  // cpu: fp32 | bf16 (inputs bf16, fp32 accumulation and output); cuda: every dtype.
  dtype type = dtype::fp32;
  // C's element type: the out_dtype axis when stated, else fp32, the CPU's, which a backend with
  // another default replaces (out_stated says which: the cuda backend's is torch_out_dtype).
  dtype out = dtype::fp32;
  bool out_stated = false;
  int64_t a_elems() const { return m * k; }
  int64_t b_elems() const { return k * n; }
  int64_t c_elems() const { return m * n; }
  // Host bytes of an input element (the CPU's fp32 or bf16 arrays).
  size_t input_elem_bytes() const { return type == dtype::bf16 ? 2 : 4; }
  double flops() const { return 2.0 * (double)m * (double)n * (double)k; }
  // Saturates instead of wrapping: fp32 M = N = 2^30, K = 1.5 * 2^30 needs exactly 2^64 bytes,
  // which wrapped to 0 and passed the host-memory check.
  uint64_t bytes() const {
    return sat_add(sat_mul(sat_add(sat_product({m, k}), sat_product({k, n})), input_elem_bytes()),
                   sat_mul(sat_product({m, n}), 4));
  }
};

// C's type as torch.matmul writes it: the input type (fp32 for tf32), bf16 for fp8/mxfp8/nvfp4
// (as torch._scaled_mm is asked for). The cuda backend's C when out_dtype is unstated; the CPU's is
// fp32, what its stored results always measured (its libraries accumulate and write fp32).
dtype torch_out_dtype(dtype input);

// The config's shape and dtype, parsed once (throws input_error on an unknown dtype).
gemm_shape shape_of(const config& cfg);

// The workload's spec, complete: the backends of this build and the dtypes they run (the dtype
// axis' choices).
workload_spec gemm_spec(std::vector<std::string> backends, std::vector<std::string> dtypes);

} // namespace accelbench::gemm
