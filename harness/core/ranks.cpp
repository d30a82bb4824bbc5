#include "harness/core/ranks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

std::string first_difference(const json& root, const json& mine, int my_rank) {
  const json a = root.flatten(), b = mine.flatten();
  auto describe = [&](const std::string& path, const json* va, const json* vb) {
    return fmt::format("{}: rank 0 has {}, rank {} has {}", path, va ? dump_json(*va) : "nothing",
                       my_rank, vb ? dump_json(*vb) : "nothing");
  };
  // Keys in order: the first difference is the same whichever rank looks for it.
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto jt = b.find(it.key());
    if (jt == b.end())
      return describe(it.key(), &it.value(), nullptr);
    if (*jt != it.value())
      return describe(it.key(), &it.value(), &*jt);
  }
  for (auto jt = b.begin(); jt != b.end(); ++jt)
    if (!a.contains(jt.key()))
      return describe(jt.key(), nullptr, &jt.value());
  return {};
}

json summarize_rank_times(const std::vector<sample>& samples) {
  std::vector<std::vector<double>> per_rank; // per rank, its time in each sample
  std::vector<size_t> slowest_count;
  size_t counted = 0;
  for (const auto& s : samples) {
    if (!s.extra.contains("rank_s") || !s.extra["rank_s"].is_array() || s.extra["rank_s"].empty())
      continue;
    const json& t = s.extra["rank_s"];
    if (per_rank.empty()) {
      per_rank.resize(t.size());
      slowest_count.assign(t.size(), 0);
    }
    if (t.size() != per_rank.size())
      continue;
    size_t slowest = 0;
    for (size_t r = 0; r < t.size(); ++r) {
      const double v = t[r].is_number() ? t[r].get<double>() : 0.0;
      per_rank[r].push_back(v);
      if (v > per_rank[slowest].back())
        slowest = r;
    }
    ++slowest_count[slowest];
    ++counted;
  }
  if (counted == 0)
    return nullptr;
  json medians = json::array();
  double fastest = 0, slowest_median = 0;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const double m = stats::median(per_rank[r]);
    medians.push_back(m);
    fastest = r == 0 ? m : std::min(fastest, m);
    slowest_median = std::max(slowest_median, m);
  }
  const size_t slow = (size_t)(std::max_element(slowest_count.begin(), slowest_count.end()) -
                               slowest_count.begin());
  const double share = (double)slowest_count[slow] / (double)counted;
  const double spread_pct = fastest > 0 ? 100.0 * (slowest_median - fastest) / fastest : 0.0;
  const double slow_pct =
      fastest > 0 ? 100.0 * (medians[slow].get<double>() - fastest) / fastest : 0.0;
  const bool consistent = counted >= k_min_samples_for_slow_rank && share >= k_slow_rank_share &&
                          slow_pct >= k_slow_rank_min_pct;
  return {{"world_size", per_rank.size()},
          {"samples", counted},
          {"median_s", medians},
          {"spread_pct", spread_pct},
          {"slowest_rank", slow},
          {"slowest_share", share},
          {"consistently_slow_rank", consistent ? json(slow) : json(nullptr)}};
}

} // namespace accelbench
