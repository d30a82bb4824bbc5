#include "harness/core/workload.hpp"

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench {

void registry::add(std::unique_ptr<workload> w) {
  if (find(w->spec().name))
    throw error(fmt::format("workload {} registered twice", w->spec().name));
  m_workloads.push_back(std::move(w));
}

const workload* registry::find(const std::string& name) const {
  for (const auto& w : m_workloads)
    if (w->spec().name == name)
      return w.get();
  return nullptr;
}

workload& registry::get(const std::string& name) const {
  for (const auto& w : m_workloads)
    if (w->spec().name == name)
      return *w;
  std::string list;
  for (const auto& w : m_workloads)
    list += (list.empty() ? "" : ", ") + w->spec().name;
  throw input_error(fmt::format("unknown workload '{}' (known: {})", name, list));
}

std::vector<const workload*> registry::all() const {
  std::vector<const workload*> out;
  for (const auto& w : m_workloads)
    out.push_back(w.get());
  return out;
}

} // namespace accelbench
