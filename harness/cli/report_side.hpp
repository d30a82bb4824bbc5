#pragma once
// A side of a report: its one home is harness/query/report_side.hpp, shared with the server; the
// command line's files (and tests written against them) use it under these names.
#include "harness/query/report_side.hpp"

namespace accelbench::cli {

using query::report_side;
using query::score_mlperf_groups;

} // namespace accelbench::cli
