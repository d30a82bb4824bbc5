#pragma once
// accelbench report --baseline SEL --candidate SEL [-o FILE.json] [--json] [--html FILE]
//                   [--db PATH]
//                   [--price MODEL=USD]... [--prices FILE]
// Builds an A-vs-B report (reporters/report) from two selectors (harness/app/query/selector.hpp),
// prints the one-sentence answer and the summary table, and writes the JSON and HTML files
// atomically.
//
// Exit codes (harness/core/error.hpp): 0 when the report holds at least one pair; 1 when it holds
// no pair (a clear message on stderr; the JSON and HTML are still written and valid, listing the
// unpaired runs); 2 (input_error) when a selector matches nothing or is malformed, a price is
// malformed, or a file cannot be read or written.
#include <string>
#include <vector>

namespace accelbench::cli {

struct report_cli_options {
  std::string baseline;            // SEL
  std::string candidate;           // SEL
  std::string json_path;           // -o FILE; "" : not written
  std::string json_arg;            // --json [FILE] as given (FILE: the deprecated spelling of -o)
  bool json_stdout = false;        // --json alone: the report JSON on stdout
  std::string html_path;           // "" : not written
  std::string db;                  // "" : $ACCELBENCH_DB, else the default database
  std::vector<std::string> prices; // --price MODEL=USD (repeatable), applied after --prices
  std::string prices_file;         // --prices FILE (replaces results/prices.json)
  std::string devices_file;        // --devices FILE (replaces results/devices.json); optional
  bool quiet = false;              // no table on stdout (the headline is still printed)
  bool trust_loaded = false;       // call changes from runs measured on a loaded machine
};

int cmd_report(const report_cli_options& o);

} // namespace accelbench::cli
