#pragma once
// NCCL over the ranks of harness/dist: the one home of what the collective workload's
// cuda backend and data-parallel train.llama on CUDA share. One GPU per node-local rank (rank i
// of a node takes GPU i; a node with fewer GPUs than ranks is refused, as NCCL refuses two ranks
// on one GPU); rank 0's ncclUniqueId is broadcast over MPI; waits poll ncclCommGetAsyncError, so a
// peer that died or hung ends the job (exit 1, this rank named) instead of hanging it.
// Built when CUDA, NCCL and MPI are (accelbench::nccl). No CUDA or NCCL type appears here.
#include <string>

namespace accelbench::device::nccl {

// Why `ranks_on_node` ranks cannot each have a GPU of their own among the `gpus` of their node;
// empty when they can.
std::string gpu_shortage(int ranks_on_node, int gpus);

// PyTorch's NCCL watchdog default (ProcessGroupNCCL's timeout, 10 minutes).
inline constexpr double k_default_timeout_s = 600;

class communicator {
public:
  // Collective over the world: takes this rank's GPU (cudaSetDevice), then, when every rank has
  // one, creates the communicator. Throws backend_error on every rank, naming the rank and node
  // that could not (fewer GPUs than ranks on its node, no CUDA device, NCCL's error).
  communicator();
  ~communicator();
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  void* handle() const { return m_comm; } // the ncclComm_t
  int device() const { return m_device; }

  // A failed NCCL call (its ncclResult_t): aborts the communicator, prints one line naming this
  // rank and `what`, and ends the job with exit 1 on every rank.
  void check(int nccl_result, const char* what);
  // Waits until `event` (a cudaEvent_t recorded after NCCL work) has completed, polling the
  // communicator's asynchronous error every 100 µs; an error, or no completion within
  // `timeout_s`, ends the job as check() does.
  void wait(void* event, const char* what, double timeout_s = k_default_timeout_s);
  [[noreturn]] void fail(const std::string& why);

private:
  void* m_comm = nullptr;
  int m_device = -1;
};

std::string version(); // "2.27.3"

} // namespace accelbench::device::nccl
