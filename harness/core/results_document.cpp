#include "harness/core/results_document.hpp"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

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
  for (const auto& r : runs)
    rs.push_back(to_json(r));
  doc["runs"] = std::move(rs);
  return doc;
}

namespace {

// 1-based line and column of byte `offset` of `text`.
std::pair<size_t, size_t> line_and_column(const std::string& text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// RFC 8259 requires JSON to be UTF-8 and our exports always are (dump_json repairs stored text),
// so a document with other bytes was written by something else: refused with the position,
// rather than repaired, so that no system name or tag changes silently on import.
void require_utf8(const std::string& text, const std::string& origin) {
  const size_t bad = first_invalid_utf8(text);
  if (bad == std::string::npos)
    return;
  auto [line, col] = line_and_column(text, bad);
  throw input_error(fmt::format("{}: not valid UTF-8 at line {}, column {} (byte 0x{:02x}); JSON "
                                "must be UTF-8",
                                origin, line, col, static_cast<unsigned char>(text[bad])));
}

} // namespace

std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems) {
  require_utf8(text, origin);
  json doc = parse_json_input(text, origin);
  static const json_schema schema = load_builtin_schema("results.schema.json");
  // The schema also bounds every number a reader later converts (64-bit integers, finite
  // doubles) and types the extra/environment fields that reports and packages read, so nothing
  // after this line throws on a value from the file.
  schema.require_valid(doc, origin);
  std::vector<run> out;
  for (const auto& j : doc["runs"]) {
    run r = run_from_json(j);
    // An older version's 0 for "no peak known" is not a measurement: absent, as stored runs read.
    std::erase_if(r.metrics, unknown_figure);
    out.push_back(std::move(r));
  }
  if (systems)
    *systems = doc.value("systems", json::array());
  return out;
}

} // namespace accelbench
