#pragma once
// The collective workload's cuda backend: NCCL collectives on device buffers, one GPU per rank
// (the rank's index on its node; the communicator, its GPU choice and its fault-checked waits are
// harness/device/nccl_comm's). Host C++ only (NCCL and the CUDA runtime are host APIs): no nvcc.
#include <memory>
#include <string>

#include "workloads/collective/collective_kernel.hpp"
#include "workloads/collective/collective_spec.hpp"

namespace accelbench::collective {

// Why `s` cannot run on NCCL here (no GPU, alltoall in place); empty when it can.
std::string nccl_unavailable_reason(const shape& s);
std::unique_ptr<collective_kernel> make_nccl_collective(const shape& s);
std::string nccl_version(); // "2.27.3"

} // namespace accelbench::collective
