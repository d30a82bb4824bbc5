#include "workloads/collective/cpu/collective_mpi.hpp"

#include <climits>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fp16.hpp"
#include "harness/dist/dist.hpp"
#ifdef ACCELBENCH_HAVE_MPI
#include "harness/dist/dist_mpi.hpp"
#endif

namespace accelbench::collective {

#ifdef ACCELBENCH_HAVE_MPI
namespace {

// MPI has no 16-bit floating types: bf16 and fp16 travel as 16-bit words reduced by our sum.
void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

void fp16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = float_to_fp16(fp16_to_float(a[i]) + fp16_to_float(b[i]));
}

MPI_Datatype mpi_type(dtype type) {
  switch (type) {
  case dtype::fp32:
    return MPI_FLOAT;
  case dtype::fp64:
    return MPI_DOUBLE;
  case dtype::int8:
    return MPI_INT8_T;
  case dtype::int32:
    return MPI_INT32_T;
  case dtype::int64:
    return MPI_INT64_T;
  default:
    return MPI_UINT16_T; // bf16, fp16 (parse_collective_dtype admits no other)
  }
}

bool is_16_bit_float(dtype type) { return type == dtype::bf16 || type == dtype::fp16; }

MPI_Op sum_op(dtype type) {
  static MPI_Op bf16 = MPI_OP_NULL, fp16 = MPI_OP_NULL;
  if (type == dtype::bf16) {
    if (bf16 == MPI_OP_NULL)
      MPI_Op_create(&bf16_sum, 1, &bf16);
    return bf16;
  }
  if (type == dtype::fp16) {
    if (fp16 == MPI_OP_NULL)
      MPI_Op_create(&fp16_sum, 1, &fp16);
    return fp16;
  }
  return MPI_SUM;
}

class mpi_collective final : public collective_kernel {
public:
  explicit mpi_collective(const shape& s)
      : m_s(s), m_rank(dist::rank()), m_type(mpi_type(s.type)), m_op(sum_op(s.type)),
        m_comm(dist::world_comm()) {
    if (s.inplace) {
      m_buf.resize(std::max(s.send_count(), s.recv_count()) * s.elem);
    } else {
      m_send.resize(s.send_count() * s.elem);
      m_buf.resize(s.recv_count() * s.elem);
    }
    reset();
  }

  void run() override {
    const int n = (int)m_s.count;
    void* buf = m_buf.data();
    const void* send = m_s.inplace ? MPI_IN_PLACE : (const void*)m_send.data();
    switch (m_s.kind) {
    case op::allreduce:
      MPI_Allreduce(send, buf, n, m_type, m_op, m_comm);
      break;
    case op::allgather:
      if (m_s.inplace)
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, n, m_type, m_comm);
      else
        MPI_Allgather(send, n, m_type, buf, n, m_type, m_comm);
      break;
    case op::reduce_scatter:
      MPI_Reduce_scatter_block(send, buf, n, m_type, m_op, m_comm);
      break;
    case op::alltoall:
      if (m_s.inplace)
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, n, m_type, m_comm);
      else
        MPI_Alltoall(send, n, m_type, buf, n, m_type, m_comm);
      break;
    case op::broadcast:
      MPI_Bcast(buf, n, m_type, k_root, m_comm);
      break;
    case op::reduce:
      // In place: the root's input is its output buffer; the other ranks send theirs.
      if (m_s.inplace)
        MPI_Reduce(m_rank == k_root ? MPI_IN_PLACE : buf, buf, n, m_type, m_op, k_root, m_comm);
      else
        MPI_Reduce(send, buf, n, m_type, m_op, k_root, m_comm);
      break;
    }
  }

  const void* output() override { return m_buf.data(); }

  void reset() override {
    std::fill(m_buf.begin(), m_buf.end(), 0);
    if (!m_s.inplace) {
      fill_input(m_s, m_rank, m_send.data());
      // MPI_Bcast broadcasts the root's buffer: the root's input is copied into it once, here,
      // outside the timing.
      if (m_s.kind == op::broadcast && m_rank == k_root)
        std::memcpy(m_buf.data(), m_send.data(), m_buf.size());
      return;
    }
    // In place, all-gather's input is this rank's block of the output buffer.
    const size_t at = m_s.kind == op::allgather ? (size_t)m_rank * m_s.count * m_s.elem : 0;
    fill_input(m_s, m_rank, m_buf.data() + at);
  }

  std::string implementation() const override {
    static const char* names[] = {"MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block",
                                  "MPI_Alltoall",  "MPI_Bcast",     "MPI_Reduce"};
    return fmt::format("{} ({}{}, {})", names[(int)m_s.kind], m_s.inplace ? "MPI_IN_PLACE, " : "",
                       is_16_bit_float(m_s.type) ? "16-bit words, accelbench sum op" : "MPI_SUM",
                       mpi_library_version());
  }

private:
  shape m_s;
  int m_rank;
  MPI_Datatype m_type;
  MPI_Op m_op;
  MPI_Comm m_comm;
  std::vector<unsigned char> m_send, m_buf;
};

} // namespace
#endif

std::string mpi_unavailable_reason(const shape& s) {
#ifdef ACCELBENCH_HAVE_MPI
  if (s.count > (uint64_t)INT_MAX)
    return fmt::format("{} elements per rank exceed MPI's int count (2^31-1)", s.count);
  return {};
#else
  return "this build has no MPI (ACCELBENCH_ENABLE_MPI=OFF or Open MPI not found): the cpu backend "
         "of collective "
         "runs on MPI";
#endif
}

std::unique_ptr<collective_kernel> make_mpi_collective(const shape& s) {
#ifdef ACCELBENCH_HAVE_MPI
  dist::require_mpi();
  return std::make_unique<mpi_collective>(s);
#else
  throw backend_error(mpi_unavailable_reason(s));
#endif
}

std::string mpi_library_version() {
#ifdef ACCELBENCH_HAVE_MPI
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string v(lib, strnlen(lib, (size_t)std::max(0, len)));
  if (auto comma = v.find(','); comma != std::string::npos)
    v.resize(comma);
  return v;
#else
  return {};
#endif
}

} // namespace accelbench::collective
