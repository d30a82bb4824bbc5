#pragma once
// accelbench export --format csv|jsonl: stored runs as rows for spreadsheets and pandas, one row
// per run, per metric or per sample (--rows). CSV follows RFC 4180: a field holding a comma, a
// quote, a line break or leading/trailing space is quoted, quotes doubled; numbers are written
// with the fewest digits that read back to the same double; stored text that a spreadsheet would
// run as a formula is neutralised (csv_text_field). JSONL: one JSON object per line with
// the same keys (config and tags as JSON values instead of text).
#include <ostream>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

// One CSV field, and one of stored text: csv_field and csv_text_field of
// harness/core/text_input.hpp.

// A run's tags as one CSV text: joined with ';', a ';' or '\' inside a tag escaped with '\', so
// the tag "a;b" (a\;b) and the tags "a" and "b" (a;b) stay apart.
std::string csv_tags(const std::vector<std::string>& tags);

// Throws usage_error when `rows` is not run, metric or sample, or `format` not csv or jsonl.
void write_rows(std::ostream& out, const std::vector<run>& runs, const std::string& rows,
                const std::string& format);

} // namespace accelbench::cli
