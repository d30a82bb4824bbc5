#pragma once
// The results document moved to the result model's serialization in harness/core
// (results_document.hpp), so that harness/net and the store's users need no reporter. The names
// stay reachable here for callers written against reporters::.
#include "harness/core/output_file.hpp"
#include "harness/core/results_document.hpp"

namespace accelbench::reporters {

using accelbench::k_results_schema_version;
using accelbench::read_results_document;
using accelbench::results_document;
using accelbench::write_file_atomic;

} // namespace accelbench::reporters
