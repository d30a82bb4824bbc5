#pragma once
// `accelbench history --html FILE`: the nightly series of a workload as one self-contained page
// (inline CSS and SVG, no script, no network): one chart per series, each night a point, every
// change point marked where it happened with the means before and after it.
#include <string>

#include "harness/core/model.hpp"

namespace accelbench::report {

// `doc` is what `history --format json` prints: {"workload", "series": [{system, config_key,
// ruleset, unit, direction, points: [{run_id, started_at, value, run_medians}], change_points:
// [{index, run_id, started_at, mean_before, mean_after, magnitude, p_value, regression}]}]}.
std::string history_to_html(const json& doc);

} // namespace accelbench::report
