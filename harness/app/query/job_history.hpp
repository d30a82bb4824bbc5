#pragma once
// The noise between jobs that each config of a comparison has shown before: the levels of its
// earlier jobs in the store (docs/statistics.md, "Between-job noise from history").
#include <map>
#include <string>

#include "harness/app/query/selector.hpp"
#include "harness/compare/between_runs.hpp"
#include "harness/store/store.hpp"

namespace accelbench::query {

// Jobs of one config used at most: a year of nightly jobs says no more about tonight's noise
// than the last month does, and the machine may have changed in between.
inline constexpr size_t k_history_jobs = 30;

// For each config (cfg.key() + " [" + ruleset + "]", as compare names its pairs) of the
// candidate: the spread of the levels of the earlier jobs on the same system, with the same
// ruleset and environment fingerprint, started before the candidate's first run and holding none
// of either side's runs. A job's level is the mean log median of its VALID runs; runs without a
// job id are left out; the last k_history_jobs jobs are used, only those after the last change
// point (E-divisive, when there are 10 or more), and, among 10 or more, levels farther than 3.5
// robust standard deviations (1.4826 MAD) from their median are left out as outliers.
std::map<std::string, compare::job_history> earlier_jobs(store::store& db, const selection& base,
                                                         const selection& cand);

// The same from rows already read, for a config's series of (job id, log median) in start order.
compare::job_history job_spread(const std::vector<std::vector<double>>& job_log_medians);

} // namespace accelbench::query
