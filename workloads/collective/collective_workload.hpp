#pragma once
#include <memory>

#include "harness/core/workload.hpp"
#include "workloads/collective/collective_spec.hpp"

namespace accelbench::collective {

std::unique_ptr<workload> make_collective_workload();
void register_collective(registry& reg);

// The shape of a config at the current world size.
shape shape_of(const config& cfg);

} // namespace accelbench::collective
