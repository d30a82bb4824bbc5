#pragma once
// Saturating arithmetic for sizes and counts computed from user-given numbers (M·N·K bytes, the
// configs of a sweep). Such products can exceed 64 bits; wrapping would turn an absurd request
// into a small one that passes every limit. Saturated at the largest value, it is refused instead.
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace accelbench {

// The value a saturated computation holds: "more than 64 bits can count".
inline constexpr uint64_t k_saturated = std::numeric_limits<uint64_t>::max();

constexpr uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? k_saturated : r;
}

constexpr uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? k_saturated : r;
}

// Product of sizes; a negative factor (a dimension not yet validated) saturates rather than wraps.
constexpr uint64_t sat_product(std::initializer_list<int64_t> factors) {
  uint64_t r = 1;
  for (int64_t f : factors) {
    if (f < 0)
      return k_saturated;
    r = sat_mul(r, static_cast<uint64_t>(f));
  }
  return r;
}

} // namespace accelbench
