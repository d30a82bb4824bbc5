#pragma once
// The world communicator, for code that calls MPI itself (the collective workload). Only built
// with MPI (ACCELBENCH_HAVE_MPI); call dist::require_mpi() first.
#include <mpi.h>

namespace accelbench::dist {
MPI_Comm world_comm();
} // namespace accelbench::dist
