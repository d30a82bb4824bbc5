#include "harness/app/cli/options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/app/cli/commands.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

// CLI11's own Range lets NaN through (it compares false).
CLI::Validator number_in(double lo, double hi, bool lo_open, bool hi_open) {
  const std::string range =
      fmt::format("{}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(in.c_str(), &end);
        const bool ok = !in.empty() && *end == '\0' && std::isfinite(v) &&
                        (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
        return ok ? std::string() : fmt::format("'{}' is not a number in {}", printable(in), range);
      },
      "NUMBER in " + range);
}

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = fmt::format("[{}, {}]", lo, hi);
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        const bool ok =
            !in.empty() && ec == std::errc() && end == in.data() + in.size() && v >= lo && v <= hi;
        return ok ? std::string()
                  : fmt::format("'{}' is not an integer in {}", printable(in), range);
      },
      "INTEGER in " + range);
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        const bool ok = !in.empty() && ec == std::errc() && end == in.data() + in.size();
        return ok ? std::string()
                  : fmt::format("'{}' is not an integer in [0, 2^64-1]", printable(in));
      },
      "UINT64");
}

namespace {

// Adapts a check that throws (one home for the rule, shared with the commands) to CLI11.
template <class F> CLI::Validator checked_by(F check, const std::string& description) {
  return CLI::Validator(
      [check](std::string& in) -> std::string {
        try {
          check(in);
        } catch (const error& e) {
          return e.what();
        }
        return {};
      },
      description);
}

} // namespace

CLI::Validator text_value(bool allow_empty) {
  return checked_by([allow_empty](const std::string& v) { require_text(v, "value", allow_empty); },
                    "TEXT");
}

CLI::Validator date_value() {
  return checked_by([](const std::string& v) { query::require_date(v, "date"); }, "YYYY-MM-DD");
}

CLI::Option* add_db_option(CLI::App* a, std::string& db) {
  return a->add_option("--db", db,
                       "Database path or postgresql:// URI (default: $ACCELBENCH_DB or "
                       "results/accelbench.db)");
}

void add_sides_options(CLI::App* a, std::string& baseline, std::string& candidate) {
  a->add_option("--baseline", baseline,
                "Selector: system name, system=, accelerator=, tag=, workload=, run=ID,ID "
                "(joined with &), or a results .json file")
      ->required();
  a->add_option("--candidate", candidate, "Selector (as --baseline)")->required();
}

CLI::Option* add_json_flag(CLI::App* a, bool& as_json) {
  return a->add_flag("--json", as_json, "Machine-readable output");
}

CLI::Option* add_output_option(CLI::App* a, std::string& file, const std::string& what) {
  return a->add_option("-o,--output", file, what)->check(text_value(false));
}

void add_filter_options(CLI::App* a, filter_options& f, bool since) {
  a->add_option("--system", f.system, "Only this system")->check(text_value(false));
  a->add_option("--workload", f.workload, "Only this workload (prefix*)");
  a->add_option("--tag", f.tags, "Only runs with this tag (repeatable: all of them)")
      ->check(text_value(false));
  if (since)
    a->add_option("--since", f.since, "Only runs started on or after this date (YYYY-MM-DD)")
        ->check(date_value());
}

store::run_filter to_run_filter(const filter_options& o) {
  store::run_filter f;
  if (!o.system.empty())
    f.systems.push_back(o.system);
  if (!o.workload.empty())
    f.workloads.push_back(o.workload);
  f.tags = o.tags;
  f.since = o.since;
  return f;
}

std::string combined_selector(const std::string& selector, const filter_options& f) {
  std::string sel = selector;
  auto add = [&sel](const std::string& key, const std::string& v) {
    if (!v.empty())
      sel += (sel.empty() ? "" : "&") + key + "=" + v;
  };
  add("system", f.system);
  add("workload", f.workload);
  for (const auto& t : f.tags)
    add("tag", t);
  add("since", f.since);
  return sel;
}

} // namespace accelbench::cli
