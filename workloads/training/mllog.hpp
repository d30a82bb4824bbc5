#pragma once
// MLPerf Training logging (mlperf_logging.mllog): one line per event,
//   :::MLLOG {"namespace": "", "time_ms": <int ms since epoch>, "event_type": "POINT_IN_TIME" |
//             "INTERVAL_START" | "INTERVAL_END", "key": ..., "value": ..., "metadata": {"file":
//             ..., "lineno": ..., ...}}
// written while the run happens (each line goes to the sink at once) and kept for the run record.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accelbench::training {

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

class mllogger {
public:
  explicit mllogger(std::ostream* sink = nullptr) : m_sink(sink) {}

  void point(const std::string& key, const nlohmann::json& value,
             nlohmann::json metadata = nlohmann::json::object(),
             call_site loc = call_site::current());
  void start(const std::string& key, const nlohmann::json& value = nullptr,
             nlohmann::json metadata = nlohmann::json::object(),
             call_site loc = call_site::current());
  void end(const std::string& key, const nlohmann::json& value = nullptr,
           nlohmann::json metadata = nlohmann::json::object(),
           call_site loc = call_site::current());

  const std::string& text() const { return m_text; }

private:
  void emit(const char* type, const std::string& key, const nlohmann::json& value,
            nlohmann::json metadata, const call_site& loc);
  std::ostream* m_sink;
  std::string m_text;
};

// Parses the ":::MLLOG " lines of a log (other lines are ignored); throws input_error naming the
// line number of a malformed event.
std::vector<nlohmann::json> parse_mllog(const std::string& text);

} // namespace accelbench::training
