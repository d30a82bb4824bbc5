#include "workloads/collective/collective_spec.hpp"

#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fp16.hpp"

namespace accelbench::collective {

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = {"allreduce", "allgather", "reduce_scatter",
                                                 "alltoall",  "broadcast", "reduce"};
  return names;
}

op op_from_string(const std::string& s) {
  const auto& n = op_names();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == s)
      return (op)i;
  throw input_error(fmt::format("unknown collective op '{}' (known: {})", s, fmt::join(n, ", ")));
}

std::string to_string(op o) { return op_names().at((size_t)o); }

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = {"fp32", "fp64",  "bf16", "fp16",
                                                 "int8", "int32", "int64"};
  return names;
}

size_t dtype_size(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "int32")
    return 4;
  if (dtype == "fp64" || dtype == "int64")
    return 8;
  if (dtype == "bf16" || dtype == "fp16")
    return 2;
  if (dtype == "int8")
    return 1;
  throw input_error(fmt::format("unknown collective dtype '{}' (known: {})", dtype,
                                fmt::join(dtype_names(), ", ")));
}

namespace {
// Operations whose buffer is split in one block per rank.
bool blocked(op k) { return k == op::allgather || k == op::reduce_scatter || k == op::alltoall; }
} // namespace

uint64_t shape::send_count() const {
  switch (kind) {
  case op::reduce_scatter:
  case op::alltoall:
    return count * (uint64_t)ranks;
  default:
    return count;
  }
}

uint64_t shape::recv_count() const {
  switch (kind) {
  case op::allgather:
  case op::alltoall:
    return count * (uint64_t)ranks;
  default:
    return count;
  }
}

uint64_t shape::size_bytes() const {
  return (blocked(kind) ? count * (uint64_t)ranks : count) * elem;
}

double shape::bus_factor() const { return collective::bus_factor(kind, ranks); }

double bus_factor(op kind, int ranks) {
  const double n = ranks;
  switch (kind) {
  case op::allreduce:
    return 2.0 * (n - 1) / n;
  case op::allgather:
  case op::reduce_scatter:
  case op::alltoall:
    return (n - 1) / n;
  case op::broadcast:
  case op::reduce:
    return 1.0;
  }
  return 1.0;
}

shape make_shape(op kind, const std::string& dtype, uint64_t bytes, int ranks, bool inplace) {
  shape s;
  s.kind = kind;
  s.dtype = dtype;
  s.elem = dtype_size(dtype);
  s.ranks = ranks;
  s.inplace = inplace;
  s.count = bytes / s.elem;
  if (blocked(kind))
    s.count /= (uint64_t)ranks;
  return s;
}

int64_t input_value(int rank, uint64_t i) { return (int64_t)((i + 3 * (uint64_t)rank) % 5) - 2; }

int64_t expected_value(const shape& s, int rank, uint64_t i) {
  switch (s.kind) {
  case op::allreduce:
  case op::reduce: {
    int64_t sum = 0;
    for (int r = 0; r < s.ranks; ++r)
      sum += input_value(r, i);
    return sum;
  }
  case op::broadcast:
    return input_value(k_root, i);
  case op::allgather:
    return input_value((int)(i / s.count), i % s.count);
  case op::reduce_scatter: {
    int64_t sum = 0;
    for (int r = 0; r < s.ranks; ++r)
      sum += input_value(r, (uint64_t)rank * s.count + i);
    return sum;
  }
  case op::alltoall:
    return input_value((int)(i / s.count), (uint64_t)rank * s.count + i % s.count);
  }
  return 0;
}

void store_value(const std::string& dtype, void* buf, uint64_t i, int64_t v) {
  if (dtype == "fp32")
    static_cast<float*>(buf)[i] = (float)v;
  else if (dtype == "fp64")
    static_cast<double*>(buf)[i] = (double)v;
  else if (dtype == "bf16")
    static_cast<uint16_t*>(buf)[i] = float_to_bf16((float)v);
  else if (dtype == "fp16")
    static_cast<uint16_t*>(buf)[i] = float_to_fp16((float)v);
  else if (dtype == "int8")
    static_cast<int8_t*>(buf)[i] = (int8_t)v;
  else if (dtype == "int32")
    static_cast<int32_t*>(buf)[i] = (int32_t)v;
  else if (dtype == "int64")
    static_cast<int64_t*>(buf)[i] = v;
  else
    throw input_error(fmt::format("unknown collective dtype '{}'", dtype));
}

double load_value(const std::string& dtype, const void* buf, uint64_t i) {
  if (dtype == "fp32")
    return static_cast<const float*>(buf)[i];
  if (dtype == "fp64")
    return static_cast<const double*>(buf)[i];
  if (dtype == "bf16")
    return bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
  if (dtype == "fp16")
    return fp16_to_float(static_cast<const uint16_t*>(buf)[i]);
  if (dtype == "int8")
    return static_cast<const int8_t*>(buf)[i];
  if (dtype == "int32")
    return static_cast<const int32_t*>(buf)[i];
  if (dtype == "int64")
    return (double)static_cast<const int64_t*>(buf)[i];
  throw input_error(fmt::format("unknown collective dtype '{}'", dtype));
}

namespace {
// Element access by storage type: one dispatch per buffer, not per element.
struct bf16_t {
  uint16_t bits;
};
struct fp16_t {
  uint16_t bits;
};
template <class T> void put(void* buf, uint64_t i, int64_t v) {
  if constexpr (std::is_same_v<T, bf16_t>)
    static_cast<uint16_t*>(buf)[i] = float_to_bf16((float)v);
  else if constexpr (std::is_same_v<T, fp16_t>)
    static_cast<uint16_t*>(buf)[i] = float_to_fp16((float)v);
  else
    static_cast<T*>(buf)[i] = (T)v;
}
template <class T> double get(const void* buf, uint64_t i) {
  if constexpr (std::is_same_v<T, bf16_t>)
    return bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
  else if constexpr (std::is_same_v<T, fp16_t>)
    return fp16_to_float(static_cast<const uint16_t*>(buf)[i]);
  else
    return (double)static_cast<const T*>(buf)[i];
}
template <class F> void with_type(const std::string& dtype, F&& f) {
  if (dtype == "fp32")
    f(float{});
  else if (dtype == "fp64")
    f(double{});
  else if (dtype == "bf16")
    f(bf16_t{});
  else if (dtype == "fp16")
    f(fp16_t{});
  else if (dtype == "int8")
    f(int8_t{});
  else if (dtype == "int32")
    f(int32_t{});
  else if (dtype == "int64")
    f(int64_t{});
  else
    throw input_error(fmt::format("unknown collective dtype '{}'", dtype));
}
} // namespace

void fill_input(const shape& s, int rank, void* send) {
  const uint64_t n = s.send_count();
  with_type(s.dtype, [&](auto t) {
    using T = decltype(t);
    for (uint64_t i = 0; i < n; ++i)
      put<T>(send, i, input_value(rank, i));
  });
}

json check_result::to_json() const {
  json j = {{"elements_checked", checked}, {"wrong", wrong}, {"exact", true}};
  if (!first_wrong.empty())
    j["first_wrong"] = first_wrong;
  return j;
}

check_result check_output(const shape& s, int rank, const void* recv) {
  check_result c;
  if (s.kind == op::reduce && rank != k_root)
    return c; // only the root receives
  const uint64_t n = s.recv_count();
  with_type(s.dtype, [&](auto t) {
    using T = decltype(t);
    for (uint64_t i = 0; i < n; ++i) {
      const double got = get<T>(recv, i);
      const int64_t want = expected_value(s, rank, i);
      if (got != (double)want) {
        if (c.wrong == 0)
          c.first_wrong = fmt::format("rank {} element {}: {} (expected {})", rank, i, got, want);
        ++c.wrong;
      }
    }
  });
  c.checked = n;
  return c;
}

} // namespace accelbench::collective
