#include "harness/core/workload.hpp"

#include <algorithm>
#include <set>

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

std::vector<backend_status> registry::backend_statuses() const {
  std::vector<backend_status> out;
  std::set<std::string> seen;
  // Built backends first: a backend one workload built answers even where another workload's
  // folder of that name was not built (collective's cuda without NCCL). Asked once per name: the
  // cuda status starts the driver.
  for (const auto& w : m_workloads)
    for (const backend* b : w->backends())
      if (seen.insert(b->name()).second)
        out.push_back(b->status());
  for (const auto& w : m_workloads)
    for (const unbuilt_backend& u : w->backends_not_built())
      if (seen.insert(u.name).second)
        out.push_back(u.status());
  std::sort(out.begin(), out.end(),
            [](const backend_status& x, const backend_status& y) { return x.name < y.name; });
  return out;
}

} // namespace accelbench
