#pragma once
// Reading train.llama's ruleset section ("training"), for the settings (train_settings.cpp) and
// the workload (train_workload.cpp): one home for both.
#include <nlohmann/json.hpp>

#include "harness/core/ruleset.hpp"

namespace accelbench::training {

// The ruleset's "training" object; an empty object without rules or section.
inline const nlohmann::json& section_of(const ruleset* rules) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!rules)
    return empty;
  const auto& s = rules->section("training");
  return s.is_object() ? s : empty;
}

// j[key] when j is an object that has it, else fallback.
template <class T> T get_or(const nlohmann::json& j, const char* key, T fallback) {
  return j.is_object() && j.contains(key) ? j.at(key).get<T>() : fallback;
}

} // namespace accelbench::training
