#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

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

// The styles of compare's outputs and of the report, which golden files pin byte for byte: the
// numbers each printed through its own copy before units.hpp held the one formatter.
TEST_CASE("compare_style: four significant digits and %g below 1 with units as stored", "[units]") {
  CHECK(format_quantity(1.234e-3, "s", compare_style) == "1.234 ms");
  CHECK(format_quantity(2e-6, "s", compare_style) == "2.000 us");
  CHECK(format_quantity(12345, "s", compare_style) == "12345 s");
  CHECK(format_quantity(512, "ns", compare_style) == "512.0 ns");
  CHECK(format_quantity(412.5, "TFLOP/s", compare_style) == "412.5 TFLOP/s");
  CHECK(format_quantity(0.5, "TFLOP/s", compare_style) == "0.5 TFLOP/s");
  CHECK(format_significant(0.0001234, compare_style) == "0.000123");
  CHECK(format_significant(2e20, compare_style) == "200000000000000000000");
  CHECK(format_significant(0, compare_style) == "0");
}

TEST_CASE("report_style: four digits and whole numbers bare with an exponent outside 1e-3 to 1e6",
          "[units]") {
  CHECK(format_significant(1.5, report_style) == "1.5");
  CHECK(format_significant(12, report_style) == "12");
  CHECK(format_significant(12.5, report_style) == "12.50");
  CHECK(format_significant(123.45, report_style) == "123.5");
  CHECK(format_significant(4321.7, report_style) == "4322");
  CHECK(format_significant(2.5e6, report_style) == "2.500e+06");
  CHECK(format_significant(0.0005, report_style) == "5.000e-04");
  CHECK(format_significant(0.25, report_style) == "0.25");
  CHECK(format_significant(std::numeric_limits<double>::infinity(), report_style) == "n/a");
}
