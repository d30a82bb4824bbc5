#pragma once
// Output formats of a result-set comparison, one file each in reporters/compare. Each is a pure
// function of the comparison: no I/O, no clock, so golden files can pin them byte for byte. The
// table of formats that the command line and the server choose from by name is
// harness/app/query/formats.hpp.
#include <string>

#include "harness/compare/compare.hpp"
#include "harness/core/model.hpp"

namespace accelbench::compare {

// schemas/compare.schema.json describes the JSON form; bump on any incompatible change.
inline constexpr int compare_schema_version = 3;

struct terminal_options {
  bool color = false; // ANSI colours on verdict words; only when asked (never guessed here)
};

// Aligned plain-text table, regressions first, with the smallest change each pair could see
// (column "sees ≥"), then the per-workload geomean with its CI and verdict, unpaired configs and
// environment differences.
std::string format_terminal(const set_comparison& c, const terminal_options& opt = {});

// GitHub-flavoured markdown for a job summary ($GITHUB_STEP_SUMMARY): a headline with the
// counts, one table (regressions first), the geomean per workload, unpaired configs and flags.
std::string format_markdown(const set_comparison& c);

// JUnit XML: one <testcase> per config (with --only-changed too); regressed -> <failure> with the
// numbers in its message; inconclusive and unpaired -> <skipped>; improved and unchanged pass.
// time: the candidate runs' wall time (s); the suite has the earliest candidate start as
// timestamp (UTC, no zone, as the JUnit schema wants) and the candidate's host as hostname.
std::string format_junit(const set_comparison& c,
                         const std::string& suite_name = "accelbench.compare");

// JSON with schema_version (schemas/compare.schema.json). Undefined ratios are null, and so are
// the CI and p-value of a pair with nothing to test (tested false).
json to_json(const set_comparison& c);
std::string format_json(const set_comparison& c); // to_json(c).dump(2) + "\n"

// Bencher Metric Format: {"<name>": {"<measure>": {"value", "lower_value", "upper_value"}}} for
// the candidate side. The samples: times (unit s/ms/us/ns, lower is better) go to Bencher's
// built-in "latency" measure in nanoseconds; higher-is-better samples to "throughput"; anything
// else to a measure named after its unit (value: the median; lower/upper: the smallest and largest
// sample). Then every metric of the candidate's runs (TFLOP/s, tokens/s, % of peak...) as a measure
// named "<metric> (<unit>)", e.g. "tflops (TFLOP/s)": value the median over the runs,
// lower/upper the smallest and largest run.
json to_bmf(const set_comparison& c);
std::string format_bmf(const set_comparison& c);

// CSV (RFC 4180) for spreadsheets and pandas: a header, then one row per listed pair (by name;
// --only-changed lists fewer): name, workload, backend, ruleset, unit, direction, verdict, the
// medians and sample counts a side, the ratio (candidate / baseline) and its CI, p, the smallest
// change the pair could see (%), whether the environment differs, the reason. Undefined figures
// are empty fields; stored text that a spreadsheet would run as a formula is neutralised.
std::string format_csv(const set_comparison& c);

// The markdown cell's escape, exposed for tests: | and line breaks inside a table cell.
std::string markdown_escape(const std::string& s);

} // namespace accelbench::compare
