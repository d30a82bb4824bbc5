// The train.llama workload: spec, rulesets, input errors, memory refusal, throughput (full and
// layer subset) and the time-to-train record (samples, extra, MLPerf logs, validity).
#include <catch2/catch.hpp>

#include "harness/core/build_info.hpp"

#include <cstdlib>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <set>
#include <sstream>

#include "harness/core/error.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/stats.hpp"
#include "workloads/training/data.hpp"
#include "workloads/training/model_config.hpp"
#include "workloads/training/train_workload.hpp"

using namespace accelbench;
using namespace accelbench::training;
namespace fs = std::filesystem;

namespace {

struct fixture {
  std::unique_ptr<workload> w = make_training_workload();
  int probes = 0; // calls of the given probe
  fixture() {
    // Keep the CPU peak probe's cache out of the user's home.
    static std::string dir = (fs::temp_directory_path() / "accelbench_training_cache").string();
    setenv("ACCELBENCH_CACHE_DIR", dir.c_str(), 0);
    // A quiet peak far above anything this CPU does, so that MFU does not depend on this
    // machine's load while a probe would run.
    given_peak(1000.0);
  }
  ~fixture() { use_peak_cache(std::nullopt); }
  fixture(const fixture&) = delete;
  fixture& operator=(const fixture&) = delete;
  // The CPU peak on record and every probe of it from now on: `tflops`, probed on a quiet machine.
  void given_peak(double tflops) {
    const fs::path file = fs::temp_directory_path() /
                          fmt::format("accelbench_training_peak_{}_{}.json", ::getpid(), tflops);
    fs::remove(file);
    use_peak_cache(peak_cache{file, "test CPU", 1, [this, tflops](int threads) {
                                ++probes;
                                cpu_peak p;
                                p.fp32_tflops = tflops;
                                p.threads = threads;
                                p.isa = "avx2";
                                p.cpu_model = "test CPU";
                                p.other_load = 0;
                                return p;
                              }});
  }
  config cfg(std::map<std::string, std::string> v) const {
    return resolve_config(w->spec(), "cpu", v);
  }
};

ruleset with_training(const std::string& base, const nlohmann::json& patch) {
  ruleset r = load_ruleset(base);
  r.doc["training"].merge_patch(patch);
  return r;
}

} // namespace

TEST_CASE("train.llama spec and rulesets", "[training][workload]") {
  fixture f;
  const auto& s = f.w->spec();
  CHECK(s.name == "train.llama");
  CHECK(s.family == "training");
  // "cuda" follows when the CUDA backend is built.
  CHECK(s.backends == (build_info::cuda_built() ? std::vector<std::string>{"cpu", "cuda"}
                                                : std::vector<std::string>{"cpu"}));
  CHECK(s.default_ruleset == "train-v1");
  for (const char* a : {"model", "layers", "seq", "batch", "grad_accum", "dtype", "mode", "steps",
                        "data", "threads"})
    CHECK(s.find_axis(a) != nullptr);
  // Both rulesets load (and so validate against schemas/ruleset.schema.json) and apply.
  auto v1 = load_ruleset("train-v1");
  auto ttt = load_ruleset("train-ttt-v1");
  CHECK(v1.applies(s));
  CHECK(ttt.applies(s));
  CHECK(v1.section("training").at("mode") == "throughput");
  CHECK(ttt.section("training").at("mode") == "time_to_train");
  CHECK(ttt.section("training").at("runs") == 5);
  // The closed division lets a user change the number of runs only through the ruleset.
  json user;
  REQUIRE_THROWS_AS(apply_overrides(ttt, {{"training.hyperparameters.base_lr", "1"}}, user),
                    input_error);
}

TEST_CASE("train.llama input errors", "[training][workload]") {
  fixture f;
  REQUIRE_THROWS_WITH(f.w->validate(f.cfg({{"layers", "5"}})), Catch::Contains("layers = 5"));
  REQUIRE_THROWS_WITH(f.w->validate(f.cfg({{"seq", "4096"}})), Catch::Contains("seq = 4096"));
  auto dir = fs::temp_directory_path() / ("accelbench_training_wl_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_shard(dir / "x_train_000001.bin", {1, 2, 3, 600}); // tiny's vocabulary is 512
  REQUIRE_THROWS_AS(f.w->validate(f.cfg({{"data", dir.string()}})), input_error);
  REQUIRE_THROWS_WITH(f.w->validate(f.cfg({{"data", dir.string()}})),
                      Catch::Contains("token id 600"));
  write_shard(dir / "x_train_000001.bin", {1, 2, 3});
  REQUIRE_NOTHROW(f.w->validate(f.cfg({{"data", dir.string()}})));
  fs::remove_all(dir);
  REQUIRE_THROWS_WITH(f.w->validate(f.cfg({{"data", "/nonexistent/shards"}})),
                      Catch::Contains("/nonexistent/shards"));
}

TEST_CASE("a config that cannot fit in memory is refused before allocating",
          "[training][workload]") {
  fixture f;
  auto c = f.cfg({{"model", "llama3-405b"}, {"seq", "8192"}, {"batch", "1"}});
  uint64_t need = f.w->estimate_host_bytes(c);
  CHECK(need > 405e9 * 16); // weights, gradients and two AdamW moments alone
  auto rules = load_ruleset("train-v1");
  run out;
  std::ostringstream log;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = &log;
  f.w->execute(c, out, ctx);
  CHECK(out.status == run_status::failed);
  CHECK(out.status_reason.find("GiB") != std::string::npos);
  CHECK(out.samples.empty());
}

TEST_CASE("throughput: full model and a projected layer subset", "[training][workload][timing]") {
  fixture f;
  auto rules = with_training("train-v1", {{"micro_batch", 2}});
  std::ostringstream log;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = &log;
  ctx.seed = 3;
  {
    run out;
    f.w->execute(f.cfg({{"seq", "32"}, {"steps", "3"}}), out, ctx);
    REQUIRE(out.status == run_status::ok);
    CHECK(out.samples.size() == 3);
    CHECK(out.sample_unit == "s");
    const metric* tps = out.find_metric("tokens_per_s");
    REQUIRE(tps);
    CHECK(tps->value > 0);
    CHECK(tps->dir == direction::higher_is_better);
    REQUIRE(out.find_metric("mfu"));
    CHECK(out.find_metric("mfu")->value > 0);
    CHECK(out.find_metric("forward_ms"));
    CHECK(out.find_metric("backward_ms"));
    CHECK(out.find_metric("optimizer_ms"));
    CHECK(out.find_metric("projected_tokens_per_s") == nullptr);
    CHECK(out.samples[0].extra.contains("loss"));
    // tokens_per_s follows from the median step time: 2 x 32 tokens per step.
    std::vector<double> t;
    for (auto& s : out.samples)
      t.push_back(s.value);
    CHECK(tps->value == Approx(64.0 / stats::median(t)));
    // MFU's FLOPs: PaLM's 6N + 12 L H Q T, the causal attention counted over the full T x T
    // matrix (a halved count would make the attention term 6 L H Q T).
    const model_config m = find_model(data_root() / "workloads/training/models.json", "tiny");
    CHECK(out.find_metric("model_flops_per_token")->value ==
          Approx(model_flops_per_token(m, 0, 32, true)));
    CHECK(model_flops_per_token(m, 0, 64, true) - model_flops_per_token(m, 0, 32, true) ==
          Approx(12.0 * double(m.n_layers) * double(m.n_heads) * double(m.head_dim()) * 32));
    CHECK_THAT(out.extra.at("flop_convention").get<std::string>(),
               Catch::Contains("full T x T score matrix"));
    // mfu_causal: the same step with the attention term at the visible pairs, 6 L H Q (T + 1).
    REQUIRE(out.find_metric("mfu_causal"));
    const double causal = model_flops_per_token_causal(m, 0, 32, true);
    CHECK(model_flops_per_token(m, 0, 32, true) - causal ==
          Approx(6.0 * double(m.n_layers) * double(m.n_heads) * double(m.head_dim()) * (32 - 1)));
    CHECK(out.find_metric("mfu_causal")->value ==
          Approx(out.find_metric("mfu")->value * causal / model_flops_per_token(m, 0, 32, true)));
    CHECK(out.find_metric("mfu_causal")->value < out.find_metric("mfu")->value);
  }
  {
    run out;
    f.w->execute(f.cfg({{"seq", "32"}, {"steps", "2"}, {"layers", "1"}}), out, ctx);
    REQUIRE(out.status == run_status::ok);
    const metric* p = out.find_metric("projected_tokens_per_s");
    REQUIRE(p);
    CHECK(p->value > 0);
    CHECK(p->value < out.find_metric("tokens_per_s")->value); // 4 blocks + head are slower than 1
    CHECK(out.extra.at("projection").get<std::string>().find("PROJECTION") == 0);
  }
}

// MFU is never above 100%: kernel_metrics' above-peak rule, as for a kernel's % of peak. A run
// faster than the CPU peak on record has it probed again, and faster than that too gets no MFU; the
// run (still VALID: a CPU probe is a measurement that can read low) says which peak it beat.
TEST_CASE("throughput: a run faster than the CPU peak on record gets no MFU and says which peak "
          "it beat",
          "[training][workload]") {
  fixture f;
  f.given_peak(1e-7); // 100 kFLOP/s: below any training step
  f.probes = 0;
  auto rules = with_training("train-v1", {{"micro_batch", 2}});
  std::ostringstream log;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = &log;
  run out;
  f.w->execute(f.cfg({{"seq", "16"}, {"steps", "2"}, {"threads", "1"}}), out, ctx);
  REQUIRE(out.status == run_status::ok);
  CHECK(out.find_metric("tokens_per_s"));
  CHECK(out.find_metric("achieved_tflops"));
  CHECK(out.find_metric("mfu") == nullptr);
  CHECK(out.find_metric("mfu_causal") == nullptr);
  CHECK(f.probes == 2); // the cached peak, then once again after the run beat it
  CHECK(out.valid);
  CHECK(out.extra.at("peak").at("below_achieved") == true);
  CHECK(out.extra.at("peak").contains("probed_again_after"));
  const std::string why = out.extra.at("pct_of_peak_unknown").get<std::string>();
  CHECK_THAT(why, Catch::Contains("1e-07 TFLOP/s") && Catch::Contains("fp32") &&
                      Catch::Contains("FLOP count"));
  REQUIRE(out.extra.at("warnings").size() == 1);
  CHECK_THAT(out.extra["warnings"][0].get<std::string>(), Catch::Contains(why));
  // The printed line gives no MFU figure, only the reason.
  CHECK_FALSE(std::regex_search(log.str(), std::regex("MFU [0-9]")));
  CHECK_THAT(log.str(), Catch::Contains("no MFU: the CPU peak on record"));
}

// The one meaning of --seed (hash.hpp seed_of), as for GEMM and attention on every backend: the
// same run seed trains on the same inputs (the same losses step for step), another seed on
// others, and no seed on the config key's own, the same every time (no entropy source).
TEST_CASE("throughput: the run seed reproduces the training inputs, another seed changes them",
          "[training][workload]") {
  fixture f;
  auto rules = with_training("train-v1", {{"micro_batch", 2}});
  const config cfg = f.cfg({{"seq", "16"}, {"steps", "2"}, {"threads", "1"}});
  auto losses_with = [&](uint64_t seed) {
    std::ostringstream log;
    run_context ctx;
    ctx.rules = &rules;
    ctx.log = &log;
    ctx.seed = seed;
    run out;
    f.w->execute(cfg, out, ctx);
    REQUIRE(out.status == run_status::ok);
    std::vector<double> losses;
    for (const auto& smp : out.samples)
      losses.push_back(smp.extra.at("loss").get<double>());
    return losses;
  };
  const auto first = losses_with(3);
  REQUIRE(first.size() == 2);
  CHECK(first == losses_with(3));
  CHECK(first != losses_with(4));
  const auto keyed = losses_with(0);
  CHECK(keyed == losses_with(0));
  CHECK(keyed != first);
}

TEST_CASE("time to train: one record with N runs, logs, and validity", "[training][workload]") {
  fixture f;
  // An unreachable target and a short step limit: every run ends "not converged".
  auto rules = with_training("train-ttt-v1", {{"runs", 3},
                                              {"max_steps", 2},
                                              {"eval_every_samples", 2},
                                              {"eval_samples", 2},
                                              {"seq", 16},
                                              {"global_batch", 2},
                                              {"micro_batch", 2},
                                              {"target", {{"margin_nats", -10.0}}}});
  std::ostringstream log;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = &log;
  ctx.seed = 11;
  run out;
  f.w->execute(f.cfg({{"mode", "time_to_train"}}), out, ctx);
  REQUIRE(out.status == run_status::ok);
  CHECK(out.sample_unit == "min");
  REQUIRE(out.samples.size() == 3);
  REQUIRE(out.extra.at("runs").size() == 3);
  REQUIRE(out.extra.at("mllogs").size() == 3);
  std::set<uint64_t> seeds;
  for (auto& r : out.extra.at("runs")) {
    CHECK(r.at("converged") == false);
    CHECK(r.at("status") == "not_converged");
    CHECK(r.at("eval_curve").size() == 2); // eval every 2 samples = every step, 2 steps
    seeds.insert(r.at("seed").get<uint64_t>());
  }
  CHECK(seeds.size() == 3); // distinct seeds, logged
  for (size_t i = 0; i < 3; i++) {
    const mllog::parsed_log log = mllog::parse_mllog(out.extra["mllogs"][i].get<std::string>());
    bool found = false;
    for (const auto& e : log.events)
      if (e.key == "seed")
        found = e.value == out.extra["runs"][i]["seed"];
    CHECK(found);
  }
  CHECK(out.mllog.size() > 0);
  CHECK_FALSE(out.valid); // 3 runs did not converge, and 3 < the 5 the closed division needs
  bool saw_runs = false, saw_min = false;
  for (auto& r : out.invalid_reasons) {
    saw_runs |= r.find("did not reach the target") != std::string::npos;
    saw_min |= r.find("needs 5 runs") != std::string::npos;
  }
  CHECK(saw_runs);
  CHECK(saw_min);
  REQUIRE(out.find_metric("time_to_train_min"));
  CHECK(out.find_metric("time_to_train_min")->dir == direction::lower_is_better);
  CHECK(out.extra.at("target_eval_loss").get<double>() <
        out.extra.at("entropy_floor").get<double>());

  // The throughput ruleset cannot run time to train: a failed run, not a crash.
  auto v1 = load_ruleset("train-v1");
  ctx.rules = &v1;
  run bad;
  f.w->execute(f.cfg({{"mode", "time_to_train"}}), bad, ctx);
  CHECK(bad.status == run_status::failed);
  CHECK(bad.status_reason.find("train-ttt-v1") != std::string::npos);
}
