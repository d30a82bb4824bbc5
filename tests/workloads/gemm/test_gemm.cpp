#include <catch2/catch.hpp>

#include <cmath>

#include "harness/core/datasheet_peak.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/ruleset.hpp"
#include "tests/support/load_free.hpp"
#include "workloads/gemm/gemm_workload.hpp"

using namespace accelbench;
using namespace accelbench::gemm;

TEST_CASE("both CPU libraries compute correct GEMMs in every layout", "[gemm]") {
  for (std::string lib : {"onednn", "openblas"})
    for (std::string dtype : {"fp32", "bf16"})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          if (lib == "openblas" && dtype == "bf16" && !openblas_has_bf16())
            continue;
          gemm_shape s{37, 53, 71,
                       ta, tb, parse_dtype(dtype)}; // odd sizes: no kernel tile divides them
          INFO(lib << " " << dtype << " ta=" << ta << " tb=" << tb);
          auto buf = make_buffers(s, 11);
          auto k = make_cpu_gemm(lib, s);
          k->run(buf);
          auto chk = check_gemm(s, buf, 100000, 1);
          INFO(chk.reason());
          CHECK(chk.ok());
          CHECK(chk.points == s.m * s.n); // small shapes are checked completely
        }
}

TEST_CASE("the checker catches a wrong element and says where", "[gemm]") {
  gemm_shape s{64, 64, 64, false, false, dtype::fp32};
  auto buf = make_buffers(s, 5);
  make_cpu_gemm("onednn", s)->run(buf);
  REQUIRE(check_gemm(s, buf, 100000, 1).ok());
  buf.c[10 * 64 + 20] += 0.5f;
  auto chk = check_gemm(s, buf, 100000, 1);
  CHECK_FALSE(chk.ok());
  CHECK(chk.worst_i == 10);
  CHECK(chk.worst_j == 20);
  CHECK_THAT(chk.reason(), Catch::Contains("C[10,20]"));
}

TEST_CASE("a deliberately wrong kernel makes the run INVALID with the worst error", "[gemm]") {
  json user;
  // Rules a busy machine cannot trip: only the sabotage may make these runs INVALID.
  auto rules = apply_overrides(load_ruleset("kernel-quick"),
                               test_support::load_free({{"repetitions", "3"}}), user);
  config cfg;
  cfg.workload = "gemm";
  cfg.backend = "cpu";
  cfg.values = {{"M", "128"},          {"N", "96"},      {"K", "64"},     {"dtype", "fp32"},
                {"library", "onednn"}, {"trans_a", "0"}, {"trans_b", "0"}};
  run_context ctx;
  ctx.rules = &rules;
  {
    // Sabotage: scale every output by 1.01, an error far above the fp32 tolerance.
    auto w = make_gemm_workload([](const gemm_shape&, gemm_buffers& b) {
      for (auto& x : b.c)
        x *= 1.01f;
    });
    run r;
    w->execute(cfg, r, ctx);
    CHECK(r.status == run_status::ok);
    CHECK_FALSE(r.valid);
    const auto reasons = test_support::reasons_not_from_load(r);
    INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
    REQUIRE(reasons.size() == 1);
    CHECK_THAT(reasons[0], Catch::Contains("x the error bound at C[") &&
                               Catch::Contains("max normalised error"));
  }
  {
    auto w = make_gemm_workload();
    run r;
    w->execute(cfg, r, ctx);
    INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
    CHECK(r.valid);
    CHECK(r.samples.size() == 3);
    CHECK(r.find_metric("tflops")->value > 0);
    // A % of peak, unless no quiet probe of this machine's CPU peak is known or the run beat it:
    // then none (never a 0), and the run says why.
    if (const metric* pct = r.find_metric("pct_of_peak"))
      CHECK(pct->value > 0);
    else
      CHECK_FALSE(pct_of_peak_unknown(r).empty());
    CHECK(r.extra["correctness"]["ok"] == true);
    CHECK(r.extra["correctness"]["max_bound_ratio"].get<double>() <= 1.0);
    CHECK(r.extra["correctness"]["bound"]["u_acc"].get<double>() == std::ldexp(1.0, -24));
    CHECK(r.extra["correctness"]["ruleset_tolerance"].get<std::string>().find("not used") !=
          std::string::npos);
  }
}

TEST_CASE("the GEMM spec refuses shapes beyond BLAS limits and reports memory needs", "[gemm]") {
  auto w = make_gemm_workload();
  auto cfg = resolve_config(w->spec(), "cpu", {{"M", "3000000000"}});
  CHECK_THROWS_WITH(w->validate(cfg), Catch::Contains("M = 3000000000"));
  auto big = resolve_config(w->spec(), "cpu", {{"M", "100000"}, {"N", "100000"}, {"K", "100000"}});
  CHECK(w->estimate_host_bytes(big) == 3ull * 100000 * 100000 * 4);
}

// GEMM and attention on CUDA take their peak from this one table (harness/core/datasheet_peak):
// the catalogue's dense figure for the device and dtype, recorded with where it came from.
TEST_CASE("the datasheet peak of a CUDA kernel run: the catalogue's figure and its record",
          "[gemm]") {
  const kernel_peak pk = datasheet_peak("NVIDIA H100 80GB HBM3", dtype::bf16);
  CHECK(pk.source == peak_source::datasheet);
  CHECK(pk.tflops == Approx(989));
  CHECK(pk.record.at("tflops") == Approx(989));
  CHECK(pk.record.at("dtype") == "bf16");
  CHECK(pk.record.at("source") == "NVIDIA datasheet, dense");
  CHECK(pk.what == "NVIDIA datasheet, bf16 dense");
  CHECK(datasheet_peak("NVIDIA H200", dtype::fp8_e4m3).tflops == Approx(1979));
  CHECK(datasheet_peak("NVIDIA A100-SXM4-80GB", dtype::bf16).tflops == 0); // not in the catalogue
  CHECK(datasheet_peak_tflops("NVIDIA H100 PCIe", "bf16") == Approx(756));
}

TEST_CASE("seed_of: no run seed keeps the config key's seed, a run seed reproduces and changes "
          "the inputs",
          "[gemm]") {
  CHECK(seed_of(0, "gemm/cpu/M=8") == seed_from_key("gemm/cpu/M=8"));
  CHECK(seed_of(5, "gemm/cpu/M=8") == seed_of(5, "gemm/cpu/M=8"));
  CHECK(seed_of(5, "gemm/cpu/M=8") != seed_of(6, "gemm/cpu/M=8"));
  CHECK(seed_of(5, "gemm/cpu/M=8") != seed_of(5, "gemm/cpu/M=9")); // configs of a job differ
  CHECK(seed_of(5, "gemm/cpu/M=8") != seed_of(0, "gemm/cpu/M=8"));
}

TEST_CASE(
    "the run seed means the same for the CPU GEMM as for CUDA: same seed, same inputs and outputs, "
    "another seed, others",
    "[gemm]") {
  json user;
  auto rules = apply_overrides(load_ruleset("kernel-quick"),
                               test_support::load_free({{"repetitions", "3"}}), user);
  config cfg;
  cfg.workload = "gemm";
  cfg.backend = "cpu";
  cfg.values = {{"M", "32"},           {"N", "24"},      {"K", "16"},     {"dtype", "fp32"},
                {"library", "onednn"}, {"trans_a", "0"}, {"trans_b", "0"}};
  std::vector<float> a, c;
  auto w = make_gemm_workload([&](const gemm_shape&, gemm_buffers& b) {
    a = b.a32;
    c = b.c;
  });
  auto with_seed = [&](uint64_t seed) {
    run_context ctx;
    ctx.rules = &rules;
    ctx.seed = seed;
    run r;
    w->execute(cfg, r, ctx);
    REQUIRE(r.status == run_status::ok);
    return std::make_pair(a, c);
  };
  const auto first = with_seed(5), again = with_seed(5), other = with_seed(6), keyed = with_seed(0);
  REQUIRE_FALSE(first.first.empty());
  CHECK(first.first == again.first);
  CHECK(first.second == again.second);
  CHECK(first.first != other.first);
  CHECK(first.second != other.second);
  CHECK(first.first != keyed.first);
}

TEST_CASE("out_dtype: C's type is a stated axis, in the config key only when stated", "[gemm]") {
  auto w = make_gemm_workload();
  const workload_spec& spec = w->spec();
  // Unstated: not in the config, so every key stored before the axis existed still matches.
  const config plain = resolve_config(spec, "cpu", {{"dtype", "bf16"}});
  CHECK(plain.values.count("out_dtype") == 0);
  CHECK(plain.key().find("out_dtype") == std::string::npos);
  CHECK(shape_of(plain).out == dtype::fp32); // the CPU writes fp32, as its stored runs did
  CHECK_FALSE(shape_of(plain).out_stated);
  const config stated = resolve_config(spec, "cpu", {{"dtype", "bf16"}, {"out_dtype", "fp32"}});
  CHECK(stated.key().find("out_dtype=fp32") != std::string::npos);
  CHECK(shape_of(stated).out_stated);
  CHECK_THROWS_WITH(resolve_config(spec, "cpu", {{"out_dtype", "int8"}}),
                    Catch::Contains("unknown out_dtype 'int8'"));
  // Unstated on CUDA: the input type, as torch.matmul writes it; bf16 for the fp8 family.
  CHECK(torch_out_dtype(dtype::bf16) == dtype::bf16);
  CHECK(torch_out_dtype(dtype::fp16) == dtype::fp16);
  CHECK(torch_out_dtype(dtype::fp32) == dtype::fp32);
  CHECK(torch_out_dtype(dtype::tf32) == dtype::fp32);
  CHECK(torch_out_dtype(dtype::fp8_e4m3) == dtype::bf16);
  CHECK(torch_out_dtype(dtype::nvfp4) == dtype::bf16);
  // The CPU backend skips an output type its libraries do not write, with the reason.
  const config bf16_out = resolve_config(spec, "cpu", {{"dtype", "bf16"}, {"out_dtype", "bf16"}});
  CHECK_THAT(w->unavailable_reason(bf16_out),
             Catch::Contains("out_dtype bf16 is not supported by the cpu backend"));
  CHECK(w->unavailable_reason(stated).empty());
}
