#include "workloads/training/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "harness/core/error.hpp"

namespace accelbench::training {

namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}
// windows [B, T+1] -> inputs [B, T], targets [B, T]
void split_windows(const int32_t* w, int64_t b, int64_t t, std::vector<int32_t>& in,
                   std::vector<int32_t>& tg) {
  in.resize(size_t(b * t));
  tg.resize(size_t(b * t));
  for (int64_t i = 0; i < b; i++)
    for (int64_t j = 0; j < t; j++) {
      in[size_t(i * t + j)] = w[i * (t + 1) + j];
      tg[size_t(i * t + j)] = w[i * (t + 1) + j + 1];
    }
}
} // namespace

cpu_trainable::cpu_trainable(const model_config& cfg, const llama_options& opt)
    : m_model(cfg, opt), m_opt(m_model.num_params()) {}

void cpu_trainable::init(uint64_t seed) {
  m_model.init_parameters(seed);
  m_opt = adamw(m_model.num_params());
}

double cpu_trainable::clip_grad_norm(double max_norm) {
  return training::clip_grad_norm(m_model.grads(), m_model.num_params(), max_norm);
}

void cpu_trainable::optimizer_step(double lr, const adamw_config& c) {
  m_opt.step(m_model.params(), m_model.grads(), m_model.tensors(), lr, c);
}

std::string cpu_trainable::implementation() const {
  return m_model.options().dtype == compute_dtype::bf16
             ? "matmuls: oneDNN, bf16 inputs, fp32 accumulation; attention: accelbench fused "
               "FlashAttention-2 "
               "kernels (fp32); other layers: accelbench (fp32)"
             : "matmuls: oneDNN (fp32); attention: accelbench fused FlashAttention-2 kernels "
               "(fp32); other "
               "layers: accelbench (fp32)";
}

step_stats train_step(trainable& m, batch_loader& data, const train_hparams& hp, int64_t step) {
  step_stats st;
  auto t_step = clock_type::now();
  const int64_t b = m.options().batch, t = m.options().seq;
  std::vector<int32_t> in, tg;
  m.zero_grad();
  double loss = 0;
  const int64_t accum = std::max<int64_t>(1, hp.grad_accum);
  for (int64_t micro = 0; micro < accum; micro++) {
    auto t0 = clock_type::now();
    const int32_t* pin = nullptr;
    const int32_t* ptg = nullptr;
    if (m.options().with_head) {
      auto w = data.next();
      split_windows(w.data(), b, t, in, tg);
      pin = in.data();
      ptg = tg.data();
    }
    auto t1 = clock_type::now();
    loss += m.forward(pin, ptg); // returns the loss: the device has finished the forward
    auto t2 = clock_type::now();
    m.backward(1.0f / float(accum));
    m.synchronize();
    auto t3 = clock_type::now();
    st.data_s += std::chrono::duration<double>(t1 - t0).count();
    st.forward_s += std::chrono::duration<double>(t2 - t1).count();
    st.backward_s += std::chrono::duration<double>(t3 - t2).count();
  }
  st.loss = float(m.replica_mean(loss / double(accum)));
  auto t4 = clock_type::now();
  st.grad_norm = m.clip_grad_norm(hp.clip_norm);
  st.lr = hp.schedule.at(step);
  m.optimizer_step(st.lr, hp.adam);
  m.synchronize();
  st.optimizer_s = since(t4);
  st.total_s = since(t_step);
  return st;
}

double evaluate(trainable& m, const std::vector<int32_t>& windows, int64_t n) {
  const int64_t b = m.options().batch, t = m.options().seq;
  if (n % b != 0)
    throw input_error("train.llama: eval_samples (" + std::to_string(n) +
                      ") must be a multiple of the micro batch (" + std::to_string(b) + ")");
  std::vector<int32_t> in, tg;
  double sum = 0;
  for (int64_t i = 0; i < n; i += b) {
    split_windows(windows.data() + i * (t + 1), b, t, in, tg);
    sum += m.forward(in.data(), tg.data());
  }
  return sum / double(n / b);
}

throughput_result measure_throughput(trainable& m, const train_hparams& hp,
                                     const source_factory& data, uint64_t seed,
                                     int64_t warmup_steps, int64_t steps) {
  throughput_result r;
  auto t0 = clock_type::now();
  m.init(seed);
  m.synchronize();
  r.init_s = since(t0);
  batch_loader loader(m.options().with_head ? data(seed) : nullptr, m.options().batch,
                      m.options().seq);
  for (int64_t s = 0; s < warmup_steps + steps; s++) {
    step_stats st = train_step(m, loader, hp, s);
    if (s < warmup_steps)
      continue;
    st.facts = m.step_facts();
    r.steps.push_back(std::move(st));
  }
  r.loader_tokens_per_s = loader.tokens_per_s();
  return r;
}

ttt_result train_to_target(const ttt_setup& s, uint64_t seed, std::ostream* sink,
                           const progress_fn& progress) {
  ttt_result r;
  r.seed = seed;
  mllog::mllogger log(sink);
  const int64_t b = s.options.batch, t = s.options.seq;
  const int64_t gb = s.hp.global_batch(b) * std::max<int64_t>(1, s.replicas);
  const int64_t eval_every_steps =
      std::max<int64_t>(1, s.hp.eval_every_samples > 0 ? s.hp.eval_every_samples / gb : 1);

  // MLPerf Training rules, "Timing": initialisation is untimed but logged (init_start..init_stop)
  // and bounded; everything before run_start that touches the data is forbidden.
  log.point("cache_clear", true);
  log.start("init_start");
  auto t_init = clock_type::now();
  log.point("submission_benchmark", s.benchmark);
  log.point("submission_division", s.division);
  log.point("submission_org", s.org);
  log.point("submission_platform", s.platform);
  log.point("submission_status", s.status);
  log.point("global_batch_size", gb);
  log.point("gradient_accumulation_steps", s.hp.grad_accum);
  log.point("max_sequence_length", t);
  log.point("opt_name", "adamw");
  log.point("opt_base_learning_rate", s.hp.schedule.base_lr);
  log.point("opt_end_learning_rate", s.hp.schedule.end_lr);
  log.point("opt_learning_rate_warmup_steps", s.hp.schedule.warmup_steps);
  log.point("opt_learning_rate_decay_steps", s.hp.schedule.decay_steps);
  log.point("opt_learning_rate_decay_schedule", "cosine with linear warmup");
  log.point("opt_adamw_beta_1", s.hp.adam.beta1);
  log.point("opt_adamw_beta_2", s.hp.adam.beta2);
  log.point("opt_adamw_epsilon", s.hp.adam.eps);
  log.point("opt_adamw_weight_decay", s.hp.adam.weight_decay);
  log.point("opt_gradient_clip_norm", s.hp.clip_norm);
  log.point("seed", seed);
  // The synthetic stream is unbounded: train_samples is the most this run may consume.
  log.point("train_samples", s.hp.max_steps * gb);
  log.point("eval_samples", s.hp.eval_samples);

  std::unique_ptr<trainable> model = s.make_model
                                         ? s.make_model(s.model, s.options)
                                         : std::make_unique<cpu_trainable>(s.model, s.options);
  model->init(seed);
  model->synchronize();
  r.init_s = since(t_init);
  log.end("init_stop");
  if (s.max_init_s > 0 && r.init_s > s.max_init_s)
    r.init_within_bound = false;

  // The clock starts here, before any data is touched.
  log.start("run_start");
  auto t0 = clock_type::now();
  auto loader = std::make_unique<batch_loader>(s.train_data(seed), b, t);
  std::vector<int32_t> eval_windows(size_t(s.hp.eval_samples * (t + 1)));
  s.eval_data(0)->fill(eval_windows.data(), s.hp.eval_samples, t);

  int64_t step = 0, samples = 0;
  r.status = "not_converged";
  double last_loss = 0;
  int64_t tokens = 0;
  bool stop = false;
  while (!stop) {
    const int64_t block_first = samples;
    log.start("block_start", nullptr, {{"samples_count", block_first}});
    bool diverged = false;
    for (int64_t i = 0; i < eval_every_steps && step < s.hp.max_steps; i++) {
      step_stats st = train_step(*model, *loader, s.hp, step);
      step++;
      samples += gb;
      tokens += gb * t;
      last_loss = st.loss;
      if (!std::isfinite(st.loss) || !std::isfinite(st.grad_norm)) {
        diverged = true;
        break;
      }
      if (progress) {
        progress_info pi;
        pi.step = step;
        pi.max_steps = s.hp.max_steps;
        pi.loss = st.loss;
        pi.elapsed_s = since(t0);
        pi.tokens_per_s = double(tokens) / std::max(1e-9, pi.elapsed_s);
        if (!r.curve.empty())
          pi.last_eval = r.curve.back().eval_loss;
        // ETA: extrapolate the last two evaluations linearly to the target.
        if (r.curve.size() >= 2) {
          const auto& a = r.curve[r.curve.size() - 2];
          const auto& c = r.curve.back();
          double drop = a.eval_loss - c.eval_loss;
          if (drop > 0 && c.eval_loss > s.target_loss) {
            double evals = (c.eval_loss - s.target_loss) / drop;
            pi.eta_s = std::max(0.0, c.time_s + evals * (c.time_s - a.time_s) - pi.elapsed_s);
          }
        }
        progress(pi);
      }
    }
    // As mlperf_common logs it: block_stop carries the block's first samples_count.
    log.end("block_stop", nullptr, {{"samples_count", block_first}});
    if (diverged) {
      r.status = "aborted";
      r.reason = "training diverged: loss " + std::to_string(last_loss) + " at step " +
                 std::to_string(step);
      break;
    }
    // Evaluation is inside the timed region (MLPerf Training rules, "Timing").
    log.start("eval_start", nullptr, {{"samples_count", samples}});
    double el = model->root_value(evaluate(*model, eval_windows, s.hp.eval_samples));
    log.point("eval_accuracy", el, {{"samples_count", samples}});
    log.end("eval_stop", nullptr, {{"samples_count", samples}});
    r.curve.push_back({samples, step, el, since(t0)});
    if (!std::isfinite(el)) {
      r.status = "aborted";
      r.reason = "evaluation loss is not finite at step " + std::to_string(step);
      stop = true;
    } else if (el <= s.target_loss) {
      r.status = "success";
      r.converged = true;
      stop = true;
    } else if (step >= s.hp.max_steps) {
      r.reason = "eval loss " + std::to_string(el) + " above the target " +
                 std::to_string(s.target_loss) + " after " + std::to_string(step) + " steps";
      stop = true;
    }
  }
  r.seconds = since(t0);
  r.steps = step;
  r.samples = samples;
  r.loader_tokens_per_s = loader->tokens_per_s();
  // mlperf_logging knows two statuses: success, aborted (a run that did not converge is aborted).
  log.end("run_stop", nullptr,
          {{"samples_count", samples}, {"status", r.converged ? "success" : "aborted"}});
  r.mllog = log.text();
  return r;
}

} // namespace accelbench::training
