// The collective workload's spec: sizes, nccl-tests' bandwidth factors, and the expected values
// the checker compares against, proven against a direct simulation of each collective.
#include <catch2/catch.hpp>

#include <vector>

#include "harness/core/fp16.hpp"
#include "workloads/collective/collective_spec.hpp"

using namespace accelbench;
using namespace accelbench::collective;

TEST_CASE("bus bandwidth factors are nccl-tests' definitions") {
  CHECK(bus_factor(op::allreduce, 2) == Approx(1.0));
  CHECK(bus_factor(op::allreduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(bus_factor(op::allreduce, 1) == 0.0);
  for (op o : {op::allgather, op::reduce_scatter, op::alltoall}) {
    CHECK(bus_factor(o, 2) == Approx(0.5));
    CHECK(bus_factor(o, 8) == Approx(7.0 / 8));
  }
  CHECK(bus_factor(op::broadcast, 8) == 1.0);
  CHECK(bus_factor(op::reduce, 8) == 1.0);
}

TEST_CASE("sizes as nccl-tests counts them, rounded down to whole elements per rank") {
  auto ar = make_shape(op::allreduce, dtype::fp32, 1 << 20, 4, false);
  CHECK(ar.count == 262144);
  CHECK(ar.size_bytes() == 1 << 20);
  CHECK(ar.send_count() == ar.recv_count());
  auto ag = make_shape(op::allgather, dtype::bf16, 1 << 20, 4, false);
  CHECK(ag.count == (1 << 20) / 2 / 4); // each rank's block
  CHECK(ag.send_count() == ag.count);
  CHECK(ag.recv_count() == 4 * ag.count);
  CHECK(ag.size_bytes() == 1 << 20);
  auto rs = make_shape(op::reduce_scatter, dtype::fp64, 1000, 3, false);
  CHECK(rs.count == 1000 / 8 / 3); // 41
  CHECK(rs.send_count() == 123);
  CHECK(rs.recv_count() == 41);
  CHECK(rs.size_bytes() == 123 * 8);
  auto a2a = make_shape(op::alltoall, dtype::int8, 10, 4, false);
  CHECK(a2a.count == 2);
  CHECK(a2a.send_count() == 8);
  CHECK(a2a.recv_count() == 8);
  CHECK(make_shape(op::allgather, dtype::fp32, 4, 2, false).count ==
        0); // less than an element per rank
}

namespace {

// The outputs of a collective computed directly from every rank's inputs.
std::vector<std::vector<int64_t>> simulate(const shape& s) {
  const int n = s.ranks;
  std::vector<std::vector<int64_t>> in(n), out(n);
  for (int r = 0; r < n; ++r)
    for (uint64_t i = 0; i < s.send_count(); ++i)
      in[r].push_back(input_value(r, i));
  const uint64_t c = s.count;
  for (int r = 0; r < n; ++r) {
    out[r].assign(s.recv_count(), 0);
    for (uint64_t i = 0; i < s.recv_count(); ++i) {
      switch (s.kind) {
      case op::allreduce:
      case op::reduce:
        for (int q = 0; q < n; ++q)
          out[r][i] += in[q][i];
        break;
      case op::broadcast:
        out[r][i] = in[k_root][i];
        break;
      case op::allgather:
        out[r][i] = in[i / c][i % c];
        break;
      case op::reduce_scatter:
        for (int q = 0; q < n; ++q)
          out[r][i] += in[q][r * c + i];
        break;
      case op::alltoall:
        out[r][i] = in[i / c][r * c + i % c];
        break;
      }
    }
  }
  return out;
}

} // namespace

TEST_CASE("expected values match a direct simulation of every collective") {
  for (int n : {1, 2, 3, 8})
    for (const auto& name : op_names()) {
      const shape s =
          make_shape(op_from_string(name), dtype::int64, 8 * 24 * (uint64_t)n, n, false);
      const auto out = simulate(s);
      for (int r = 0; r < n; ++r) {
        if (s.kind == op::reduce && r != k_root)
          continue;
        for (uint64_t i = 0; i < s.recv_count(); ++i) {
          INFO(name << " n=" << n << " rank " << r << " element " << i);
          REQUIRE(expected_value(s, r, i) == out[r][i]);
        }
      }
    }
}

TEST_CASE("the checker accepts the right output in every dtype and names a wrong element") {
  for (const dtype type : k_collective_dtypes) {
    const shape s = make_shape(op::allreduce, type, 64 * element_size(type), 4, false);
    std::vector<unsigned char> buf(s.recv_count() * s.elem);
    for (uint64_t i = 0; i < s.recv_count(); ++i)
      store_value(type, buf.data(), i, expected_value(s, 2, i));
    auto ok = check_output(s, 2, buf.data());
    INFO(to_string(type));
    CHECK(ok.wrong == 0);
    CHECK(ok.checked == 64);
    store_value(type, buf.data(), 17, expected_value(s, 2, 17) + 1);
    auto bad = check_output(s, 2, buf.data());
    CHECK(bad.wrong == 1);
    CHECK(bad.first_wrong.find("element 17") != std::string::npos);
  }
}

TEST_CASE("inputs are exact small integers whose sums stay exact in bf16 and int8") {
  for (int r = 0; r < 63; ++r)
    for (uint64_t i = 0; i < 10; ++i) {
      CHECK(input_value(r, i) >= -2);
      CHECK(input_value(r, i) <= 2);
    }
  const shape s = make_shape(op::allreduce, dtype::bf16, 2 * 100, 63, false);
  std::vector<unsigned char> buf(s.recv_count() * s.elem);
  for (uint64_t i = 0; i < s.recv_count(); ++i)
    store_value(dtype::bf16, buf.data(), i, expected_value(s, 0, i));
  CHECK(check_output(s, 0, buf.data()).wrong == 0);
}

TEST_CASE("unknown op and dtype are input errors naming the value") {
  CHECK_THROWS_WITH(op_from_string("allreduc"), Catch::Contains("allreduc"));
  CHECK_THROWS_WITH(parse_collective_dtype("fp8"), Catch::Contains("'fp8'"));
  // a kernel dtype the collective does not move is refused too, naming the ones it does
  CHECK_THROWS_WITH(parse_collective_dtype("tf32"),
                    Catch::Contains("'tf32'") &&
                        Catch::Contains("fp32, fp64, bf16, fp16, int8, int32, int64"));
}

TEST_CASE("fp16 storage: exact values, rounding to nearest even, and every half round-trips") {
  CHECK(float_to_fp16(1.0f) == 0x3c00);
  CHECK(float_to_fp16(-2.0f) == 0xc000);
  CHECK(float_to_fp16(0.5f) == 0x3800);
  CHECK(float_to_fp16(65504.0f) == 0x7bff);
  CHECK(float_to_fp16(1e6f) == 0x7c00);               // overflow: inf
  CHECK(float_to_fp16(1.0f + 1.0f / 2048) == 0x3c00); // a tie rounds to even
  CHECK(float_to_fp16(1.0f + 3.0f / 2048) == 0x3c02);
  CHECK(float_to_fp16(5.9604645e-8f) == 0x0001); // the smallest subnormal
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue; // NaN
    INFO(h);
    REQUIRE(float_to_fp16(fp16_to_float((uint16_t)h)) == h);
  }
}
