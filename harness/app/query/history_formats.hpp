#pragma once
// The output formats of `accelbench history --format NAME` and of the server's
// /api/v1/history?format=NAME: table, json, csv, a table of reporters/output/format.hpp as
// compare's is (harness/app/query/formats.hpp). Here, under both faces, so that the server answers
// byte for byte what the command line writes.
#include <cstddef>

#include "harness/core/model.hpp"
#include "reporters/output/format.hpp"

namespace accelbench::query {

// What history writes: the document of `history --format json` ({"schema_version", "workload",
// "series"}, the series of query::history_series) and the --min-segment the series were judged
// with (the table says where a series is too short to be judged).
struct history_model {
  json doc;
  size_t min_segment = 5;
};

// table, json, csv, in that order (the order of --help and of the error of an unknown name).
output::format_table<history_model> history_formats();

} // namespace accelbench::query
