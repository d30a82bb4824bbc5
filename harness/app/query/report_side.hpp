#pragma once
// A side of a report as a front end (the CLI, the server) hands it over: its runs, the systems they
// name, and the MLPerf scores of its MLPerf groups, computed here by importers/mlperf (the report
// is a pure reader of the result model and scores nothing itself).
#include <map>
#include <string>
#include <vector>

#include "reporters/report/report.hpp"

namespace accelbench::query {

// Scores every MLPerf group of the side into side.mlperf_scores (with the energy of its power
// logs). A build without the MLPerf module leaves them empty: the report says so per group.
void score_mlperf_groups(report::side& s);

report::side report_side(std::string label, std::vector<run> runs,
                         std::map<std::string, system_record> systems);

} // namespace accelbench::query
