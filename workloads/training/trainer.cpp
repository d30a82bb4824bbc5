#include "workloads/training/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "harness/core/elapsed.hpp"
#include "harness/core/error.hpp"
#include "workloads/training/cpu/cpu_trainable.hpp"

namespace accelbench::training {

namespace {
using clock_type = std::chrono::steady_clock;
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
  st.optimizer_s = seconds_since(t4);
  st.total_s = seconds_since(t_step);
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
  const int64_t batches = n / b; // exact: n is a multiple of b (checked above)
  return sum / double(batches);
}

throughput_result measure_throughput(trainable& m, const train_hparams& hp,
                                     const source_factory& data, uint64_t seed,
                                     int64_t warmup_steps, int64_t steps) {
  throughput_result r;
  auto t0 = clock_type::now();
  m.init(seed);
  m.synchronize();
  r.init_s = seconds_since(t0);
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

namespace {

// One time-to-train run, step by step in MLPerf Training's order: untimed initialisation, the
// clock from run_start, blocks of training steps each followed by an evaluation, run_stop.
class ttt_run {
public:
  ttt_run(const ttt_setup& s, uint64_t seed, std::ostream* sink, const progress_fn& progress)
      : m_s(s), m_seed(seed), m_progress(progress), m_log(sink), m_batch(s.options.batch),
        m_seq(s.options.seq), m_gb(s.hp.global_batch(m_batch) * std::max<int64_t>(1, s.replicas)),
        m_eval_every_steps(std::max<int64_t>(
            1, s.hp.eval_every_samples > 0 ? s.hp.eval_every_samples / m_gb : 1)) {
    m_r.seed = seed;
  }

  ttt_result run() {
    initialise();
    start_clock();
    m_r.status = "not_converged";
    bool stop = false;
    while (!stop) {
      if (!train_block()) {
        m_r.status = "aborted";
        m_r.reason = "training diverged: loss " + std::to_string(m_last_loss) + " at step " +
                     std::to_string(m_step);
        break;
      }
      stop = evaluate_and_judge();
    }
    finish();
    return std::move(m_r);
  }

private:
  // MLPerf Training rules, "Timing": initialisation is untimed but logged (init_start..init_stop)
  // and bounded; everything before run_start that touches the data is forbidden.
  void initialise() {
    m_log.point("cache_clear", true);
    m_log.start("init_start");
    auto t_init = clock_type::now();
    log_submission();
    m_model = m_s.make_model ? m_s.make_model(m_s.model, m_s.options)
                             : std::make_unique<cpu_trainable>(m_s.model, m_s.options);
    m_model->init(m_seed);
    m_model->synchronize();
    m_r.init_s = seconds_since(t_init);
    m_log.end("init_stop");
    if (m_s.max_init_s > 0 && m_r.init_s > m_s.max_init_s)
      m_r.init_within_bound = false;
  }

  // The submission facts and hyperparameters, logged inside the initialisation.
  void log_submission() {
    const train_hparams& hp = m_s.hp;
    m_log.point("submission_benchmark", m_s.benchmark);
    m_log.point("submission_division", m_s.division);
    m_log.point("submission_org", m_s.org);
    m_log.point("submission_platform", m_s.platform);
    m_log.point("submission_status", m_s.status);
    m_log.point("global_batch_size", m_gb);
    m_log.point("gradient_accumulation_steps", hp.grad_accum);
    m_log.point("max_sequence_length", m_seq);
    m_log.point("opt_name", "adamw");
    m_log.point("opt_base_learning_rate", hp.schedule.base_lr);
    m_log.point("opt_end_learning_rate", hp.schedule.end_lr);
    m_log.point("opt_learning_rate_warmup_steps", hp.schedule.warmup_steps);
    m_log.point("opt_learning_rate_decay_steps", hp.schedule.decay_steps);
    m_log.point("opt_learning_rate_decay_schedule", "cosine with linear warmup");
    m_log.point("opt_adamw_beta_1", hp.adam.beta1);
    m_log.point("opt_adamw_beta_2", hp.adam.beta2);
    m_log.point("opt_adamw_epsilon", hp.adam.eps);
    m_log.point("opt_adamw_weight_decay", hp.adam.weight_decay);
    m_log.point("opt_gradient_clip_norm", hp.clip_norm);
    m_log.point("seed", m_seed);
    // The synthetic stream is unbounded: train_samples is the most this run may consume.
    m_log.point("train_samples", hp.max_steps * m_gb);
    m_log.point("eval_samples", hp.eval_samples);
  }

  // The clock starts here, before any data is touched.
  void start_clock() {
    m_log.start("run_start");
    m_t0 = clock_type::now();
    m_loader = std::make_unique<batch_loader>(m_s.train_data(m_seed), m_batch, m_seq);
    m_eval_windows.resize(size_t(m_s.hp.eval_samples * (m_seq + 1)));
    m_s.eval_data(0)->fill(m_eval_windows.data(), m_s.hp.eval_samples, m_seq);
  }

  // Up to eval_every_steps training steps (fewer at max_steps); false when the loss or the
  // gradient norm is not finite (diverged).
  bool train_block() {
    const int64_t block_first = m_samples;
    m_log.start("block_start", nullptr, {{"samples_count", block_first}});
    bool finite = true;
    for (int64_t i = 0; i < m_eval_every_steps && m_step < m_s.hp.max_steps; i++) {
      step_stats st = train_step(*m_model, *m_loader, m_s.hp, m_step);
      m_step++;
      m_samples += m_gb;
      m_tokens += m_gb * m_seq;
      m_last_loss = st.loss;
      if (!std::isfinite(st.loss) || !std::isfinite(st.grad_norm)) {
        finite = false;
        break;
      }
      if (m_progress)
        m_progress(progress_of(st));
    }
    // As mlperf_common logs it: block_stop carries the block's first samples_count.
    m_log.end("block_stop", nullptr, {{"samples_count", block_first}});
    return finite;
  }

  progress_info progress_of(const step_stats& st) const {
    progress_info pi;
    pi.step = m_step;
    pi.max_steps = m_s.hp.max_steps;
    pi.loss = st.loss;
    pi.elapsed_s = seconds_since(m_t0);
    pi.tokens_per_s = double(m_tokens) / std::max(1e-9, pi.elapsed_s);
    if (!m_r.curve.empty())
      pi.last_eval = m_r.curve.back().eval_loss;
    pi.eta_s = eta_s(pi.elapsed_s);
    return pi;
  }

  // ETA: extrapolate the last two evaluations linearly to the target; -1 when unknown.
  double eta_s(double elapsed_s) const {
    if (m_r.curve.size() < 2)
      return -1;
    const auto& a = m_r.curve[m_r.curve.size() - 2];
    const auto& c = m_r.curve.back();
    double drop = a.eval_loss - c.eval_loss;
    if (!(drop > 0 && c.eval_loss > m_s.target_loss))
      return -1;
    double evals = (c.eval_loss - m_s.target_loss) / drop;
    return std::max(0.0, c.time_s + evals * (c.time_s - a.time_s) - elapsed_s);
  }

  // Evaluation is inside the timed region (MLPerf Training rules, "Timing"). True when the run
  // stops: the target is reached, the loss is not finite, or max_steps is spent.
  bool evaluate_and_judge() {
    m_log.start("eval_start", nullptr, {{"samples_count", m_samples}});
    double el = m_model->root_value(evaluate(*m_model, m_eval_windows, m_s.hp.eval_samples));
    m_log.point("eval_accuracy", el, {{"samples_count", m_samples}});
    m_log.end("eval_stop", nullptr, {{"samples_count", m_samples}});
    m_r.curve.push_back({m_samples, m_step, el, seconds_since(m_t0)});
    if (!std::isfinite(el)) {
      m_r.status = "aborted";
      m_r.reason = "evaluation loss is not finite at step " + std::to_string(m_step);
      return true;
    }
    if (el <= m_s.target_loss) {
      m_r.status = "success";
      m_r.converged = true;
      return true;
    }
    if (m_step >= m_s.hp.max_steps) {
      m_r.reason = "eval loss " + std::to_string(el) + " above the target " +
                   std::to_string(m_s.target_loss) + " after " + std::to_string(m_step) + " steps";
      return true;
    }
    return false;
  }

  void finish() {
    m_r.seconds = seconds_since(m_t0);
    m_r.steps = m_step;
    m_r.samples = m_samples;
    m_r.loader_tokens_per_s = m_loader->tokens_per_s();
    // mlperf_logging knows two statuses: success, aborted (a run that did not converge is
    // aborted).
    m_log.end("run_stop", nullptr,
              {{"samples_count", m_samples}, {"status", m_r.converged ? "success" : "aborted"}});
    m_r.mllog = m_log.text();
  }

  const ttt_setup& m_s;
  const uint64_t m_seed;
  const progress_fn& m_progress;
  mllog::mllogger m_log;
  const int64_t m_batch, m_seq, m_gb, m_eval_every_steps;
  ttt_result m_r;
  std::unique_ptr<trainable> m_model;
  std::unique_ptr<batch_loader> m_loader;
  std::vector<int32_t> m_eval_windows;
  clock_type::time_point m_t0;
  int64_t m_step = 0, m_samples = 0, m_tokens = 0;
  double m_last_loss = 0;
};

} // namespace

ttt_result train_to_target(const ttt_setup& s, uint64_t seed, std::ostream* sink,
                           const progress_fn& progress) {
  return ttt_run(s, seed, sink, progress).run();
}

} // namespace accelbench::training
