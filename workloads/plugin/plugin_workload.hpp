#pragma once
// A loaded plugin as a workload of the registry: its spec, its validate, and its kernel timed by
// the one kernel-run sequence of the built-in kernels (harness/measure/kernel_run.hpp).
#include <memory>
#include <string>
#include <vector>

#include "harness/core/workload.hpp"
#include "workloads/plugin/plugin_loader.hpp"

namespace accelbench::plugin {

std::unique_ptr<workload> make_plugin_workload(const loaded_plugin& p);

// Loads each of `paths` (load_plugin) and adds its workload to `reg`; a name that `reg` already
// has is refused (input_error naming the path and the name).
void register_plugins(registry& reg, const std::vector<std::string>& paths);

} // namespace accelbench::plugin
