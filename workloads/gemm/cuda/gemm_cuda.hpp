#pragma once
// The GEMM workload's CUDA backend, through cuBLASLt. Plain C++ interface (no CUDA types), called
// by workloads/gemm/gemm_workload.cpp with the config parsed once (gemm_shape, gemm_spec.hpp) when
// the config's backend is "cuda".
//
// The computation is the CPU backend's: C[M,N] = op(A)[M,K] · op(B)[K,N], row-major, A stored
// [M,K] ([K,M] when trans_a), B stored [K,N] ([N,K] when trans_b), fp32 accumulation.
// Output: fp32 for fp32/tf32/fp16/bf16 (as the CPU backend writes), bf16 for the 8- and 4-bit
// dtypes (the output type cuBLASLt's FP8 and block-scaled kernels support for every layout).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/gemm/gemm_spec.hpp"

namespace accelbench::gemm {

// The dtypes the CUDA backend accepts (the "dtype" axis choices when cuda is built).
const std::vector<std::string>& cuda_gemm_dtypes();

// Not built / no driver / no device, with the reason. (Also in harness/device/device.hpp.)
bool cuda_available(std::string* why);

// Why this config cannot run on this device, empty when it can: no device, dtype needs a newer
// compute capability (nvfp4 on sm_90), layout the 8/4-bit kernels do not support, K not a
// multiple of the scale block, not enough free device memory. Cheap: no allocation.
std::string gemm_cuda_unavailable_reason(const gemm_shape& s);

// Device bytes the config allocates (A, B, D, scale tensors, 32 MiB workspace).
uint64_t gemm_cuda_device_bytes(const gemm_shape& s);

// The device's output and the operands it read, handed to a test hook before the correctness
// check (tests corrupt `c` to prove that a wrong result is reported INVALID).
struct cuda_gemm_output {
  int64_t m, n, k;
  std::function<double(int64_t, int64_t)> a_at; // op(A)[i, kk] as the device read it (dequantised)
  std::function<double(int64_t, int64_t)> b_at; // op(B)[kk, j]
  std::vector<float>& c;                        // row-major [M, N], fp32 copy of the output
};
using cuda_output_hook = std::function<void(cuda_gemm_output&)>;

// Runs the config on device 0: fills samples (device-timed, seconds per iteration), metrics
// (time, tflops with CI, pct_of_peak when the device's peak is known, cv), extra (algorithm,
// device, correctness against cuda_error_model's bound) and validity. Failures are data
// (out.mark_failed / mark_skipped).
// `key` is the config's key (the inputs' seed with ctx.seed: seed_of; the measurement's name).
void gemm_cuda_execute(const gemm_shape& s, const std::string& key, run& out, run_context& ctx,
                       const cuda_output_hook& hook = {});

// ---- pieces exposed for tests (pure host code, no device needed) ----

// Minifloat formats: encode a float (round to nearest even, saturating to the largest finite
// value, as cuBLASLt's and Transformer Engine's casts do; NaN to the format's NaN, or 0 in FP4,
// which has none) and decode the bits.
enum class minifloat { e4m3, e5m2, e2m1, ue8m0, ue4m3 };
uint8_t encode_minifloat(minifloat f, float x);
float decode_minifloat(minifloat f, uint8_t bits);
float minifloat_max(minifloat f);

// Offset of scale factor (row r, block column c) inside cuBLASLt's 1D block-scaling layout:
// the [rows, K/block] scale matrix padded to multiples of 128 x 4 and stored as 128x4 tiles of
// 512 bytes, tiles ordered row-block major; inside a tile (r%32)*16 + ((r%128)/32)*4 + c%4.
// (cuBLAS documentation, "1D Block Scaling Factors Layout".)
uint64_t block_scale_offset(int64_t r, int64_t c, int64_t scale_cols);
// Bytes of that scale tensor.
uint64_t block_scale_bytes(int64_t rows, int64_t scale_cols);

} // namespace accelbench::gemm
