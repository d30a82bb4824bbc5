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
#include "harness/core/limits.hpp"
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
  if (std::string why = limits::run_problem(r); !why.empty())
    return why;
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

namespace {

// "ORIGIN: run I (uuid U): PROBLEM", the one wording of a run refused at the boundary.
input_error refused_run(const std::string& origin, size_t i, const std::string& uuid,
                        const std::string& why) {
  return input_error(fmt::format("{}: run {} ({}): {}", origin, i,
                                 uuid.empty() ? std::string("no uuid") : "uuid " + printable(uuid),
                                 why));
}

// Reads a results document's text once, without building its tree, for the first run over a
// limit of harness/core/limits.hpp: counts the items of each run's samples, metrics and tags and
// measures its tags and metric names. A document over a limit is so refused in one pass and before
// a tree of it is built (ten million samples are gigabytes as a tree; a million tags took minutes
// to get past the parser). A problem, once found, ends the reading at once when its run's uuid
// was read, else at the end of its run (our exports write the uuid last). What is not a results
// document is left to the parser and the schema.
class run_limits_reader final : public nlohmann::json_sax<json> {
public:
  std::size_t run = 0; // the run of `why`, counted from 0
  std::string uuid, why;

  bool null() override { return item(); }
  bool boolean(bool) override { return item(); }
  bool number_integer(number_integer_t) override { return item(); }
  bool number_unsigned(number_unsigned_t) override { return item(); }
  bool number_float(number_float_t, const string_t&) override { return item(); }
  bool binary(binary_t&) override { return item(); }
  bool string(string_t& s) override {
    text(s);
    return item();
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool key(string_t& k) override;
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false; // the parser names it
  }

private:
  // Depths (containers open) of the document's parts: the root object, the runs array, a run,
  // one of its lists, a metric.
  enum depth : int { k_root = 1, k_runs = 2, k_run = 3, k_list = 4, k_metric = 5 };
  enum class list { none, samples, metrics, tags };

  bool item(); // a value (scalar or container) begins at depth_
  bool open();
  bool close();
  void text(const std::string& s);
  void found(std::string problem) {
    if (why.empty() && !problem.empty())
      why = std::move(problem);
  }

  int depth_ = 0;
  std::string root_key_, run_key_, metric_key_; // the last key at k_root, k_run, k_metric
  bool in_runs_ = false;
  list list_ = list::none;
  std::size_t items_ = 0, runs_ = 0;
};

bool run_limits_reader::key(string_t& k) {
  if (depth_ == k_root)
    root_key_ = k;
  else if (depth_ == k_run && in_runs_)
    run_key_ = k;
  else if (depth_ == k_metric && list_ == list::metrics)
    metric_key_ = k;
  return true;
}

bool run_limits_reader::item() {
  if (depth_ == k_runs && in_runs_ && why.empty())
    run = runs_++;
  if (depth_ != k_list || list_ == list::none || !why.empty())
    return why.empty() || uuid.empty(); // a problem whose run's uuid is known ends the reading
  ++items_;
  found(list_ == list::samples   ? limits::sample_count_problem(items_)
        : list_ == list::metrics ? limits::metric_count_problem(items_)
                                 : limits::tag_count_problem(items_));
  return why.empty() || uuid.empty();
}

bool run_limits_reader::open() {
  item();
  ++depth_;
  if (depth_ == k_runs)
    in_runs_ = root_key_ == "runs";
  else if (depth_ == k_run && in_runs_) {
    uuid.clear();
    run_key_.clear();
  } else if (depth_ == k_list && in_runs_) {
    list_ = run_key_ == "samples"   ? list::samples
            : run_key_ == "metrics" ? list::metrics
            : run_key_ == "tags"    ? list::tags
                                    : list::none;
    items_ = 0;
  } else if (depth_ == k_metric)
    metric_key_.clear();
  return true;
}

bool run_limits_reader::close() {
  --depth_;
  if (depth_ == k_run)
    list_ = list::none;
  // The run with the problem has ended: its uuid is known, nothing after it is read.
  return !(depth_ == k_runs && in_runs_ && !why.empty());
}

void run_limits_reader::text(const std::string& s) {
  if (!in_runs_)
    return;
  if (depth_ == k_run && run_key_ == "uuid")
    uuid = s;
  else if (!why.empty())
    return;
  else if (depth_ == k_list && list_ == list::tags)
    found(limits::tag_problem(s));
  else if (depth_ == k_metric && list_ == list::metrics && metric_key_ == "name")
    found(limits::metric_name_problem(s));
}

void require_runs_within_limits(const std::string& text, const std::string& origin) {
  run_limits_reader reader;
  json::sax_parse(text, &reader);
  if (!reader.why.empty())
    throw refused_run(origin, reader.run, reader.uuid, reader.why);
}

} // namespace

void require_storable_runs(const std::vector<run>& runs, const std::string& origin) {
  for (size_t i = 0; i < runs.size(); ++i)
    if (std::string why = storable_run_problem(runs[i]); !why.empty())
      throw refused_run(origin, i, runs[i].uuid, why);
}

std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems) {
  require_utf8(text, origin);
  require_runs_within_limits(text, origin);
  json doc = parse_json_input(text, origin);
  static const json_schema schema = load_builtin_schema("results.schema.json");
  // The schema also bounds every number a reader later converts (64-bit integers, finite
  // doubles) and types the extra/environment fields that reports and packages read, so nothing
  // after this line throws on a value from the file.
  schema.require_valid(doc, origin);
  std::vector<run> out;
  out.reserve(doc["runs"].size());
  for (const auto& j : doc["runs"]) {
    run r = run_from_json(j);
    // An older version's 0 for "no peak known" is not a measurement: absent, as stored runs read.
    r.metrics.erase_if(unknown_figure);
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
