#include "workloads/plugin/plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "harness/core/dtype.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::plugin {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw input_error(printable(fmt::format("plugin {}: {}", path, what)));
}

std::string text_or(const char* s, const char* none) { return s ? std::string(s) : none; }

// dlopen of the absolute path: a name without a slash would be searched for, and plugins come only
// from the path the user named.
void* open_library(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    refuse(path, std::filesystem::exists(path, ec) ? "is not a regular file" : "no such file");
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    refuse(path, fmt::format("cannot be loaded: {}", text_or(dlerror(), "unknown dlopen error")));
  return handle;
}

// The entry symbol's head: the version and the size, before any other field is read.
const accelbench_plugin_head& head_of(void* handle, const std::string& path) {
  dlerror();
  void* sym = dlsym(handle, ACCELBENCH_PLUGIN_ENTRY);
  if (!sym)
    refuse(path, fmt::format("missing symbol {} (export it with ACCELBENCH_PLUGIN_EXPORT)",
                             ACCELBENCH_PLUGIN_ENTRY));
  const auto entry = reinterpret_cast<accelbench_plugin_entry_fn>(sym);
  const accelbench_plugin_head* head = entry();
  if (!head)
    refuse(path, fmt::format("{}() returned NULL", ACCELBENCH_PLUGIN_ENTRY));
  if (head->api_version != ACCELBENCH_PLUGIN_API_VERSION)
    refuse(path, fmt::format("interface version {}, this accelbench reads version {} (rebuild it "
                             "against this accelbench's accelbench/plugin.h)",
                             head->api_version, ACCELBENCH_PLUGIN_API_VERSION));
  if (head->struct_size < sizeof(accelbench_plugin_v1))
    refuse(path, fmt::format("struct_size {} is smaller than accelbench_plugin_v1 ({})",
                             head->struct_size, sizeof(accelbench_plugin_v1)));
  return *head;
}

std::optional<axis_type> axis_type_of(const char* t) {
  for (auto a : {axis_type::integer, axis_type::number, axis_type::string, axis_type::boolean})
    if (t && to_string(a) == t)
      return a;
  return std::nullopt;
}

void check_axis(const accelbench_plugin_axis& a, size_t i, const std::string& path) {
  static const std::regex name_re("[A-Za-z_][A-Za-z0-9_]{0,63}");
  if (!a.name || !std::regex_match(a.name, name_re))
    refuse(path, fmt::format("axis {} has the bad name '{}' (letters, digits and _)", i,
                             text_or(a.name, "(null)")));
  if (!axis_type_of(a.type))
    refuse(path, fmt::format("axis {} has the bad type '{}' (integer, number, string, boolean)",
                             a.name, text_or(a.type, "(null)")));
}

void check_axes(const accelbench_plugin_v1& api, const std::string& path) {
  if (api.axis_count > 0 && !api.axes)
    refuse(path, fmt::format("axis_count {} but axes is NULL", api.axis_count));
  if (api.axis_count > 64)
    refuse(path, fmt::format("axis_count {} is more than 64", api.axis_count));
  std::set<std::string> seen;
  for (size_t i = 0; i < api.axis_count; ++i) {
    check_axis(api.axes[i], i, path);
    if (!seen.insert(api.axes[i].name).second)
      refuse(path, fmt::format("axis {} is declared twice", api.axes[i].name));
  }
}

void check_functions(const accelbench_plugin_v1& api, const std::string& path) {
  const std::pair<const char*, bool> required[] = {{"setup", api.setup != nullptr},
                                                   {"work", api.work != nullptr},
                                                   {"run", api.run != nullptr},
                                                   {"teardown", api.teardown != nullptr}};
  for (const auto& [name, present] : required)
    if (!present)
      refuse(path, fmt::format("missing function {} (NULL in accelbench_plugin_v1)", name));
}

} // namespace

void check_declaration(const accelbench_plugin_v1& api, const std::string& path) {
  static const std::regex name_re("[a-z0-9][a-z0-9_.-]{0,63}");
  if (!api.name || !std::regex_match(api.name, name_re))
    refuse(path, fmt::format("bad workload name '{}' (lower-case letters, digits, _ . -)",
                             text_or(api.name, "(null)")));
  const std::string device = text_or(api.device, "(null)");
  if (device != "cpu" && device != "cuda")
    refuse(path, fmt::format("bad device '{}' (cpu or cuda)", device));
  if (api.dtype && !dtype_from_name(api.dtype))
    refuse(path, fmt::format("unknown dtype '{}'", api.dtype));
  check_functions(api, path);
  check_axes(api, path);
}

loaded_plugin load_plugin(const std::string& path) {
  const std::string abs = std::filesystem::absolute(path).lexically_normal().string();
  void* handle = open_library(abs);
  // Never unloaded: a plugin's runtime (CUDA, OpenMP) may keep threads and handlers to the end.
  const accelbench_plugin_head& head = head_of(handle, path);
  const auto& api = reinterpret_cast<const accelbench_plugin_v1&>(head);
  check_declaration(api, path);
  return {abs, &api};
}

workload_spec spec_of(const loaded_plugin& p) {
  const accelbench_plugin_v1& api = *p.api;
  workload_spec s;
  s.name = api.name;
  s.family = "kernel";
  s.description = text_or(api.description, "") + " (plugin " + p.path + ")";
  s.backends = {api.device};
  s.default_ruleset = "kernel-v1";
  s.primary_metric = "tflops";
  for (size_t i = 0; i < api.axis_count; ++i) {
    const accelbench_plugin_axis& a = api.axes[i];
    axis ax;
    ax.name = a.name;
    ax.type = *axis_type_of(a.type);
    ax.default_value = text_or(a.default_value, "");
    ax.description = text_or(a.description, "");
    ax.min_int = a.min_int;
    s.axes.push_back(std::move(ax));
  }
  return s;
}

} // namespace accelbench::plugin
