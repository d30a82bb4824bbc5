// train.llama's settings: the config and the effective ruleset resolved once into train_settings
// (requested vs effective: what the user left unset comes from the ruleset, then the model), the
// closed division's checks, and the host memory a config needs. The spec half of the workload;
// train_workload.cpp runs what it resolves.
#include "workloads/training/train_workload.hpp"

#include <omp.h>

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/core/checked_math.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/dist/dist.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/train_rules.hpp"

namespace accelbench::training {

namespace {

// The data-parallel settings (used at world size > 1 only).
void resolve_data_parallel(const config& cfg, train_settings& s) {
  s.overlap = cfg.get_bool("overlap");
  s.baseline = cfg.get_bool("baseline");
  const int64_t bucket_kib = cfg.get_int("bucket_kib");
  if (bucket_kib > (int64_t{1} << 22)) // MPI counts are int: at most 2^31 - 1 floats
    throw input_error(
        fmt::format("train.llama: bucket_kib {} is above 4194304 (4 GiB)", bucket_kib));
  s.bucket_bytes = uint64_t(bucket_kib) * 1024;
}

const nlohmann::json& member_or_empty(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return j.contains(key) ? j[key] : empty;
}

// The model's layers that run: all of them (0 or the model's count) or a leading subset.
void resolve_layers(const config& cfg, train_settings& s) {
  const int64_t layers = cfg.get_int("layers");
  if (layers > s.model.n_layers)
    throw input_error(fmt::format("train.llama: layers = {} exceeds the {} layers of model '{}'",
                                  layers, s.model.n_layers, s.model.name));
  s.options.layers = layers > 0 ? layers : s.model.n_layers;
  // A subset of the model's layers runs the decoder blocks alone (no embedding, no LM head):
  // it is a throughput probe whose tokens/s is projected to the full model.
  s.options.with_head = layers == 0 || layers == s.model.n_layers;
}

// The sequence length: the config's, else the ruleset's, else the model's maximum.
void resolve_seq(const config& cfg, const nlohmann::json& tr, train_settings& s) {
  int64_t seq = cfg.get_int("seq");
  if (seq == 0)
    seq = get_or<int64_t>(tr, "seq", s.model.max_seq_len);
  if (seq > s.model.max_seq_len)
    throw input_error(fmt::format("train.llama: seq = {} exceeds max_seq_len {} of model '{}'", seq,
                                  s.model.max_seq_len, s.model.name));
  s.options.seq = seq;
}

// The micro batch and the accumulation steps; unset, the accumulation makes up the ruleset's
// global batch over every data-parallel rank.
void resolve_batch(const config& cfg, const nlohmann::json& tr, train_settings& s) {
  int64_t batch = cfg.get_int("batch");
  int64_t accum = cfg.get_int("grad_accum");
  const int64_t rules_gb = get_or<int64_t>(tr, "global_batch", 0);
  if (batch == 0)
    batch = get_or<int64_t>(tr, "micro_batch", 8);
  const int64_t replicas = dist::size(); // data parallel: the global batch spans the ranks
  if (accum == 0)
    accum = rules_gb > 0 && rules_gb % (batch * replicas) == 0
                ? rules_gb / (batch * replicas)
                : get_or<int64_t>(tr, "grad_accum", 1);
  s.options.batch = batch;
  s.hp.grad_accum = accum;
}

// The optimizer's hyperparameters and the step bound (ruleset "hyperparameters", "max_steps").
void resolve_optimizer(const nlohmann::json& tr, train_settings& s) {
  const auto& hyper = member_or_empty(tr, "hyperparameters");
  s.hp.schedule.base_lr = get_or<double>(hyper, "base_lr", 3e-3);
  s.hp.schedule.end_lr = get_or<double>(hyper, "end_lr", 3e-4);
  s.hp.schedule.warmup_steps = get_or<int64_t>(hyper, "warmup_steps", 0);
  s.hp.adam.beta1 = get_or<double>(hyper, "beta1", 0.9);
  s.hp.adam.beta2 = get_or<double>(hyper, "beta2", 0.95);
  s.hp.adam.eps = get_or<double>(hyper, "eps", 1e-8);
  s.hp.adam.weight_decay = get_or<double>(hyper, "weight_decay", 0.1);
  s.hp.clip_norm = get_or<double>(hyper, "clip_norm", 1.0);
  s.hp.max_steps = get_or<int64_t>(tr, "max_steps", 1000);
  s.hp.schedule.decay_steps =
      get_or<int64_t>(hyper, "decay_steps", s.hp.max_steps - s.hp.schedule.warmup_steps);
}

// How often and on how many held-out sequences a time-to-train run evaluates.
void resolve_evaluation(const nlohmann::json& tr, train_settings& s) {
  s.hp.eval_every_samples = get_or<int64_t>(tr, "eval_every_samples", 0);
  s.hp.eval_samples = get_or<int64_t>(tr, "eval_samples", 64);
  // Bounded before rounding up, where a huge count would overflow (the held-out set is built
  // in memory: a billion windows is already far beyond any machine).
  if (s.hp.eval_samples < 1 || s.hp.eval_samples > (int64_t{1} << 30))
    throw input_error(
        fmt::format("train.llama: eval_samples {} is out of range (1 to 2^30)", s.hp.eval_samples));
  // Evaluation runs in micro batches: round the held-out set up to a whole number of them.
  const int64_t batch = s.options.batch;
  s.hp.eval_samples = (s.hp.eval_samples + batch - 1) / batch * batch;
}

// The synthetic Markov source (ruleset "data") and the held-out set's seed.
void resolve_markov(const nlohmann::json& tr, train_settings& s) {
  const auto& d = member_or_empty(tr, "data");
  s.markov.vocab = s.model.vocab_size;
  s.markov.order = get_or<int64_t>(d, "order", 1);
  s.markov.branching = get_or<int64_t>(d, "branching", 4);
  s.markov.epsilon = get_or<double>(d, "epsilon", 0.01);
  s.markov.seed = get_or<uint64_t>(d, "seed", 1);
  s.eval_seed = get_or<uint64_t>(d, "eval_seed", 2);
}

// How many runs a time-to-train result takes and the quality target they train to.
void resolve_target(const nlohmann::json& tr, train_settings& s) {
  s.runs = get_or<int64_t>(tr, "runs", 5);
  s.min_runs = get_or<int64_t>(tr, "min_runs", s.runs);
  s.max_init_s = get_or<double>(tr, "max_init_s", 0.0);
  const auto& target = member_or_empty(tr, "target");
  s.margin_nats = get_or<double>(target, "margin_nats", 0.1);
  s.fixed_target = get_or<double>(target, "eval_loss", 0.0);
}

// Closed division (MLPerf Training rules): the model, sequence length, global batch,
// optimizer hyperparameters, data and target are fixed by the ruleset; a user may change only
// what "user_changeable" lists (the micro-batch/accumulation split, dtype, threads).
std::vector<std::string> closed_division_violations(const nlohmann::json& tr,
                                                    const train_settings& s) {
  std::vector<std::string> v;
  auto model = get_or<std::string>(tr, "model", s.model.name);
  if (model != s.model.name)
    v.push_back("closed division fixes model = " + model + ", got " + s.model.name);
  const int64_t seq = s.options.seq;
  if (tr.contains("seq") && seq != tr["seq"].get<int64_t>())
    v.push_back(
        fmt::format("closed division fixes seq = {}, got {}", tr["seq"].get<int64_t>(), seq));
  const int64_t rules_gb = get_or<int64_t>(tr, "global_batch", 0);
  const int64_t batch = s.options.batch, accum = s.hp.grad_accum, replicas = dist::size();
  if (rules_gb > 0 && batch * accum * replicas != rules_gb)
    v.push_back(fmt::format(
        "closed division fixes the global batch = {}, got batch {} x grad_accum {}{} = {}",
        rules_gb, batch, accum, replicas > 1 ? fmt::format(" x {} ranks", replicas) : "",
        batch * accum * replicas));
  if (!s.options.with_head)
    v.emplace_back("closed division trains the whole model, not a layer subset");
  if (s.runs < s.min_runs)
    v.push_back(fmt::format("closed division needs {} runs, got {}", s.min_runs, s.runs));
  return v;
}

} // namespace

namespace {

// The key the training inputs (weights, data) are seeded from, with the run's --seed: the config
// without the axes that only say how a global batch is split and run (the per-rank batch, the
// gradient buckets, overlap, the baseline) or where (the backend). So 2 ranks x batch 2 train from
// the same weights and data as 1 rank x batch 4, and CPU and CUDA from the same ones.
std::string seed_key(const config& cfg) {
  static const std::set<std::string> k_layout = {"batch", "overlap", "bucket_kib", "baseline"};
  std::string k = cfg.workload;
  for (const auto& [name, value] : cfg.values)
    if (k_layout.count(name) == 0)
      k.append(",").append(name).append("=").append(value);
  return k;
}

} // namespace

train_settings resolve_settings(const config& cfg, const ruleset* rules) {
  train_settings s;
  const auto& tr = section_of(rules);
  s.key = seed_key(cfg);
  s.mode = cfg.at("mode");
  s.model = find_model(data_root() / "workloads/training/models.json", cfg.at("model"));
  resolve_layers(cfg, s);
  resolve_seq(cfg, tr, s);
  resolve_batch(cfg, tr, s);
  s.options.dtype = parse_compute_dtype(cfg.at("dtype"));
  resolve_optimizer(tr, s);
  resolve_evaluation(tr, s);
  s.steps = cfg.get_int("steps");
  s.warmup_steps = rules ? rules->measurement().warmup_iterations : 2;
  int threads = int(cfg.get_int("threads"));
  s.threads = threads > 0 ? threads : omp_get_num_procs();
  s.data = cfg.at("data");
  resolve_data_parallel(cfg, s);
  resolve_markov(tr, s);
  resolve_target(tr, s);
  if (s.mode == "time_to_train" && get_or<std::string>(tr, "division", "closed") == "closed")
    s.closed_violations = closed_division_violations(tr, s);
  return s;
}

uint64_t estimate_bytes(const train_settings& s) {
  // A micro batch of more than 2^30 tokens fits no host; the plan's products of batch x seq x width
  // would overflow 64 bits first and report a few bytes. Saturated, it is refused as too big.
  constexpr uint64_t max_tokens = uint64_t{1} << 30;
  const uint64_t tokens = sat_product({s.options.batch, s.options.seq + 1});
  const uint64_t eval_tokens = sat_product({s.hp.eval_samples, s.options.seq + 1});
  if (tokens > max_tokens || eval_tokens > max_tokens)
    return k_saturated;
  uint64_t b = llama_model::plan(s.model, s.options).total();
  // Prefetched batches (depth 2 plus the one in use) and the held-out set.
  b += 3 * tokens * 4;
  if (s.mode == "time_to_train")
    b += eval_tokens * 4;
  // The Markov chain's tables: successors and probabilities per context, stationary vector.
  if (s.data == "synthetic" && s.options.with_head) {
    double ctx = std::pow(double(s.markov.vocab), double(s.markov.order));
    double table = ctx * double(s.markov.branching * 8 + 16);
    b = sat_add(b, table < 1.8e19 ? uint64_t(table) : k_saturated);
  }
  return b;
}

} // namespace accelbench::training
