#include "harness/core/score.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace accelbench {

namespace {

// Indices of the converged runs, sorted by time (ties in input order).
std::vector<size_t> converged_by_time(const std::vector<double>& times,
                                      const std::vector<bool>& converged) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < times.size(); ++i)
    if (i < converged.size() && converged[i])
      idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return times[a] < times[b]; });
  return idx;
}

} // namespace

olympic_result olympic_mean(const std::vector<double>& times, const std::vector<bool>& converged,
                            int max_dropped) {
  olympic_result o;
  const size_t n = times.size();
  if (n == 0) {
    o.reason = "no runs";
    return o;
  }
  const std::vector<size_t> idx = converged_by_time(times, converged);
  const int c = static_cast<int>(idx.size());
  const int d = static_cast<int>(n) - c;
  if (d > max_dropped) {
    o.reason = fmt::format(
        "{} of {} runs did not reach the target (did not converge or failed; at most {} may)", d, n,
        max_dropped);
    return o;
  }
  const int lo = max_dropped, hi = c - (max_dropped - d);
  if (hi <= lo) {
    o.reason = fmt::format(
        "{} runs leave nothing to average after dropping {} at each end (needs at least {})", n,
        max_dropped, 2 * max_dropped + 1);
    return o;
  }
  double sum = 0;
  for (int i = lo; i < hi; ++i) {
    sum += times[idx[size_t(i)]];
    o.used.push_back(idx[size_t(i)]);
  }
  o.mean = sum / double(hi - lo);
  o.valid = true;
  return o;
}

double olympic_mean_of(std::vector<double> times, int max_dropped) {
  return olympic_mean(times, std::vector<bool>(times.size(), true), max_dropped).mean;
}

json ttt_score::to_json() const {
  return {{"benchmark", benchmark},
          {"system", system},
          {"ruleset", ruleset},
          {"score_min", score_min},
          {"olympic_mean_min", olympic_mean_min},
          {"scaling_factor", scaling_factor},
          {"valid", valid},
          {"reasons", reasons},
          {"runs_used", runs_used},
          {"runs_dropped", runs_dropped},
          {"required_runs", required_runs},
          {"runs", runs}};
}

} // namespace accelbench
