#pragma once
// Loading a plugin (include/accelbench/plugin.h): dlopen of a path the user named, the interface
// version read before anything else, then every field checked. What is wrong is an input_error of
// one line naming the plugin's path, the field and its value (exit 2): a plugin that loads is
// safe to describe and to call.
#include <string>

#include "accelbench/plugin.h"
#include "harness/core/model.hpp"

namespace accelbench::plugin {

struct loaded_plugin {
  std::string path;                          // absolute: never searched for (LD_LIBRARY_PATH)
  const accelbench_plugin_v1* api = nullptr; // valid while the process runs (never unloaded)
};

// Loads and checks the plugin at `path`. Throws input_error when the file is missing, is no shared
// library, lacks the entry symbol, has another interface version, or declares a bad field or axis.
loaded_plugin load_plugin(const std::string& path);

// The plugin's declaration checked against the interface (everything but the version): its
// name, device, functions and axes; throws input_error naming `path`, the field and the value.
void check_declaration(const accelbench_plugin_v1& api, const std::string& path);

// The workload spec the plugin declares (family "kernel", ruleset kernel-v1, backend = device).
workload_spec spec_of(const loaded_plugin& p);

} // namespace accelbench::plugin
