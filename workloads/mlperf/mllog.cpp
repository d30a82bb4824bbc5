#include "workloads/mlperf/mllog.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::mlperf {

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

std::string shorten(std::string_view s) {
  constexpr size_t max = 80;
  if (s.size() <= max)
    return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

// Validates one decoded event object; returns an empty string when it is well formed.
std::string decode_event(const json& j, event& e) {
  if (!j.is_object())
    return "event is not a JSON object";
  if (!j.contains("key") || !j["key"].is_string())
    return "event has no string 'key'";
  e.key = j["key"].get<std::string>();
  if (!j.contains("time_ms") || !j["time_ms"].is_number())
    return fmt::format("event '{}' has no numeric 'time_ms'", e.key);
  // time_ms is an integer in mlperf_logging; some loggers write a float: keep the millisecond.
  e.time_ms = j["time_ms"].is_number_integer() ? j["time_ms"].get<int64_t>()
                                               : static_cast<int64_t>(j["time_ms"].get<double>());
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

    json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
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

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw input_error(fmt::format("cannot read file '{}'", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw input_error(fmt::format("error while reading file '{}'", path.string()));
  return ss.str();
}

parsed_log parse_mllog_file(const std::filesystem::path& path) {
  return parse_mllog(read_text_file(path), path.string());
}

std::string format_event(const event& e) {
  // Field order and ", " / ": " separators as Python's json.dumps writes them in mlperf_logging.
  auto dumps = [](const json& v) {
    if (!v.is_object() && !v.is_array())
      return v.dump();
    // nlohmann prints compactly; re-emit objects/arrays with Python's separators.
    std::string out;
    if (v.is_object()) {
      out += "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first)
          out += ", ";
        first = false;
        out += json(it.key()).dump() + ": " + it.value().dump();
      }
      out += "}";
    } else {
      out += "[";
      for (size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + v[i].dump();
      out += "]";
    }
    return out;
  };
  return fmt::format("{}{{\"namespace\": {}, \"time_ms\": {}, \"event_type\": \"{}\", \"key\": {}, "
                     "\"value\": {}, \"metadata\": {}}}",
                     mllog_marker, json(e.name_space).dump(), e.time_ms, to_string(e.type),
                     json(e.key).dump(), dumps(e.value),
                     dumps(e.metadata.is_object() ? e.metadata : json::object()));
}

} // namespace accelbench::mlperf
