// The `attention` workload through the harness: spec, validation, FLOP accounting, a measured run
// (samples, metrics, correctness) and INVALID on a corrupted output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "harness/core/error.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/workload.hpp"
#include "kernels/attention/cpu/flash_attention.hpp"
#include "tests/support/load_free.hpp"
#include "workloads/attention/attention_workload.hpp"

using namespace accelbench;
using namespace accelbench::attention;

namespace {

// Short measurements: tests check behaviour, not speed; and rules a busy machine cannot trip (a
// second INVALID reason from a preempted calibration failed these tests in a loaded CTest run).
ruleset quick_rules() {
  // Keep the FMA-probe cache inside the build tree.
  setenv("ACCELBENCH_CACHE_DIR", ACCELBENCH_BINARY_DIR, 0);
  json user;
  return apply_overrides(load_ruleset("kernel-quick"),
                         test_support::load_free({{"repetitions", "3"}}), user);
}

run execute(workload& w, const std::map<std::string, std::string>& values, uint64_t seed = 0) {
  const config cfg = resolve_config(w.spec(), "cpu", values);
  w.validate(cfg);
  ruleset rules = quick_rules();
  std::ostringstream log;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = &log;
  ctx.seed = seed;
  run out;
  out.cfg = cfg;
  w.execute(cfg, out, ctx);
  return out;
}

std::string validate_message(const workload& w, const std::map<std::string, std::string>& v) {
  try {
    w.validate(resolve_config(w.spec(), "cpu", v));
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("attention spec", "[attention][workload]") {
  registry reg;
  register_attention(reg);
  const workload& w = reg.get("attention");
  const workload_spec& s = w.spec();
  CHECK(s.family == "kernel");
  CHECK(s.backends.front() == "cpu"); // "cuda" follows when the CUDA backend is built
  CHECK(s.default_ruleset == "kernel-v1");
  CHECK(s.primary_metric == "tflops");
  for (const char* a : {"batch", "heads", "kv_heads", "seq_q", "seq_k", "head_dim", "causal",
                        "dtype", "pass", "scale"})
    CHECK(s.find_axis(a) != nullptr);
  CHECK(s.find_axis("pass")->choices == std::vector<std::string>{"fwd", "bwd", "fwd_bwd"});
  // Defaults: kv_heads = heads, seq_k = seq_q.
  const attention_shape d = shape_of(resolve_config(s, "cpu", {{"heads", "8"}, {"seq_q", "100"}}));
  CHECK(d.kv_heads == 8);
  CHECK(d.seq_k == 100);
  CHECK(d.effective_scale() == Approx(1 / std::sqrt(128.0)));
}

TEST_CASE("attention validation names the parameter and the value", "[attention][workload]") {
  auto w = make_attention_workload();
  CHECK(validate_message(*w, {{"heads", "12"}, {"kv_heads", "8"}}) ==
        "parameter heads = 12 is not a multiple of kv_heads = 8");
  CHECK(validate_message(*w, {{"head_dim", "1000"}}).find("head_dim = 1000") != std::string::npos);
  CHECK(validate_message(*w, {{"heads", "32"}, {"kv_heads", "8"}}).empty());
  // Zero lengths are refused by the axis bounds already.
  CHECK_THROWS_AS(resolve_config(w->spec(), "cpu", {{"seq_q", "0"}}), input_error);
  CHECK_THROWS_AS(resolve_config(w->spec(), "cpu", {{"pass", "sideways"}}), input_error);
  // Memory estimate covers at least the tensors, and the backward needs more than the forward.
  const config f = resolve_config(w->spec(), "cpu", {{"seq_q", "4096"}});
  const config b = resolve_config(w->spec(), "cpu", {{"seq_q", "4096"}, {"pass", "bwd"}});
  CHECK(w->estimate_host_bytes(f) >= uint64_t(4) * 4096 * 16 * 128 * 4);
  CHECK(w->estimate_host_bytes(b) > w->estimate_host_bytes(f));
}

TEST_CASE("attention FLOPs: 4*D per visible pair forward, FlashAttention's 2.5x backward",
          "[attention]") {
  attention_shape s;
  s.batch = 2;
  s.heads = 16;
  s.kv_heads = 4;
  s.seq_q = 1024;
  s.seq_k = 2048;
  s.head_dim = 128;
  const double fwd = 4.0 * 2 * 16 * 1024 * 2048 * 128;
  CHECK(attention_flops(s, pass_kind::fwd) == fwd);
  CHECK(attention_flops(s, pass_kind::bwd) == 2.5 * fwd); // 10 * head_dim per pair
  CHECK(attention_flops(s, pass_kind::fwd_bwd) == 3.5 * fwd);
  s.causal = true; // rows see 1025 .. 2048 keys
  const double pairs = 1024.0 * 2048 - 1024.0 * 1023 / 2;
  CHECK(attention_flops(s, pass_kind::fwd) == 4.0 * 2 * 16 * 128 * pairs);
  CHECK(attention_flops(s, pass_kind::bwd) == 2.5 * attention_flops(s, pass_kind::fwd));
}

TEST_CASE("unmasked (query, key) pairs: exact for seq_q <, =, > seq_k, causal or not",
          "[attention]") {
  auto pairs = [](int64_t sq, int64_t sk, bool causal) {
    attention_shape s;
    s.seq_q = sq;
    s.seq_k = sk;
    s.causal = causal;
    return attention_pairs(s);
  };
  // Bottom-right aligned: row i sees keys j <= i + seq_k - seq_q, as the kernels mask.
  auto counted = [](int64_t sq, int64_t sk) {
    double n = 0;
    for (int64_t i = 0; i < sq; ++i)
      n += double(std::clamp<int64_t>(i + sk - sq + 1, 0, sk));
    return n;
  };
  for (int64_t sq : {1, 2, 7, 64, 300, 1024})
    for (int64_t sk : {1, 3, 64, 299, 1024, 4096}) {
      INFO("seq_q=" << sq << " seq_k=" << sk);
      CHECK(pairs(sq, sk, false) == double(sq) * double(sk));
      CHECK(pairs(sq, sk, true) == counted(sq, sk));
    }
  CHECK(pairs(2048, 2048, true) == 2048.0 * 2049 / 2); // the diagonal is visible
  // seq_q < seq_k: halving seq_q * seq_k understated 1024 x 4096 by 1.75x.
  CHECK(pairs(1024, 4096, true) == 3670528.0);
  CHECK(pairs(1024, 4096, true) / (0.5 * 1024 * 4096) == Approx(1.75).epsilon(1e-3));
  // seq_q > seq_k: the first 3072 rows see nothing; halving overstated it 4x.
  CHECK(pairs(4096, 1024, true) == 1024.0 * 1025 / 2);
  CHECK(pairs(1, 4096, true) == 4096.0); // decoding one token sees the whole cache
  CHECK(pairs(4096, 1, true) == 1.0);
}

TEST_CASE("attention run: samples, metrics and a passing check", "[attention][workload]") {
  auto w = make_attention_workload();
  SECTION("fp32 forward, causal") {
    const run r =
        execute(*w, {{"heads", "4"}, {"seq_q", "200"}, {"head_dim", "64"}, {"causal", "1"}});
    INFO(r.status_reason << " " << r.extra.dump());
    CHECK(r.status == run_status::ok);
    INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
    CHECK(r.valid); // under load_free rules only the run's own checks can make it INVALID
    CHECK(r.samples.size() >= 3);
    for (const sample& s : r.samples)
      CHECK(s.value > 0);
    REQUIRE(r.find_metric("tflops") != nullptr);
    CHECK(r.find_metric("tflops")->value > 0);
    CHECK(r.find_metric("time")->dir == direction::lower_is_better);
    // A % of peak, or none and the reason (this machine's CPU peak was probed under load, or the
    // run beat it): never a 0.
    if (const metric* pct = r.find_metric("pct_of_peak"))
      CHECK(pct->value > 0);
    else
      CHECK_FALSE(pct_of_peak_unknown(r).empty());
    const json& c = r.extra.at("correctness");
    CHECK(c.at("ok") == true);
    CHECK(c.at("tolerance") == 1e-4);
    CHECK_FALSE(r.extra.contains("bf16_path"));                     // fp32 runs have no bf16 path
    CHECK(c.at("points").get<int64_t>() == 200 * 4 * 64 + 4 * 200); // full o and lse
    CHECK(r.extra.at("flops_per_iteration") == 4.0 * 4 * 64 * (200 * 201 / 2)); // causal pairs
  }
  SECTION("bf16 fwd_bwd with GQA and seq_k != seq_q") {
    const run r = execute(*w, {{"heads", "4"},
                               {"kv_heads", "2"},
                               {"seq_q", "96"},
                               {"seq_k", "160"},
                               {"head_dim", "32"},
                               {"dtype", "bf16"},
                               {"pass", "fwd_bwd"},
                               {"causal", "1"}});
    INFO(r.extra.dump());
    INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
    CHECK(r.valid); // under load_free rules only the run's own checks can make it INVALID
    const json& c = r.extra.at("correctness");
    CHECK(c.at("tolerance") == 2e-2);
    CHECK(c.at("passes").contains("backward"));
    // The arithmetic bf16 ran on is recorded (native bf16 dot products where the CPU has them).
    CHECK(r.extra.at("bf16_path") == bf16_path());
    CHECK(c.at("max_error").get<double>() > 0);
  }
  SECTION("bwd pass on a shape large enough to be sampled") {
    const run r =
        execute(*w, {{"heads", "2"}, {"seq_q", "1100"}, {"head_dim", "128"}, {"pass", "bwd"}});
    INFO(r.extra.dump());
    INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
    CHECK(r.valid); // under load_free rules only the run's own checks can make it INVALID
    CHECK(r.extra.at("correctness").at("mode") == "sampled");
  }
}

TEST_CASE("a wrong attention output makes the run INVALID with the worst error", "[attention]") {
  auto w = make_attention_workload([](const attention_shape& s, attention_buffers& b) {
    b.o[5] += 1.0f; // batch 0, row 0, head 0, element 5
  });
  const run r = execute(*w, {{"heads", "2"}, {"seq_q", "64"}, {"head_dim", "16"}});
  CHECK(r.status == run_status::ok);
  CHECK_FALSE(r.valid);
  // The one reason the corruption causes; a busy machine may add its own (none under these rules).
  const auto reasons = test_support::reasons_not_from_load(r);
  INFO("INVALID reasons: " << Catch::Detail::stringify(r.invalid_reasons));
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].find("correctness: max error") == 0);
  CHECK(reasons[0].find("o[b=0,i=0,h=0,d=5]") != std::string::npos);
  CHECK(r.extra.at("correctness").at("ok") == false);
}

TEST_CASE("the run seed means the same for CPU attention as for CUDA: same seed, same inputs and "
          "outputs, another seed, others",
          "[attention]") {
  std::vector<float> q, o;
  auto w = make_attention_workload([&](const attention_shape&, attention_buffers& b) {
    q = b.q;
    o = b.o;
  });
  const std::map<std::string, std::string> values{
      {"heads", "2"}, {"seq_q", "32"}, {"head_dim", "16"}};
  auto inputs_with = [&](uint64_t seed) {
    const run r = execute(*w, values, seed);
    REQUIRE(r.status == run_status::ok);
    return std::make_pair(q, o);
  };
  const auto a = inputs_with(5), again = inputs_with(5), other = inputs_with(6),
             keyed = inputs_with(0);
  REQUIRE_FALSE(a.first.empty());
  CHECK(a.first == again.first);
  CHECK(a.second == again.second); // a deterministic kernel on the same inputs
  CHECK(a.first != other.first);
  CHECK(a.second != other.second);
  CHECK(a.first != keyed.first); // no seed: the config key's own inputs
}
