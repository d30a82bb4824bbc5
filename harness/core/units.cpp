#include "harness/core/units.hpp"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace accelbench {

std::string format_significant(double v) {
  if (!std::isfinite(v))
    return fmt::format("{}", v);
  const double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= 1e15 || a < 1e-3)
    return fmt::format("{:.2e}", v);
  if (a >= 100)
    return fmt::format("{:.0f}", v);
  if (a >= 10)
    return fmt::format("{:.1f}", v);
  if (a >= 1)
    return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

namespace {

// Seconds per unit of time, 0 when `unit` is not one.
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

std::string format_quantity(double v, const std::string& unit) {
  if (!std::isfinite(v))
    return fmt::format("{} {}", v, unit);
  if (const double sp = seconds_per(unit); sp > 0) {
    const double s = v * sp, a = std::fabs(s);
    if (a == 0)
      return "0 s";
    if (a < 1e-6)
      return format_significant(s * 1e9) + " ns";
    if (a < 1e-3)
      return format_significant(s * 1e6) + " us";
    if (a < 1)
      return format_significant(s * 1e3) + " ms";
    return format_significant(s) + " s";
  }
  if (auto [factor, base] = split_prefix(unit); factor > 0) {
    const double x = v * factor, a = std::fabs(x);
    auto chosen = k_prefixes[0];
    for (const auto& p : k_prefixes)
      if (a >= p.second)
        chosen = p;
    const std::string prefix = chosen.first ? std::string(1, chosen.first) : "";
    return format_significant(x / chosen.second) + " " + prefix + base;
  }
  return unit.empty() ? format_significant(v) : format_significant(v) + " " + unit;
}

} // namespace accelbench
