// What the runs' rulesets fix for a comparison (compare.hpp settings_from_rulesets).
#include <set>

#include <fmt/format.h>

#include "harness/compare/compare.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench::compare {

ruleset_settings settings_from_rulesets(const std::vector<const std::vector<run>*>& sides) {
  // The ruleset a run names, by id only: a stored run's ruleset (from a file or the network) is
  // never read as a path. One that cannot be loaded is an error, not the defaults: a verdict's
  // threshold and noise floor must be ones someone wrote down.
  auto rules_of = [](const run& r) {
    const std::string& id = r.ruleset;
    std::string why = "it is not a ruleset id";
    if (!id.empty() && id.find('/') == std::string::npos && !id.ends_with(".json"))
      try {
        return load_ruleset(id);
      } catch (const error& e) {
        why = e.what();
      }
    throw input_error(fmt::format("run {} names ruleset '{}', which this build does not have "
                                  "(comparisons need its comparison settings; {})",
                                  r.id > 0 ? std::to_string(r.id) : r.uuid, id, why));
  };
  ruleset_settings out;
  std::set<std::string> seen;
  for (const auto* side : sides)
    for (const auto& r : *side) {
      // A run that was not measured (skipped, or failed; a skipped config's ruleset is "none")
      // brings no samples to judge: nothing of its rules is needed.
      if (r.status != run_status::ok || !seen.insert(r.ruleset).second)
        continue;
      const ruleset rules = rules_of(r);
      out.threshold_by_workload.emplace(r.cfg.workload, rules.min_effect_pct());
      out.floor_by_ruleset[r.ruleset] = rules.between_run_noise_pct();
    }
  return out;
}

} // namespace accelbench::compare
