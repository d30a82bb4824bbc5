#include "workloads/training/mllog.hpp"

#include <chrono>
#include <ostream>
#include <sstream>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::training {

namespace {
// The repository-relative source path ("workloads/training/trainer.cpp"): the build machine's
// absolute path says nothing to a reviewer of the log.
std::string relative_file(const char* f) {
  std::string s = f;
  auto p = s.find("workloads/");
  return p == std::string::npos ? s : s.substr(p);
}

// JSON with Python's json.dumps separators (", " and ": "), as mlperf_logging writes its lines;
// numbers and strings as nlohmann prints them (doubles with round-trip precision).
template <class J>
std::string python_style(const J& j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += J(it.key()).dump() + ": " + python_style(it.value());
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); i++) out += (i ? ", " : "") + python_style(j[i]);
    return out + "]";
  }
  return j.dump();
}
} // namespace

void mllogger::emit(const char* type, const std::string& key, const nlohmann::json& value,
                    nlohmann::json metadata, const call_site& loc) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  // Key order as mlperf_logging writes it; nlohmann::ordered_json keeps insertion order, and
  // doubles are printed with round-trip precision.
  nlohmann::ordered_json e;
  e["namespace"] = "";
  e["time_ms"] = int64_t(ms);
  e["event_type"] = type;
  e["key"] = key;
  e["value"] = value;
  nlohmann::ordered_json md;
  md["file"] = relative_file(loc.file_name());
  md["lineno"] = int64_t(loc.line());
  for (auto& [k, v] : metadata.items()) md[k] = v;
  e["metadata"] = md;
  std::string line = ":::MLLOG " + python_style(e) + "\n";
  m_text += line;
  if (m_sink) {
    *m_sink << line;
    m_sink->flush();
  }
}

void mllogger::point(const std::string& key, const nlohmann::json& value, nlohmann::json md,
                     call_site loc) {
  emit("POINT_IN_TIME", key, value, std::move(md), loc);
}
void mllogger::start(const std::string& key, const nlohmann::json& value, nlohmann::json md,
                     call_site loc) {
  emit("INTERVAL_START", key, value, std::move(md), loc);
}
void mllogger::end(const std::string& key, const nlohmann::json& value, nlohmann::json md,
                   call_site loc) {
  emit("INTERVAL_END", key, value, std::move(md), loc);
}

std::vector<nlohmann::json> parse_mllog(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  int64_t n = 0;
  const std::string tag = ":::MLLOG ";
  while (std::getline(in, line)) {
    n++;
    auto p = line.find(tag);
    if (p == std::string::npos) continue;
    // Bounded depth (a line nested 100,000 levels deep would exhaust the stack); the message
    // names the line: "mllog: line N: JSON nesting too deep ..." or "...: not valid JSON (...)".
    out.push_back(parse_json_input(std::string_view(line).substr(p + tag.size()),
                                   "mllog: line " + std::to_string(n)));
  }
  return out;
}

} // namespace accelbench::training
