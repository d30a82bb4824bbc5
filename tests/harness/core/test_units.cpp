#include <catch2/catch.hpp>

#include "harness/core/units.hpp"

using namespace accelbench;

TEST_CASE("quantities are scaled to the SI prefix that reads best, with three significant digits",
          "[units]") {
  CHECK(format_quantity(6.981e-04, "TFLOP/s") == "698 MFLOP/s");
  CHECK(format_quantity(0.698, "TFLOP/s") == "698 GFLOP/s");
  CHECK(format_quantity(1.5, "TFLOP/s") == "1.50 TFLOP/s");
  CHECK(format_quantity(2500, "TFLOP/s") == "2.50 PFLOP/s");
  CHECK(format_quantity(6.3, "GB/s") == "6.30 GB/s");
  CHECK(format_quantity(6300, "MB/s") == "6.30 GB/s");
  CHECK(format_quantity(512, "B") == "512 B");
  CHECK(format_quantity(0.00124, "s") == "1.24 ms");
  CHECK(format_quantity(1.24, "ms") == "1.24 ms");
  CHECK(format_quantity(3.5e-8, "s") == "35.0 ns");
  CHECK(format_quantity(850, "us") == "850 us");
  CHECK(format_quantity(12.5, "s") == "12.5 s");
  CHECK(format_quantity(0, "s") == "0 s");
  // Units with no SI scale keep their value.
  CHECK(format_quantity(45210.4, "tokens/s") == "45210 tokens/s");
  CHECK(format_quantity(37.25, "%") == "37.2 %");
  CHECK(format_quantity(123.456, "min") == "123 min");
  CHECK(format_quantity(-0.5, "") == "-0.5");
  CHECK(format_significant(1e-5) == "1.00e-05");
  CHECK(format_significant(std::nan("")) == "nan");
}
