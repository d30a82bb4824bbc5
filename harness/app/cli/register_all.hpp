#pragma once
#include <string>
#include <vector>

#include "harness/core/workload.hpp"

namespace accelbench::cli {

// The one place where workloads are registered (explicit registration, docs/architecture.md).
void register_all(registry& reg);

struct backend_status {
  std::string name;
  bool available = false;
  std::string detail; // what was found, or why it is unavailable
  json devices = json::array();
};
std::vector<backend_status> backend_statuses();

} // namespace accelbench::cli
