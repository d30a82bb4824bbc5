#pragma once
// Numbers for people: a value with its unit, scaled to the SI prefix that puts it in [1, 1000) with
// three significant digits ("698 GFLOP/s", "6.30 GB/s", "1.24 ms"), never "6.981e-04 TFLOP/s".
// The one number formatter: the tables of show, run and history, compare's outputs (four digits,
// compare_style) and the report (report_style) all print through it.
#include <limits>
#include <string>

namespace accelbench {

// How format_significant writes a number. A number at or above `fixed_from` gets `digits`
// significant digits in fixed point (an integer part longer than that is never cut: 12345 at four
// digits is "12345"); a smaller one printf's %g with `small_digits`; a number outside
// [exponent_below, exponent_from) scientific notation with digits - 1 decimals. Zero is "0".
struct number_style {
  int digits = 3;
  double fixed_from = 1;
  int small_digits = 3;
  double exponent_below = 1e-3, exponent_from = 1e15; // 0 and infinity: never
  bool whole_bare = false;          // a whole number has no decimals ("12", not "12.00")
  const char* non_finite = nullptr; // what inf and NaN print as; nullptr: "inf", "nan"
  bool si_prefixes = true;          // format_quantity scales FLOP, FLOP/s, B and B/s among k..P
};

// Three significant digits, no exponent for values people read (1e-3 .. 1e15): show, run, history.
inline constexpr number_style readable_style{};
// compare's outputs (table, markdown, JUnit; golden files pin them): four significant digits, %g
// below 1, never an exponent, units as stored ("412.5 TFLOP/s"; times are still scaled).
inline constexpr number_style compare_style{.digits = 4,
                                            .exponent_below = 0,
                                            .exponent_from =
                                                std::numeric_limits<double>::infinity(),
                                            .si_prefixes = false};
// The report's figures (JSON text, summary, HTML): four digits, %g below 10, whole numbers bare,
// an exponent outside [1e-3, 1e6), "n/a" for what is not finite.
inline constexpr number_style report_style{.digits = 4,
                                           .fixed_from = 10,
                                           .small_digits = 4,
                                           .exponent_from = 1e6,
                                           .whole_bare = true,
                                           .non_finite = "n/a"};

// `unit` is the stored unit ("TFLOP/s", "GB/s", "s", "ms", "tokens/s", "%"). Times are scaled
// among ns, us, ms and s; FLOP, FLOP/s, B and B/s (with any stored prefix k, M, G, T, P) among
// those prefixes (unless the style says not); any other unit keeps its value.
std::string format_quantity(double value, const std::string& unit,
                            const number_style& style = readable_style);

std::string format_significant(double value, const number_style& style = readable_style);

// Seconds per one `unit` ("s", "ms", "us", "µs", "ns"); 0 when `unit` is not a time.
double seconds_per(const std::string& unit);

} // namespace accelbench
