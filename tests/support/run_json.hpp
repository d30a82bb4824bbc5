#pragma once
// Reading a run as the CLI prints it (`--json`): one home for what the CLI tests look up in it.
#include <string>

#include <nlohmann/json.hpp>

namespace test_cli {

// The metric called `name` of a run's JSON, or null when it has none.
inline const nlohmann::json* metric_of(const nlohmann::json& run, const std::string& name) {
  for (const auto& m : run["metrics"])
    if (m["name"] == name)
      return &m;
  return nullptr;
}

} // namespace test_cli
