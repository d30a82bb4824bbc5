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

dtype parse_collective_dtype(const std::string& name) {
  if (auto d = dtype_from_name(name, k_collective_dtypes))
    return *d;
  throw input_error(fmt::format("unknown collective dtype '{}' (known: {})", name,
                                dtype_names(k_collective_dtypes)));
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    n.reserve(k_collective_dtypes.size());
    for (dtype d : k_collective_dtypes)
      n.push_back(to_string(d));
    return n;
  }();
  return names;
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

shape make_shape(op kind, dtype type, uint64_t bytes, int ranks, bool inplace) {
  shape s;
  s.kind = kind;
  s.type = type;
  s.elem = element_size(type);
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
// Calls f with a value of the storage type of `type` (bf16_t, fp16_t for the 16-bit floats).
template <class F> void with_type(dtype type, F&& f) {
  switch (type) {
  case dtype::fp32:
    return f(float{});
  case dtype::fp64:
    return f(double{});
  case dtype::bf16:
    return f(bf16_t{});
  case dtype::fp16:
    return f(fp16_t{});
  case dtype::int8:
    return f(int8_t{});
  case dtype::int32:
    return f(int32_t{});
  case dtype::int64:
    return f(int64_t{});
  default:
    throw input_error("unknown collective dtype '" + to_string(type) + "'");
  }
}
} // namespace

void store_value(dtype type, void* buf, uint64_t i, int64_t v) {
  with_type(type, [&](auto t) { put<decltype(t)>(buf, i, v); });
}

double load_value(dtype type, const void* buf, uint64_t i) {
  double got = 0;
  with_type(type, [&](auto t) { got = get<decltype(t)>(buf, i); });
  return got;
}

void fill_input(const shape& s, int rank, void* send) {
  const uint64_t n = s.send_count();
  with_type(s.type, [&](auto t) {
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
  with_type(s.type, [&](auto t) {
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
