#pragma once
// MLPerf Training logging (mlperf_logging.mllog): one line per event,
//   :::MLLOG {"namespace": "", "time_ms": <int ms since epoch>, "event_type": "POINT_IN_TIME" |
//             "INTERVAL_START" | "INTERVAL_END", "key": ..., "value": ..., "metadata": {"file":
//             ..., "lineno": ..., ...}}
// written while the run happens (each line goes to the sink at once) and kept for the run record.
#include <iosfwd>
#include <source_location>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accelbench::training {

class mllogger {
public:
  explicit mllogger(std::ostream* sink = nullptr) : m_sink(sink) {}

  void point(const std::string& key, const nlohmann::json& value,
             nlohmann::json metadata = nlohmann::json::object(),
             std::source_location loc = std::source_location::current());
  void start(const std::string& key, const nlohmann::json& value = nullptr,
             nlohmann::json metadata = nlohmann::json::object(),
             std::source_location loc = std::source_location::current());
  void end(const std::string& key, const nlohmann::json& value = nullptr,
           nlohmann::json metadata = nlohmann::json::object(),
           std::source_location loc = std::source_location::current());

  const std::string& text() const { return m_text; }

private:
  void emit(const char* type, const std::string& key, const nlohmann::json& value,
            nlohmann::json metadata, const std::source_location& loc);
  std::ostream* m_sink;
  std::string m_text;
};

// Parses the ":::MLLOG " lines of a log (other lines are ignored); throws input_error naming the
// line number of a malformed event.
std::vector<nlohmann::json> parse_mllog(const std::string& text);

} // namespace accelbench::training
