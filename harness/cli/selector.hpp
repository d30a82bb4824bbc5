#pragma once
// Selectors (SEL): their one home is harness/query/selector.hpp, shared with the server; the
// command line's files (and tests written against them) use them under these names.
#include "harness/query/selector.hpp"

namespace accelbench::cli {

using query::accelerator_matches;
using query::keep_job;
using query::parse_selector;
using query::require_date;
using query::select_runs;
using query::selection;

} // namespace accelbench::cli
