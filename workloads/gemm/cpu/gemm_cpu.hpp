#pragma once
// The GEMM workload's CPU backend (oneDNN, OpenBLAS): C[M,N] = op(A)[M,K] · op(B)[K,N], row-major,
// fp32 output, for the shape of the spec (workloads/gemm/gemm_spec.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/workload.hpp"
#include "workloads/gemm/gemm_spec.hpp"
#include "workloads/gemm/gemm_tolerance.hpp"

namespace accelbench::gemm {

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
// against the error bound of cpu_error_model(s.type) (workloads/gemm/gemm_tolerance.hpp).
gemm_check check_gemm(const gemm_shape& s, const gemm_buffers& buf, int64_t points, uint64_t seed);

// Called on the output after measurement and before the correctness check. Tests use it to
// corrupt the result and prove that a wrong kernel is reported INVALID.
using output_hook = std::function<void(const gemm_shape&, gemm_buffers&)>;

// One run of the config on `library`: measures, fills metrics and extra, checks the output
// (INVALID when wrong). `key` is the config's key (the inputs' seed with ctx.seed: seed_of; the
// measurement's name).
void gemm_cpu_execute(const gemm_shape& s, const std::string& key, const std::string& library,
                      run& out, run_context& ctx, const output_hook& hook);

// Whether the OpenBLAS found at run time has a bfloat16 GEMM.
bool openblas_has_bf16();

// Versions of the CPU libraries, for the environment.
std::string onednn_version();
std::string openblas_version();

} // namespace accelbench::gemm
