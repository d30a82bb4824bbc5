#include "harness/app/cli/row_export.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

std::string csv_tags(const std::vector<std::string>& tags) {
  std::string out;
  for (const auto& t : tags) {
    if (!out.empty())
      out += ';';
    for (char c : t) {
      if (c == ';' || c == '\\')
        out += '\\';
      out += c;
    }
  }
  return out;
}

namespace {

// The columns every row starts with: which run it belongs to.
json run_columns(const run& r) {
  json config = json::object();
  for (const auto& [k, v] : r.cfg.values)
    config[k] = v;
  return json{{"run_id", r.id},
              {"uuid", r.uuid},
              {"started_at", r.started_at},
              {"system", r.system},
              {"workload", r.cfg.workload},
              {"backend", r.cfg.backend},
              {"config", config},
              {"ruleset", r.ruleset},
              {"source", r.source},
              {"status", to_string(r.status)},
              {"valid", r.valid},
              {"tags", r.tags}};
}

std::vector<json> run_rows(const run& r) {
  json row = run_columns(r);
  std::vector<double> v;
  for (const auto& s : r.samples)
    v.push_back(s.value);
  const auto s = stats::summarize(v);
  row["sample_unit"] = r.sample_unit;
  row["sample_direction"] = to_string(r.sample_dir);
  row["samples"] = s.n;
  row["median"] = v.empty() ? json() : json(s.median);
  row["mean"] = v.empty() ? json() : json(s.mean);
  row["stddev"] = v.empty() ? json() : json(s.stddev);
  row["cv"] = v.empty() ? json() : json(s.cv);
  row["min"] = v.empty() ? json() : json(s.min);
  row["max"] = v.empty() ? json() : json(s.max);
  return {row};
}

// One row per item of `items`: the run's columns, then the item's own from fill(row, item).
template <class Items, class Fill>
std::vector<json> rows_per(const run& r, const Items& items, Fill fill) {
  std::vector<json> out;
  out.reserve(items.size());
  for (const auto& item : items) {
    json row = run_columns(r);
    fill(row, item);
    out.push_back(row);
  }
  return out;
}

std::vector<json> metric_rows(const run& r) {
  return rows_per(r, r.metrics, [](json& row, const auto& m) {
    row["metric"] = m.name;
    row["value"] = m.value;
    row["unit"] = m.unit;
    row["direction"] = to_string(m.dir);
  });
}

std::vector<json> sample_rows(const run& r) {
  return rows_per(r, r.samples, [&r](json& row, const auto& s) {
    row["index"] = s.index;
    row["value"] = s.value;
    row["unit"] = r.sample_unit;
    row["iterations"] = s.iterations;
  });
}

// A value as one CSV field: stored text (system, tags, config, ...) through csv_text_field, numbers
// as the shortest text that reads back to the same double (a negative number stays a number),
// true/false, null as an empty field, arrays and objects as compact JSON.
std::string csv_cell(const json& v) {
  if (v.is_null())
    return "";
  if (v.is_string())
    return csv_text_field(v.get<std::string>());
  if (v.is_number_float())
    return fmt::format("{}", v.get<double>());
  if (v.is_number() || v.is_boolean())
    return dump_json(v);
  if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); }))
    return csv_text_field(csv_tags(v.get<std::vector<std::string>>()));
  return csv_text_field(dump_json(v));
}

} // namespace

void write_rows(std::ostream& out, const std::vector<run>& runs, const std::string& rows,
                const std::string& format) {
  if (format != "csv" && format != "jsonl")
    throw usage_error(
        fmt::format("--format {}: rows are written as csv or jsonl", printable(format)));
  auto rows_of = rows == "run"      ? run_rows
                 : rows == "metric" ? metric_rows
                 : rows == "sample" ? sample_rows
                                    : nullptr;
  if (!rows_of)
    throw usage_error(fmt::format("--rows takes run, metric or sample, not '{}'", printable(rows)));
  bool header = format == "csv";
  for (const auto& r : runs)
    for (const json& row : rows_of(r)) {
      if (format == "jsonl") {
        out << dump_json(row) << "\n";
        continue;
      }
      std::string line;
      if (header) {
        for (const auto& [k, v] : row.items()) {
          if (!line.empty())
            line += ',';
          line += csv_field(k);
        }
        out << line << "\r\n";
        line.clear();
        header = false;
      }
      bool first = true;
      for (const auto& [k, v] : row.items()) {
        if (!first)
          line += ',';
        line += csv_cell(v);
        first = false;
      }
      out << line << "\r\n";
    }
}

} // namespace accelbench::cli
