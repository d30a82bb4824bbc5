// Benchmark of train.llama (figures, not pass/fail):
//   1. tokens/s and MFU of the tiny model (fp32 and bf16)
//   2. one Llama 3 8B decoder block at seq 1024, batch 1 (fp32 and bf16), with the projection to
//      the full 32-layer model
//   3. peak resident memory against the up-front estimate for each of the above
//   4. the default time-to-train score (train-ttt-v1) with per-run times
// Usage: accelbench_bench_training [--skip-8b] [--skip-ttt] [--runs N] [--steps N]
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "bench/training/op_profile.hpp"
#include "harness/core/model.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/workload.hpp"
#include "workloads/training/model_config.hpp"
#include "workloads/training/train_workload.hpp"

using namespace accelbench;

namespace {

double metric_or(const run& r, const char* name) {
  const metric* m = r.find_metric(name);
  return m ? m->value : 0.0;
}

void throughput(workload& w, const ruleset& rules, std::map<std::string, std::string> values,
                const std::string& label) {
  config cfg = resolve_config(w.spec(), "cpu", values);
  run out;
  run_context ctx;
  ctx.rules = &rules;
  ctx.log = nullptr;
  ctx.seed = 1;
  w.execute(cfg, out, ctx);
  if (out.status != run_status::ok) {
    fmt::print("{:<34} FAILED: {}\n", label, out.status_reason);
    return;
  }
  double est = out.extra.value("memory_estimate_bytes", 0.0);
  double rss = out.extra.value("peak_rss_bytes", 0.0);
  fmt::print("{:<34} {:>9.0f} tokens/s  MFU {:5.1f}%  {:6.3f} TFLOP/s  step {:8.1f} ms "
             "(fwd {:.1f} / bwd {:.1f} / opt {:.1f})  RSS {:.2f} GiB / est {:.2f} GiB = {:.2f}x\n",
             label, metric_or(out, "tokens_per_s"), metric_or(out, "mfu"),
             metric_or(out, "achieved_tflops"), 1e3 * metric_or(out, "step_time"),
             metric_or(out, "forward_ms"), metric_or(out, "backward_ms"),
             metric_or(out, "optimizer_ms"), rss / (1 << 30), est / (1 << 30),
             est > 0 ? rss / est : 0.0);
  if (out.find_metric("projected_tokens_per_s"))
    fmt::print("{:<34} {:>9.0f} tokens/s  projected for the full model (a projection, not a "
               "measurement)\n",
               "", metric_or(out, "projected_tokens_per_s"));
}

// --ops: the tiny model's per-op profile and whole steps, reference ops against the fast ones.
// --ops-8b: whole steps of one Llama 3 8B block at seq 2048, bf16 where the CPU has BF16.
void op_comparison(bool llama8b, int steps) {
  const std::string models = std::string(ACCELBENCH_SOURCE_DIR) + "/workloads/training/models.json";
  training::llama_options o;
  if (!llama8b) {
    auto tiny = training::find_model(models, "tiny");
    bench::print_op_profile(tiny, 16, 128, training::compute_dtype::fp32, 5);
    o.batch = 16;
    o.seq = 128;
    bench::print_step_comparison(tiny, o, steps);
    if (cached_cpu_peak().bf16_tflops > 0) {
      o.dtype = training::compute_dtype::bf16;
      bench::print_step_comparison(tiny, o, steps);
    }
    return;
  }
  o.layers = 1;
  o.with_head = false;
  o.seq = 2048;
  o.dtype = cached_cpu_peak().bf16_tflops > 0 ? training::compute_dtype::bf16
                                              : training::compute_dtype::fp32;
  bench::print_step_comparison(training::find_model(models, "llama3-8b"), o, steps);
}

} // namespace

int main(int argc, char** argv) {
  bool skip_8b = false, skip_ttt = false, ops = false, ops_8b = false;
  std::string runs, steps = "10";
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--skip-8b"))
      skip_8b = true;
    else if (!std::strcmp(argv[i], "--skip-ttt"))
      skip_ttt = true;
    else if (!std::strcmp(argv[i], "--ops"))
      ops = true;
    else if (!std::strcmp(argv[i], "--ops-8b"))
      ops = ops_8b = true;
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = argv[++i];
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = argv[++i];
    else {
      std::cerr << "usage: " << argv[0]
                << " [--ops | --ops-8b] [--skip-8b] [--skip-ttt] [--runs N] [--steps N]\n";
      return 2;
    }
  }
  try {
    if (ops) {
      op_comparison(ops_8b, std::stoi(steps));
      return 0;
    }
    auto w = training::make_training_workload();
    auto v1 = load_ruleset("train-v1");
    fmt::print("== train.llama throughput (ruleset train-v1) ==\n");
    throughput(*w, v1, {{"steps", steps}}, "tiny fp32 seq 128 batch 16");
    throughput(*w, v1, {{"steps", steps}, {"dtype", "bf16"}}, "tiny bf16 seq 128 batch 16");
    if (!skip_8b) {
      throughput(*w, v1,
                 {{"model", "llama3-8b"},
                  {"layers", "1"},
                  {"seq", "1024"},
                  {"batch", "1"},
                  {"steps", "3"}},
                 "llama3-8b 1 block fp32 seq 1024");
      throughput(*w, v1,
                 {{"model", "llama3-8b"},
                  {"layers", "1"},
                  {"seq", "1024"},
                  {"batch", "1"},
                  {"steps", "3"},
                  {"dtype", "bf16"}},
                 "llama3-8b 1 block bf16 seq 1024");
    }
    if (!skip_ttt) {
      auto ttt = load_ruleset("train-ttt-v1");
      json user;
      if (!runs.empty())
        ttt = apply_overrides(ttt, {{"training.runs", runs}}, user);
      fmt::print("== train.llama time to train (ruleset train-ttt-v1) ==\n");
      config cfg = resolve_config(w->spec(), "cpu", {{"mode", "time_to_train"}});
      run out;
      run_context ctx;
      ctx.rules = &ttt;
      ctx.log = &std::cerr;
      w->execute(cfg, out, ctx);
      if (out.status != run_status::ok) {
        fmt::print("time to train FAILED: {}\n", out.status_reason);
        return 1;
      }
      for (auto& r : out.extra["runs"])
        fmt::print("  run seed {:>16}: {:6.2f} min  {:<13} steps {:>5}  last eval {:.4f}\n",
                   r["seed"].get<uint64_t>(), r["minutes"].get<double>(),
                   r["status"].get<std::string>(), r["steps"].get<int64_t>(),
                   r["eval_curve"].empty() ? 0.0
                                           : r["eval_curve"].back()["eval_loss"].get<double>());
      fmt::print(
          "  target {:.4f} nats (floor {:.4f} + margin), score {:.3f} min (olympic mean), {}\n",
          out.extra["target_eval_loss"].get<double>(), out.extra["entropy_floor"].get<double>(),
          metric_or(out, "time_to_train_min"), out.valid ? "VALID" : "INVALID");
      for (auto& r : out.invalid_reasons)
        fmt::print("  invalid: {}\n", r);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
