#include "harness/core/text_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

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

// Builds the value from nlohmann's SAX events, as its own DOM parser does, and stops at a key
// given twice in one object: emplace says at once that the key is there, so the check costs no
// more than the insert the DOM parser makes anyway and needs no second pass to name the key.
// (nlohmann's callback parser could only compare an object's size with its count of keys at its
// end, through a std::function call per value; this is its plain parse's speed.)
class checked_builder {
public:
  explicit checked_builder(json& root) : root_(root) {}

  bool null() { return put(nullptr) != nullptr; }
  bool boolean(bool v) { return put(v) != nullptr; }
  bool number_integer(json::number_integer_t v) { return put(v) != nullptr; }
  bool number_unsigned(json::number_unsigned_t v) { return put(v) != nullptr; }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) {
    return put(v) != nullptr;
  }
  bool string(json::string_t& v) { return put(std::move(v)) != nullptr; }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))) != nullptr; }
  bool start_object(std::size_t /*elements*/) {
    open_.push_back(put(json::object()));
    return true;
  }
  bool key(json::string_t& k) {
    auto [it, fresh] = open_.back()->get_ref<json::object_t&>().emplace(k, nullptr);
    if (!fresh) {
      duplicate_ = k;
      return false;
    }
    slot_ = &it->second;
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    open_.push_back(put(json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    out_of_range_ = dynamic_cast<const json::out_of_range*>(&e) != nullptr;
    error_ = e.what();
    return false;
  }

  const std::string& duplicate() const { return duplicate_; }
  const std::string& error() const { return error_; }
  bool out_of_range() const { return out_of_range_; }

private:
  // Places a value where the parser is: the root, the end of the open array, or the slot of the
  // key just read.
  json* put(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (open_.back()->is_array()) {
      open_.back()->get_ref<json::array_t&>().push_back(std::move(v));
      return &open_.back()->get_ref<json::array_t&>().back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  json& root_;
  std::vector<json*> open_; // the arrays and objects being filled, innermost last
  json* slot_ = nullptr;    // the value of the key just read
  std::string duplicate_, error_;
  bool out_of_range_ = false;
};

// The reason of the parser's exception without its "[json.exception.out_of_range.406] " prefix.
std::string without_exception_id(const std::string& what) {
  if (auto end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos)
    return what.substr(end + 2);
  return what;
}

json refused(json_problem kind, std::string reason, json_problem& problem, std::string& why) {
  problem = kind;
  why = std::move(reason);
  return json(json::value_t::discarded);
}

} // namespace

json parse_json_checked(std::string_view text, json_problem& problem, std::string& why,
                        std::size_t max_depth) {
  problem = json_problem::none;
  why.clear();
  if (json_nesting_depth(text, max_depth) > max_depth)
    return refused(json_problem::too_deep,
                   fmt::format("JSON nesting too deep (more than {} levels)", max_depth), problem,
                   why);
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    return refused(json_problem::nul_byte,
                   fmt::format("not valid JSON (a NUL byte at offset {})", nul), problem, why);
  json value;
  checked_builder builder(value);
  if (json::sax_parse(text.begin(), text.end(), &builder))
    return value;
  if (!builder.duplicate().empty())
    return refused(json_problem::duplicate_key,
                   fmt::format("duplicate key '{}' in one object (JSON readers disagree on which "
                               "value counts)",
                               printable(builder.duplicate())),
                   problem, why);
  // A literal beyond a double (1e400) is the parser's out_of_range, not a syntax error.
  if (builder.out_of_range())
    return refused(json_problem::out_of_range,
                   fmt::format("number out of range ({})", without_exception_id(builder.error())),
                   problem, why);
  return refused(json_problem::not_json, fmt::format("not valid JSON ({})", builder.error()),
                 problem, why);
}

json parse_json_input(std::string_view text, const std::string& what, std::size_t max_depth) {
  json_problem problem;
  std::string why;
  json j = parse_json_checked(text, problem, why, max_depth);
  if (problem != json_problem::none)
    throw input_error(fmt::format("{}: {}", what, why));
  return j;
}

json parse_json_lenient(std::string_view text, std::size_t max_depth) {
  json_problem problem;
  std::string why;
  return parse_json_checked(text, problem, why, max_depth);
}

namespace {

std::string size_words(std::size_t max_bytes) {
  return max_bytes % (1 << 20) ? fmt::format("{} bytes", max_bytes)
                               : fmt::format("{} MiB", max_bytes >> 20);
}

std::string too_large(const std::string& shown, std::size_t max_bytes) {
  return fmt::format("{} is larger than {}, the most accelbench reads", shown,
                     size_words(max_bytes));
}

} // namespace

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
      throw input_error(too_large(shown, max_bytes));
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad())
    throw input_error(fmt::format("error while reading {}", shown));
  return text;
}

std::string link_words(const std::filesystem::path& link) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(link, ec);
  return ec ? std::string("a symbolic link")
            : fmt::format("a symbolic link to '{}'", target.string());
}

namespace {

// Closes a descriptor on every way out.
struct fd_closer {
  int fd;
  explicit fd_closer(int f) : fd(f) {}
  fd_closer(const fd_closer&) = delete;
  fd_closer& operator=(const fd_closer&) = delete;
  ~fd_closer() { ::close(fd); }
};

// What a file that is not a regular file is, in words.
const char* file_type_words(mode_t mode) {
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

// Opens `path` for reading as read_found_file promises, or throws.
int open_found_file(const std::filesystem::path& path, const std::string& shown) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0)
    return fd;
  const int err = errno;
  std::error_code ec;
  if (err == ELOOP && std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)))
    throw input_error(fmt::format("{} is {}: not followed", shown, link_words(path)));
  throw input_error(fmt::format("cannot read {}: {}", shown, std::strerror(err)));
}

// The regular file open on `fd`, at most max_bytes of it (the bound holds while reading too: a
// file may grow after fstat).
std::string read_regular(int fd, const std::string& shown, std::size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw input_error(fmt::format("cannot read {}: {}", shown, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw input_error(fmt::format("{} is a directory, not a file", shown));
  if (!S_ISREG(st.st_mode))
    throw input_error(
        fmt::format("{} is not a regular file ({})", shown, file_type_words(st.st_mode)));
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw input_error(too_large(shown, max_bytes));
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw input_error(fmt::format("error while reading {}: {}", shown, std::strerror(errno)));
    if (n == 0)
      return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw input_error(too_large(shown, max_bytes));
    text.append(buf, static_cast<std::size_t>(n));
  }
}

} // namespace

std::string read_found_file(const std::filesystem::path& path, const std::string& what,
                            std::size_t max_bytes) {
  const std::string shown = fmt::format("{} '{}'", what, path.string());
  const fd_closer file{open_found_file(path, shown)};
  return read_regular(file.fd, shown, max_bytes);
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

const char* markup_entity(char c, const char* apos) {
  switch (c) {
  case '&':
    return "&amp;";
  case '<':
    return "&lt;";
  case '>':
    return "&gt;";
  case '"':
    return "&quot;";
  case '\'':
    return apos;
  default:
    return nullptr;
  }
}

// Stored names may hold any bytes (an imported latin-1 log line, a tag from an older version):
// the document declares UTF-8, so invalid sequences become U+FFFD, and so do U+FFFE and U+FFFF,
// which are UTF-8 but not XML characters.
std::string xml_escape(std::string_view raw) {
  const std::string s = repair_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(s[i + 2]) == 0xBE ||
         static_cast<unsigned char>(s[i + 2]) == 0xBF)) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    if (const char* entity = markup_entity(static_cast<char>(ch), "&apos;"))
      out += entity;
    // XML 1.0 forbids control characters other than tab, LF and CR, even escaped.
    else if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
      out += '?';
    else
      out += static_cast<char>(ch);
  }
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string csv_field(const std::string& value) {
  const bool quote = value.find_first_of(",\"\r\n") != std::string::npos ||
                     (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!quote)
    return value;
  std::string out = "\"";
  for (char c : value)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_text_field(const std::string& value) {
  // OWASP's CSV injection guidance: a spreadsheet runs a cell that starts with one of these as a
  // formula (a tab or carriage return before one too), so the text gets a leading single quote,
  // which spreadsheets show as text, and is quoted so that no reader strips the quote.
  if (value.empty() || std::string_view("=+-@\t\r").find(value.front()) == std::string_view::npos)
    return csv_field(value);
  std::string out = "\"'";
  for (char c : value)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace accelbench
