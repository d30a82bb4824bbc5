#pragma once
// IEEE-754 binary16 (fp16) storage helpers, rounded to nearest even. Plain integer code: clang 14,
// the sanitizer build's compiler, has no _Float16 on x86.
#include <cstdint>
#include <cstring>

namespace accelbench {

inline uint16_t float_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t fexp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (fexp == 0xffu)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u)); // inf, NaN
  const int32_t exp = (int32_t)fexp - 127 + 15;
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00u); // overflow to inf
  if (exp <= 0) {                      // subnormal or zero
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
    ++half; // a carry into the exponent is right
  return (uint16_t)half;
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (exp == 0 && mant == 0) {
    x = sign;
  } else if (exp == 0) { // subnormal: normalise
    exp = 127 - 15 + 1;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

} // namespace accelbench
