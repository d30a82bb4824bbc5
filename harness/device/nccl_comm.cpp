#include "harness/device/nccl_comm.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/dist/dist.hpp"
#include "harness/dist/dist_mpi.hpp"

namespace accelbench::device::nccl {

namespace {

struct node_place {
  int rank = 0, size = 1;
};

// This rank's index among the ranks of its node, and how many its node has (collective).
node_place place_on_node() {
  dist::require_mpi();
  MPI_Comm node;
  MPI_Comm_split_type(dist::world_comm(), MPI_COMM_TYPE_SHARED, dist::rank(), MPI_INFO_NULL, &node);
  node_place p;
  MPI_Comm_rank(node, &p.rank);
  MPI_Comm_size(node, &p.size);
  MPI_Comm_free(&node);
  return p;
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, size_t(len));
}

// Why this rank has no GPU of its own (empty when it has): takes GPU `local.rank`.
std::string take_gpu(const node_place& local, int& device) {
  int gpus = 0;
  if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess)
    return fmt::format("no usable CUDA device ({})", cudaGetErrorString(e));
  if (auto why = gpu_shortage(local.size, gpus); !why.empty())
    return why;
  device = local.rank;
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    return fmt::format("cudaSetDevice({}): {}", device, cudaGetErrorString(e));
  return {};
}

} // namespace

std::string gpu_shortage(int ranks_on_node, int gpus) {
  if (gpus >= ranks_on_node)
    return {};
  return fmt::format("{} ranks on this node but {} GPU{}: NCCL needs one GPU per rank (start at "
                     "most {} rank{} per node)",
                     ranks_on_node, gpus, gpus == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s");
}

communicator::communicator() {
  const node_place local = place_on_node();
  std::string why = take_gpu(local, m_device);
  if (!why.empty())
    why = fmt::format("rank {} of {} (host {}): {}", dist::rank(), dist::size(), host_name(), why);
  // Every rank learns the first problem before any rank enters ncclCommInitRank, which would
  // wait for the missing rank forever.
  if (auto first = dist::first_nonempty(why); !first.empty())
    throw backend_error(first);
  ncclUniqueId id{};
  std::string id_error;
  if (dist::is_root())
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      id_error = fmt::format("rank 0: ncclGetUniqueId: {}", ncclGetErrorString(r));
  if (auto first = dist::first_nonempty(id_error); !first.empty())
    throw backend_error(first);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, dist::world_comm());
  ncclComm_t comm = nullptr;
  const ncclResult_t r = ncclCommInitRank(&comm, dist::size(), id, dist::rank());
  const std::string init_error =
      r == ncclSuccess ? std::string()
                       : fmt::format("rank {} of {}: ncclCommInitRank: {}", dist::rank(),
                                     dist::size(), ncclGetErrorString(r));
  if (auto first = dist::first_nonempty(init_error); !first.empty()) {
    if (comm)
      ncclCommAbort(comm);
    throw backend_error(first);
  }
  m_comm = comm;
}

communicator::~communicator() {
  if (m_comm)
    ncclCommDestroy(static_cast<ncclComm_t>(m_comm));
}

void communicator::fail(const std::string& why) {
  if (m_comm)
    ncclCommAbort(static_cast<ncclComm_t>(m_comm)); // frees this rank from NCCL's kernels
  m_comm = nullptr;
  std::fprintf(stderr, "accelbench: rank %d of %d: %s; ending the job (exit 1)\n", dist::rank(),
               dist::size(), why.c_str());
  std::fflush(stderr);
  dist::abort_job(1);
}

void communicator::check(int nccl_result, const char* what) {
  const auto r = static_cast<ncclResult_t>(nccl_result);
  if (r != ncclSuccess)
    fail(fmt::format("NCCL {}: {}", what, ncclGetErrorString(r)));
}

void communicator::wait(void* event, const char* what, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto ev = static_cast<cudaEvent_t>(event);
  for (;;) {
    const cudaError_t e = cudaEventQuery(ev);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      fail(fmt::format("waiting for {}: CUDA error {}", what, cudaGetErrorString(e)));
    ncclResult_t async = ncclSuccess;
    const ncclResult_t q = ncclCommGetAsyncError(static_cast<ncclComm_t>(m_comm), &async);
    if (q != ncclSuccess || async != ncclSuccess)
      fail(fmt::format("NCCL error while waiting for {}: {}", what,
                       ncclGetErrorString(q != ncclSuccess ? q : async)));
    if (std::chrono::duration<double>(clock::now() - t0).count() > timeout_s)
      fail(fmt::format("{} did not complete within {:.0f} s (a peer rank stopped or hangs)", what,
                       timeout_s));
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::string version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess)
    return "unknown";
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

} // namespace accelbench::device::nccl
