#pragma once
// GEMM on the CPU: C[M,N] = op(A)[M,K] · op(B)[K,N], row-major, fp32 output.
// A is stored [M,K] (or [K,M] when trans_a), B is stored [K,N] (or [N,K] when trans_b).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/checked_math.hpp"
#include "harness/core/model.hpp"
#include "workloads/gemm/gemm_tolerance.hpp"

namespace accelbench::gemm {

struct gemm_shape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::string dtype = "fp32"; // fp32 | bf16 (inputs bf16, fp32 accumulation and output)
  int64_t a_elems() const { return m * k; }
  int64_t b_elems() const { return k * n; }
  int64_t c_elems() const { return m * n; }
  size_t input_elem_bytes() const { return dtype == "bf16" ? 2 : 4; }
  double flops() const { return 2.0 * (double)m * (double)n * (double)k; }
  // Saturates instead of wrapping: fp32 M = N = 2^30, K = 1.5 * 2^30 needs exactly 2^64 bytes,
  // which wrapped to 0 and passed the host-memory check.
  uint64_t bytes() const {
    return sat_add(sat_mul(sat_add(sat_product({m, k}), sat_product({k, n})), input_elem_bytes()),
                   sat_mul(sat_product({m, n}), 4));
  }
};

// Inputs as the kernel sees them: fp32 arrays, or bf16 arrays (raw bits) for dtype bf16.
struct gemm_buffers {
  std::vector<float> a32, b32;
  std::vector<uint16_t> a16, b16;
  std::vector<float> c;
  const void* a() const { return a16.empty() ? (const void*)a32.data() : (const void*)a16.data(); }
  const void* b() const { return b16.empty() ? (const void*)b32.data() : (const void*)b16.data(); }
  float a_at(const gemm_shape& s, int64_t i, int64_t kk) const; // op(A)[i,kk] as the kernel read it
  float b_at(const gemm_shape& s, int64_t kk, int64_t j) const; // op(B)[kk,j]
};

// Seeded uniform [-1, 1) inputs; C zeroed.
gemm_buffers make_buffers(const gemm_shape& s, uint64_t seed);

// One library's kernel for one shape, set up once (primitive creation outside the timed loop).
class cpu_gemm {
public:
  virtual ~cpu_gemm() = default;
  virtual void run(gemm_buffers& buf) = 0;
  virtual std::string implementation() const = 0; // e.g. oneDNN's impl_info_str
};

// library: onednn | openblas. Throws input_error when the library cannot do the dtype.
std::unique_ptr<cpu_gemm> make_cpu_gemm(const std::string& library, const gemm_shape& s);

// Checks `points` output elements (all of them for small shapes, else the four corners and seeded
// random ones) against a double-precision dot product over the inputs the kernel read, each
// against the error bound of cpu_error_model(s.dtype) (workloads/gemm/gemm_tolerance.hpp).
gemm_check check_gemm(const gemm_shape& s, const gemm_buffers& buf, int64_t points, uint64_t seed);

// Whether the OpenBLAS found at run time has a bfloat16 GEMM.
bool openblas_has_bf16();

// Versions of the CPU libraries, for the environment.
std::string onednn_version();
std::string openblas_version();

} // namespace accelbench::gemm
