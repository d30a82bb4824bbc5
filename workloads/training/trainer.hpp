#pragma once
// The training loop, shared by the two modes of train.llama:
//  - throughput: timed steps after warm-up, with a forward/backward/optimizer breakdown;
//  - time to train: MLPerf Training's protocol (untimed init, clock from run_start before any
//    data is touched, periodic evaluation inside the timed region, stop at the first evaluation
//    reaching the quality target) with its MLPerf log.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/mllog.hpp"
#include "workloads/training/data.hpp"
#include "workloads/training/llama.hpp"
#include "workloads/training/optimizer.hpp"

namespace accelbench::training {

// Closed-division hyperparameters of a time-to-train run (ruleset "training" section).
struct train_hparams {
  int64_t grad_accum = 1;
  lr_schedule schedule;
  adamw_config adam;
  double clip_norm = 1.0;         // <= 0: no clipping
  int64_t max_steps = 1000;       // not reaching the target within this many steps: not converged
  int64_t eval_every_samples = 0; // evaluation interval in samples (sequences); 0: every step
  int64_t eval_samples = 64;      // held-out sequences per evaluation
  int64_t global_batch(int64_t micro_batch) const { return micro_batch * grad_accum; }
};

// What the training loop needs of a model and its optimizer. cpu_trainable (cpu/cpu_trainable.hpp)
// is the CPU model with AdamW; workloads/training/cuda's llama_cuda is the same model on a GPU.
class trainable {
public:
  virtual ~trainable() = default;
  virtual const llama_options& options() const = 0;
  virtual size_t num_params() const = 0;
  // Draws the initial parameters (init_parameter_values) and resets the optimizer state.
  virtual void init(uint64_t seed) = 0;
  // Host token ids [B,T] (null for blocks-only models); the mean loss of the micro batch.
  virtual float forward(const int32_t* inputs, const int32_t* targets) = 0;
  virtual void zero_grad() = 0;
  virtual void backward(float loss_scale) = 0;
  // Global L2 norm before clipping to max_norm (<= 0: no clipping).
  virtual double clip_grad_norm(double max_norm) = 0;
  virtual void optimizer_step(double lr, const adamw_config& c) = 0;
  // Waits for queued device work, so that phases can be timed; the CPU has none.
  virtual void synchronize() {}
  // The engines that run the step, for the run record.
  virtual std::string implementation() const = 0;
  // Data parallel: the mean of a per-replica value (a micro batch's loss) over every
  // replica, and rank 0's value of something every replica computed (an evaluation), both
  // identical on every rank. One replica: the value itself.
  virtual double replica_mean(double local) { return local; }
  virtual double root_value(double v) { return v; }
  // Facts recorded with each timed step (a GPU's SM clock and throttling); the CPU has none.
  virtual nlohmann::json step_facts() { return nlohmann::json::object(); }
  // Data parallel: backward calls `fn` with the offset (in floats, llama_layout.hpp)
  // from which every gradient of this backward is final: after the LM head, after each block
  // (last to first) and after the embedding. Empty: nothing is called.
  virtual void set_grad_ready(std::function<void(size_t)> fn) = 0;
  // The parameters on the host, num_params() floats: the model's own buffer, or a copy in `buf`
  // of a device's (for the replicas' hash).
  virtual const float* host_params(std::vector<float>& buf) = 0;
};

// Builds the model a time-to-train run trains (inside its untimed initialisation).
using model_factory =
    std::function<std::unique_ptr<trainable>(const model_config&, const llama_options&)>;

// A source of token batches: called once per run, after the clock has started (MLPerf: data is
// first touched inside the timed region).
using source_factory = std::function<std::unique_ptr<token_source>(uint64_t run_seed)>;

struct step_stats {
  float loss = 0;
  double grad_norm = 0, lr = 0;
  double forward_s = 0, backward_s = 0, optimizer_s = 0, data_s = 0, total_s = 0;
  nlohmann::json facts = nlohmann::json::object(); // trainable::step_facts after the step
};

// One optimizer step: grad_accum micro batches of forward + backward (each loss scaled by
// 1/grad_accum), global-norm clipping, AdamW at lr = schedule(step).
step_stats train_step(trainable& m, batch_loader& data, const train_hparams& hp, int64_t step);

// Mean cross-entropy (nats) over every position of the windows (n x (seq+1) tokens), evaluated
// in micro batches of the model's batch size (n must be a multiple of it).
double evaluate(trainable& m, const std::vector<int32_t>& windows, int64_t n);

// ---------------------------------------------------------------------------------------------
struct throughput_result {
  std::vector<step_stats> steps; // the timed steps
  double loader_tokens_per_s = 0;
  double init_s = 0;
};
throughput_result measure_throughput(trainable& m, const train_hparams& hp,
                                     const source_factory& data, uint64_t seed,
                                     int64_t warmup_steps, int64_t steps);

// ---------------------------------------------------------------------------------------------
struct eval_point {
  int64_t samples = 0, step = 0;
  double eval_loss = 0, time_s = 0; // time_s: since run_start
};

struct ttt_setup {
  model_config model;
  llama_options options;
  train_hparams hp;
  double target_loss = 0;    // eval cross-entropy (nats) to reach
  double max_init_s = 0;     // bound on the untimed initialisation (0: none)
  source_factory train_data; // per-run training stream
  source_factory eval_data;  // the fixed held-out set (seed ignored)
  model_factory make_model;  // empty: the CPU model (cpu_trainable)
  int64_t replicas = 1;      // data-parallel ranks: the global batch is replicas x hp's
  std::string benchmark = "train.llama";
  std::string division = "closed", org = "accelbench", platform = "cpu", status = "onprem";
};

struct ttt_result {
  uint64_t seed = 0;
  bool converged = false;
  std::string status; // success | not_converged | aborted (diverged: NaN/inf loss)
  std::string reason;
  double seconds = 0; // run_start .. run_stop
  double init_s = 0;
  bool init_within_bound = true;
  int64_t steps = 0, samples = 0;
  std::vector<eval_point> curve;
  std::string mllog;
  double loader_tokens_per_s = 0;
};

struct progress_info {
  int64_t step = 0, max_steps = 0;
  double loss = 0, tokens_per_s = 0, elapsed_s = 0;
  double eta_s = -1; // estimated seconds to the target; < 0: unknown
  std::optional<double> last_eval;
};
using progress_fn = std::function<void(const progress_info&)>;

// One time-to-train run with its own seed. The MLPerf log goes to `sink` as it is written (may
// be null) and into the result.
ttt_result train_to_target(const ttt_setup& s, uint64_t seed, std::ostream* sink,
                           const progress_fn& progress = {});

} // namespace accelbench::training
