#pragma once
// The collective workload's spec, kept apart from its backends (MPI on host buffers, NCCL on
// device buffers): operations, element types, buffer layout per operation, the bandwidth
// definitions of nccl-tests, and how inputs are filled and results checked.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/dtype.hpp"
#include "harness/core/model.hpp"

namespace accelbench::collective {

enum class op { allreduce, allgather, reduce_scatter, alltoall, broadcast, reduce };
const std::vector<std::string>& op_names();
op op_from_string(const std::string& s); // throws input_error
std::string to_string(op o);

// The element types (harness/core/dtype.hpp's k_collective_dtypes), read once from a config:
// throws input_error naming the value and the known names.
dtype parse_collective_dtype(const std::string& name);
const std::vector<std::string>& dtype_names(); // fp32 fp64 bf16 fp16 int8 int32 int64: the axis

// The root of broadcast and reduce.
inline constexpr int k_root = 0;

// One collective as it runs on `ranks` ranks, sized as nccl-tests size it: `bytes` is the size
// nccl-tests prints — the whole buffer for all-reduce, broadcast and reduce; the gathered buffer
// for all-gather; the input of reduce-scatter; what each rank sends for all-to-all. Element
// counts are rounded down as nccl-tests rounds them (a multiple of `ranks` where the buffer is
// split in blocks).
struct shape {
  op kind = op::allreduce;
  dtype type = dtype::fp32;
  size_t elem = 4; // bytes per element: element_size(type)
  int ranks = 1;
  bool inplace = false;
  uint64_t count = 0; // elements per block: the whole buffer (allreduce, broadcast, reduce), else
                      // one rank's block
  uint64_t send_count() const; // elements each rank sends
  uint64_t recv_count() const; // elements each rank receives into its output buffer
  uint64_t size_bytes() const; // the bytes behind algbw (what nccl-tests calls size)
  double bus_factor() const;   // busbw = algbw × factor (nccl-tests' definitions)
};

// The shape of `bytes` bytes of `dtype` on `ranks` ranks; count 0 when less than one element per
// block fits.
shape make_shape(op kind, dtype type, uint64_t bytes, int ranks, bool inplace);

// nccl-tests' bus bandwidth factor: all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all
// (n−1)/n; broadcast and reduce 1.
double bus_factor(op kind, int ranks);

// Input element i of rank r: a small integer, exact in every dtype, whose sum over up to 63 ranks
// stays exact too (in [-2, 2]).
int64_t input_value(int rank, uint64_t i);

// The value element i of `rank`'s output must hold after the collective (inputs filled with
// input_value over send_count() elements). For reduce, only the root's output is defined.
int64_t expected_value(const shape& s, int rank, uint64_t i);

// Typed buffers as raw bytes: fill element i with v, read element i.
void store_value(dtype type, void* buf, uint64_t i, int64_t v);
double load_value(dtype type, const void* buf, uint64_t i);

// Fills `rank`'s send buffer (send_count() elements).
void fill_input(const shape& s, int rank, void* send);

// Compares `rank`'s output (recv_count() elements) with expected_value: exact, every element.
struct check_result {
  uint64_t checked = 0;
  uint64_t wrong = 0;
  std::string first_wrong; // "element 17: 3 (expected 4)"
  json to_json() const;
};
check_result check_output(const shape& s, int rank, const void* recv);

} // namespace accelbench::collective
