// Device side of the counter_rng test: the same header's generator run in a kernel.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "harness/core/counter_rng.hpp"

namespace {
__global__ void fill(float* uniform, float* normal, uint64_t n, uint64_t seed) {
  const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uniform[i] = accelbench::counter_rng::uniform_pm1(seed, i);
  normal[i] = accelbench::counter_rng::normal(seed, i);
}
} // namespace

// Fills `uniform` and `normal` (sized n) on device 0; false on any CUDA error.
bool counter_rng_on_device(uint64_t seed, std::vector<float>& uniform, std::vector<float>& normal) {
  const uint64_t n = uniform.size();
  float* d = nullptr;
  if (cudaMalloc(&d, 2 * n * sizeof(float)) != cudaSuccess)
    return false;
  fill<<<(unsigned)((n + 255) / 256), 256>>>(d, d + n, n, seed);
  bool ok =
      cudaGetLastError() == cudaSuccess &&
      cudaMemcpy(uniform.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess &&
      cudaMemcpy(normal.data(), d + n, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(d);
  return ok;
}
