#pragma once
// MLPerf logs (MLLOG), the one module that reads and writes them: one event per ":::MLLOG {json}"
// line, as MLCommons' mlperf_logging library writes them and its compliance checker (mlp_parser)
// reads them. The reader collects malformed lines as diagnostics, never throws, so one bad line
// does not lose the rest of a folder; the writer (mllogger) is what train.llama logs its runs with.
// Part of the result model (run::mllog), so workloads/training and importers/mlperf share it.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench::mllog {

// The marker that starts an event; anything before it (an MPI rank prefix such as
// "[1,0]<stdout>: ") is ignored, like mlp_parser's strip_and_dedup.
inline constexpr std::string_view mllog_marker = ":::MLLOG ";

enum class event_type { interval_start, interval_end, point_in_time };
std::string to_string(event_type t); // "INTERVAL_START" | "INTERVAL_END" | "POINT_IN_TIME"

struct event {
  std::string name_space; // the "namespace" field ("" in every published log)
  int64_t time_ms = 0;
  event_type type = event_type::point_in_time;
  std::string key;
  json value;                     // any JSON (null for interval events)
  json metadata = json::object(); // file, lineno, samples_count, epoch_num, status...
  int64_t line = 0;               // 1-based line number in the log text

  // Metadata helpers: the number stored under `name`, or `fallback` when absent or not a number.
  bool has_meta(const std::string& name) const;
  double meta_number(const std::string& name, double fallback = 0) const;
  std::string meta_string(const std::string& name) const;
};

// A problem found in an input file, with where it is (line 0: the file as a whole).
struct diagnostic {
  std::string file;
  int64_t line = 0;
  std::string message;
  std::string to_string() const; // "file:line: message" (or "file: message")
};

struct parsed_log {
  std::string file;                    // as given to the parser (used in diagnostics)
  std::vector<event> events;           // in log order
  std::vector<diagnostic> diagnostics; // lines that could not be parsed
  // The lines MLCommons' mlp_parser (ruleset 5.0.0, parse_generator) fails on, judged in the same
  // pass: the text after the last marker on the line (its '.*:::MLLOG ' prefix rule), stripped,
  // must be a JSON object with time_ms, key, value and metadata, and float() must read time_ms.
  // It differs from `diagnostics` both ways: mlp_parser takes a string time_ms ("123"), a year
  // past 9999, a key that is not a string or no event_type; it refuses a line without metadata
  // (kept here with a diagnostic) and a line whose value holds the marker again. Where this
  // reader is stricter than Python's json (NaN, a key twice, nesting past 256 levels) the line is
  // counted here too. MLCommons' seed checker rejects a file with any of these.
  std::vector<diagnostic> mlp_parser_errors;
  int64_t lines = 0; // lines in the text

  // First event with `key`, or nullptr.
  const event* first(std::string_view key) const;
  size_t count(std::string_view key) const;
  std::vector<const event*> all(std::string_view key) const;
};

// Largest MLPerf file read (a log, a system description, scaling.json): 64 MiB. The largest
// published result logs are a few MiB; a bigger file is not a log (a core dump, /dev/zero, a
// checkpoint copied by mistake) and must end in a diagnostic, not in the OOM killer.
inline constexpr std::size_t k_max_log_bytes = std::size_t{64} << 20;

// Latest time_ms accepted in an event: 9999-12-31T23:59:59.999Z. Logs carry milliseconds since
// the epoch; anything past year 9999 (or negative) is not a time, and durations computed from
// such values would overflow.
inline constexpr int64_t k_max_time_ms = 253402300799999;

// Parses log text. `file` only labels diagnostics.
parsed_log parse_mllog(std::string_view text, const std::string& file = "<text>");
// Reads and parses a file; throws input_error when it cannot be read.
parsed_log parse_mllog_file(const std::filesystem::path& path);
// Reads a whole file as text (at most k_max_log_bytes); throws input_error naming `what` and the
// path when it cannot be read, is a folder, or is larger.
std::string read_text_file(const std::filesystem::path& path, const std::string& what = "file");

// `text` with every byte that is not well-formed UTF-8 replaced by U+FFFD (logs of real
// submissions contain latin-1 from framework output), so that the stored log and every JSON
// output made from it stay valid. When something was replaced, appends one diagnostic to
// `diags`: file, the first line concerned, and how many bytes on how many lines.
std::string repair_text_lines(std::string_view text, const std::string& file,
                              std::vector<diagnostic>& diags);

// One log line for `e` in the format mlperf_logging writes (without a trailing newline):
// :::MLLOG {"namespace": "", "time_ms": ..., "event_type": ..., "key": ..., "value": ...,
// "metadata": {...}}
std::string format_event(const event& e);

// ---- writing a log as a run happens ----

// Where a log call was made (the "file" and "lineno" metadata). std::source_location would do,
// but clang 14 (the sanitizer and fuzzing build) cannot compile libstdc++'s; the builtins behind
// it give the caller's position the same way, as default arguments evaluated at the call site.
class call_site {
public:
  static constexpr call_site current(const char* file = __builtin_FILE(),
                                     unsigned line = __builtin_LINE()) noexcept {
    return call_site(file, line);
  }
  const char* file_name() const { return m_file; }
  unsigned line() const { return m_line; }

private:
  constexpr call_site(const char* file, unsigned line) : m_file(file), m_line(line) {}
  const char* m_file;
  unsigned m_line;
};

// Writes events with the current time and the caller's file and line (repository-relative),
// each line to the sink at once, and keeps the text for the run record.
class mllogger {
public:
  explicit mllogger(std::ostream* sink = nullptr) : m_sink(sink) {}

  void point(const std::string& key, const json& value, json metadata = json::object(),
             call_site loc = call_site::current());
  void start(const std::string& key, const json& value = nullptr, json metadata = json::object(),
             call_site loc = call_site::current());
  void end(const std::string& key, const json& value = nullptr, json metadata = json::object(),
           call_site loc = call_site::current());

  const std::string& text() const { return m_text; }

private:
  void emit(const char* type, const std::string& key, const json& value, json metadata,
            const call_site& loc);
  std::ostream* m_sink;
  std::string m_text;
};

} // namespace accelbench::mllog
