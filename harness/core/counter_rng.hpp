#pragma once
// A counter-based generator for seeded input tensors: element i of a tensor is a pure function of
// (seed, i), so a tensor can be filled in any order, by any number of host threads or by a device
// kernel, and a correctness check can regenerate any sampled element alone. Header-only and usable
// from CUDA device code (the functions are __host__ __device__ under nvcc); plain C++ elsewhere.
//
// bits() is SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014) at counter i: the golden-gamma Weyl sequence and its finaliser, which passes
// BigCrush as a counter-based generator. uniform_pm1 is exact integer arithmetic and the same bit
// for bit everywhere; normal uses logf/cosf, whose last bit may differ between host and device.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define ACCELBENCH_HOST_DEVICE __host__ __device__
#else
#define ACCELBENCH_HOST_DEVICE
#endif

namespace accelbench::counter_rng {

ACCELBENCH_HOST_DEVICE inline uint64_t bits(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) on a grid of 2^-23 (every value exact in fp32).
ACCELBENCH_HOST_DEVICE inline float uniform_pm1(uint64_t seed, uint64_t i) {
  const auto u = (int32_t)(bits(seed, i) >> 40); // 24 bits
  return (float)(u - (1 << 23)) * 0x1p-23f;
}

// Uniform in (0, 1]: never 0, so a logarithm of it is finite.
ACCELBENCH_HOST_DEVICE inline float uniform_open0(uint64_t seed, uint64_t i) {
  return (float)((bits(seed, i) >> 40) + 1) * 0x1p-24f;
}

// Normal(0, 1) by Box-Muller from counters 2i and 2i+1.
ACCELBENCH_HOST_DEVICE inline float normal(uint64_t seed, uint64_t i) {
  const float r = sqrtf(-2.0f * logf(uniform_open0(seed, 2 * i)));
  return r * cosf(6.2831853f * uniform_open0(seed, 2 * i + 1));
}

// The seed of one tensor of a run (q, k, v, ...), apart from the run's other tensors.
ACCELBENCH_HOST_DEVICE inline uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  return bits(seed, 0x5eed0000ULL + stream);
}

} // namespace accelbench::counter_rng
