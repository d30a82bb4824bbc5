#include "workloads/training/cuda/data_parallel_cuda.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/device/nccl_comm.hpp"
#include "harness/dist/dist.hpp"
#include "workloads/training/cuda/llama_cuda.hpp"
#include "workloads/training/cuda/llama_kernels.hpp"

namespace accelbench::training::cuda {

namespace {

// ncclAllReduce (sum, in place) of gradient buckets on a stream of its own, ordered after the
// model's stream by events (see data_parallel_cuda.hpp). A failed CUDA or NCCL call ends the job
// (communicator::fail): the other ranks would otherwise wait for this one's all-reduce.
class nccl_bucket_sum final : public bucket_sum {
public:
  nccl_bucket_sum(std::shared_ptr<device::nccl::communicator> comm, float* grads, size_t n,
                  void* model_stream)
      : m_comm(std::move(comm)), m_grads(grads), m_n(n),
        m_model(static_cast<cudaStream_t>(model_stream)) {
    ok(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ok(cudaEventCreateWithFlags(&m_ready, cudaEventDisableTiming), "cudaEventCreate");
    ok(cudaEventCreateWithFlags(&m_done, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~nccl_bucket_sum() override {
    if (m_started) { // the model's buffers outlive this only until the sums are done
      cudaEventRecord(m_done, m_stream);
      m_comm->wait(m_done, "the gradient all-reduce");
    }
    cudaEventDestroy(m_ready);
    cudaEventDestroy(m_done);
    cudaStreamDestroy(m_stream);
  }
  nccl_bucket_sum(const nccl_bucket_sum&) = delete;
  nccl_bucket_sum& operator=(const nccl_bucket_sum&) = delete;

  // The event is recorded anew each time: cudaStreamWaitEvent waits for its latest record.
  void start(size_t begin, size_t end) override {
    ok(cudaEventRecord(m_ready, m_model), "cudaEventRecord");
    ok(cudaStreamWaitEvent(m_stream, m_ready, 0), "cudaStreamWaitEvent");
    float* g = m_grads + begin;
    m_comm->check(ncclAllReduce(g, g, end - begin, ncclFloat32, ncclSum,
                                static_cast<ncclComm_t>(m_comm->handle()), m_stream),
                  "ncclAllReduce");
    m_started = true;
  }

  void finish(float scale) override {
    if (m_started) {
      ok(cudaEventRecord(m_done, m_stream), "cudaEventRecord");
      m_comm->wait(m_done, "the gradient all-reduce");
      ok(cudaStreamWaitEvent(m_model, m_done, 0), "cudaStreamWaitEvent");
      m_started = false;
    }
    kernels::scale(m_grads, m_grads, scale, int64_t(m_n), m_model);
  }

  std::string engine() const override {
    // Both recipes keep fp32 gradients (bf16-mixed-v1 accumulates its bf16 GEMMs' weight
    // gradients into them): the all-reduce sums fp32, as PyTorch DDP does with fp32 parameters.
    return fmt::format("NCCL {} ncclAllReduce (fp32 gradients) on device buffers, GPU {}",
                       device::nccl::version(), m_comm->device());
  }

private:
  void ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      m_comm->fail(fmt::format("{}: {}", what, cudaGetErrorString(e)));
  }

  std::shared_ptr<device::nccl::communicator> m_comm;
  float* m_grads;
  size_t m_n;
  cudaStream_t m_model;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_ready = nullptr, m_done = nullptr;
  bool m_started = false;
};

} // namespace

std::unique_ptr<dp_trainable> make_data_parallel(const model_config& cfg, const llama_options& opt,
                                                 const dp_options& dp) {
  auto comm = std::make_shared<device::nccl::communicator>(); // selects this rank's GPU
  // Not collective from here on: the caller agrees on the outcome across ranks
  // (dist::on_every_rank) before any all-reduce waits for this rank.
  std::unique_ptr<llama_cuda> model;
  try {
    model = std::make_unique<llama_cuda>(cfg, opt);
  } catch (const backend_error& e) {
    throw backend_error(fmt::format("on GPU {}: {}", comm->device(), e.what()));
  }
  auto sum = std::make_unique<nccl_bucket_sum>(comm, model->device_grads(), model->num_params(),
                                               model->stream());
  return std::make_unique<dp_trainable>(std::move(model), std::move(sum), dp);
}

} // namespace accelbench::training::cuda
