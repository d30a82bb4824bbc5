#include "harness/core/mllog.hpp"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::mllog {

std::string to_string(event_type t) {
  switch (t) {
  case event_type::interval_start:
    return "INTERVAL_START";
  case event_type::interval_end:
    return "INTERVAL_END";
  case event_type::point_in_time:
    return "POINT_IN_TIME";
  }
  return "POINT_IN_TIME";
}

bool event::has_meta(const std::string& name) const {
  return metadata.is_object() && metadata.contains(name);
}

double event::meta_number(const std::string& name, double fallback) const {
  if (!has_meta(name) || !metadata[name].is_number())
    return fallback;
  return metadata[name].get<double>();
}

std::string event::meta_string(const std::string& name) const {
  if (!has_meta(name))
    return {};
  const json& v = metadata[name];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string diagnostic::to_string() const {
  if (line > 0)
    return fmt::format("{}:{}: {}", file, line, message);
  return fmt::format("{}: {}", file, message);
}

const event* parsed_log::first(std::string_view key) const {
  for (const event& e : events)
    if (e.key == key)
      return &e;
  return nullptr;
}

size_t parsed_log::count(std::string_view key) const {
  size_t n = 0;
  for (const event& e : events)
    n += e.key == key;
  return n;
}

std::vector<const event*> parsed_log::all(std::string_view key) const {
  std::vector<const event*> out;
  for (const event& e : events)
    if (e.key == key)
      out.push_back(&e);
  return out;
}

namespace {

// A line quoted in a diagnostic: at most 80 bytes, valid UTF-8 (a cut may split a character and
// the line may hold latin-1), since diagnostics are stored as INVALID reasons.
std::string shorten(std::string_view s) {
  constexpr size_t max = 80;
  if (s.size() <= max)
    return repair_utf8(s);
  return repair_utf8(s.substr(0, max)) + "...";
}

// Python's str.strip() on a line read as latin-1, as mlp_parser strips it: ASCII whitespace and
// the separators 0x1c..0x1f (0x85 and 0xa0 are whitespace to Python too; they are not single
// bytes in the UTF-8 this reader holds, and no log has them around its JSON).
std::string_view python_strip(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
  };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

// Whether Python's float() reads the text `s`: [sign] (inf | infinity | nan | decimal), a decimal
// being digits with single underscores between them, an optional fraction and exponent.
bool python_float_text(std::string_view s) {
  s = python_strip(s);
  if (!s.empty() && (s.front() == '+' || s.front() == '-'))
    s.remove_prefix(1);
  std::string lower(s);
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity" || lower == "nan")
    return true;
  size_t i = 0;
  auto is_digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  auto digits = [&] {
    const size_t start = i;
    while (is_digit(i))
      i += (i + 1 < s.size() && s[i + 1] == '_' && is_digit(i + 2)) ? 2 : 1;
    return i > start;
  };
  const bool whole = digits();
  bool fraction = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (!whole && !fraction)
    return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    if (!digits())
      return false;
  }
  return i == s.size();
}

// Whether `v` is a string float() reads.
bool python_float_string(const json& v) {
  return v.is_string() && python_float_text(v.get_ref<const std::string&>());
}

// The number float() reads from `s` (python_float_text holds); its underscores go first.
double python_float_value(std::string_view s) {
  std::string text;
  for (char c : python_strip(s))
    if (c != '_')
      text += c;
  return std::strtod(text.c_str(), nullptr);
}

// time_ms as a whole millisecond in [0, k_max_time_ms], or nullopt. A float is truncated (some
// loggers write one); converting an out-of-range double to an integer would be undefined.
std::optional<int64_t> event_time_ms(const json& v) {
  if (v.is_string()) // a string mlp_parser's float() reads ("1745154694826")
    return event_time_ms(json(python_float_value(v.get_ref<const std::string&>())));
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(k_max_time_ms)
               ? std::optional<int64_t>(static_cast<int64_t>(v.get<uint64_t>()))
               : std::nullopt;
  if (v.is_number_integer()) {
    const int64_t t = v.get<int64_t>();
    return t >= 0 && t <= k_max_time_ms ? std::optional<int64_t>(t) : std::nullopt;
  }
  const double d = v.get<double>();
  if (!(d >= 0 && d <= static_cast<double>(k_max_time_ms)))
    return std::nullopt;
  return static_cast<int64_t>(d);
}

// Validates one decoded event object; returns an empty string when it is well formed.
std::string decode_event(const json& j, event& e) {
  if (!j.is_object())
    return "event is not a JSON object";
  if (!j.contains("key") || !j["key"].is_string())
    return "event has no string 'key'";
  e.key = j["key"].get<std::string>();
  if (!j.contains("time_ms") || !(j["time_ms"].is_number() || python_float_string(j["time_ms"])))
    return fmt::format("event '{}' has no numeric 'time_ms'", e.key);
  // time_ms is an integer in mlperf_logging; some loggers write a float: keep the millisecond.
  const auto t_ms = event_time_ms(j["time_ms"]);
  if (!t_ms)
    return fmt::format("event '{}' has time_ms {} outside 0..{} (year 9999)", e.key,
                       j["time_ms"].dump(), k_max_time_ms);
  e.time_ms = *t_ms;
  if (!j.contains("event_type") || !j["event_type"].is_string())
    return fmt::format("event '{}' has no 'event_type'", e.key);
  const std::string t = j["event_type"].get<std::string>();
  if (t == "INTERVAL_START")
    e.type = event_type::interval_start;
  else if (t == "INTERVAL_END")
    e.type = event_type::interval_end;
  else if (t == "POINT_IN_TIME")
    e.type = event_type::point_in_time;
  else
    return fmt::format("event '{}' has unknown event_type '{}'", e.key, t);
  if (!j.contains("value"))
    return fmt::format("event '{}' has no 'value'", e.key);
  e.value = j["value"];
  if (j.contains("namespace") && j["namespace"].is_string())
    e.name_space = j["namespace"].get<std::string>();
  return {};
}

// Whether float() of a decoded JSON value succeeds: a number, a bool, or a string it reads
// (None, a list or a dict raise TypeError).
bool python_float_of(const json& v) {
  return v.is_number() || v.is_boolean() || python_float_string(v);
}

// Why mlp_parser's string_to_logline fails on the decoded body of a line; "" when it parses.
std::string mlp_parser_refusal(const json& j, std::string_view body) {
  if (j.is_discarded())
    return fmt::format("not valid JSON: {}", shorten(body));
  if (!j.is_object())
    return "the event is not a JSON object";
  if (!j.contains("time_ms"))
    return "the event has no 'time_ms'";
  if (!python_float_of(j["time_ms"]))
    return fmt::format("float() cannot read time_ms {}", shorten(j["time_ms"].dump()));
  for (const char* k : {"key", "value", "metadata"})
    if (!j.contains(k))
      return fmt::format("the event has no '{}'", k);
  return {};
}

// mlp_parser's reading of the text after the last marker of `segment`, parsed here.
std::string mlp_parser_refusal_of(std::string_view segment) {
  const std::string_view body =
      python_strip(segment.substr(segment.rfind(mllog_marker) + mllog_marker.size()));
  if (json_nesting_depth(body) > k_max_json_depth)
    return fmt::format("nesting deeper than {} levels", k_max_json_depth);
  return mlp_parser_refusal(parse_json_lenient(body), body);
}

// Appends to out.mlp_parser_errors what mlp_parser finds wrong on one line (no newline) that holds
// the marker at `first`. `parsed` is this reader's parse of the text after that marker (null when
// it was not parsed); it is mlp_parser's text too when the marker is the line's only one and the
// line holds no carriage return (Python's universal newlines end a line at a lone '\r'), the
// case of every published log. Otherwise each '\r'-separated piece holding the marker is parsed.
void judge_for_mlp_parser(std::string_view line, size_t first, const json* parsed, parsed_log& out,
                          int64_t line_no) {
  auto refuse = [&](std::string why) {
    if (!why.empty())
      out.mlp_parser_errors.push_back(
          {out.file, line_no,
           fmt::format("MLCommons' mlp_parser cannot parse this line: {}", why)});
  };
  if (parsed && line.find('\r') == std::string_view::npos && line.rfind(mllog_marker) == first) {
    refuse(mlp_parser_refusal(*parsed, line.substr(first + mllog_marker.size())));
    return;
  }
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t end = line.find('\r', pos);
    if (end == std::string_view::npos)
      end = line.size();
    const std::string_view piece = line.substr(pos, end - pos);
    if (piece.find(mllog_marker) != std::string_view::npos)
      refuse(mlp_parser_refusal_of(piece));
    pos = end + 1;
  }
}

} // namespace

parsed_log parse_mllog(std::string_view text, const std::string& file) {
  parsed_log out;
  out.file = file;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last_unterminated = end == std::string_view::npos;
    if (last_unterminated)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);

    // Lines without the marker are other output (":::SYSJSON", framework logs) and ignored,
    // as mlp_parser does. The first marker is taken: a prefix never contains it, a value may.
    const size_t at = line.find(mllog_marker);
    if (at == std::string_view::npos)
      continue;
    std::string_view body = line.substr(at + mllog_marker.size());

    // A line nested deeper than any event is refused before parsing (the parser recurses).
    if (json_nesting_depth(body) > k_max_json_depth) {
      out.diagnostics.push_back(
          {file, line_no,
           fmt::format("line is not valid JSON: nesting too deep (more than {} levels)",
                       k_max_json_depth)});
      judge_for_mlp_parser(line, at, nullptr, out, line_no);
      continue;
    }
    json j = parse_json_lenient(body);
    judge_for_mlp_parser(line, at, &j, out, line_no);
    if (j.is_discarded()) {
      // A log cut off mid-write ends with an unterminated, unparsable line.
      std::string msg =
          last_unterminated
              ? fmt::format("truncated final line (no newline, incomplete JSON): {}", shorten(body))
              : fmt::format("line is not valid JSON: {}", shorten(body));
      out.diagnostics.push_back({file, line_no, std::move(msg)});
      continue;
    }
    event e;
    e.line = line_no;
    std::string problem = decode_event(j, e);
    if (!problem.empty()) {
      out.diagnostics.push_back({file, line_no, std::move(problem)});
      continue;
    }
    // MLPerf logging rules: every line carries a metadata object (file, lineno at least).
    // A line without one is kept (its timing is still useful) but reported.
    if (!j.contains("metadata") || !j["metadata"].is_object()) {
      out.diagnostics.push_back(
          {file, line_no, fmt::format("event '{}' has no metadata object", e.key)});
    } else {
      e.metadata = j["metadata"];
    }
    out.events.push_back(std::move(e));
  }
  out.lines = line_no;
  return out;
}

std::string read_text_file(const std::filesystem::path& path, const std::string& what) {
  // A FIFO or a device named like a log would block the read or never end: refused by type.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && !std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st))
    throw input_error(fmt::format("{} '{}' is not a regular file", what, path.string()));
  return read_input_file(path, what, k_max_log_bytes);
}

parsed_log parse_mllog_file(const std::filesystem::path& path) {
  return parse_mllog(read_text_file(path, "MLPerf log"), path.string());
}

std::string repair_text_lines(std::string_view text, const std::string& file,
                              std::vector<diagnostic>& diags) {
  if (valid_utf8(text))
    return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t bytes = 0, lines = 0;
  int64_t first_line = 0, line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    size_t n = 0;
    out += repair_utf8(text.substr(pos, end - pos), &n);
    if (n > 0) {
      bytes += n;
      ++lines;
      if (first_line == 0)
        first_line = line_no;
    }
    pos = end;
  }
  diags.push_back({file, first_line,
                   fmt::format("{} byte(s) of invalid UTF-8 on {} line(s) replaced by U+FFFD "
                               "(the first on this line)",
                               bytes, lines)});
  return out;
}

namespace {

// JSON with Python's json.dumps separators (", " and ": ") at every level, as mlperf_logging
// writes its lines; numbers and strings as nlohmann prints them (doubles with round-trip
// precision). Object keys in the container's order.
template <class J> std::string python_dumps(const J& j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first)
        out += ", ";
      first = false;
      out += J(it.key()).dump() + ": " + python_dumps(it.value());
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); i++)
      out += (i ? ", " : "") + python_dumps(j[i]);
    return out + "]";
  }
  return j.dump();
}

// The repository-relative source path ("workloads/training/trainer.cpp"): the build machine's
// absolute path says nothing to a reviewer of the log.
std::string relative_file(const char* f) {
  std::string s = f;
  auto p = s.find("workloads/");
  return p == std::string::npos ? s : s.substr(p);
}

} // namespace

std::string format_event(const event& e) {
  // Field order as mlperf_logging writes it.
  return fmt::format("{}{{\"namespace\": {}, \"time_ms\": {}, \"event_type\": \"{}\", \"key\": {}, "
                     "\"value\": {}, \"metadata\": {}}}",
                     mllog_marker, json(e.name_space).dump(), e.time_ms, to_string(e.type),
                     json(e.key).dump(), python_dumps(e.value),
                     python_dumps(e.metadata.is_object() ? e.metadata : json::object()));
}

void mllogger::emit(const char* type, const std::string& key, const json& value, json metadata,
                    const call_site& loc) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  // Key order as mlperf_logging writes it (file and lineno first in the metadata);
  // nlohmann::ordered_json keeps insertion order.
  nlohmann::ordered_json e;
  e["namespace"] = "";
  e["time_ms"] = int64_t(ms);
  e["event_type"] = type;
  e["key"] = key;
  e["value"] = value;
  nlohmann::ordered_json md;
  md["file"] = relative_file(loc.file_name());
  md["lineno"] = int64_t(loc.line());
  for (auto& [k, v] : metadata.items())
    md[k] = v;
  e["metadata"] = md;
  std::string line = std::string(mllog_marker) + python_dumps(e) + "\n";
  m_text += line;
  if (m_sink) {
    *m_sink << line;
    m_sink->flush();
  }
}

void mllogger::point(const std::string& key, const json& value, json md, call_site loc) {
  emit("POINT_IN_TIME", key, value, std::move(md), loc);
}

void mllogger::start(const std::string& key, const json& value, json md, call_site loc) {
  emit("INTERVAL_START", key, value, std::move(md), loc);
}

void mllogger::end(const std::string& key, const json& value, json md, call_site loc) {
  emit("INTERVAL_END", key, value, std::move(md), loc);
}

} // namespace accelbench::mllog
