#include "harness/core/results_document.hpp"

#include <unistd.h>

#include <fstream>
#include <set>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/environment.hpp"
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

bool digits(const std::string& t, size_t from, size_t n, int& out) {
  out = 0;
  for (size_t i = from; i < from + n; ++i) {
    if (i >= t.size() || t[i] < '0' || t[i] > '9')
      return false;
    out = out * 10 + (t[i] - '0');
  }
  return true;
}

int days_in_month(int year, int month) {
  static const int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : k_days[month - 1];
}

// Units whose samples are durations: named "a time" in messages, as people read them.
bool is_time_unit(const std::string& unit) {
  static const std::set<std::string> k_times = {"s", "ms", "us", "ns", "min", "h"};
  return k_times.count(unit) > 0;
}

std::string sample_problem(const run& r) {
  std::set<int64_t> seen;
  for (const auto& s : r.samples) {
    if (!seen.insert(s.index).second)
      return fmt::format("sample index {} appears twice", s.index);
    // `!(value > 0)` rather than `value <= 0`: a NaN fails it too (the schema refuses NaN first).
    if (!(s.value > 0)) {
      const char* kind = is_time_unit(r.sample_unit)                   ? "time"
                         : r.sample_dir == direction::higher_is_better ? "rate"
                                                                       : "value";
      return fmt::format("sample index {} is {} {}: a {} must be more than 0 (compare and report "
                         "use ratios of medians)",
                         s.index, s.value, r.sample_unit, kind);
    }
  }
  return {};
}

} // namespace

bool is_utc_timestamp(const std::string& t) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (t.size() < 20 || !digits(t, 0, 4, year) || t[4] != '-' || !digits(t, 5, 2, month) ||
      t[7] != '-' || !digits(t, 8, 2, day) || t[10] != 'T' || !digits(t, 11, 2, hour) ||
      t[13] != ':' || !digits(t, 14, 2, minute) || t[16] != ':' || !digits(t, 17, 2, second))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
      minute > 59 || second > 60) // 60: a leap second
    return false;
  size_t end = 19;
  if (t[end] == '.') {
    const size_t first = ++end;
    while (end < t.size() && t[end] >= '0' && t[end] <= '9')
      ++end;
    if (end == first || end - first > 9)
      return false;
  }
  return end + 1 == t.size() && t[end] == 'Z';
}

std::string storable_run_problem(const run& r) {
  if (std::string why = sample_problem(r); !why.empty())
    return why;
  // Which of two values would be the metric? (The store would keep the last, silently.) A tag
  // given twice says nothing twice: the store keeps it once.
  std::set<std::string> names;
  for (const auto& m : r.metrics)
    if (!names.insert(m.name).second)
      return fmt::format("metric '{}' appears twice", printable(m.name));
  for (const auto& [field, value] :
       {std::pair<const char*, const std::string&>{"started_at", r.started_at},
        {"finished_at", r.finished_at}})
    if (!value.empty() && !is_utc_timestamp(value))
      return fmt::format("{} '{}' is not a UTC date and time like 2026-12-02T10:13:01.123Z (gc "
                         "compares them as text)",
                         field, printable(value));
  return {};
}

void require_storable_runs(const std::vector<run>& runs, const std::string& origin) {
  for (size_t i = 0; i < runs.size(); ++i)
    if (std::string why = storable_run_problem(runs[i]); !why.empty())
      throw input_error(fmt::format(
          "{}: run {} ({}): {}", origin, i,
          runs[i].uuid.empty() ? std::string("no uuid") : "uuid " + printable(runs[i].uuid), why));
}

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
    // An older version's fingerprint of the same environment is the current one, so that a run of
    // such a document compares with new runs of its machine whether it is stored or read directly
    // (compare a.json b.json); the store applies the same rule to its own rows (migration 6).
    if (!r.fingerprint.empty() && !r.environment.empty())
      r.fingerprint = current_fingerprint(r.environment, r.fingerprint);
    out.push_back(std::move(r));
  }
  require_storable_runs(out, origin);
  if (systems)
    *systems = doc.value("systems", json::array());
  return out;
}

} // namespace accelbench
