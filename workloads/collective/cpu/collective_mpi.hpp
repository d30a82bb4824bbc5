#pragma once
// The collective workload's cpu backend: MPI collectives on host buffers over the ranks of the
// run (MPI_COMM_WORLD; a world of one when not launched by mpirun/srun).
#include <memory>
#include <string>

#include "workloads/collective/collective_kernel.hpp"
#include "workloads/collective/collective_spec.hpp"

namespace accelbench::collective {

// Why `s` cannot run on MPI here; empty when it can.
std::string mpi_unavailable_reason(const shape& s);
// Allocates and fills the buffers of `s` on this rank. Needs MPI (dist::require_mpi()).
std::unique_ptr<collective_kernel> make_mpi_collective(const shape& s);
// "Open MPI v4.1.4" (empty in a build without MPI).
std::string mpi_library_version();

} // namespace accelbench::collective
