#include "harness/app/cli/table.hpp"

#include <cmath>
#include <cstdlib>

#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"

namespace accelbench::cli {

namespace {

// A recorded value as config text: integers and text as written, a fraction with three
// significant digits (a softmax scale of 0.08838834764831845 is "0.0884").
std::string value_text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer())
    return v.dump();
  if (v.is_number())
    return format_significant(v.get<double>());
  return v.dump();
}

// Whether the recorded value is what was asked: the same text, or the same number ("0.5" and
// 0.5), so that a value the run kept as asked never shows an arrow.
bool same_value(const std::string& requested, const json& v) {
  if (!v.is_number())
    return requested == value_text(v);
  char* end = nullptr;
  const double asked = std::strtod(requested.c_str(), &end);
  if (requested.empty() || end != requested.c_str() + requested.size())
    return false;
  const double used = v.get<double>();
  return asked == used || std::fabs(asked - used) <= 1e-12 * std::fabs(used);
}

} // namespace

std::vector<setting> effective_config(const run& r) {
  const json* recorded = nullptr;
  if (r.extra.is_object())
    if (auto it = r.extra.find("resolved"); it != r.extra.end() && it->is_object())
      recorded = &*it;
  std::vector<setting> out;
  out.reserve(r.cfg.values.size());
  for (const auto& [key, asked] : r.cfg.values) {
    setting s{key, asked, asked};
    if (recorded)
      if (auto it = recorded->find(key); it != recorded->end() && !same_value(asked, *it))
        s.effective = value_text(*it);
    out.push_back(std::move(s));
  }
  return out;
}

std::string setting_text(const setting& s) {
  return s.key + "=" + (s.resolved() ? s.requested + "\u2192" + s.effective : s.effective);
}

std::string effective_config_text(const run& r) {
  std::string out;
  for (const auto& s : effective_config(r))
    out.append(out.empty() ? "" : " ").append(setting_text(s));
  return out;
}

std::string clip(const std::string& s, size_t width) {
  if (display_width(s) <= width)
    return s;
  if (width == 0)
    return "";
  // Byte offset of the end of the first width-1 code points (one is left for the ellipsis).
  size_t end = 0, kept = 0;
  while (end < s.size() && kept < width - 1) {
    ++end;
    while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80)
      ++end;
    ++kept;
  }
  size_t cut = end;
  for (size_t i = end; i > end / 2; --i)
    if (s[i - 1] == ' ' || s[i - 1] == ',') {
      cut = i;
      break;
    }
  std::string out = s.substr(0, cut);
  while (!out.empty() && (out.back() == ' ' || out.back() == ','))
    out.pop_back();
  return out + "\u2026";
}

} // namespace accelbench::cli
