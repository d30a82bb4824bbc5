// kernels/attention/cuda/flash_tc.cu: the tensor-core (mma.sync) flash-attention kernels against
// the double-precision CPU reference and against the fp32 CUDA-core reference kernels, forward
// and backward, causal and not, head_dim 64 and 128, bf16 and fp16, sequence lengths that are not
// a multiple of the 64-row tile (GPU only); the dispatch rule everywhere.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fp16.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/device/device.hpp"
#include "kernels/attention/cuda/attention_kernels.hpp"
#include "tests/support/gpu_skip.hpp"
#include "tests/support/load_free.hpp"
#include "workloads/attention/attention_check.hpp"
#include "workloads/attention/cuda/attention_cuda.hpp"

using namespace accelbench;
using namespace accelbench::attention;

namespace {

attention_shape shape(int64_t b, int64_t h, int64_t kvh, int64_t sq, int64_t sk, int64_t d,
                      bool causal) {
  attention_shape s;
  s.batch = b, s.heads = h, s.kv_heads = kvh, s.seq_q = sq, s.seq_k = sk, s.head_dim = d;
  s.causal = causal;
  return s;
}

float round_to(dtype t, float x) {
  if (t == dtype::bf16)
    return bf16_to_float(float_to_bf16(x));
  if (t == dtype::fp16)
    return fp16_to_float(float_to_fp16(x));
  return x;
}

// Normal(0, 1), as the workloads draw, rounded to the element type.
std::vector<float> rnd(size_t n, uint64_t seed, dtype t) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> u(0, 1);
  std::vector<float> x(n);
  for (auto& e : x)
    e = round_to(t, u(g));
  return x;
}

device::device_buffer upload(const std::vector<float>& x, dtype t) {
  if (t == dtype::fp32) {
    device::device_buffer b(x.size() * 4);
    b.upload(x.data(), x.size() * 4);
    return b;
  }
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    h[i] = t == dtype::bf16 ? float_to_bf16(x[i]) : float_to_fp16(x[i]);
  device::device_buffer b(h.size() * 2);
  b.upload(h.data(), h.size() * 2);
  return b;
}

std::vector<float> download(const device::device_buffer& b, size_t n, dtype t) {
  std::vector<float> x(n);
  if (t == dtype::fp32) {
    b.download(x.data(), n * 4);
    return x;
  }
  std::vector<uint16_t> h(n);
  b.download(h.data(), n * 2);
  for (size_t i = 0; i < n; ++i)
    x[i] = t == dtype::bf16 ? bf16_to_float(h[i]) : fp16_to_float(h[i]);
  return x;
}

struct outputs {
  std::vector<float> o, lse, dq, dk, dv;
};

// Forward then backward on the device with the kernels `t` dispatches to.
outputs run_native(const attention_shape& s, dtype t, const std::vector<float>& q,
                   const std::vector<float>& k, const std::vector<float>& v,
                   const std::vector<float>& d_o) {
  const size_t nq = q.size(), nk = k.size(), es = t == dtype::fp32 ? 4 : 2;
  const size_t nrows = size_t(s.batch * s.heads * s.seq_q);
  auto dq_ = upload(q, t), dk_ = upload(k, t), dv_ = upload(v, t), ddo = upload(d_o, t);
  device::device_buffer o(nq * es), gq(nq * es), gk(nk * es), gv(nk * es), lse(nrows * 4),
      delta(nrows * 4);
  device::synchronize("flash_tc test upload");
  const attention_tensors io = {.type = t,
                                .q = dq_.get(),
                                .dq = gq.get(),
                                .k = dk_.get(),
                                .dk = gk.get(),
                                .v = dv_.get(),
                                .dv = gv.get(),
                                .o = o.get(),
                                .d_o = ddo.get(),
                                .lse = lse.as<float>()};
  native::forward(s, io, nullptr);
  native::backward(s, io, delta.as<float>(), nullptr);
  device::synchronize("flash_tc test kernels");
  outputs r;
  r.o = download(o, nq, t);
  r.lse.resize(nrows);
  lse.download(r.lse.data(), nrows * 4);
  r.dq = download(gq, nq, t), r.dk = download(gk, nk, t), r.dv = download(gv, nk, t);
  return r;
}

// max |x - ref| / max(rms(ref), 1e-30): the tensor-core result against the fp32 kernels' on the
// same inputs (+inf lse must be +inf in both).
double rms_error(const std::vector<float>& x, const std::vector<float>& ref) {
  double ss = 0;
  size_t finite = 0;
  for (float r : ref)
    if (std::isfinite(r))
      ss += double(r) * r, ++finite;
  const double rms = std::max(std::sqrt(ss / double(std::max<size_t>(finite, 1))), 1e-30);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(ref[i]) && x[i] == ref[i])
      continue;
    const double e = std::fabs(double(x[i]) - ref[i]) / rms;
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

} // namespace

TEST_CASE("native attention dispatch: 16-bit inputs at head_dim 64/128 run on tensor cores",
          "[cuda]") {
  for (int64_t d : {64, 128}) {
    const auto s = shape(1, 2, 1, 100, 100, d, true);
    CHECK(native::uses_tensor_cores(s, dtype::bf16));
    CHECK(native::uses_tensor_cores(s, dtype::fp16));
    CHECK_FALSE(native::uses_tensor_cores(s, dtype::fp32)); // fp32: the reference kernels
    CHECK(native::kernel_name(s, dtype::bf16).find("mma.sync m16n8k16 bf16") != std::string::npos);
    CHECK(native::kernel_name(s, dtype::fp16).find("fp16") != std::string::npos);
    CHECK(native::kernel_name(s, dtype::fp32).find("CUDA cores") != std::string::npos);
  }
  const auto odd = shape(1, 2, 1, 100, 100, 80, false);
  CHECK_FALSE(native::uses_tensor_cores(odd, dtype::bf16)); // bf16 falls back to CUDA cores
  CHECK(native::kernel_name(odd, dtype::bf16).find("CUDA cores") != std::string::npos);
  // fp16 has no CUDA-core kernel: refused with the head_dim named, before any device work.
  CHECK_THROWS_WITH(native::forward(odd, {.type = dtype::fp16}, nullptr),
                    Catch::Contains("head_dim=80"));
  // A dtype with no kernel at all: refused by name, at any head_dim, in either pass.
  for (int64_t d : {64, 80})
    for (dtype t : {dtype::fp8_e4m3, dtype::tf32}) {
      const std::string why =
          "native attention: dtype '" + to_string(t) + "' is not supported (fp32, bf16, fp16)";
      CHECK_THROWS_WITH(native::forward(shape(1, 2, 1, 100, 100, d, false), {.type = t}, nullptr),
                        why);
      CHECK_THROWS_WITH(
          native::backward(shape(1, 2, 1, 100, 100, d, false), {.type = t}, nullptr, nullptr), why);
    }
  // A tensor off a 16-byte boundary would fault cp.async (and the context): refused by name.
  alignas(16) static char buf[64];
  CHECK_THROWS_WITH(
      native::forward(shape(1, 2, 1, 100, 100, 128, false),
                      {.type = dtype::bf16, .q = buf, .k = buf + 2, .v = buf, .o = buf}, nullptr),
      Catch::Contains("k is not 16-byte aligned"));
}

TEST_CASE("tensor-core attention matches the double reference and the fp32 kernels, fwd and bwd",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  struct sc {
    int64_t b, h, kvh, sq, sk, d;
    bool causal;
  };
  // Odd lengths (not multiples of the 64-row tile), GQA, seq_q != seq_k both ways (causal with
  // seq_q > seq_k leaves rows that see no key: o = 0, lse = +inf).
  const sc cases[] = {{1, 2, 2, 77, 77, 64, false},   {2, 4, 2, 33, 131, 64, true},
                      {1, 2, 1, 150, 70, 64, true},   {1, 2, 2, 129, 129, 128, true},
                      {1, 4, 1, 45, 200, 128, false}, {2, 2, 1, 100, 37, 128, true}};
  for (const auto& c : cases)
    for (dtype t : {dtype::bf16, dtype::fp16}) {
      const auto s = shape(c.b, c.h, c.kvh, c.sq, c.sk, c.d, c.causal);
      const bool bf = t == dtype::bf16;
      INFO("b=" << c.b << " h=" << c.h << " kvh=" << c.kvh << " sq=" << c.sq << " sk=" << c.sk
                << " d=" << c.d << " causal=" << c.causal << (bf ? " bf16" : " fp16"));
      REQUIRE(native::uses_tensor_cores(s, t));
      const size_t nq = size_t(c.b * c.sq * c.h * c.d), nk = size_t(c.b * c.sk * c.kvh * c.d);
      auto q = rnd(nq, 21, t), k = rnd(nk, 22, t), v = rnd(nk, 23, t), d_o = rnd(nq, 24, t);
      const auto tc = run_native(s, t, q, k, v, d_o);
      // The ruleset's tolerances (kernel-v1): bf16 2e-2, fp16 5e-3.
      check_options opt;
      opt.tolerance = bf ? 2e-2 : 5e-3;
      auto f = check_forward(s, q.data(), k.data(), v.data(), tc.o.data(), tc.lse.data(), opt);
      INFO("forward vs double: " << f.reason());
      CHECK(f.ok());
      auto g = check_backward(s, q.data(), k.data(), v.data(), d_o.data(), tc.dq.data(),
                              tc.dk.data(), tc.dv.data(), opt);
      INFO("backward vs double: " << g.reason());
      CHECK(g.ok());
      // The fp32 CUDA-core kernels on the same (rounded) inputs.
      const auto ref = run_native(s, dtype::fp32, q, k, v, d_o);
      CHECK(rms_error(tc.o, ref.o) < opt.tolerance);
      CHECK(rms_error(tc.lse, ref.lse) < opt.tolerance);
      CHECK(rms_error(tc.dq, ref.dq) < opt.tolerance);
      CHECK(rms_error(tc.dk, ref.dk) < opt.tolerance);
      CHECK(rms_error(tc.dv, ref.dv) < opt.tolerance);
    }
}

TEST_CASE("a native attention run records which kernel ran", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  json user;
  auto rs = apply_overrides(load_ruleset("kernel-quick"), test_support::load_free(), user);
  run_context ctx;
  ctx.rules = &rs;
  ctx.seed = 7;
  for (auto [dtype, want] : {std::pair{"bf16", "flash_tc"}, {"fp32", "flash_native"}}) {
    config c;
    c.workload = "attention";
    c.backend = "cuda";
    c.values = {{"batch", "1"},      {"heads", "2"},      {"kv_heads", "1"}, {"seq_q", "100"},
                {"seq_k", "100"},    {"head_dim", "128"}, {"causal", "1"},   {"dtype", dtype},
                {"pass", "fwd_bwd"}, {"scale", "0"},      {"impl", "native"}};
    run out;
    out.cfg = c;
    attention_cuda_execute(params_of(c), out, ctx);
    INFO(dtype << ": " << out.status_reason);
    REQUIRE(out.status == run_status::ok);
    CHECK(out.valid); // the same correctness check as every run, at the ruleset's tolerance
    CHECK(out.extra["native_kernel"].get<std::string>().rfind(want, 0) == 0);
    CHECK(out.extra["implementation"].get<std::string>().find(want) != std::string::npos);
  }
}
