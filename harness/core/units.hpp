#pragma once
// Numbers for people: a value with its unit, scaled to the SI prefix that puts it in [1, 1000) with
// three significant digits ("698 GFLOP/s", "6.30 GB/s", "1.24 ms"), never "6.981e-04 TFLOP/s".
// One home for the rule: tables of show, run and compare use it.
#include <string>

namespace accelbench {

// `unit` is the stored unit ("TFLOP/s", "GB/s", "s", "ms", "tokens/s", "%"). Times are scaled
// among ns, us, ms and s; FLOP, FLOP/s, B and B/s (with any stored prefix k, M, G, T, P) among
// those prefixes; any other unit keeps its value, with three significant digits.
std::string format_quantity(double value, const std::string& unit);

// Three significant digits, no exponent for values people read (1e-3 .. 1e15); "0" for zero.
std::string format_significant(double value);

} // namespace accelbench
