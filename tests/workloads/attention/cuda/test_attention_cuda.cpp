// workloads/attention/cuda and kernels/attention/cuda: skip reasons (everywhere), and the native
// and cuDNN kernels against the double-precision CPU reference on small shapes (GPU only).
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/device/device.hpp"
#include "tests/support/gpu_skip.hpp"
#include "tests/support/load_free.hpp"
#include "workloads/attention/attention_check.hpp"
#include "workloads/attention/cuda/attention_cuda.hpp"

using namespace accelbench;
using namespace accelbench::attention;

namespace {
config attn_cfg(const std::string& impl, const std::string& dtype, const std::string& pass,
                int64_t hd = 64, bool causal = false, int64_t sq = 128, int64_t sk = 128) {
  config c;
  c.workload = "attention";
  c.backend = "cuda";
  c.values = {{"batch", "1"},
              {"heads", "4"},
              {"kv_heads", "2"},
              {"seq_q", std::to_string(sq)},
              {"seq_k", std::to_string(sk)},
              {"head_dim", std::to_string(hd)},
              {"causal", causal ? "1" : "0"},
              {"dtype", dtype},
              {"pass", pass},
              {"scale", "0"},
              {"impl", impl}};
  return c;
}
std::vector<float> rnd(size_t n, uint64_t seed, bool bf16) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> u(0, 1); // as the workloads draw: a softmax far from flat
  std::vector<float> x(n);
  for (auto& e : x)
    e = bf16 ? bf16_to_float(float_to_bf16(u(g))) : u(g);
  return x;
}
} // namespace

TEST_CASE("attention cuda skip reasons name the offending value", "[cuda]") {
  CHECK(attention_cuda_unavailable_reason(params_of(attn_cfg("flash3", "bf16", "fwd")))
            .find("impl=flash3") != std::string::npos);
  // cuDNN runs the backward pass too: its skip reason (here, if any) is only about the device.
  CHECK(attention_cuda_unavailable_reason(params_of(attn_cfg("cudnn", "bf16", "bwd")))
            .find("impl=") == std::string::npos);
  CHECK(
      attention_cuda_unavailable_reason(params_of(attn_cfg("cudnn", "fp32", "bwd"))).find("bf16") !=
      std::string::npos);
  CHECK(
      attention_cuda_unavailable_reason(params_of(attn_cfg("cudnn", "fp32", "fwd"))).find("bf16") !=
      std::string::npos);
  CHECK(attention_cuda_unavailable_reason(params_of(attn_cfg("native", "bf16", "fwd", 320)))
            .find("head_dim=320") != std::string::npos);
  CHECK(attention_cuda_unavailable_reason(
            params_of(attn_cfg("cudnn", "bf16", "fwd", 64, true, 64, 128)))
            .find("seq_q=64") != std::string::npos);
  CHECK(attention_cuda_device_bytes(params_of(attn_cfg("native", "fp32", "fwd"))) ==
        (2 * 128 * 4 * 64 + 2 * 128 * 2 * 64) * 4 + 4 * 128 * 4);
  std::string why;
  if (!device::cuda_available(&why))
    CHECK(
        attention_cuda_unavailable_reason(params_of(attn_cfg("native", "bf16", "fwd"))).find(why) !=
        std::string::npos);
}

TEST_CASE("native attention forward and backward match the reference", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  struct sc {
    int64_t b, h, kvh, sq, sk, d;
    bool causal;
  };
  for (auto c : {sc{1, 2, 2, 70, 70, 64, false}, sc{2, 4, 2, 33, 97, 64, true},
                 sc{1, 4, 1, 96, 40, 128, true}, sc{1, 2, 1, 50, 50, 80, false},
                 sc{1, 2, 2, 40, 40, 256, true},
                 // head_dim 192: the forward needs exactly 48 KB of shared memory, dK/dV just over
                 // (the opt-in boundary); non-causal with seq_q != seq_k
                 sc{1, 2, 1, 45, 45, 192, true}, sc{2, 2, 2, 37, 71, 64, false}}) {
    for (dtype t : {dtype::fp32, dtype::bf16}) {
      const bool bf16 = t == dtype::bf16;
      attention_shape s;
      s.batch = c.b, s.heads = c.h, s.kv_heads = c.kvh, s.seq_q = c.sq, s.seq_k = c.sk,
      s.head_dim = c.d;
      s.causal = c.causal;
      size_t nq = s.batch * s.seq_q * s.heads * s.head_dim,
             nk = s.batch * s.seq_k * s.kv_heads * s.head_dim;
      auto q = rnd(nq, 1, bf16), k = rnd(nk, 2, bf16), v = rnd(nk, 3, bf16), d_o = rnd(nq, 4, bf16);
      auto r = run_backward_host(s, "native", t, q, k, v, d_o);
      check_options opt;
      opt.tolerance = bf16 ? 2e-2 : 1e-4;
      INFO("shape b=" << c.b << " h=" << c.h << " kvh=" << c.kvh << " sq=" << c.sq << " sk=" << c.sk
                      << " d=" << c.d << " causal=" << c.causal << " bf16=" << bf16);
      auto f = check_forward(s, q.data(), k.data(), v.data(), r.o.data(), r.lse.data(), opt);
      INFO(f.reason());
      CHECK(f.ok());
      auto b = check_backward(s, q.data(), k.data(), v.data(), d_o.data(), r.dq.data(), r.dk.data(),
                              r.dv.data(), opt);
      INFO(b.reason());
      CHECK(b.ok());
    }
  }
}

TEST_CASE("cuDNN SDPA forward matches the reference", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  for (bool causal : {false, true}) {
    attention_shape s;
    s.batch = 2, s.heads = 4, s.kv_heads = 2, s.seq_q = 128, s.seq_k = 128, s.head_dim = 64,
    s.causal = causal;
    size_t nq = s.batch * s.seq_q * s.heads * s.head_dim,
           nk = s.batch * s.seq_k * s.kv_heads * s.head_dim;
    auto q = rnd(nq, 5, true), k = rnd(nk, 6, true), v = rnd(nk, 7, true);
    host_result r;
    try {
      r = run_forward_host(s, "cudnn", dtype::bf16, q, k, v);
    } catch (const std::exception& e) {
      FAIL("cuDNN SDPA forward failed: " << e.what());
    }
    check_options opt;
    opt.tolerance = 2e-2;
    auto f = check_forward(s, q.data(), k.data(), v.data(), r.o.data(), r.lse.data(), opt);
    INFO("causal=" << causal << " " << f.reason());
    CHECK(f.ok());
  }
}

TEST_CASE("cuDNN SDPA backward matches the reference (MHA and GQA, causal and not)",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  for (int64_t kvh : {4, 2, 1})
    for (bool causal : {false, true}) {
      attention_shape s;
      s.batch = 2, s.heads = 4, s.kv_heads = kvh, s.seq_q = 128, s.seq_k = 128, s.head_dim = 64,
      s.causal = causal;
      size_t nq = s.batch * s.seq_q * s.heads * s.head_dim,
             nk = s.batch * s.seq_k * s.kv_heads * s.head_dim;
      auto q = rnd(nq, 8, true), k = rnd(nk, 9, true), v = rnd(nk, 10, true),
           d_o = rnd(nq, 11, true);
      host_result r;
      try {
        r = run_backward_host(s, "cudnn", dtype::bf16, q, k, v, d_o);
      } catch (const std::exception& e) {
        FAIL("cuDNN SDPA backward failed (kv_heads=" << kvh << " causal=" << causal
                                                     << "): " << e.what());
      }
      check_options opt;
      opt.tolerance = 2e-2;
      auto b = check_backward(s, q.data(), k.data(), v.data(), d_o.data(), r.dq.data(), r.dk.data(),
                              r.dv.data(), opt);
      INFO("kv_heads=" << kvh << " causal=" << causal << " " << b.reason());
      CHECK(b.ok());
    }
}

TEST_CASE("attention_cuda_execute fills a valid run", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  auto rules = load_ruleset("kernel-v1");
  json user;
  rules = apply_overrides(
      rules, test_support::load_free({{"repetitions", "3"}, {"iterations", "2"}}), user);
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 11;
  for (auto [impl, pass] : {std::pair{"native", "fwd_bwd"},
                            {"native", "bwd"},
                            {"cudnn", "fwd"},
                            {"cudnn", "fwd_bwd"}}) {
    auto cfg = attn_cfg(impl, "bf16", pass, 64, true);
    run out;
    out.cfg = cfg;
    attention_cuda_execute(params_of(cfg), out, ctx);
    INFO(impl << " " << pass << ": " << out.status_reason);
    CHECK(out.status == run_status::ok);
    CHECK(out.valid);
    CHECK(out.samples.size() == 3);
    REQUIRE(out.find_metric("tflops"));
  }
}

TEST_CASE("native attention FLOPs: executed 14*D per pair in backward, counted by the convention",
          "[cuda]") {
  attention_shape s;
  s.batch = 2, s.heads = 4, s.kv_heads = 2, s.seq_q = 64, s.seq_k = 64, s.head_dim = 128;
  for (bool causal : {false, true}) {
    s.causal = causal;
    const double pairs = attention_pairs(s);
    const double per_d = double(s.batch * s.heads * s.head_dim) * pairs; // head_dim FLOPs per pair
    // The convention (k_flop_convention): forward 4*D, backward 10*D (2.5x), fwd_bwd 14*D.
    CHECK(attention_flops(s, pass_kind::fwd) == Approx(4 * per_d));
    CHECK(attention_flops(s, pass_kind::bwd) == Approx(10 * per_d));
    CHECK(attention_flops(s, pass_kind::fwd_bwd) == Approx(14 * per_d));
    // What the native kernels execute: the backward recomputes Q K^T and dO V^T in both kernels.
    CHECK(native::executed_flops(s, pass_kind::fwd) == Approx(4 * per_d));
    CHECK(native::executed_flops(s, pass_kind::bwd) == Approx(14 * per_d));
    CHECK(native::executed_flops(s, pass_kind::fwd_bwd) == Approx(18 * per_d));
  }
  CHECK(std::string(k_flop_convention).find("bwd 2.5x") != std::string::npos);
}

TEST_CASE("native attention runs record executed FLOPs beside the convention's", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  // Rules a busy host cannot trip (a preempted calibration makes samples short: INVALID).
  json user;
  auto rs = apply_overrides(load_ruleset("kernel-quick"), test_support::load_free(), user);
  run_context ctx;
  ctx.rules = &rs;
  ctx.seed = 5;
  auto cfg = attn_cfg("native", "bf16", "fwd_bwd", 64, true);
  run out;
  out.cfg = cfg;
  attention_cuda_execute(params_of(cfg), out, ctx);
  INFO(out.status_reason);
  REQUIRE(out.status == run_status::ok);
  CHECK(out.valid);
  const auto s = shape_of(cfg);
  CHECK(out.extra["flops_per_iteration"].get<double>() ==
        Approx(attention_flops(s, pass_kind::fwd_bwd)));
  CHECK(out.extra["executed_flops_per_iteration"].get<double>() ==
        Approx(native::executed_flops(s, pass_kind::fwd_bwd)));
  CHECK(out.effective_settings["measurement_applied"].contains("warmup"));
}

TEST_CASE("cuDNN SDPA builds one variant pack per set of buffers, not one per run", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  attention_shape s;
  s.batch = 1, s.heads = 2, s.kv_heads = 2, s.seq_q = 128, s.seq_k = 128, s.head_dim = 64,
  s.causal = true;
  if (auto why = cudnn::unsupported_reason(s, dtype::bf16, true); !why.empty())
    ACCELBENCH_SKIP(why);
  const uint64_t n = 128 * 2 * 64;
  device::device_buffer q(n * 2), k(n * 2), v(n * 2), o(n * 2), o2(n * 2), lse(2 * 128 * 4);
  q.zero(), k.zero(), v.zero();
  cudnn::sdpa_forward f(s, dtype::bf16);
  CHECK(f.variant_packs_built() == 0); // built with the graph: nothing bound yet
  attention_tensors io = {.type = dtype::bf16,
                          .q = q.get(),
                          .k = k.get(),
                          .v = v.get(),
                          .o = o.get(),
                          .lse = lse.as<float>()};
  for (int i = 0; i < 5; ++i)
    f.run(io, nullptr);
  device::synchronize("sdpa forward");
  CHECK(f.variant_packs_built() == 1);
  io.o = o2.get(); // other output buffer
  f.run(io, nullptr);
  f.run(io, nullptr);
  device::synchronize("sdpa forward");
  CHECK(f.variant_packs_built() == 2);
}

TEST_CASE("native attention opts in shared memory once per device, and runs on every device",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  attention_shape s; // head_dim 256: 64 KB of shared memory, over the 48 KB default
  s.batch = 1, s.heads = 2, s.kv_heads = 1, s.seq_q = 40, s.seq_k = 40, s.head_dim = 256,
  s.causal = true;
  const size_t nq = 40 * 2 * 256, nk = 40 * 256;
  auto q = rnd(nq, 11, true), k = rnd(nk, 12, true), v = rnd(nk, 13, true);
  const int devices = int(device::query_cuda().gpus.size());
  check_options opt;
  opt.tolerance = 2e-2;
  for (int d = 0; d < devices; ++d) {
    INFO("device " << d);
    const int before = native::smem_opt_ins();
    auto r = run_forward_host(s, "native", dtype::bf16, q, k, v, d);
    const int first = native::smem_opt_ins();
    // A device seen for the first time opts in (device 0 may have been opted in by an earlier
    // test case of this process).
    if (d > 0 || before == 0)
      CHECK(first > before);
    auto f = check_forward(s, q.data(), k.data(), v.data(), r.o.data(), r.lse.data(), opt);
    INFO(f.reason());
    CHECK(f.ok());
    run_forward_host(s, "native", dtype::bf16, q, k, v, d);
    CHECK(native::smem_opt_ins() == first); // not repeated on the same device
  }
  if (devices < 2)
    WARN("one device: the per-device opt-in was exercised on device 0 only");
}

TEST_CASE("cuDNN SDPA refusals name the support rule they break", "[cuda]") {
  // Config rules: the run is skipped with the rule's name, before any device is touched.
  const std::string d60 =
      attention_cuda_unavailable_reason(params_of(attn_cfg("cudnn", "bf16", "fwd", 60)));
  INFO(d60);
  CHECK(d60.find("rule 'head_dim'") != std::string::npos);
  CHECK(d60.find("head_dim=60") != std::string::npos);
  CHECK(attention_cuda_unavailable_reason(params_of(attn_cfg("cudnn", "fp32", "fwd_bwd")))
            .find("rule 'io_dtype'") != std::string::npos);
  CHECK(attention_cuda_unavailable_reason(
            params_of(attn_cfg("cudnn", "bf16", "fwd", 64, true, 64, 128)))
            .find("rule 'causal_alignment'") != std::string::npos);
  // The graph's constructors check the same rules first (no cuDNN handle, no device needed), so
  // a caller that skipped unsupported_reason gets the rule too, as a backend_error.
  attention_shape s;
  s.batch = 1, s.heads = 2, s.kv_heads = 2, s.seq_q = 64, s.seq_k = 64, s.head_dim = 60;
  try {
    cudnn::sdpa_forward f(s, dtype::bf16);
    FAIL("head_dim=60 built a cuDNN graph");
  } catch (const backend_error& e) {
    CHECK(std::string(e.what()).find("rule 'head_dim'") != std::string::npos);
  }
  // The graph's element type too: cuDNN's SDPA computes in bf16 and fp16 only.
  s.head_dim = 64;
  for (dtype t : {dtype::fp32, dtype::fp8_e4m3}) {
    try {
      cudnn::sdpa_backward b(s, t);
      FAIL("a cuDNN graph was built for " << to_string(t));
    } catch (const backend_error& e) {
      CHECK(std::string(e.what()).find("rule 'io_dtype'") != std::string::npos);
      CHECK(std::string(e.what()).find("dtype=" + to_string(t)) != std::string::npos);
    }
  }
  // What this process loaded, as a run records it.
  const cudnn::sdpa_env env = cudnn::environment();
  CHECK(env.cudnn_version >= 90000);
  CHECK(env.built_cuda_version >= 12000);
  CHECK(env.cudnn_cudart_version > 0);
  CHECK(cudnn::library_path().find("libcudnn") != std::string::npos);
}

TEST_CASE("the CUDA attention check uses the ruleset's correctness samples, as the CPU one",
          "[cuda]") {
  json user;
  auto rules = apply_overrides(load_ruleset("kernel-v1"), json::object(), user);
  attention_shape s;
  s.head_dim = 128;
  const auto opt = check_options_for(rules, s, "bf16", 7);
  CHECK(opt.sample_rows ==
        std::max<int64_t>(8, (rules.correctness_samples() + s.head_dim - 1) / s.head_dim));
  CHECK(opt.tolerance == rules.tolerance("bf16"));
  CHECK(opt.seed == 7);
}

TEST_CASE("cuDNN SDPA bf16 runs find an engine and pass the check, fwd and fwd_bwd, causal and not",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  json user;
  auto rules = apply_overrides(load_ruleset("kernel-quick"), test_support::load_free(), user);
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 21;
  for (const char* pass : {"fwd", "fwd_bwd"})
    for (bool causal : {false, true}) {
      auto cfg = attn_cfg("cudnn", "bf16", pass, 128, causal, 256, 256);
      run out;
      out.cfg = cfg;
      attention_cuda_execute(params_of(cfg), out, ctx);
      INFO(pass << " causal=" << causal << ": " << out.status_reason);
      REQUIRE(out.status == run_status::ok);
      CHECK(out.valid);
      CHECK(out.extra["implementation"].get<std::string>().find("engine") != std::string::npos);
      CHECK(out.extra["correctness"].contains("max_error"));
      REQUIRE(out.extra.contains("cudnn"));
      CHECK(out.extra["cudnn"]["library"].get<std::string>().find("libcudnn") != std::string::npos);
      CHECK(out.extra["cudnn"]["sm"].get<int>() >= 80);
    }
}

TEST_CASE("cuDNN SDPA: an unsupported config is skipped with the rule's name on a GPU too",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  json user;
  auto rules = apply_overrides(load_ruleset("kernel-quick"), test_support::load_free(), user);
  run_context ctx;
  ctx.rules = &rules;
  // head_dim 264: over every GPU's limit; 256 backward: over every limit but Hopper's.
  auto cfg = attn_cfg("cudnn", "bf16", "fwd", 264);
  run out;
  out.cfg = cfg;
  attention_cuda_execute(params_of(cfg), out, ctx);
  INFO(out.status_reason);
  CHECK(out.status == run_status::skipped);
  CHECK(out.status_reason.find("rule 'head_dim'") != std::string::npos);
  const int sm = cudnn::environment().sm;
  auto bwd = attn_cfg("cudnn", "bf16", "fwd_bwd", 256);
  const std::string why = attention_cuda_unavailable_reason(params_of(bwd));
  INFO("sm_" << sm << ": " << why);
  CHECK((why.find("rule 'head_dim'") != std::string::npos) == (sm / 10 != 9));
}

TEST_CASE("cuDNN SDPA inference forward (no stats) finds an engine and writes the same O",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  for (bool causal : {false, true}) {
    attention_shape s;
    s.batch = 1, s.heads = 4, s.kv_heads = 2, s.seq_q = 128, s.seq_k = 128, s.head_dim = 64,
    s.causal = causal;
    const size_t nq = 128 * 4 * 64, nk = 128 * 2 * 64;
    auto q = rnd(nq, 31, true), k = rnd(nk, 32, true), v = rnd(nk, 33, true);
    const host_result train = run_forward_host(s, "cudnn", dtype::bf16, q, k, v);
    auto bf = [](const std::vector<float>& x) {
      std::vector<uint16_t> h(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        h[i] = float_to_bf16(x[i]);
      return h;
    };
    device::device_buffer dq(nq * 2), dk(nk * 2), dv(nk * 2), dout(nq * 2);
    dq.upload(bf(q).data(), nq * 2), dk.upload(bf(k).data(), nk * 2),
        dv.upload(bf(v).data(), nk * 2);
    std::unique_ptr<cudnn::sdpa_forward> f;
    try {
      f = std::make_unique<cudnn::sdpa_forward>(s, dtype::bf16, true);
    } catch (const std::exception& e) {
      FAIL("cuDNN SDPA inference forward failed (causal=" << causal << "): " << e.what());
    }
    f->run({.type = dtype::bf16, .q = dq.get(), .k = dk.get(), .v = dv.get(), .o = dout.get()},
           nullptr);
    device::synchronize("sdpa inference forward");
    std::vector<uint16_t> o(nq);
    dout.download(o.data(), nq * 2);
    size_t differ = 0;
    for (size_t i = 0; i < nq; ++i)
      differ += std::abs(bf16_to_float(o[i]) - train.o[i]) > 1e-2f * (1 + std::abs(train.o[i]));
    INFO("causal=" << causal << " engine " << f->engine());
    CHECK(differ == 0);
  }
}
