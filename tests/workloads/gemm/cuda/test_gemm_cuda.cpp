// workloads/gemm/cuda: quantisation and scale-layout logic (everywhere), skip reasons, and the
// cuBLASLt GEMM against the CPU reference for every dtype the device supports (GPU only).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "harness/core/ruleset.hpp"
#include "harness/device/device.hpp"
#include "tests/support/gpu_skip.hpp"
#include "tests/support/load_free.hpp"
#include "tests/workloads/gemm/gemm_sabotage.hpp"
#include "workloads/gemm/cuda/gemm_cuda.hpp"
#include "workloads/gemm/gemm_workload.hpp"

using namespace accelbench;
using namespace accelbench::gemm;
using namespace accelbench::gemm::testing;

namespace {
config gemm_cfg(int64_t m, int64_t n, int64_t k, const std::string& dtype, bool ta = false,
                bool tb = false) {
  config c;
  c.workload = "gemm";
  c.backend = "cuda";
  c.values = {{"M", std::to_string(m)}, {"N", std::to_string(n)},    {"K", std::to_string(k)},
              {"dtype", dtype},         {"trans_a", ta ? "1" : "0"}, {"trans_b", tb ? "1" : "0"},
              {"library", "cublaslt"}};
  return c;
}
} // namespace

TEST_CASE("minifloat decode: known values of e4m3, e5m2, e2m1, ue8m0", "[cuda]") {
  CHECK(decode_minifloat(minifloat::e4m3, 0x38) == 1.0f);   // 0.0111.000
  CHECK(decode_minifloat(minifloat::e4m3, 0x7E) == 448.0f); // largest finite
  CHECK(std::isnan(decode_minifloat(minifloat::e4m3, 0x7F)));
  CHECK(decode_minifloat(minifloat::e4m3, 0x01) == std::ldexp(1.0f, -9)); // smallest subnormal
  CHECK(decode_minifloat(minifloat::e5m2, 0x3C) == 1.0f);
  CHECK(decode_minifloat(minifloat::e5m2, 0x7B) == 57344.0f);
  CHECK(std::isinf(decode_minifloat(minifloat::e5m2, 0x7C)));
  CHECK(decode_minifloat(minifloat::e2m1, 0x7) == 6.0f);
  CHECK(decode_minifloat(minifloat::e2m1, 0x1) == 0.5f);
  CHECK(decode_minifloat(minifloat::e2m1, 0xB) == -1.5f);
  CHECK(decode_minifloat(minifloat::ue8m0, 127) == 1.0f);
  CHECK(decode_minifloat(minifloat::ue8m0, 120) == std::ldexp(1.0f, -7));
  CHECK(minifloat_max(minifloat::e4m3) == 448.0f);
  CHECK(minifloat_max(minifloat::e2m1) == 6.0f);
}

TEST_CASE("minifloat encode rounds to nearest even and saturates", "[cuda]") {
  for (auto f : {minifloat::e4m3, minifloat::e5m2, minifloat::e2m1}) {
    // Every finite code round-trips.
    int n = f == minifloat::e2m1 ? 16 : 256;
    for (int c = 0; c < n; ++c) {
      float v = decode_minifloat(f, (uint8_t)c);
      if (!std::isfinite(v) || v == 0)
        continue;
      CHECK(decode_minifloat(f, encode_minifloat(f, v)) == v);
    }
  }
  CHECK(decode_minifloat(minifloat::e4m3, encode_minifloat(minifloat::e4m3, 1000.0f)) == 448.0f);
  CHECK(decode_minifloat(minifloat::e4m3, encode_minifloat(minifloat::e4m3, -1000.0f)) == -448.0f);
  // 1.0625 is halfway between 1.0 and 1.125 in e4m3: ties to the even mantissa (1.0).
  CHECK(decode_minifloat(minifloat::e4m3, encode_minifloat(minifloat::e4m3, 1.0625f)) == 1.0f);
  CHECK(decode_minifloat(minifloat::e4m3, encode_minifloat(minifloat::e4m3, 1.07f)) == 1.125f);
  // FP4: 2.5 ties between 2 and 3 -> 2 (even); 5 ties between 4 and 6 -> 4.
  CHECK(decode_minifloat(minifloat::e2m1, encode_minifloat(minifloat::e2m1, 2.5f)) == 2.0f);
  CHECK(decode_minifloat(minifloat::e2m1, encode_minifloat(minifloat::e2m1, 5.0f)) == 4.0f);
  CHECK(decode_minifloat(minifloat::e2m1, encode_minifloat(minifloat::e2m1, 7.0f)) == 6.0f);
  CHECK(encode_minifloat(minifloat::ue4m3, -1.0f) == 0); // unsigned: negatives clamp to 0
  // The scale formats round-trip too, and ties go to even in e5m2 (1.125 between 1 and 1.25).
  for (auto f : {minifloat::ue4m3, minifloat::ue8m0})
    for (int c = 1; c < 255; ++c) {
      float v = decode_minifloat(f, (uint8_t)c);
      if (std::isfinite(v) && v > 0)
        CHECK(decode_minifloat(f, encode_minifloat(f, v)) == v);
    }
  CHECK(decode_minifloat(minifloat::e5m2, encode_minifloat(minifloat::e5m2, 1.125f)) == 1.0f);
  // NaN stays NaN where the format has one.
  for (auto f : {minifloat::e4m3, minifloat::e5m2, minifloat::ue4m3, minifloat::ue8m0})
    CHECK(std::isnan(decode_minifloat(f, encode_minifloat(f, NAN))));
}

TEST_CASE("block scale layout: 128x4 tiles of 512 bytes, 32-row interleave", "[cuda]") {
  CHECK(block_scale_offset(0, 0, 8) == 0);
  CHECK(block_scale_offset(0, 3, 8) == 3);
  CHECK(block_scale_offset(1, 0, 8) == 16);
  CHECK(block_scale_offset(32, 0, 8) == 4);
  CHECK(block_scale_offset(127, 3, 8) == 31 * 16 + 3 * 4 + 3);
  CHECK(block_scale_offset(0, 4, 8) == 512);    // next tile along K
  CHECK(block_scale_offset(128, 0, 8) == 1024); // next row block after 2 column tiles
  CHECK(block_scale_bytes(200, 5) == 256 * 8);
  // The mapping is a bijection onto the padded tensor.
  std::vector<int> seen(block_scale_bytes(256, 8), 0);
  for (int r = 0; r < 256; ++r)
    for (int c = 0; c < 8; ++c)
      seen[block_scale_offset(r, c, 8)]++;
  for (int s : seen)
    CHECK(s == 1);
}

TEST_CASE("every CUDA dtype has an error model, and the ruleset tolerance is not needed",
          "[cuda]") {
  for (const auto& d : cuda_gemm_dtypes()) {
    const gemm_error_model m = cuda_error_model(parse_dtype(d));
    CHECK_FALSE(m.name.empty());
    CHECK(m.u_acc <= std::ldexp(1.0, -23)); // every path accumulates in fp32
    CHECK(m.u_out == (d.rfind("fp8", 0) == 0           ? std::ldexp(1.0, -8) + std::ldexp(1.0, -23)
                      : (d == "mxfp8" || d == "nvfp4") ? std::ldexp(1.0, -8)
                                                       : std::ldexp(1.0, -24)));
  }
}

TEST_CASE("skip reasons: layouts and dtypes refused with the offending value", "[cuda]") {
  auto r =
      gemm_cuda_unavailable_reason(shape_of(gemm_cfg(256, 256, 256, "fp8_e4m3", false, false)));
  CHECK(r.find("trans_b=1") != std::string::npos);
  r = gemm_cuda_unavailable_reason(shape_of(gemm_cfg(256, 256, 48, "mxfp8", false, true)));
  CHECK(r.find("K=48") != std::string::npos);
  r = gemm_cuda_unavailable_reason(shape_of(gemm_cfg(250, 256, 256, "fp8_e5m2", false, true)));
  CHECK(r.find("M=250") != std::string::npos);
  // An unknown dtype never reaches the backend: reading the config refuses it, naming it.
  CHECK_THROWS_WITH(shape_of(gemm_cfg(64, 64, 64, "int4")), Catch::Contains("int4"));
  std::string why;
  if (!device::cuda_available(&why)) {
    // Without a device every valid config is unavailable, with the runtime's reason.
    r = gemm_cuda_unavailable_reason(shape_of(gemm_cfg(64, 64, 64, "bf16")));
    CHECK(r.find(why) != std::string::npos);
  }
  // bf16 A and B, bf16 C (out_dtype unstated: the input type), the workspace.
  CHECK(gemm_cuda_device_bytes(shape_of(gemm_cfg(1024, 1024, 1024, "bf16"))) ==
        2ull * 1024 * 1024 * 2 + 1024ull * 1024 * 2 + (32ull << 20));
}

TEST_CASE("cuBLASLt GEMM agrees with the reference for every supported dtype", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  json user;
  // A fixed iteration count and no time bound a busy host could reach: only the check judges.
  auto rules =
      apply_overrides(load_ruleset("kernel-v1"),
                      test_support::load_free({{"repetitions", "3"}, {"iterations", "2"}}), user);
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 7;
  // A config larger than the device is refused (skipped, with both sizes) before allocating.
  {
    auto big = gemm_cfg(200000, 200000, 200000, "fp32");
    run out;
    out.cfg = big;
    gemm_cuda_execute(shape_of(big), big.key(), out, ctx);
    INFO(out.status_reason);
    CHECK(out.status == run_status::skipped);
    CHECK(out.status_reason.find("refused before allocating") != std::string::npos);
  }
  for (const auto& dt : cuda_gemm_dtypes()) {
    for (auto [ta, tb] : {std::pair{false, true}, {false, false}, {true, false}, {true, true}}) {
      auto cfg = gemm_cfg(256, 192, 320, dt, ta, tb);
      auto reason = gemm_cuda_unavailable_reason(shape_of(cfg));
      run out;
      out.cfg = cfg;
      gemm_cuda_execute(shape_of(cfg), cfg.key(), out, ctx);
      INFO(dt << " trans_a=" << ta << " trans_b=" << tb << ": " << out.status_reason);
      if (!reason.empty()) {
        CHECK(out.status == run_status::skipped);
        WARN("skipped " << dt << ": " << reason);
        continue;
      }
      CHECK(out.status == run_status::ok);
      CHECK(out.valid);
      CHECK(out.samples.size() == 3);
      CHECK(out.extra["correctness"]["ok"] == true);
      CHECK(out.extra["correctness"]["max_bound_ratio"].get<double>() <= 1.0);
      const dtype in = parse_dtype(dt);
      CHECK(out.extra["correctness"]["bound"]["model"] ==
            cuda_error_model(in, torch_out_dtype(in)).name);
      CHECK(out.extra["output_dtype"] == to_string(torch_out_dtype(in)));
      CHECK(out.extra["algorithm"].contains("algo_id"));
      REQUIRE(out.find_metric("tflops"));
      CHECK(out.find_metric("tflops")->value > 0);
    }
  }
}

TEST_CASE("cuBLASLt: sabotaged outputs at the largest catalogue K are INVALID for every dtype",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  json user;
  auto rules =
      apply_overrides(load_ruleset("kernel-quick"),
                      test_support::load_free({{"repetitions", "3"}, {"iterations", "1"}}), user);
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 11;
  // DeepBench's train_512x16x500000_NN has the largest K of the catalogues (a multiple of 32, as
  // the block-scaled dtypes need). M = N = 16: the 8- and 4-bit kernels need multiples of 16;
  // all 256 elements are checked.
  const int64_t k = 500000;
  std::vector<verdict_row> rows;
  for (const auto& dt : cuda_gemm_dtypes()) {
    const auto cfg = gemm_cfg(16, 16, k, dt, false, true);
    if (auto why = gemm_cuda_unavailable_reason(shape_of(cfg)); !why.empty()) {
      WARN("skipped " << dt << ": " << why);
      continue;
    }
    for (sabotage what : all_sabotages) {
      run out;
      out.cfg = cfg;
      gemm_cuda_execute(shape_of(cfg), cfg.key(), out, ctx, [what](cuda_gemm_output& o) {
        apply_sabotage(what, o.m, o.n, o.k, o.a_at, o.b_at, o.c);
      });
      INFO(dt << " " << name_of(what) << ": " << out.status_reason << " " << out.extra.dump());
      REQUIRE(out.status == run_status::ok);
      const json& c = out.extra["correctness"];
      CHECK(c["points"] == 256);
      CHECK(out.valid == (what == sabotage::none));
      if (what != sabotage::none) {
        const auto reasons = test_support::reasons_not_from_load(out);
        REQUIRE(reasons.size() == 1);
        CHECK_THAT(reasons[0], Catch::Contains("x the error bound"));
      }
      gemm_check chk; // the row needs the two errors only
      chk.max_ratio =
          c["max_bound_ratio"].is_number() ? c["max_bound_ratio"].get<double>() : INFINITY;
      chk.max_normalised = c["max_normalised_error"].is_number()
                               ? c["max_normalised_error"].get<double>()
                               : INFINITY;
      rows.push_back(make_row("cuda (cuBLASLt)", dt, k, what, chk));
    }
  }
  print_table("GEMM correctness verdicts, CUDA (cuBLASLt), M = N = 16:", rows);
}

TEST_CASE("a CUDA build's gemm spec offers every CUDA dtype (fp16, tf32, fp8, mxfp8, nvfp4)",
          "[cuda]") {
  // The choices were once set before the axes were, and overwritten: `run gemm --backend cuda
  // --set dtype=fp16` was refused as an unknown dtype (found by the GPU check's dry run).
  auto w = make_gemm_workload();
  const axis* dtype = nullptr;
  for (const auto& a : w->spec().axes)
    if (a.name == "dtype")
      dtype = &a;
  REQUIRE(dtype);
  CHECK(dtype->choices == cuda_gemm_dtypes());
  for (const char* d : {"fp16", "tf32", "fp8_e4m3", "mxfp8", "nvfp4"})
    CHECK(std::find(dtype->choices.begin(), dtype->choices.end(), d) != dtype->choices.end());
  CHECK(std::find(w->spec().backends.begin(), w->spec().backends.end(), "cuda") !=
        w->spec().backends.end());
}

TEST_CASE("cuBLASLt writes C as out_dtype: bf16 inputs write bf16 unless fp32 is stated",
          "[cuda][gpu]") {
  // Everywhere: which output types cuBLASLt is asked for, and the skips for the others.
  auto fp32_bf16 = gemm_cfg(256, 256, 256, "fp32");
  fp32_bf16.values["out_dtype"] = "bf16";
  CHECK_THAT(gemm_cuda_unavailable_reason(shape_of(fp32_bf16)),
             Catch::Contains("out_dtype bf16 with dtype fp32"));
  auto fp16_bf16 = gemm_cfg(256, 256, 256, "fp16");
  fp16_bf16.values["out_dtype"] = "bf16";
  CHECK_THAT(gemm_cuda_unavailable_reason(shape_of(fp16_bf16)),
             Catch::Contains("fp16 or fp32 only"));
  // C's bytes count in the device memory estimate: bf16 C is half of fp32 C.
  auto bf16 = gemm_cfg(1024, 1024, 1024, "bf16");
  auto bf16_f32 = bf16;
  bf16_f32.values["out_dtype"] = "fp32";
  CHECK(gemm_cuda_device_bytes(shape_of(bf16_f32)) - gemm_cuda_device_bytes(shape_of(bf16)) ==
        1024ull * 1024 * 2);
  ACCELBENCH_REQUIRE_GPU();
  json user;
  auto rules =
      apply_overrides(load_ruleset("kernel-quick"),
                      test_support::load_free({{"repetitions", "3"}, {"iterations", "2"}}), user);
  run_context ctx;
  ctx.rules = &rules;
  for (const auto& [cfg, want] : {std::pair{bf16, "bf16"}, {bf16_f32, "fp32"}}) {
    run out;
    out.cfg = cfg;
    gemm_cuda_execute(shape_of(cfg), cfg.key(), out, ctx);
    INFO(cfg.key() << ": " << out.status_reason);
    REQUIRE(out.status == run_status::ok);
    CHECK(out.valid);
    CHECK(out.extra["output_dtype"] == want);
  }
}
