#pragma once
#include <functional>
#include <memory>

#include "harness/core/workload.hpp"
#include "workloads/gemm/cpu/gemm_cpu.hpp"

namespace accelbench::gemm {

// Called on the output after measurement and before the correctness check. Tests use it to
// corrupt the result and prove that a wrong kernel is reported INVALID.
using output_hook = std::function<void(const gemm_shape&, gemm_buffers&)>;

std::unique_ptr<workload> make_gemm_workload(output_hook hook = {});
void register_gemm(registry& reg);

gemm_shape shape_of(const config& cfg);

} // namespace accelbench::gemm
