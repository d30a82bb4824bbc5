#include "harness/app/query/ab_sides.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace accelbench::query {

namespace ab_sides_detail {

const json* ab_record(const run& r) {
  auto it = r.extra.find("ab");
  return it != r.extra.end() && it->is_object() ? &*it : nullptr;
}

// The A/B id every run of both sides carries, or "" when they do not all carry one and the same.
std::string shared_ab_id(const selection& b, const selection& c) {
  std::string id;
  for (const auto* side : {&b, &c})
    for (const run& r : side->runs) {
      const json* ab = ab_record(r);
      if (!ab || !ab->contains("id") || !(*ab)["id"].is_string())
        return "";
      const std::string mine = (*ab)["id"].get<std::string>();
      if (mine.empty() || (!id.empty() && mine != id))
        return "";
      id = mine;
    }
  return id;
}

std::optional<int64_t> slot_of(const run& r) {
  const json* ab = ab_record(r);
  if (!ab || !ab->contains("slot") || !(*ab)["slot"].is_number_integer())
    return std::nullopt;
  return (*ab)["slot"].get<int64_t>();
}

// Each slot's config on one side; nothing when a run has no slot or a slot has two configs.
std::optional<std::map<int64_t, config>> slot_configs(const std::vector<run>& runs) {
  std::map<int64_t, config> out;
  for (const run& r : runs) {
    const auto slot = slot_of(r);
    if (!slot)
      return std::nullopt;
    auto [at, fresh] = out.emplace(*slot, r.cfg);
    if (!fresh && at->second.key() != r.cfg.key())
      return std::nullopt;
  }
  return out;
}

// The baseline's config with every value the candidate's differs in written "B->C".
config merged(const config& b, const config& c) {
  static const std::string unset = "(unset)";
  config m = b;
  for (const auto& [k, v] : b.values) {
    auto it = c.values.find(k);
    const std::string& cv = it == c.values.end() ? unset : it->second;
    if (cv != v)
      m.values[k] = fmt::format("{}->{}", v, cv);
  }
  for (const auto& [k, v] : c.values)
    if (!b.values.count(k))
      m.values[k] = fmt::format("{}->{}", unset, v);
  return m;
}

void relabel(std::vector<run>& runs, int64_t slot, const config& cfg) {
  for (run& r : runs)
    if (slot_of(r) == slot)
      r.cfg = cfg;
}

} // namespace ab_sides_detail

size_t align_ab_sides(selection& baseline, selection& candidate) {
  using namespace ab_sides_detail;
  if (baseline.runs.empty() || candidate.runs.empty() || shared_ab_id(baseline, candidate).empty())
    return 0;
  const auto b = slot_configs(baseline.runs), c = slot_configs(candidate.runs);
  if (!b || !c)
    return 0;
  size_t relabelled = 0;
  for (const auto& [slot, bcfg] : *b) {
    auto it = c->find(slot);
    if (it == c->end() || bcfg.key() == it->second.key() || bcfg.workload != it->second.workload ||
        bcfg.backend != it->second.backend)
      continue;
    const config m = merged(bcfg, it->second);
    relabel(baseline.runs, slot, m);
    relabel(candidate.runs, slot, m);
    ++relabelled;
  }
  return relabelled;
}

} // namespace accelbench::query
