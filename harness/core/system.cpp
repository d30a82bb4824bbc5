#include "harness/core/system.hpp"

#include <type_traits>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

json to_json(const system_record& s) {
  return {{"name", s.name},
          {"accelerator_model", s.accelerator_model},
          {"accelerators_per_node", s.accelerators_per_node},
          {"nodes", s.nodes},
          {"source", s.source},
          {"description", s.description}};
}

namespace {
// A field of a system read from an outside document: absent gives the default, another type is
// an input error naming the field.
template <class T> T system_field(const json& j, const char* key, T fallback) {
  if (!j.contains(key))
    return fallback;
  const json& v = j[key];
  bool fits = false;
  if constexpr (std::is_same_v<T, std::string>)
    fits = v.is_string();
  else if constexpr (std::is_same_v<T, int64_t>)
    fits = v.is_number_integer();
  else
    fits = v.is_object();
  if (!fits)
    throw input_error(fmt::format(
        "system '{}': field '{}' has the wrong type ({})",
        printable(j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : ""),
        key, v.type_name()));
  return v.get<T>();
}
} // namespace

system_record system_from_json(const json& j) {
  if (!j.is_object())
    throw input_error(fmt::format("a system must be a JSON object, got {}", j.type_name()));
  system_record rec;
  rec.name = system_field(j, "name", std::string());
  rec.accelerator_model = system_field(j, "accelerator_model", std::string());
  rec.accelerators_per_node = system_field(j, "accelerators_per_node", int64_t{1});
  rec.nodes = system_field(j, "nodes", int64_t{1});
  rec.source = system_field(j, "source", std::string("measured"));
  rec.description = system_field(j, "description", json::object());
  return rec;
}

} // namespace accelbench
