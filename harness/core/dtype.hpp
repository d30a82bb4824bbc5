#pragma once
// The element types of the workloads, typed: a config's "dtype" string is read once at the
// boundary (parse_dtype) and the backends decide on the enum, never on the string again. The
// names are the ones the axes, rulesets (tolerance per dtype) and stored runs use. The kernels
// (GEMM, attention, training, plugins) compute in the first eight; the collective also moves
// fp64 and integers.
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "harness/core/error.hpp"

namespace accelbench {

enum class dtype {
  fp32,
  tf32,
  fp16,
  bf16,
  fp8_e4m3,
  fp8_e5m2,
  mxfp8,
  nvfp4,
  fp64,
  int8,
  int32,
  int64
};

// The types a kernel computes in: what parse_dtype accepts unless told otherwise.
inline constexpr std::array<dtype, 8> k_compute_dtypes = {
    dtype::fp32,     dtype::tf32,     dtype::fp16,  dtype::bf16,
    dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::mxfp8, dtype::nvfp4};
// The types the collective moves (nccl-tests' and MPI's), in the order its axis lists them.
inline constexpr std::array<dtype, 7> k_collective_dtypes = {
    dtype::fp32, dtype::fp64, dtype::bf16, dtype::fp16, dtype::int8, dtype::int32, dtype::int64};

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
  case dtype::fp64:
    return "fp64";
  case dtype::int8:
    return "int8";
  case dtype::int32:
    return "int32";
  case dtype::int64:
    return "int64";
  }
  return "?";
}

// The dtype of `allowed` named `name`, if any.
constexpr std::optional<dtype> dtype_from_name(std::string_view name,
                                               std::span<const dtype> allowed = k_compute_dtypes) {
  for (dtype d : allowed)
    if (dtype_name(d) == name)
      return d;
  return std::nullopt;
}

// "fp32, tf32, ...": the names of `allowed`, for messages.
inline std::string dtype_names(std::span<const dtype> allowed) {
  std::string s;
  for (dtype d : allowed)
    s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

// Throws input_error naming the value and the known names.
inline dtype parse_dtype(std::string_view name, std::span<const dtype> allowed = k_compute_dtypes) {
  if (auto d = dtype_from_name(name, allowed))
    return *d;
  throw input_error("unknown dtype '" + std::string(name) + "' (" + dtype_names(allowed) + ")");
}

inline std::string to_string(dtype d) { return std::string(dtype_name(d)); }

// Storage bits of one element (tf32 is stored as fp32; nvfp4 packs two elements per byte). The
// block scales of mxfp8 and nvfp4 are not counted.
constexpr int element_bits(dtype d) {
  switch (d) {
  case dtype::fp64:
  case dtype::int64:
    return 64;
  case dtype::fp32:
  case dtype::tf32:
  case dtype::int32:
    return 32;
  case dtype::fp16:
  case dtype::bf16:
    return 16;
  case dtype::fp8_e4m3:
  case dtype::fp8_e5m2:
  case dtype::mxfp8:
  case dtype::int8:
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
