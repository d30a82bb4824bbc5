// AVX2 + FMA variant of the fused attention kernels (compiled with -mavx2 -mfma by CMake for this
// file only; chosen at run time when AVX-512 is absent).
#include <immintrin.h>

#include "kernels/attention/cpu/flash_kernels.hpp"

namespace {

struct isa {
  using vec = __m256;
  static constexpr int W = 8;
  static constexpr int NV = 2; // 6 x 2 accumulators = 12 of 16 ymm registers
  static constexpr int MR = 6;
  static vec zero() { return _mm256_setzero_ps(); }
  static vec set1(float x) { return _mm256_set1_ps(x); }
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec fmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static vec sub(vec a, vec b) { return _mm256_sub_ps(a, b); }
  static vec max(vec a, vec b) { return _mm256_max_ps(a, b); }
  static float hmax(vec a) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
  }
  static float hsum(vec a) {
    __m128 m = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_add_ps(m, _mm_movehl_ps(m, m));
    m = _mm_add_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
  }
  // Same polynomial as the AVX-512 variant; 2^n built in the exponent field (n in [-125, 127]).
  static vec exp2(vec x) {
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(127.f)), _mm256_set1_ps(-125.f));
    vec n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vec f = _mm256_sub_ps(x, n);
    vec p = _mm256_set1_ps(1.535336188319500e-4f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.339887440266574e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.618437357674640e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550332471162809e-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402264791363012e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931472028550421e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.f));
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
};

} // namespace

#include "kernels/attention/cpu/flash_kernels.inl"

namespace accelbench::attention::detail {
const kernel_variant variant_avx2 = {"avx2", &forward_entry, &backward_entry};
} // namespace accelbench::attention::detail
