// workloads/training/cuda: the device memory plan, recipe, attention choice and skip reasons
// (everywhere), and the GPU model against the CPU model on a tiny config (GPU only): same initial
// parameters, same loss and gradients within tolerance, and the same parameters after AdamW steps;
// the recipe bf16-mixed-v1 against the fp32 one over training steps, and the throughput loop's
// rule of no host wait inside the timed steps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/core/ruleset.hpp"
#include "harness/device/device.hpp"
#include "tests/support/gpu_skip.hpp"
#include "workloads/training/cpu/adamw.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/cuda/llama_cuda.hpp"
#include "workloads/training/cuda/throughput_cuda.hpp"
#include "workloads/training/llama.hpp"
#include "workloads/training/train_workload.hpp"

using namespace accelbench;
using namespace accelbench::training;

namespace {
// Small enough for the CPU reference to take milliseconds, with GQA (4 heads, 2 kv heads), a
// head_dim cuDNN accepts (16), and a vocabulary larger than the width.
model_config micro() {
  model_config m;
  m.name = "micro";
  m.dim = 64;
  m.n_layers = 2;
  m.n_heads = 4;
  m.n_kv_heads = 2;
  m.ffn_dim = 160;
  m.vocab_size = 96;
  m.max_seq_len = 32;
  return m;
}
llama_options opts(compute_dtype dt, bool with_head = true) {
  llama_options o;
  o.batch = 2;
  o.seq = 32;
  o.dtype = dt;
  o.with_head = with_head;
  o.layers = with_head ? 0 : 1;
  return o;
}
std::vector<int32_t> tokens(size_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t)
    x = int32_t(g() % uint64_t(vocab));
  return t;
}
// The default train.llama config on the cuda backend.
config cuda_config(const workload& w) {
  config c;
  c.workload = "train.llama";
  c.backend = "cuda";
  for (auto& a : w.spec().axes)
    c.values[a.name] = a.default_value;
  return c;
}
// ||a - b|| / ||b|| over one tensor.
double rel_err(const float* a, const float* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
// Every tensor of the GPU copy within `tol` (relative L2) of the CPU's.
void check_tensors(const llama_model& cpu, const std::vector<float>& gpu, const float* ref,
                   double tol, const char* what) {
  for (auto& t : cpu.tensors()) {
    double e = rel_err(gpu.data() + t.offset, ref + t.offset, t.size);
    INFO(t.name << " " << what << " relative error " << e);
    CHECK(e < tol);
  }
}
// The same batch of windows every time: a model that learns drives its loss down quickly.
class fixed_batch final : public token_source {
public:
  explicit fixed_batch(int64_t vocab) : m_vocab(vocab) {}
  void fill(int32_t* out, int64_t batch, int64_t seq) override {
    auto t = tokens(size_t(batch * (seq + 1)), m_vocab, 31);
    std::copy(t.begin(), t.end(), out);
  }

private:
  int64_t m_vocab;
};
source_factory fixed_source(int64_t vocab) {
  return [vocab](uint64_t) -> std::unique_ptr<token_source> {
    return std::make_unique<fixed_batch>(vocab);
  };
}
train_hparams quick_hparams(int64_t accum) {
  train_hparams hp;
  hp.grad_accum = accum;
  hp.schedule.base_lr = 3e-3;
  hp.schedule.end_lr = 3e-3;
  hp.clip_norm = 1.0;
  return hp;
}
} // namespace

TEST_CASE("cuda training: memory plan, attention choice, skip reasons", "[cuda]") {
  const auto m = micro();
  size_t n = 0;
  for (auto& t : parameter_layout(m, opts(compute_dtype::fp32)))
    n += t.size;
  auto p32 = cuda::device_plan(m, opts(compute_dtype::fp32));
  auto p16 = cuda::device_plan(m, opts(compute_dtype::bf16));
  // Parameters, gradients and both AdamW moments in fp32; bf16-mixed-v1 adds the bf16 copy of
  // the weights and keeps its activations in bf16 (statistics in fp32): fewer bytes.
  CHECK(p32.params == n * 4);
  CHECK(p32.grads == n * 4);
  CHECK(p32.optimizer == n * 8);
  CHECK(p16.params == n * 6);
  CHECK(p16.grads == n * 4);
  CHECK(p16.optimizer == n * 8);
  CHECK(p16.activations < p32.activations);
  CHECK(p16.activations > p32.activations / 2);
  CHECK(cuda::recipe_name(opts(compute_dtype::fp32)) == "fp32");
  CHECK(cuda::recipe_name(opts(compute_dtype::bf16)) == "bf16-mixed-v1");
  // Doubling the batch doubles the activations (up to the fixed parts).
  auto o2 = opts(compute_dtype::fp32);
  o2.batch *= 2;
  CHECK(cuda::device_plan(m, o2).activations == 2 * p32.activations);

  CHECK(cuda::attention_impl(m, opts(compute_dtype::fp32)) == "native");
  CHECK(cuda::attention_impl(m, opts(compute_dtype::bf16)) == "cudnn");
  auto odd = m;
  odd.dim = 4 * 12; // head_dim 12: not a multiple of 8, cuDNN refuses it
  CHECK(cuda::attention_impl(odd, opts(compute_dtype::bf16)) == "native");

  std::string why;
  if (!device::cuda_available(&why)) {
    CHECK(cuda::unavailable_reason(m, opts(compute_dtype::fp32)).find(why) != std::string::npos);
    // The workload records the same reason, in both modes.
    auto w = make_training_workload();
    config c = cuda_config(*w);
    CHECK(w->unavailable_reason(c).find(why) != std::string::npos);
    c.values["mode"] = "time_to_train";
    CHECK(w->unavailable_reason(c).find(why) != std::string::npos);
  }
}

TEST_CASE("cuda training: loss and gradients match the CPU model (fp32)", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  for (bool with_head : {true, false}) {
    const auto m = micro();
    const auto o = opts(compute_dtype::fp32, with_head);
    llama_model cpu(m, o);
    cuda::llama_cuda gpu(m, o);
    cpu.init_parameters(7);
    gpu.init_parameters(7);
    REQUIRE(gpu.num_params() == cpu.num_params());
    std::vector<float> p(gpu.num_params());
    gpu.download_parameters(p.data());
    CHECK(rel_err(p.data(), cpu.params(), p.size()) == 0.0);

    // Two micro batches accumulated with loss_scale 0.5, as gradient accumulation does: a kernel
    // that overwrote a parameter gradient instead of adding to it would show here.
    cpu.zero_grad();
    gpu.zero_grad();
    const size_t n = size_t(o.batch * o.seq);
    for (uint64_t micro_batch = 0; micro_batch < 2; micro_batch++) {
      auto in = tokens(n, m.vocab_size, 1 + 2 * micro_batch),
           tg = tokens(n, m.vocab_size, 2 + 2 * micro_batch);
      const float lc = cpu.forward(in.data(), tg.data());
      const float lg = gpu.forward(in.data(), tg.data());
      INFO("with_head=" << with_head << " micro batch " << micro_batch << " cpu loss " << lc
                        << " gpu loss " << lg);
      CHECK(std::abs(lc - lg) <= 1e-4 * std::max(1.0f, std::abs(lc)));
      cpu.backward(0.5f);
      gpu.backward(0.5f);
    }
    std::vector<float> g(gpu.num_params());
    gpu.download_grads(g.data());
    check_tensors(cpu, g, cpu.grads(), 1e-3, "gradient");
  }
}

TEST_CASE("cuda training: AdamW steps with clipping move the GPU parameters as the CPU's",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  const auto m = micro();
  const auto o = opts(compute_dtype::fp32);
  llama_model cpu(m, o);
  cuda::llama_cuda gpu(m, o);
  cpu.init_parameters(3);
  gpu.init_parameters(3);
  const std::vector<float> p0(cpu.params(), cpu.params() + cpu.num_params());
  adamw opt(cpu.num_params());
  adamw_config ac;
  const double max_norm = 0.05; // below the gradient norm at initialisation: clipping runs
  for (int step = 0; step < 3; step++) {
    auto in = tokens(size_t(o.batch * o.seq), m.vocab_size, 10 + step);
    auto tg = tokens(size_t(o.batch * o.seq), m.vocab_size, 20 + step);
    cpu.zero_grad();
    gpu.zero_grad();
    float lc = cpu.forward(in.data(), tg.data()), lg = gpu.forward(in.data(), tg.data());
    INFO("step " << step << " cpu loss " << lc << " gpu loss " << lg);
    CHECK(std::abs(lc - lg) <= 1e-3);
    cpu.backward(1.0f);
    gpu.backward(1.0f);
    double nc = clip_grad_norm(cpu.grads(), cpu.num_params(), max_norm),
           ng = gpu.clip_grad_norm(max_norm);
    CHECK(nc > max_norm);
    CHECK(std::abs(nc - ng) <= 1e-3 * nc);
    opt.step(cpu.params(), cpu.grads(), cpu.tensors(), 1e-3, ac);
    gpu.adamw_step(1e-3, ac);
  }
  // Compare the updates p - p0, not the parameters (which the initial values dominate): decay on
  // a norm gain, or a wrong bias correction, is a large error in the update.
  std::vector<float> p(gpu.num_params()), dg(gpu.num_params()), dc(gpu.num_params());
  gpu.download_parameters(p.data());
  for (size_t i = 0; i < p.size(); i++) {
    dg[i] = p[i] - p0[i];
    dc[i] = cpu.params()[i] - p0[i];
  }
  check_tensors(cpu, dg, dc.data(), 1e-2, "update after 3 steps");
}

TEST_CASE("cuda training: bf16 loss and gradients agree with the CPU's bf16 ones", "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  const auto m = micro();
  const auto o = opts(compute_dtype::bf16);
  llama_model cpu(m, o);
  cuda::llama_cuda gpu(m, o);
  cpu.init_parameters(5);
  gpu.init_parameters(5);
  auto in = tokens(size_t(o.batch * o.seq), m.vocab_size, 4),
       tg = tokens(size_t(o.batch * o.seq), m.vocab_size, 5);
  const float lc = cpu.forward(in.data(), tg.data()), lg = gpu.forward(in.data(), tg.data());
  INFO("cpu " << lc << " gpu " << lg << " (" << gpu.implementation() << ")");
  // At initialisation the loss is ln V within ~0.01 whatever the blocks compute, so a relative
  // tolerance would hide a broken block: the bound is absolute. The CPU rounds the matmul and
  // attention inputs to bf16; the GPU's bf16-mixed-v1 keeps every activation (and the logits) in
  // bf16: the bounds are looser than the fp32 comparison's, and still far below what a broken
  // block gives (a relative gradient error near 1).
  CHECK(std::abs(lc - lg) <= 2e-2);
  cpu.backward(1.0f);
  gpu.backward(1.0f);
  std::vector<float> g(gpu.num_params());
  gpu.download_grads(g.data());
  check_tensors(cpu, g, cpu.grads(), 1e-1, "bf16 gradient");
}

TEST_CASE("cuda training: time to train on the GPU reaches the target with an MLPerf log",
          "[cuda][gpu][timing]") {
  ACCELBENCH_REQUIRE_GPU();
  auto w = make_training_workload();
  config c = cuda_config(*w);
  c.values["mode"] = "time_to_train";
  auto rules = load_ruleset("train-ttt-v1");
  json user;
  // One run keeps the test short (and makes the result not closed-division compliant).
  rules = apply_overrides(rules, {{"training.runs", "1"}}, user);
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 17;
  run out;
  out.cfg = c;
  w->execute(c, out, ctx);
  INFO(out.status_reason);
  CHECK(out.status == run_status::ok);
  REQUIRE(out.samples.size() == 1);
  REQUIRE(out.find_metric("time_to_train_min"));
  CHECK(out.extra["runs"][0]["converged"] == true);
  CHECK(out.extra["mllogs"][0].get<std::string>().find("run_stop") != std::string::npos);
}

TEST_CASE("cuda training: the workload records tokens/s and MFU", "[cuda][gpu][timing]") {
  ACCELBENCH_REQUIRE_GPU();
  auto w = make_training_workload();
  config c = cuda_config(*w);
  c.values["steps"] = "3";
  auto rules = load_ruleset("train-v1");
  run_context ctx;
  ctx.rules = &rules;
  ctx.seed = 9;
  for (const char* dt : {"fp32", "bf16"}) {
    c.values["dtype"] = dt;
    run out;
    out.cfg = c;
    w->execute(c, out, ctx);
    INFO(dt << ": " << out.status_reason);
    CHECK(out.status == run_status::ok);
    CHECK(out.samples.size() == 3);
    // The recipe is stated, and the timed steps never waited for the device.
    CHECK(out.extra.at("recipe") == (std::string(dt) == "bf16" ? "bf16-mixed-v1" : "fp32"));
    CHECK(out.extra.at("host_waits_in_timed_steps") == 0);
    REQUIRE(out.find_metric("tokens_per_s"));
    CHECK(out.find_metric("tokens_per_s")->value > 0);
    REQUIRE(out.find_metric("mfu"));
    CHECK(out.extra.contains("implementation"));
    // The CPU backend's FLOP convention (causal attention over the full T x T matrix, PaLM's).
    CHECK_THAT(out.extra.at("flop_convention").get<std::string>(),
               Catch::Contains("full T x T score matrix"));
    // mfu_causal, from the same place as mfu for both backends: below it by the halved attention.
    REQUIRE(out.find_metric("mfu_causal"));
    CHECK(out.find_metric("mfu_causal")->value < out.find_metric("mfu")->value);
    // Every step carries the SM clock and throttle facts (a throttled step explains a slow one),
    // where NVML reads them.
    for (const auto& smp : out.samples) {
      CHECK(smp.extra.contains("loss"));
      if (device::clock_facts(0).empty())
        continue;
      CHECK(smp.extra.contains("sm_clock_mhz"));
      CHECK(smp.extra.contains("throttled"));
    }
  }
}

// The recipe the issue asks for, against the fp32 one on the same data and seed: bf16-mixed-v1
// must learn (its loss falls by more than half a nat over the steps) and follow the fp32 recipe's
// curve. Bound: |loss_bf16 - loss_fp32| <= 0.1 + 5% of the fp32 loss at every step (bf16 keeps
// 8 bits of mantissa in every activation; a missing clip, a wrong bias correction or a broken
// bf16 kernel puts the curves nats apart).
TEST_CASE("cuda training: bf16-mixed-v1 learns and stays within a bound of the fp32 recipe",
          "[cuda][gpu]") {
  ACCELBENCH_REQUIRE_GPU();
  const auto m = micro();
  const int64_t steps = 40;
  std::vector<float> loss[2];
  int i = 0;
  for (auto dt : {compute_dtype::fp32, compute_dtype::bf16}) {
    cuda::llama_cuda gpu(m, opts(dt));
    auto r = cuda::measure_throughput_cuda(gpu, quick_hparams(1), fixed_source(m.vocab_size), 11, 0,
                                           steps);
    REQUIRE(r.result.steps.size() == size_t(steps));
    for (const auto& st : r.result.steps) {
      REQUIRE(std::isfinite(st.loss));
      loss[i].push_back(st.loss);
    }
    i++;
  }
  INFO("fp32 " << loss[0].front() << " -> " << loss[0].back() << "; bf16-mixed-v1 "
               << loss[1].front() << " -> " << loss[1].back());
  CHECK(loss[0].back() < loss[0].front() - 0.5f);
  CHECK(loss[1].back() < loss[1].front() - 0.5f);
  for (size_t s = 0; s < loss[0].size(); s++) {
    INFO("step " << s << " fp32 " << loss[0][s] << " bf16 " << loss[1][s]);
    CHECK(std::abs(loss[1][s] - loss[0][s]) <= 0.1 + 0.05 * std::abs(loss[0][s]));
  }
}

// Throughput mode queues whole steps: the host never waits for the device between the first
// timed step's start and the last one's end, with gradient accumulation, clipping and the LM
// head's token uploads; the per-step figures are still there (from events and the step log).
TEST_CASE("cuda training: no host wait inside the timed steps, both recipes",
          "[cuda][gpu][timing]") {
  ACCELBENCH_REQUIRE_GPU();
  const auto m = micro();
  for (auto dt : {compute_dtype::fp32, compute_dtype::bf16})
    for (bool with_head : {true, false}) {
      cuda::llama_cuda gpu(m, opts(dt, with_head));
      auto r =
          cuda::measure_throughput_cuda(gpu, quick_hparams(2), fixed_source(m.vocab_size), 5, 2, 4);
      INFO(cuda::recipe_name(opts(dt)) << " with_head=" << with_head);
      CHECK(r.host_waits_in_timed_steps == 0);
      REQUIRE(r.result.steps.size() == 4);
      for (const auto& st : r.result.steps) {
        CHECK(st.total_s > 0);
        CHECK(st.forward_s > 0);
        CHECK(st.backward_s > 0);
        CHECK(st.optimizer_s > 0);
        CHECK(st.forward_s + st.backward_s + st.optimizer_s <= st.total_s * 1.001 + 1e-5);
        CHECK(std::isfinite(st.loss));
        CHECK(st.grad_norm > 0);
      }
      // The synchronous calls do wait, and are counted: the counter is not stuck at 0.
      const int64_t before = gpu.host_waits();
      gpu.synchronize();
      CHECK(gpu.host_waits() == before + 1);
    }
}
