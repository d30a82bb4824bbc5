// The GEMM correctness verdict (workloads/gemm/gemm_tolerance.hpp): the error bound itself, the
// real CPU kernels against it at the catalogues' K, sabotaged outputs that must be INVALID where
// the old flat tolerances called them VALID, and the CUDA paths' arithmetic emulated on the CPU
// (the real CUDA kernels are checked the same way in tests/workloads/gemm/cuda/test_gemm_cuda.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "tests/support/load_free.hpp"
#include "tests/workloads/gemm/gemm_sabotage.hpp"
#include "workloads/gemm/gemm_workload.hpp"

using namespace accelbench;
using namespace accelbench::gemm;
using namespace accelbench::gemm::testing;

namespace {

// K of the shape catalogues: Llama 3 8B's MLP, 405B's, the vocabulary, and DeepBench's largest
// (train_512x16x500000_NN), the largest of all.
const std::vector<int64_t> catalogue_ks = {4096, 28672, 128256, 500000};
constexpr int64_t largest_catalogue_k = 500000;

} // namespace

TEST_CASE("error bound: the formula's terms, per model", "[gemm][tolerance]") {
  // 100 products of 1: sum|p| = 100, sqrt(sum p^2) = 10, ref = 100.
  product_sums s = reference_sums(100, 0, [](int64_t) { return 1.0; });
  CHECK(s.ref == 100);
  CHECK(s.sum_abs == 100);
  CHECK(s.sum_sq == 100);
  const gemm_error_model cpu = cpu_error_model(dtype::fp32);
  CHECK(error_bound(cpu, 100, s) ==
        Approx(2 * (6 * 10 * std::ldexp(1.0, -24) * 100 + std::ldexp(1.0, -24) * 100)));
  // Input rounding: lambda * u_in * sqrt(sum p^2) + u_in * |ref| on top.
  gemm_error_model in = cpu;
  in.u_in = std::ldexp(1.0, -9);
  CHECK(error_bound(in, 100, s) - error_bound(cpu, 100, s) ==
        Approx(2 * std::ldexp(1.0, -9) * (6 * 10 + 100)));
  // Blocks of 32 over 100 products: 32, 32, 32, 4 -> sqrt(3*32^2 + 4^2).
  s = reference_sums(100, 32, [](int64_t) { return -1.0; });
  CHECK(s.ref == -100);
  CHECK(s.block_sq == 3 * 32 * 32 + 4 * 4);
  const gemm_error_model fp8 = cuda_error_model(dtype::fp8_e4m3);
  CHECK(fp8.block == 128);
  // K = 100 < block: the block term uses sqrt(K), not sqrt(128).
  gemm_error_model blk = cpu;
  blk.block = 32;
  blk.u_blk = std::ldexp(1.0, -13);
  CHECK(error_bound(blk, 100, s) - error_bound(cpu, 100, s) ==
        Approx(2 * 6 * std::sqrt(32.0) * std::ldexp(1.0, -13) * std::sqrt(3 * 32 * 32 + 16.0)));

  // Every path names its arithmetic; unknown dtypes are refused.
  CHECK(cpu_error_model(dtype::bf16).u_acc == std::ldexp(1.0, -24));
  CHECK(cuda_error_model(dtype::fp32).u_acc == std::ldexp(1.0, -24));
  for (std::string d : {"tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4"})
    CHECK(cuda_error_model(parse_dtype(d)).u_acc == std::ldexp(1.0, -23)); // tensor cores truncate
  CHECK(cuda_error_model(dtype::tf32).u_in == std::ldexp(1.0, -9));
  CHECK(cuda_error_model(dtype::nvfp4).u_out == std::ldexp(1.0, -8));
  // The output type's rounding (out_dtype): bf16 2^-8, fp16 2^-11, fp32 2^-24; fp8 adds its
  // scales' fp32 multiply.
  CHECK(cuda_error_model(dtype::bf16, dtype::bf16).u_out == std::ldexp(1.0, -8));
  CHECK(cuda_error_model(dtype::fp16, dtype::fp16).u_out == std::ldexp(1.0, -11));
  CHECK(cuda_error_model(dtype::bf16, dtype::fp32).u_out == std::ldexp(1.0, -24));
  CHECK(cuda_error_model(dtype::fp8_e4m3, dtype::fp32).u_out ==
        std::ldexp(1.0, -24) + std::ldexp(1.0, -23));
  CHECK_THAT(cuda_error_model(dtype::bf16, dtype::bf16).name, Catch::EndsWith(", bf16 output"));
  CHECK(cuda_error_model(dtype::nvfp4, dtype::bf16).u_out == cuda_error_model(dtype::nvfp4).u_out);
  CHECK_THROWS_AS(cpu_error_model(dtype::fp16), input_error);
  // An unknown dtype is refused where the config is read, before any error model is asked.
  CHECK_THROWS_AS(parse_dtype("int4"), input_error);
  CHECK_THAT(cpu.formula(), Catch::Contains("Higham & Mary"));
}

TEST_CASE("error bound: NaN, exact zero and a zero bound", "[gemm][tolerance]") {
  const std::vector<float> a = {0, 0, 1, 2}, b = {0, 0, 3, 4}; // 2x2 x 2x2, row 0 of A is zero
  std::vector<float> c = {0, 0, 11, 0};
  auto a_at = [&](int64_t i, int64_t kk) { return a[size_t(i * 2 + kk)]; };
  auto b_at = [&](int64_t kk, int64_t j) { return b[size_t(kk * 2 + j)]; };
  auto c_at = [&](int64_t i, int64_t j) { return c[size_t(i * 2 + j)]; };
  // C = [[0, 0], [1*0 + 2*3, 1*0 + 2*4]] = [[0, 0], [6, 8]]
  c = {0, 0, 6, 8};
  auto r = check_gemm_output(2, 2, 2, a_at, b_at, c_at, cpu_error_model(dtype::fp32), 100, 1);
  CHECK(r.ok());
  CHECK(r.points == 4);
  CHECK(r.max_ratio == 0);
  c[0] = 1e-30f; // any error where every product is 0 (a zero bound) fails
  r = check_gemm_output(2, 2, 2, a_at, b_at, c_at, cpu_error_model(dtype::fp32), 100, 1);
  CHECK_FALSE(r.ok());
  CHECK(std::isinf(r.max_ratio));
  c[0] = 0;
  c[3] = NAN;
  r = check_gemm_output(2, 2, 2, a_at, b_at, c_at, cpu_error_model(dtype::fp32), 100, 1);
  CHECK_FALSE(r.ok());
  CHECK(r.worst_i == 1);
  CHECK(r.worst_j == 1);
  CHECK(r.to_json()["max_bound_ratio"] == "inf");
}

TEST_CASE("the CPU kernels pass the bound, and sabotaged outputs fail it at every catalogue K",
          "[gemm][tolerance]") {
  std::vector<verdict_row> rows;
  for (std::string dtype : {"fp32", "bf16"})
    for (int64_t k : catalogue_ks) {
      // Small M and N keep it fast; every element is checked (64 <= points).
      const gemm_shape s{8, 8, k, false, false, parse_dtype(dtype)};
      auto buf = make_buffers(s, 97);
      make_cpu_gemm("onednn", s)->run(buf);
      const std::vector<float> real = buf.c;
      for (sabotage what : all_sabotages) {
        buf.c = real;
        apply_sabotage(
            what, s.m, s.n, s.k, [&](int64_t i, int64_t kk) { return buf.a_at(s, i, kk); },
            [&](int64_t kk, int64_t j) { return buf.b_at(s, kk, j); }, buf.c);
        const gemm_check chk = check_gemm(s, buf, 256, 5);
        INFO(dtype << " K=" << k << " " << name_of(what) << ": " << chk.reason());
        CHECK(chk.points == 64);
        CHECK(chk.ok() == (what == sabotage::none));
        rows.push_back(make_row("cpu (oneDNN)", dtype, k, what, chk));
      }
    }
  print_table("GEMM correctness verdicts, CPU (oneDNN), M = N = 8, inputs uniform [-1, 1):", rows);
  // The flat tolerance let these through at the largest K (the reason for the bound).
  for (const auto& r : rows)
    if (r.dtype == "bf16" && r.k == largest_catalogue_k && r.what != sabotage::none)
      CHECK(r.old_valid());
}

TEST_CASE("a sabotaged kernel at the largest catalogue K makes the run INVALID, naming the bound",
          "[gemm][tolerance]") {
  json user;
  // Rules a busy machine cannot trip: only the sabotage may make these runs INVALID.
  auto rules = apply_overrides(load_ruleset("kernel-quick"),
                               test_support::load_free({{"repetitions", "3"}}), user);
  run_context ctx;
  ctx.rules = &rules;
  for (std::string dtype : {"fp32", "bf16"}) {
    config cfg;
    cfg.workload = "gemm";
    cfg.backend = "cpu";
    cfg.values = {{"M", "8"},
                  {"N", "8"},
                  {"K", std::to_string(largest_catalogue_k)},
                  {"dtype", dtype},
                  {"library", "onednn"},
                  {"trans_a", "0"},
                  {"trans_b", "0"}};
    for (sabotage what : all_sabotages) {
      auto w = make_gemm_workload([what](const gemm_shape& s, gemm_buffers& b) {
        apply_sabotage(
            what, s.m, s.n, s.k, [&](int64_t i, int64_t kk) { return b.a_at(s, i, kk); },
            [&](int64_t kk, int64_t j) { return b.b_at(s, kk, j); }, b.c);
      });
      run r;
      w->execute(cfg, r, ctx);
      INFO(dtype << " " << name_of(what) << ": " << r.extra.dump());
      INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
      REQUIRE(r.status == run_status::ok);
      const json& c = r.extra["correctness"];
      CHECK(c["points"] == 64);
      CHECK(c["bound"]["model"].get<std::string>().find("fp32 accumulation") != std::string::npos);
      if (what == sabotage::none) {
        CHECK(r.valid);
        CHECK(c["ok"] == true);
        continue;
      }
      CHECK_FALSE(r.valid);
      const auto reasons = test_support::reasons_not_from_load(r);
      REQUIRE(reasons.size() == 1);
      CHECK_THAT(reasons[0], Catch::StartsWith("correctness: error ") &&
                                 Catch::Contains("x the error bound") &&
                                 Catch::Contains("Higham & Mary") && Catch::Contains("K = 500000"));
      CHECK(c["max_bound_ratio"].get<double>() > 1);
      CHECK(c["max_normalised_error"].get<double>() > 0);
    }
  }
}

// ---- the CUDA paths' arithmetic, emulated ----
namespace {

// x rounded to `bits` significant bits, to nearest (ties to even) or toward zero.
double round_bits(double x, int bits, bool truncate) {
  if (x == 0 || !std::isfinite(x))
    return x;
  int e;
  std::frexp(x, &e);
  const double scale = std::ldexp(1.0, bits - e);
  const double y = x * scale;
  return (truncate ? std::trunc(y) : std::nearbyint(y)) / scale;
}

// One GPU path, pessimistically: truncation wherever the hardware is not documented to round.
struct emulated_path {
  std::string dtype;
  int operand_bits;   // significant bits of the stored operands (24: fp32)
  int device_bits;    // the device's own rounding of the operands (tf32: 11, truncating); 0: none
  int group;          // products summed exactly per tensor-core step (1: CUDA-core FMA)
  int inner_bits;     // bits of the tensor core's partial sums (0: straight into fp32)
  int promote;        // products per partial sum before promotion to fp32
  bool acc_truncates; // fp32 accumulator truncates (tensor cores) or rounds (FMA)
  int output_bits;    // 24: fp32 output, 8: bf16
};

const std::vector<emulated_path> emulated_paths = {
    {"fp32", 24, 0, 1, 0, 0, false, 24},      {"tf32", 24, 11, 8, 0, 0, true, 24},
    {"fp16", 11, 0, 8, 0, 0, true, 24},       {"bf16", 8, 0, 8, 0, 0, true, 24},
    {"fp8_e4m3", 4, 0, 32, 14, 128, true, 8},
};

// C = A B with A [m, k] row-major and B stored [n, k] (k contiguous for both).
std::vector<float> emulate(const emulated_path& p, int64_t m, int64_t n, int64_t k,
                           const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(size_t(m * n));
  auto dev = [&](float x) {
    return p.device_bits ? round_bits(x, p.device_bits, true) : double(x);
  };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float* ar = &a[size_t(i * k)];
      const float* br = &b[size_t(j * k)];
      double acc = 0, inner = 0;
      for (int64_t k0 = 0; k0 < k; k0 += p.group) {
        double g = 0; // products are exact; a tensor-core step sums them exactly
        for (int64_t kk = k0; kk < std::min(k, k0 + p.group); ++kk)
          g += dev(ar[kk]) * dev(br[kk]);
        if (p.inner_bits) {
          inner = round_bits(inner + g, p.inner_bits, true);
          const int64_t done = std::min(k, k0 + p.group);
          if (done % p.promote == 0 || done == k) {
            acc = round_bits(acc + inner, 24, p.acc_truncates);
            inner = 0;
          }
        } else {
          acc = round_bits(acc + g, 24, p.acc_truncates);
        }
      }
      c[size_t(i * n + j)] = float(round_bits(acc, p.output_bits, false));
    }
  return c;
}

std::vector<float> operand(int64_t n, int bits, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v)
    x = float(round_bits(u(g), bits, false));
  return v;
}

} // namespace

TEST_CASE("the CUDA error models admit their paths' rounding (emulated) and reject sabotage",
          "[gemm][tolerance]") {
  std::vector<verdict_row> rows;
  const int64_t m = 8, n = 8;
  for (const emulated_path& p : emulated_paths)
    for (int64_t k : {int64_t(28672), int64_t(128256), largest_catalogue_k}) {
      const auto a = operand(m * k, p.operand_bits, 3), b = operand(n * k, p.operand_bits, 4);
      auto a_at = [&](int64_t i, int64_t kk) { return a[size_t(i * k + kk)]; };
      auto b_at = [&](int64_t kk, int64_t j) { return b[size_t(j * k + kk)]; };
      const std::vector<float> real = emulate(p, m, n, k, a, b);
      for (sabotage what : all_sabotages) {
        std::vector<float> c = real;
        apply_sabotage(what, m, n, k, a_at, b_at, c);
        const gemm_check chk = check_gemm_output(
            m, n, k, a_at, b_at, [&](int64_t i, int64_t j) { return c[size_t(i * n + j)]; },
            cuda_error_model(parse_dtype(p.dtype)), 256, 5);
        INFO(p.dtype << " K=" << k << " " << name_of(what) << ": " << chk.reason());
        CHECK(chk.ok() == (what == sabotage::none));
        // The legitimate rounding stays well inside the bound: a margin for what the emulation
        // may miss (a longer promotion period, another summation order).
        if (what == sabotage::none)
          CHECK(chk.max_ratio < 0.25);
        rows.push_back(make_row("cuda (emulated)", p.dtype, k, what, chk));
      }
    }
  print_table("GEMM correctness verdicts, CUDA arithmetic emulated on the CPU (truncating "
              "accumulation, tf32 truncation, fp8 partial sums of 128 at 14 bits), M = N = 8:",
              rows);
}
