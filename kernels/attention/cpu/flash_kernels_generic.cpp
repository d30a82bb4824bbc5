// Portable variant of the fused attention kernels: one float per "vector", the compiler's own
// baseline vectorisation (SSE2 on x86-64). Used when neither AVX-512 nor AVX2+FMA is present.
#include "kernels/attention/cpu/flash_kernels.hpp"

namespace {

struct isa {
  using vec = float;
  static constexpr int W = 1;
  static constexpr int NV = 4;
  static constexpr int MR = 4;
  static vec zero() { return 0.f; }
  static vec set1(float x) { return x; }
  static vec load(const float* p) { return *p; }
  static void store(float* p, vec v) { *p = v; }
  static vec fmadd(vec a, vec b, vec c) { return a * b + c; }
  static vec mul(vec a, vec b) { return a * b; }
  static vec add(vec a, vec b) { return a + b; }
  static vec sub(vec a, vec b) { return a - b; }
  static vec max(vec a, vec b) { return a > b ? a : b; }
  static float hmax(vec a) { return a; }
  static float hsum(vec a) { return a; }
  static vec exp2(vec x) { return __builtin_exp2f(x < -125.f ? -125.f : x); }
};

} // namespace

#include "kernels/attention/cpu/flash_kernels.inl"

namespace accelbench::attention::detail {
const kernel_variant variant_generic = {"generic", &forward_entry, &backward_entry};
} // namespace accelbench::attention::detail
