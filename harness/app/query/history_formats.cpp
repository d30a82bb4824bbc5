#include "harness/app/query/history_formats.hpp"

#include <array>
#include <sstream>

#include <fmt/format.h>

#include "harness/app/query/text_table.hpp"
#include "harness/compare/changepoint.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"

namespace accelbench::query {

namespace {

using output::write_options;

// A change point as the table lists it: "REGRESSION at run 29 (2026-10-15) x1.122 p=1.2e-25".
std::string change_text(const json& cp) {
  return fmt::format("{} at run {} ({}) x{:.3f} p={:.1e}",
                     cp["regression"].get<bool>() ? "REGRESSION" : "change",
                     cp["run_id"].get<int64_t>(), cp["started_at"].get<std::string>().substr(0, 10),
                     cp["magnitude"].get<double>(), cp["p_value"].get<double>());
}

// The last column of a series' row: its change points, "none", or why it was not judged.
std::string changes_column(const json& s, size_t points, size_t min_segment) {
  if (points < 2 * min_segment)
    return fmt::format("too few points ({} < {})", points, 2 * min_segment);
  std::string text;
  for (const auto& cp : s["change_points"])
    text += (text.empty() ? "" : "; ") + change_text(cp);
  return text.empty() ? "none" : text;
}

std::string write_table(const history_model& h, const write_options&) {
  text_table t({"system", "config", "points", "series", "latest", "change points"});
  for (const auto& s : h.doc["series"]) {
    std::vector<double> values;
    values.reserve(s["points"].size());
    for (const auto& p : s["points"])
      values.push_back(p["value"].get<double>());
    t.add({s["system"].get<std::string>(), s["config_key"].get<std::string>(),
           std::to_string(values.size()), compare::sparkline(values, 40),
           format_quantity(values.back(), s["unit"].get<std::string>()),
           changes_column(s, values.size(), h.min_segment)});
  }
  std::ostringstream out;
  t.print(out);
  return out.str();
}

std::string write_json(const history_model& h, const write_options&) {
  return dump_json(h.doc, 2) + "\n";
}

// The change point that begins at point `index` of a series, or nullptr.
const json* change_at(const json& s, size_t index) {
  for (const auto& cp : s["change_points"])
    if (cp["index"].get<size_t>() == index)
      return &cp;
  return nullptr;
}

// CSV (RFC 4180) for spreadsheets and pandas: one row per point of every series, in the stored
// unit with the fewest digits that read back to the same double; a change point on the row of
// the night it began (empty fields elsewhere). Stored text is neutralised as compare's csv does.
std::string write_csv(const history_model& h, const write_options&) {
  std::string out = "system,config,ruleset,unit,direction,run_id,started_at,value,change,"
                    "magnitude,p_value\n";
  for (const auto& s : h.doc["series"]) {
    const std::string series = fmt::format(
        "{},{},{},{},{}", csv_text_field(s["system"].get<std::string>()),
        csv_text_field(s["config_key"].get<std::string>()),
        csv_text_field(s["ruleset"].get<std::string>()),
        csv_text_field(s["unit"].get<std::string>()), s["direction"].get<std::string>());
    for (size_t i = 0; i < s["points"].size(); ++i) {
      const json& p = s["points"][i];
      const json* cp = change_at(s, i);
      out +=
          fmt::format("{},{},{},{},{},{},{}\n", series, p["run_id"].get<int64_t>(),
                      csv_text_field(p["started_at"].get<std::string>()), p["value"].get<double>(),
                      !cp                               ? ""
                      : (*cp)["regression"].get<bool>() ? "regression"
                                                        : "change",
                      cp ? fmt::format("{}", (*cp)["magnitude"].get<double>()) : "",
                      cp ? fmt::format("{}", (*cp)["p_value"].get<double>()) : "");
    }
  }
  return out;
}

// The order is the order of the names in `--help` and in the error of an unknown name.
constexpr std::array<output::format<history_model>, 3> k_history_formats = {{
    {"table", "text/plain; charset=utf-8", "txt", write_table},
    {"json", "application/json", "json", write_json},
    {"csv", "text/csv; charset=utf-8", "csv", write_csv},
}};

} // namespace

output::format_table<history_model> history_formats() { return k_history_formats; }

} // namespace accelbench::query
