#pragma once
// Data-parallel train.llama on CUDA: the model of llama_cuda.hpp on this rank's GPU
// (one GPU per node-local rank, harness/device/nccl_comm) inside the shared dp_trainable
// (data_parallel.hpp), its gradient buckets summed by ncclAllReduce in place on device buffers:
//   - on a stream of NCCL's own; a bucket's all-reduce waits (cudaStreamWaitEvent) for an event
//     recorded on the model's stream when backward has finished the bucket's gradients
//     (overlap=1, the hook llama_cuda::set_grad_ready, as the CPU model's), or after backward
//     (overlap=0);
//   - before clipping, the host waits for the last all-reduce's event polling NCCL's
//     asynchronous error (a dead or hung peer ends the job with exit 1, this rank named), then
//     the model's stream scales every gradient by 1 / world size.
// Built when NCCL is (ACCELBENCH_HAVE_NCCL). Plain C++ header: no CUDA or NCCL type.
#include <memory>

#include "workloads/training/data_parallel.hpp"

namespace accelbench::training::cuda {

// Collective over the world: takes this rank's GPU, creates the NCCL communicator, builds the
// model there. Throws backend_error on every rank, naming the first rank that could not (fewer
// GPUs than ranks on its node, a failed allocation, NCCL's error).
std::unique_ptr<dp_trainable> make_data_parallel(const model_config& cfg, const llama_options& opt,
                                                 const dp_options& dp);

} // namespace accelbench::training::cuda
