#pragma once
// The `gemm` workload: its spec (gemm_spec.hpp) and its backends, cpu/ (gemm_cpu.hpp) and cuda/.
#include <memory>

#include "harness/core/workload.hpp"
#include "workloads/gemm/cpu/gemm_cpu.hpp"
#include "workloads/gemm/gemm_spec.hpp"

namespace accelbench::gemm {

std::unique_ptr<workload> make_gemm_workload(output_hook hook = {});
void register_gemm(registry& reg);

} // namespace accelbench::gemm
