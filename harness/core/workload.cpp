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

namespace {

// One row per backend name of the workloads, in name order. Built backends first: a backend one
// workload built answers even where another workload's folder of that name was not built
// (collective's cuda without NCCL). Asked once per name: the cuda status starts the driver.
template <class Row, class Built, class Unbuilt>
std::vector<Row> one_row_per_backend(const std::vector<std::unique_ptr<workload>>& workloads,
                                     Built built, Unbuilt unbuilt) {
  std::vector<Row> out;
  std::set<std::string> seen;
  for (const auto& w : workloads)
    for (const backend* b : w->backends())
      if (seen.insert(b->name()).second)
        out.push_back(built(*b));
  for (const auto& w : workloads)
    for (const unbuilt_backend& u : w->backends_not_built())
      if (seen.insert(u.name).second)
        out.push_back(unbuilt(u));
  std::sort(out.begin(), out.end(), [](const Row& x, const Row& y) { return x.name < y.name; });
  return out;
}

} // namespace

std::vector<backend_status> registry::backend_statuses() const {
  return one_row_per_backend<backend_status>(
      m_workloads, [](const backend& b) { return b.status(); },
      [](const unbuilt_backend& u) { return u.status(); });
}

std::vector<backend_build> registry::backend_builds() const {
  return one_row_per_backend<backend_build>(
      m_workloads, [](const backend& b) { return b.build(); },
      [](const unbuilt_backend& u) { return u.build(); });
}

} // namespace accelbench
