#include <catch2/catch.hpp>

#include "harness/core/dtype.hpp"

using namespace accelbench;

TEST_CASE("every dtype's name reads back as the same dtype, and its storage size follows",
          "[dtype]") {
  for (dtype d : k_compute_dtypes)
    CHECK(parse_dtype(dtype_name(d)) == d);
  for (dtype d : k_collective_dtypes)
    CHECK(parse_dtype(dtype_name(d), k_collective_dtypes) == d);
  CHECK(element_size(dtype::fp64) == 8);
  CHECK(element_size(dtype::int64) == 8);
  CHECK(element_size(dtype::int32) == 4);
  CHECK(element_size(dtype::int8) == 1);
  CHECK(element_size(dtype::bf16) == 2);
  CHECK(element_bits(dtype::nvfp4) == 4);
}

TEST_CASE("a dtype outside the list a use allows is an input error naming it and that list",
          "[dtype]") {
  // A kernel config takes the compute types only: the collective's integers are refused.
  CHECK_THROWS_WITH(
      parse_dtype("int8"),
      "unknown dtype 'int8' (fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4)");
  CHECK_FALSE(dtype_from_name("fp64").has_value());
  // The collective's list refuses the tensor-core types it does not move.
  CHECK_THROWS_WITH(parse_dtype("tf32", k_collective_dtypes),
                    "unknown dtype 'tf32' (fp32, fp64, bf16, fp16, int8, int32, int64)");
  CHECK_THROWS_AS(parse_dtype("FP32"), input_error);
}
