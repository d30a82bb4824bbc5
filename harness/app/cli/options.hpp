#pragma once
// One style for the options every command shares, so that the same thing is spelled the same way
// everywhere:
//   --db PATH            the database (default: $ACCELBENCH_DB, else results/accelbench.db)
//   --json               machine-readable output on stdout
//   --format F           the form of the output where there are several (table, json, ...)
//   -o, --output FILE    write the output to FILE instead of stdout
//   --system, --workload, --tag, --since   filters of the runs a command reads (the selector
//                        filters system=, workload=, tag=, since=, as flags)
// Values are checked when the command line is parsed: a value that would silently disable or
// invert what an option controls (a timeout of 0, NaN or 1e30, a negative count) is a usage error
// naming the option and the value.
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/store/store.hpp"

namespace accelbench::cli {

CLI::Validator number_in(double lo, double hi, bool lo_open, bool hi_open);
CLI::Validator integer_in(int64_t lo, int64_t hi);
CLI::Validator unsigned_64();                // any 64-bit unsigned value; "-1" would otherwise wrap
CLI::Validator text_value(bool allow_empty); // UTF-8, and (unless allowed) not empty
CLI::Validator date_value();                 // YYYY-MM-DD (optionally THH:MM[:SS])

CLI::Option* add_db_option(CLI::App* a, std::string& db);
// --baseline SEL and --candidate SEL, both required: the two sides of compare and report.
void add_sides_options(CLI::App* a, std::string& baseline, std::string& candidate);
CLI::Option* add_json_flag(CLI::App* a, bool& as_json);
CLI::Option* add_output_option(CLI::App* a, std::string& file,
                               const std::string& what = "Write to FILE instead of stdout");

// --system, --workload, --tag (repeatable) and, with `since`, --since.
struct filter_options {
  std::string system, workload, since;
  std::vector<std::string> tags;
};
void add_filter_options(CLI::App* a, filter_options& f, bool since = false);
store::run_filter to_run_filter(const filter_options& f);
// A selector (harness/app/query/selector.hpp) and the filter flags together, as one selector: every
// part given must hold ("" when neither is given).
std::string combined_selector(const std::string& sel, const filter_options& f);

} // namespace accelbench::cli
