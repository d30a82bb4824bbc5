#pragma once
// The element types of the kernel workloads, typed: a config's "dtype" string is read once at the
// boundary (parse_dtype) and the backends decide on the enum, never on the string again. The
// names are the ones the axes, rulesets (tolerance per dtype) and stored runs use.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/error.hpp"

namespace accelbench {

enum class dtype { fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4 };

inline constexpr std::array<dtype, 8> k_all_dtypes = {
    dtype::fp32,     dtype::tf32,     dtype::fp16,  dtype::bf16,
    dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::mxfp8, dtype::nvfp4};

// The name in configs, rulesets and stored runs ("fp8_e4m3").
constexpr std::string_view dtype_name(dtype d) {
  switch (d) {
  case dtype::fp32:
    return "fp32";
  case dtype::tf32:
    return "tf32";
  case dtype::fp16:
    return "fp16";
  case dtype::bf16:
    return "bf16";
  case dtype::fp8_e4m3:
    return "fp8_e4m3";
  case dtype::fp8_e5m2:
    return "fp8_e5m2";
  case dtype::mxfp8:
    return "mxfp8";
  case dtype::nvfp4:
    return "nvfp4";
  }
  return "?";
}

constexpr std::optional<dtype> dtype_from_name(std::string_view name) {
  for (dtype d : k_all_dtypes)
    if (dtype_name(d) == name)
      return d;
  return std::nullopt;
}

// Throws input_error naming the value and the known names.
inline dtype parse_dtype(std::string_view name) {
  if (auto d = dtype_from_name(name))
    return *d;
  throw input_error("unknown dtype '" + std::string(name) +
                    "' (fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4)");
}

inline std::string to_string(dtype d) { return std::string(dtype_name(d)); }

// Storage bits of one element (tf32 is stored as fp32; nvfp4 packs two elements per byte). The
// block scales of mxfp8 and nvfp4 are not counted.
constexpr int element_bits(dtype d) {
  switch (d) {
  case dtype::fp32:
  case dtype::tf32:
    return 32;
  case dtype::fp16:
  case dtype::bf16:
    return 16;
  case dtype::fp8_e4m3:
  case dtype::fp8_e5m2:
  case dtype::mxfp8:
    return 8;
  case dtype::nvfp4:
    return 4;
  }
  return 32;
}
// Bytes of one element, for the types of at least a byte (fp4: 0; use element_bits).
constexpr std::size_t element_size(dtype d) { return std::size_t(element_bits(d) / 8); }

constexpr bool is_fp8(dtype d) { return d == dtype::fp8_e4m3 || d == dtype::fp8_e5m2; }
// Block-scaled types (a scale per 32 (mxfp8) or 16 (nvfp4) elements along K).
constexpr bool is_block_scaled(dtype d) { return d == dtype::mxfp8 || d == dtype::nvfp4; }

} // namespace accelbench
