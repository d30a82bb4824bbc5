#pragma once
// The AVX-512 `isa` struct of the fused attention kernels (flash_kernels.inl), shared by the
// AVX-512 variant (flash_kernels_avx512.cpp) and the AVX512-BF16 variant
// (flash_kernels_avx512bf16.cpp). Internal: include only from a translation unit that CMake
// compiles with the AVX-512 flags, before flash_kernels.inl.
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined_ps()
// (GCC bug 105593); the warnings are about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__) // clang has neither the bug nor the warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace {

struct isa {
  using vec = __m512;
  static constexpr int W = 16;
  static constexpr int NV = 4; // 6 x 4 accumulators = 24 of 32 zmm registers
  static constexpr int MR = 6;
  static vec zero() { return _mm512_setzero_ps(); }
  static vec set1(float x) { return _mm512_set1_ps(x); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec fmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static vec sub(vec a, vec b) { return _mm512_sub_ps(a, b); }
  static vec max(vec a, vec b) { return _mm512_max_ps(a, b); }
  static float hmax(vec a) { return _mm512_reduce_max_ps(a); }
  static float hsum(vec a) { return _mm512_reduce_add_ps(a); }
  // 2^x = 2^n * 2^f, n = round(x), f in [-0.5, 0.5], 2^f by the Cephes exp2f polynomial
  // (relative error ~2e-7); scalef applies 2^n without integer tricks. x is clamped to
  // [-125, 127] so that results are normal floats (denormals are slow and meaningless here).
  static vec exp2(vec x) {
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(127.f)), _mm512_set1_ps(-125.f));
    vec n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vec f = _mm512_sub_ps(x, n);
    vec p = _mm512_set1_ps(1.535336188319500e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.f));
    return _mm512_scalef_ps(p, n);
  }
};

} // namespace
