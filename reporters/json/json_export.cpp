#include "reporters/json/json_export.hpp"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"
#include "harness/core/json_schema.hpp"

namespace accelbench::reporters {

namespace fs = std::filesystem;

json results_document(const std::vector<run>& runs, const json& systems, const json& scores) {
  json doc;
  doc["schema_version"] = k_results_schema_version;
  doc["generator"] = {{"name", "accelbench"},
                      {"version", build_info::version()},
                      {"git_revision", build_info::git_revision()},
                      {"git_dirty", build_info::git_dirty()}};
  doc["exported_at"] = now_iso8601();
  doc["systems"] = systems.is_array() ? systems : json::array();
  doc["scores"] = scores.is_array() ? scores : json::array();
  json rs = json::array();
  for (const auto& r : runs) rs.push_back(to_json(r));
  doc["runs"] = std::move(rs);
  return doc;
}

std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based position of the error; turn it into line and column.
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw input_error(fmt::format("{}: not valid JSON at line {}, column {} (byte {})", origin, line,
                                  col, e.byte));
  }
  static const json_schema schema = load_builtin_schema("results.schema.json");
  schema.require_valid(doc, origin);
  std::vector<run> out;
  for (const auto& j : doc["runs"]) out.push_back(run_from_json(j));
  if (systems) *systems = doc.value("systems", json::array());
  return out;
}

void write_file_atomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp{}", (long)getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw input_error(fmt::format("cannot write '{}' (is the folder there and writable?)", path.string()));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw input_error(fmt::format("cannot write '{}': write failed", path.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw input_error(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

} // namespace accelbench::reporters
