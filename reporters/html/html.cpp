// The HTML kit's text rules: escaping of everything that comes from users or logs, JSON embedded
// in a page, and the numbers of tables and tooltips.
#include "reporters/html/html.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"

namespace accelbench::html {

using json = nlohmann::json;

namespace {

// A control character HTML would carry raw (a NUL, an ESC, DEL; tab and newline are text): shown
// as U+FFFD, the mark repair_utf8 gives a bad byte, so that it is seen, never acted on by a
// terminal that shows the page's source, and never a NUL a browser silently drops.
bool html_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F; }

// The C1 controls U+0080..U+009F, written in UTF-8 as 0xC2 0x80..0x9F, at s[i].
bool html_c1_control(const std::string& s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xC2 && i + 1 < s.size() &&
         static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(s[i + 1]) <= 0x9F;
}

constexpr const char* k_replacement = "\xEF\xBF\xBD"; // U+FFFD

} // namespace

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (const char* entity = markup_entity(c, "&#39;")) {
      out += entity;
    } else if (html_control(static_cast<unsigned char>(c))) {
      out += k_replacement;
    } else if (html_c1_control(s, i)) {
      out += k_replacement;
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

std::string json_for_script(const json& j) {
  // dump() with ensure_ascii=false keeps UTF-8; then the characters that could close the element
  // or open a comment are replaced by JSON \u escapes (still the same JSON value).
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + 64);
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
             (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
              static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c ==
               0x7F) { // dump() escapes C0 controls, not DEL and C1: no raw control in the page
      out += "\\u007f";
    } else if (html_c1_control(s, i)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

// The report's figures, as its JSON text and summary write them (units.hpp's report_style).
std::string num(double v) { return format_significant(v, report_style); }

std::string exact(double v) { return fmt::format("{:.6g}", v); }

} // namespace accelbench::html
