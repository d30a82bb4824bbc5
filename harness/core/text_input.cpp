#include "harness/core/text_input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench {

std::size_t json_nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest)
        deepest = depth;
      if (deepest > limit)
        return deepest;
    } else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

namespace {
void check_depth(std::string_view text, const std::string& what, std::size_t max_depth) {
  if (json_nesting_depth(text, max_depth) > max_depth)
    throw input_error(
        fmt::format("{}: JSON nesting too deep (more than {} levels)", what, max_depth));
}
} // namespace

json parse_json_input(std::string_view text, const std::string& what, std::size_t max_depth) {
  check_depth(text, what, max_depth);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw input_error(fmt::format("{}: not valid JSON ({})", what, e.what()));
  } catch (const json::out_of_range& e) {
    // A literal beyond a double (1e400): the parser refuses it with out_of_range, not parse_error.
    std::string why =
        e.what(); // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
    if (auto end = why.find("] "); why.rfind("[json.exception", 0) == 0 && end != std::string::npos)
      why.erase(0, end + 2);
    throw input_error(fmt::format("{}: number out of range ({})", what, why));
  }
}

json parse_json_lenient(std::string_view text, std::size_t max_depth) {
  if (json_nesting_depth(text, max_depth) > max_depth)
    return json(json::value_t::discarded);
  return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

std::string read_input_file(const std::filesystem::path& path, const std::string& what,
                            std::size_t max_bytes) {
  const std::string shown = fmt::format("{} '{}'", what, path.string());
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw input_error(fmt::format("{} is a directory, not a file", shown));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw input_error(fmt::format("cannot read {}: {}", shown, std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (text.size() + static_cast<std::size_t>(in.gcount()) > max_bytes)
      throw input_error(fmt::format("{} is larger than {}, the most accelbench reads", shown,
                                    max_bytes % (1 << 20)
                                        ? fmt::format("{} bytes", max_bytes)
                                        : fmt::format("{} MiB", max_bytes >> 20)));
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad())
    throw input_error(fmt::format("error while reading {}", shown));
  return text;
}

json read_json_file(const std::filesystem::path& path, const std::string& what) {
  return parse_json_input(read_input_file(path, what), fmt::format("{} '{}'", what, path.string()));
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid (RFC 3629 table 3-7).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80)
    return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0;
    if (c == 0xED)
      hi = 0x9F; // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90;
    if (c == 0xF4)
      hi = 0x8F; // nothing above U+10FFFF
  } else
    return 0;
  if (i + n > s.size())
    return 0;
  if (b(i + 1) < lo || b(i + 1) > hi)
    return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF)
      return 0;
  return n;
}
} // namespace

std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    if (n == 0)
      return i;
    i += n;
  }
  return std::string_view::npos;
}

bool valid_utf8(std::string_view s) { return first_invalid_utf8(s) == std::string_view::npos; }

std::string repair_utf8(std::string_view s, std::size_t* replaced) {
  std::string out;
  out.reserve(s.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD
      ++count;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (replaced)
    *replaced = count;
  return out;
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

std::string printable(std::string_view raw) {
  const std::string s = repair_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02x}", c);
    else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1])); // C1 controls
      ++i;
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               ((static_cast<unsigned char>(s[i + 2]) >= 0xAA &&
                 static_cast<unsigned char>(s[i + 2]) <= 0xAE) ||
                static_cast<unsigned char>(s[i + 2]) == 0x8E ||
                static_cast<unsigned char>(s[i + 2]) == 0x8F)) {
      // U+200E/F (LRM/RLM) and U+202A..U+202E (embeddings and overrides)
      out += fmt::format("\\u{:04x}", 0x2000 + (static_cast<unsigned char>(s[i + 2]) - 0x80));
      i += 2;
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x81 &&
               static_cast<unsigned char>(s[i + 2]) >= 0xA6 &&
               static_cast<unsigned char>(s[i + 2]) <= 0xA9) {
      // U+2066..U+2069 (isolates)
      out += fmt::format("\\u{:04x}", 0x2040 + (static_cast<unsigned char>(s[i + 2]) - 0x80));
      i += 2;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

} // namespace accelbench
