#include "harness/core/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace accelbench {

namespace {

// Digits before the point of |v| >= 1 (1 for [1, 10), 2 for [10, 100)...), by comparison rather
// than log10, so that 1000 is four digits whatever the rounding of a logarithm.
int integer_digits(double a) {
  int k = 1;
  for (double p = 10; a >= p && k < 308; p *= 10)
    ++k;
  return k;
}

} // namespace

std::string format_significant(double v, const number_style& st) {
  if (!std::isfinite(v))
    return st.non_finite ? std::string(st.non_finite) : fmt::format("{}", v);
  const double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= st.exponent_from || a < st.exponent_below)
    return fmt::format("{:.{}e}", v, st.digits - 1);
  if (st.whole_bare && v == std::round(v))
    return fmt::format("{:.0f}", v);
  if (a >= st.fixed_from)
    return fmt::format("{:.{}f}", v, std::max(0, st.digits - integer_digits(a)));
  return fmt::format("{:.{}g}", v, st.small_digits);
}

double seconds_per(const std::string& unit) {
  if (unit == "s")
    return 1;
  if (unit == "ms")
    return 1e-3;
  if (unit == "us" || unit == "\u00b5s")
    return 1e-6;
  if (unit == "ns")
    return 1e-9;
  return 0;
}

namespace {

constexpr std::array<std::pair<char, double>, 6> k_prefixes = {
    {{'\0', 1}, {'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15}}};

// "TFLOP/s" -> {1e12, "FLOP/s"}; {0, ""} when the unit has no SI-scalable base.
std::pair<double, std::string> split_prefix(const std::string& unit) {
  for (const char* base : {"FLOP/s", "FLOP", "B/s", "B"}) {
    const std::string b = base;
    if (unit == b)
      return {1, b};
    if (unit.size() == b.size() + 1 && unit.compare(1, std::string::npos, b) == 0)
      for (const auto& [p, f] : k_prefixes)
        if (p != '\0' && unit[0] == p)
          return {f, b};
  }
  return {0, ""};
}

} // namespace

std::string format_quantity(double v, const std::string& unit, const number_style& st) {
  if (!std::isfinite(v))
    return fmt::format("{} {}", v, unit);
  if (const double sp = seconds_per(unit); sp > 0) {
    const double s = v * sp, a = std::fabs(s);
    if (a == 0)
      return "0 s";
    if (a < 1e-6)
      return format_significant(s * 1e9, st) + " ns";
    if (a < 1e-3)
      return format_significant(s * 1e6, st) + " us";
    if (a < 1)
      return format_significant(s * 1e3, st) + " ms";
    return format_significant(s, st) + " s";
  }
  if (auto [factor, base] = split_prefix(unit); st.si_prefixes && factor > 0) {
    const double x = v * factor, a = std::fabs(x);
    auto chosen = k_prefixes[0];
    for (const auto& p : k_prefixes)
      if (a >= p.second)
        chosen = p;
    const std::string prefix = chosen.first ? std::string(1, chosen.first) : "";
    return format_significant(x / chosen.second, st) + " " + prefix + base;
  }
  return unit.empty() ? format_significant(v, st) : format_significant(v, st) + " " + unit;
}

} // namespace accelbench
