#include "workloads/collective/cuda/collective_nccl.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "harness/device/nccl_comm.hpp"
#include "harness/dist/dist.hpp"

namespace accelbench::collective {

namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw backend_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

ncclDataType_t nccl_type(dtype type) {
  switch (type) {
  case dtype::fp32:
    return ncclFloat32;
  case dtype::fp64:
    return ncclFloat64;
  case dtype::bf16:
    return ncclBfloat16;
  case dtype::fp16:
    return ncclFloat16;
  case dtype::int8:
    return ncclInt8;
  case dtype::int32:
    return ncclInt32;
  default:
    return ncclInt64; // int64 (parse_collective_dtype admits no other)
  }
}

class nccl_collective final : public collective_kernel {
public:
  explicit nccl_collective(const shape& s)
      : m_s(s), m_rank(dist::rank()), m_type(nccl_type(s.type)) {
    // One GPU per node-local rank, the communicator over the world (harness/device/nccl_comm).
    m_device = m_nccl.device();
    m_comm = static_cast<ncclComm_t>(m_nccl.handle());
    cuda_check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_check(cudaEventCreate(&m_start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&m_stop), "cudaEventCreate");
    m_send_bytes = s.send_count() * s.elem;
    m_recv_bytes = s.recv_count() * s.elem;
    const size_t buf_bytes = s.inplace ? std::max(m_send_bytes, m_recv_bytes) : m_recv_bytes;
    cuda_check(cudaMalloc(&m_buf, std::max<size_t>(buf_bytes, 1)), "cudaMalloc");
    if (!s.inplace)
      cuda_check(cudaMalloc(&m_send, std::max<size_t>(m_send_bytes, 1)), "cudaMalloc");
    reset();
  }

  ~nccl_collective() override {
    if (m_send)
      cudaFree(m_send);
    if (m_buf)
      cudaFree(m_buf);
    if (m_start)
      cudaEventDestroy(m_start);
    if (m_stop)
      cudaEventDestroy(m_stop);
    if (m_stream)
      cudaStreamDestroy(m_stream);
  }

  // Waits poll NCCL's asynchronous error: a peer that died ends the job instead of hanging it.
  void run() override {
    enqueue();
    cuda_check(cudaEventRecord(m_stop, m_stream), "cudaEventRecord");
    m_nccl.wait(m_stop, "the collective");
  }

  bool manual_timing() const override { return true; }

  // `iterations` collectives back to back between one pair of events on the rank's stream.
  double run_timed(int64_t iterations) override {
    cuda_check(cudaEventRecord(m_start, m_stream), "cudaEventRecord");
    for (int64_t i = 0; i < iterations; ++i)
      enqueue();
    cuda_check(cudaEventRecord(m_stop, m_stream), "cudaEventRecord");
    m_nccl.wait(m_stop, "the timed collectives");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, m_start, m_stop), "cudaEventElapsedTime");
    return ms / 1e3;
  }

  void flush_cache() override {} // a collective's buffers are far larger than L2 where it matters

  const void* output() override {
    m_host_out.resize(m_recv_bytes);
    cuda_check(cudaMemcpy(m_host_out.data(), output_ptr(), m_recv_bytes, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    return m_host_out.data();
  }

  void reset() override {
    std::vector<unsigned char> in(m_send_bytes);
    fill_input(m_s, m_rank, in.data());
    const size_t buf_bytes = m_s.inplace ? std::max(m_send_bytes, m_recv_bytes) : m_recv_bytes;
    cuda_check(cudaMemset(m_buf, 0, buf_bytes), "cudaMemset");
    cuda_check(cudaMemcpy(input_ptr(), in.data(), m_send_bytes, cudaMemcpyHostToDevice),
               "cudaMemcpy");
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  std::string implementation() const override {
    static const char* names[] = {"ncclAllReduce",     "ncclAllGather",
                                  "ncclReduceScatter", "ncclSend/ncclRecv (all-to-all)",
                                  "ncclBroadcast",     "ncclReduce"};
    return fmt::format("{} ({}NCCL {}, GPU {})", names[(int)m_s.kind],
                       m_s.inplace ? "in place, " : "", device::nccl::version(), m_device);
  }

private:
  unsigned char* bytes(void* p) const { return static_cast<unsigned char*>(p); }
  size_t block_bytes() const { return m_s.count * m_s.elem; }
  // In place as nccl-tests: all-gather's input is the rank's block of the output; reduce-scatter's
  // output is the rank's block of the input.
  void* input_ptr() const {
    if (!m_s.inplace)
      return m_send;
    if (m_s.kind == op::allgather)
      return bytes(m_buf) + (size_t)m_rank * block_bytes();
    return m_buf;
  }
  void* output_ptr() const {
    if (m_s.inplace && m_s.kind == op::reduce_scatter)
      return bytes(m_buf) + (size_t)m_rank * block_bytes();
    return m_buf;
  }

  void enqueue() {
    const size_t n = m_s.count;
    void* in = input_ptr();
    void* out = output_ptr();
    switch (m_s.kind) {
    case op::allreduce:
      m_nccl.check(ncclAllReduce(in, out, n, m_type, ncclSum, m_comm, m_stream), "ncclAllReduce");
      break;
    case op::allgather:
      m_nccl.check(ncclAllGather(in, out, n, m_type, m_comm, m_stream), "ncclAllGather");
      break;
    case op::reduce_scatter:
      m_nccl.check(ncclReduceScatter(in, out, n, m_type, ncclSum, m_comm, m_stream),
                   "ncclReduceScatter");
      break;
    case op::alltoall:
      m_nccl.check(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < m_s.ranks; ++r) {
        m_nccl.check(
            ncclSend(bytes(in) + (size_t)r * block_bytes(), n, m_type, r, m_comm, m_stream),
            "ncclSend");
        m_nccl.check(
            ncclRecv(bytes(out) + (size_t)r * block_bytes(), n, m_type, r, m_comm, m_stream),
            "ncclRecv");
      }
      m_nccl.check(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case op::broadcast:
      m_nccl.check(ncclBroadcast(in, out, n, m_type, k_root, m_comm, m_stream), "ncclBroadcast");
      break;
    case op::reduce:
      m_nccl.check(ncclReduce(in, out, n, m_type, ncclSum, k_root, m_comm, m_stream), "ncclReduce");
      break;
    }
  }

  device::nccl::communicator m_nccl; // first: the GPU is chosen before anything is allocated
  shape m_s;
  int m_rank = 0;
  int m_device = 0;
  ncclDataType_t m_type;
  ncclComm_t m_comm = nullptr;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  void* m_send = nullptr;
  void* m_buf = nullptr;
  size_t m_send_bytes = 0, m_recv_bytes = 0;
  std::vector<unsigned char> m_host_out;
};

} // namespace

std::string nccl_unavailable_reason(const shape& s) {
  std::string why;
  if (!device::cuda_available(&why))
    return "no usable CUDA device: " + why;
  if (s.kind == op::alltoall && s.inplace)
    return "NCCL has no in-place all-to-all (ncclSend/ncclRecv need two buffers)";
  return {};
}

std::unique_ptr<collective_kernel> make_nccl_collective(const shape& s) {
  dist::require_mpi(); // the unique id travels over MPI
  return std::make_unique<nccl_collective>(s);
}

std::string nccl_version() { return device::nccl::version(); }

} // namespace accelbench::collective
