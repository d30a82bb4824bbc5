#pragma once
// The process group a run spans. MPI is initialised only when the process was started
// by a launcher (mpirun/mpiexec, Slurm's srun, a PMI/PMIx launcher); otherwise, and in a build
// without MPI, the world is this one process and every call below is a no-op that returns the
// local value. Nothing here includes mpi.h: only dist.cpp and dist_mpi.hpp (for workloads that
// call MPI collectives themselves) do.
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "harness/core/error.hpp"
#include "harness/core/model.hpp"

namespace accelbench::dist {

// How this process was started, from the launcher's environment variables.
struct launch_info {
  std::string launcher; // "mpirun" | "srun" | "pmi" | "" (not launched)
  int env_size = 1;     // world size the launcher announced
  int env_rank = 0;
};
launch_info detect_launcher();

// True when this binary was built with MPI (ACCELBENCH_ENABLE_MPI and Open MPI found).
bool mpi_built();

// Joins the launcher's world when there is one (MPI_Init), else stays a world of one. A launch
// of more than one process with a build without MPI throws input_error: every process would run
// and store alone. Idempotent.
void init(int* argc, char*** argv);
// Ends MPI (MPI_Finalize) if init started it; every rank must reach it.
void finalize();
// Aborts every rank of the job with `code` (MPI_Abort), or exits this process without MPI.
[[noreturn]] void abort_job(int code);

int rank();
int size();
bool distributed(); // size() > 1
bool is_root();     // rank() == 0
bool mpi_active();  // MPI is initialised (launched, or joined by a workload as a singleton)

// Makes MPI available to a workload that needs it at world size 1 (a collective on one rank):
// initialises it as a singleton when no launcher did. Throws backend_error without MPI.
void require_mpi();

// Collectives over the world (the local value at world size 1).
void barrier();
// A barrier that sleeps while it waits (MPI_Ibarrier tested every millisecond): ranks that wait
// for rank 0's solo measurement leave the cores to it.
void idle_barrier();
double max_all(double v);
double sum_all(double v);
bool any(bool v);
std::vector<double> gather_all(double v);            // every rank's value, by rank
std::string broadcast(const std::string& from_root); // rank 0's text on every rank
int broadcast(int from_root);

// A non-blocking in-place sum of floats over the world (MPI_Iallreduce), so that a gradient
// bucket's all-reduce overlaps with the computation that follows (train.llama's data-parallel
// step). At world size 1 it is complete at once and touches nothing. Destroying an unfinished
// request waits for it (MPI needs the buffer until then).
class sum_request {
public:
  sum_request();
  sum_request(sum_request&&) noexcept;
  sum_request& operator=(sum_request&&) noexcept;
  ~sum_request();
  bool test(); // drives MPI's progress; true once complete
  void wait();

private:
  friend sum_request start_sum(float* data, size_t n);
  struct state;
  std::unique_ptr<state> m;
};
// n floats at `data` (n < 2^31), summed in place over every rank.
sum_request start_sum(float* data, size_t n);

// Text of the lowest rank whose `text` is not empty, on every rank (empty when all are empty):
// how one rank's error or disagreement is told to all.
std::string first_nonempty(const std::string& text);

// Runs make() on every rank and agrees on its outcome before anyone goes on: when it threw on
// some rank (out of memory, an error), every rank throws an error naming the lowest such rank,
// what it could not do and why. Used around the allocations that precede collectives (a
// replica's model and buffers), so a rank that cannot allocate is reported by every rank instead
// of leaving its peers waiting in a collective it never joins. At world size 1, make() as is.
template <class F> auto on_every_rank(const std::string& what, F&& make) -> decltype(make()) {
  if (!distributed())
    return make();
  decltype(make()) made{};
  std::string failure;
  try {
    made = make();
  } catch (const std::bad_alloc&) {
    failure = "out of memory";
  } catch (const error& e) {
    failure = e.what();
  }
  const std::string first = first_nonempty(
      failure.empty() ? ""
                      : "rank " + std::to_string(rank()) + " of " + std::to_string(size()) +
                            " could not " + what + ": " + failure);
  if (!first.empty())
    throw backend_error(first);
  return made;
}

// The topology of the job: world_size, ranks_per_node, nodes, hosts (name and ranks), launcher,
// mpi library and version. Null at world size 1 without a launcher. Collective.
json topology();

// Installs handlers for SIGTERM/SIGHUP (sent by mpirun/srun when a peer rank died) that print
// one line and exit 1 on this rank: the job ends with exit 1 on every surviving rank.
void exit_1_on_launcher_termination();

} // namespace accelbench::dist
