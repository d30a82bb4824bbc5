#include "harness/app/query/report_side.hpp"

#ifdef ACCELBENCH_HAVE_MLPERF
#include "importers/mlperf/power.hpp"
#include "importers/mlperf/score.hpp"
#endif

namespace accelbench::query {

void score_mlperf_groups(report::side& s) {
#ifdef ACCELBENCH_HAVE_MLPERF
  for (const report::mlperf_group& g : report::mlperf_groups(s)) {
    ttt_score sc = mlperf::score(g.runs);
    sc.energy_j = mlperf::energy_score_j(g.runs, sc);
    s.mlperf_scores[g.key] = std::move(sc);
  }
#endif
}

report::side report_side(std::string label, std::vector<run> runs,
                         std::map<std::string, system_record> systems) {
  report::side s{std::move(label), std::move(runs), std::move(systems), {}};
  score_mlperf_groups(s);
  return s;
}

} // namespace accelbench::query
