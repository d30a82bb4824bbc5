#pragma once
// What compare_sets (compare.cpp) calls from the other files of harness/compare; not for callers
// outside it.
#include "harness/compare/compare.hpp"

namespace accelbench::compare {

// Fills out.workloads and out.overall from out.pairs (summaries.cpp): per workload and over every
// pair, the counts of each verdict and the geometric mean of the speed-ups with its own test.
void summarize(set_comparison& out);

} // namespace accelbench::compare
