#include "workloads/training/train_workload.hpp"
#include "workloads/training/train_modes.hpp"
#include "workloads/training/train_rules.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/checked_math.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/score.hpp"
#include "harness/core/stats.hpp"
#include "harness/dist/dist.hpp"
#include "workloads/training/cpu/cpu_trainable.hpp"
#include "workloads/training/cpu/llama_model.hpp"
#include "workloads/training/data_parallel.hpp"
#include "workloads/training/training_backend.hpp"

namespace accelbench::training {

namespace {

// Peak resident memory of this process (VmHWM). Writing 5 to clear_refs resets it (Linux >= 4.0),
// so a run can report its own peak.
void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (f)
    f << "5";
}
uint64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return uint64_t(std::stoull(line.substr(6))) * 1024;
  return 0;
}

struct scoped_threads {
  int saved;
  explicit scoped_threads(int n) : saved(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~scoped_threads() { omp_set_num_threads(saved); }
};

// The dtype axis' choices: the names of the dtypes training runs.
std::vector<std::string> dtype_choices() {
  std::vector<std::string> names;
  names.reserve(std::size(k_training_dtypes));
  for (compute_dtype d : k_training_dtypes)
    names.push_back(to_string(d));
  return names;
}

std::string gib(uint64_t b) { return fmt::format("{:.2f} GiB", double(b) / double(1ull << 30)); }

} // namespace

uint64_t mix_seed(uint64_t a, uint64_t b) {
  stats::rng r(a ^ (b * 0x9e3779b97f4a7c15ULL));
  return r.next();
}

source_factory train_source(const train_settings& s,
                            const std::shared_ptr<const markov_source>& src) {
  if (s.data == "synthetic")
    return [src](uint64_t seed) -> std::unique_ptr<token_source> {
      return std::make_unique<markov_stream>(src, mix_seed(seed, 1));
    };
  auto files = list_shards(s.data, "train");
  int64_t vocab = s.model.vocab_size;
  return [files, vocab](uint64_t) -> std::unique_ptr<token_source> {
    return std::make_unique<shard_stream>(files, vocab);
  };
}

dp_options dp_settings(const train_settings& s) {
  dp_options o;
  o.overlap = s.overlap;
  o.bucket_bytes = s.bucket_bytes;
  o.grad_accum = s.hp.grad_accum;
  return o;
}

namespace {

class train_workload : public workload {
public:
  train_workload()
      : m_spec{.name = "train.llama",
               .family = "training",
               .description = "Llama-style decoder training (RMSNorm, RoPE, grouped-query flash "
                              "attention, SwiGLU, AdamW): throughput in tokens/s and MFU, or "
                              "MLPerf-style time to train (cpu)",
               .axes = axes(),
               .backends = m_backends.names(),
               .default_ruleset = "train-v1",
               .primary_metric = "tokens_per_s",
               .across_ranks = true} {} // data parallel on either backend

  const workload_spec& spec() const override { return m_spec; }

  static std::vector<axis> axes() {
    std::vector<axis> all = {
        {"model",
         axis_type::string,
         "tiny",
         {"tiny", "llama3-8b", "llama3-70b", "llama3-405b"},
         1,
         "model dimensions (workloads/training/models.json)"},
        {"layers",
         axis_type::integer,
         "0",
         {},
         0,
         "decoder blocks; 0 = the model's own; fewer = blocks only, tokens/s projected to the full "
         "model"},
        {"seq",
         axis_type::integer,
         "0",
         {},
         0,
         "sequence length; 0 = the ruleset's, else the model's"},
        {"batch", axis_type::integer, "0", {}, 0, "micro batch (sequences); 0 = the ruleset's"},
        {"grad_accum",
         axis_type::integer,
         "0",
         {},
         0,
         "micro batches per optimizer step; 0 = the ruleset's global batch / batch"},
        {"dtype", axis_type::string, to_string(dtype::fp32), dtype_choices(), 1,
         "matmul input precision (fp32 master weights either way)"},
        {"mode",
         axis_type::string,
         "throughput",
         {"throughput", "time_to_train"},
         1,
         "throughput (tokens/s) or time_to_train (MLPerf-style, use --rules train-ttt-v1)"},
        {"steps", axis_type::integer, "10", {}, 1, "throughput: timed steps after warm-up"},
        {"data",
         axis_type::string,
         "synthetic",
         {},
         1,
         "synthetic (Markov source with a known entropy floor) or a path to llm.c token shards"},
        {"threads", axis_type::integer, "0", {}, 0, "OpenMP threads; 0 = all"},
    };
    for (auto& a : data_parallel_axes())
      all.push_back(std::move(a));
    return all;
  }
  std::vector<const backend*> backends() const override { return m_backends.all(); }
  unbuilt_list backends_not_built() const override { return m_backends.unbuilt(); }

  // Settings of a run across ranks (mpirun -np N); recorded, and without effect, at world size 1.
  static std::vector<axis> data_parallel_axes() {
    return {
        {"overlap",
         axis_type::boolean,
         "1",
         {},
         0,
         "data parallel (mpirun -np N): all-reduce each gradient bucket as soon as backward has "
         "finished it (0: after backward)"},
        {"bucket_kib",
         axis_type::integer,
         "25600",
         {},
         1,
         "data parallel: gradient bucket size in KiB (PyTorch DDP's 25 MiB by default)"},
        {"baseline",
         axis_type::boolean,
         "0",
         {},
         0,
         "data parallel: also time the same config on rank 0 alone and record the scaling "
         "efficiency"},
    };
  }

  // Throughput and time-to-train are judged by different rules (MLPerf-style rules for the latter).
  std::string default_ruleset(const config& cfg) const override {
    auto it = cfg.values.find("mode");
    return it != cfg.values.end() && it->second == "time_to_train" ? "train-ttt-v1"
                                                                   : m_spec.default_ruleset;
  }

  void validate(const config& cfg) const override {
    if (const auto* b = m_backends.find(cfg.backend))
      b->validate(cfg);
    auto s = resolve_settings(cfg, nullptr);
    s.model.validate();
    if (s.data != "synthetic") {
      // Bad shards are input errors before anything runs: magic, truncation, vocabulary.
      for (const char* split : {"train", "val"}) {
        std::vector<std::filesystem::path> files;
        try {
          files = list_shards(s.data, split);
        } catch (const input_error&) {
          if (std::string(split) == "train")
            throw;
          continue; // no validation split: evaluation reads the training shards
        }
        for (auto& f : files)
          check_vocabulary(read_shard(f), s.model.vocab_size, f);
      }
    }
  }

  uint64_t estimate_host_bytes(const config& cfg) const override {
    auto s = resolve_settings(cfg, nullptr);
    const auto* b = m_backends.find(cfg.backend);
    return b ? b->host_bytes(s, estimate_bytes(s)) : estimate_bytes(s);
  }

  std::string unavailable_reason(const config& cfg) const override {
    return m_backends.refusal(cfg.backend, [&](const training_backend& b) {
      return b.refusal(resolve_settings(cfg, nullptr));
    });
  }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    train_settings s = resolve_settings(cfg, ctx.rules);
    scoped_threads threads(s.threads);
    out.effective_settings["training"] = settings_json(s);
    // The axes whose 0 means "the default", as they resolved: the CLI's tables print what ran.
    out.extra["resolved"] = {{"batch", s.options.batch},
                             {"grad_accum", s.hp.grad_accum},
                             {"layers", s.options.layers},
                             {"seq", s.options.seq},
                             {"threads", s.threads}};
    const training_backend& b = m_backends.get(cfg.backend);
    if (auto why = unavailable_reason(cfg); !why.empty())
      return out.mark_skipped(why);
    if (b.host_memory_bound()) {
      out.extra["memory_estimate_bytes"] = estimate_bytes(s);
      if (const std::string why = memory_refusal(s); !why.empty()) {
        out.mark_failed(why);
        return;
      }
    }
    if (s.mode == "time_to_train")
      run_time_to_train(s, b, out, ctx);
    else
      run_throughput(s, b, out, ctx);
  }

private:
  // Refused before allocating: the estimate is the allocation (llama_model::plan). Across ranks
  // the lowest rank short of memory is named on every rank, so all refuse together.
  static std::string memory_refusal(const train_settings& s) {
    const uint64_t need = estimate_bytes(s);
    const uint64_t avail = read_memory_info().available_bytes;
    std::string why;
    if (avail > 0 && need > avail)
      why = "train.llama: needs " + gib(need) + " of host memory, " + gib(avail) +
            " available (model " + s.model.name + ", seq " + std::to_string(s.options.seq) +
            ", batch " + std::to_string(s.options.batch) + ")";
    if (!dist::distributed())
      return why;
    return dist::first_nonempty(why.empty() ? why : fmt::format("rank {}: {}", dist::rank(), why));
  }

  static nlohmann::json settings_json(const train_settings& s) {
    return {{"mode", s.mode},
            {"model", s.model.name},
            {"layers", s.options.layers},
            {"with_head", s.options.with_head},
            {"seq", s.options.seq},
            {"micro_batch", s.options.batch},
            {"grad_accum", s.hp.grad_accum},
            {"global_batch", s.hp.global_batch(s.options.batch)},
            {"dtype", to_string(s.options.dtype)},
            {"threads", s.threads},
            {"data", s.data},
            {"hyperparameters",
             {{"base_lr", s.hp.schedule.base_lr},
              {"end_lr", s.hp.schedule.end_lr},
              {"warmup_steps", s.hp.schedule.warmup_steps},
              {"decay_steps", s.hp.schedule.decay_steps},
              {"beta1", s.hp.adam.beta1},
              {"beta2", s.hp.adam.beta2},
              {"eps", s.hp.adam.eps},
              {"weight_decay", s.hp.adam.weight_decay},
              {"clip_norm", s.hp.clip_norm}}}};
  }

  // One rank measures on its backend; across ranks, data parallel (run_throughput_dp).
  void run_throughput(const train_settings& s, const training_backend& b, run& out,
                      run_context& ctx) const {
    if (dist::distributed())
      return run_throughput_dp(s, b, out, ctx);
    std::shared_ptr<const markov_source> src;
    if (s.data == "synthetic" && s.options.with_head)
      src = std::make_shared<markov_source>(s.markov);
    const uint64_t seed = seed_of(ctx.seed, s.key);
    reset_peak_rss();
    try {
      const auto m = b.measure_throughput(s, train_source(s, src), seed, out);
      if (b.host_memory_bound())
        out.extra["peak_rss_bytes"] = peak_rss_bytes();
      const kernel_peak pk = b.record_peak(s, out);
      record_throughput(s, m.result, m.num_params, pk, out, ctx);
    } catch (const backend_error& e) {
      out.mark_failed(e.what());
    }
  }

  // Data parallel over the world (see data_parallel.hpp): a step's time is the slowest
  // rank's (every rank's is kept), tokens/s is global, and the replicas must end identical.
  // On CUDA each rank's replica is on its own GPU, NCCL on device buffers.
  void run_throughput_dp(const train_settings& s, const training_backend& b, run& out,
                         run_context& ctx) const {
    std::shared_ptr<const markov_source> src;
    if (s.data == "synthetic" && s.options.with_head)
      src = std::make_shared<markov_source>(s.markov);
    const uint64_t seed = agreed_seed(s, ctx);
    const source_factory global = train_source(s, src);
    const int n = dist::size();
    const source_factory mine = [global, n](uint64_t sd) -> std::unique_ptr<token_source> {
      return std::make_unique<rank_slice_source>(global(sd), n, dist::rank());
    };
    run_context root_ctx = ctx;
    if (!dist::is_root())
      root_ctx.log = nullptr;
    reset_peak_rss();
    {
      const auto model = dist::on_every_rank("allocate its replica of the model", [&] {
        return b.make_dp(s.model, s.options, dp_settings(s));
      });
      auto res = measure_throughput(*model, s.hp, mine, seed, s.warmup_steps, s.steps);
      const uint64_t rss = peak_rss_bytes();
      const auto rank_s = slowest_rank_steps(res);
      const std::string differ = replicas_differ(*model, out);
      const kernel_peak pk = b.record_peak(s, out);
      out.extra["peak_rss_bytes"] = rss;
      out.extra["implementation"] = model->implementation();
      train_settings step = s; // the global step: N micro batches of B
      step.options.batch = s.options.batch * n;
      record_throughput(step, res, model->num_params(), pk, out, root_ctx);
      record_ranks(s, res, rank_s, *model, out);
      if (!differ.empty())
        out.mark_invalid(differ);
    }
    if (s.baseline)
      record_scaling(s, train_source(s, src), seed, b, out);
  }

  // A seed every rank uses (rank 0's): the replicas start from the same parameters.
  static uint64_t agreed_seed(const train_settings& s, const run_context& ctx) {
    const uint64_t seed = seed_of(ctx.seed, s.key);
    return std::stoull(dist::broadcast(std::to_string(seed)));
  }

  // Each step's time becomes the slowest rank's; returns every rank's time per step.
  static std::vector<std::vector<double>> slowest_rank_steps(throughput_result& res) {
    std::vector<std::vector<double>> all;
    for (auto& st : res.steps) {
      all.push_back(dist::gather_all(st.total_s));
      st.total_s = *std::max_element(all.back().begin(), all.back().end());
    }
    return all;
  }

  // The parameters' hash on every rank against rank 0's: the reason the run is INVALID, or "".
  static std::string replicas_differ(dp_trainable& m, run& out) {
    const std::string mine = m.params_hash();
    const std::string root = dist::broadcast(mine);
    out.extra["parameter_hash"] = root;
    return dist::first_nonempty(
        mine == root ? ""
                     : fmt::format("the replicas' parameters differ after the run: rank {} has "
                                   "hash {}, rank 0 has {}",
                                   dist::rank(), mine, root));
  }

  // Per-rank step times with the samples, each rank's own tokens/s, the data-parallel layout.
  static void record_ranks(const train_settings& s, const throughput_result& res,
                           const std::vector<std::vector<double>>& rank_s, const dp_trainable& m,
                           run& out) {
    std::vector<double> own;
    for (size_t i = 0; i < res.steps.size() && i < out.samples.size(); i++) {
      out.samples[i].extra["rank_s"] = rank_s[i];
      own.push_back(rank_s[i][size_t(dist::rank())]);
    }
    const double rank_tokens = double(s.options.batch * s.options.seq * s.hp.grad_accum);
    std::vector<double> per_rank;
    for (double m : dist::gather_all(own.empty() ? 0.0 : stats::median(own)))
      per_rank.push_back(m > 0 ? rank_tokens / m : 0.0);
    out.extra["tokens_per_s_per_rank"] = per_rank;
    out.extra["data_parallel"] = {
        {"world_size", dist::size()},
        {"micro_batch_per_rank", s.options.batch},
        {"global_batch", s.hp.global_batch(s.options.batch) * dist::size()},
        {"overlap", s.overlap},
        {"bucket_bytes", s.bucket_bytes},
        {"buckets", m.buckets()},
        {"gradient_bytes", uint64_t(m.num_params()) * sizeof(float)},
        {"sharding", "each step draws world x B windows from one seeded stream on every rank; "
                     "rank r trains on windows [r*B, (r+1)*B) of them"},
        {"allreduce", "sum over " + m.engine() + ", divided by the world size"}};
  }

  // baseline=1: the same config (per-rank batch B) on rank 0 alone while the others wait idle,
  // then scaling_efficiency = global tokens/s / (N x one-rank tokens/s).
  static void record_scaling(const train_settings& s, const source_factory& data, uint64_t seed,
                             const training_backend& b, run& out) {
    double one = 0;
    if (dist::is_root()) {
      auto m = b.make_model(s.model, s.options); // one replica alone, on the same backend
      auto res = measure_throughput(*m, s.hp, data, seed, s.warmup_steps, s.steps);
      std::vector<double> t;
      for (const auto& st : res.steps)
        t.push_back(st.total_s);
      one = double(s.options.batch * s.options.seq * s.hp.grad_accum) / stats::median(t);
    }
    dist::idle_barrier();
    one = dist::sum_all(one); // rank 0's value on every rank
    const metric* tps = out.find_metric("tokens_per_s");
    const double global = tps ? tps->value : 0.0;
    const double eff = one > 0 ? global / (double(dist::size()) * one) : 0.0;
    out.add_metric("baseline_tokens_per_s", one, "tokens/s", direction::higher_is_better);
    out.add_metric("scaling_efficiency", 100.0 * eff, "%", direction::higher_is_better);
    out.extra["scaling"] = {
        {"baseline", "the same config (per-rank micro batch) on rank 0 alone, in the same job, "
                     "while the other ranks waited idle"},
        {"formula", "scaling_efficiency = global tokens/s / (world_size x one-rank tokens/s)"}};
  }

  // Samples and metrics of a throughput measurement (either backend). pk: the peak MFU is judged
  // against, by kernel_metrics' above-peak rule: no MFU when it is unknown or the run beat it.
  void record_throughput(const train_settings& s, const throughput_result& res, size_t num_params,
                         const kernel_peak& pk, run& out, run_context& ctx) const {
    const int64_t tokens_per_step = s.options.batch * s.options.seq * s.hp.grad_accum;
    std::vector<double> t, f, b, o;
    out.samples.clear();
    for (size_t i = 0; i < res.steps.size(); i++) {
      const auto& st = res.steps[i];
      sample smp;
      smp.index = int64_t(i);
      smp.value = st.total_s;
      smp.extra = {{"loss", st.loss},
                   {"forward_s", st.forward_s},
                   {"backward_s", st.backward_s},
                   {"optimizer_s", st.optimizer_s},
                   {"data_wait_s", st.data_s},
                   {"grad_norm", st.grad_norm}};
      smp.extra.update(st.facts); // a GPU's clock and throttling after the step
      out.samples.push_back(smp);
      t.push_back(st.total_s);
      f.push_back(st.forward_s);
      b.push_back(st.backward_s);
      o.push_back(st.optimizer_s);
    }
    out.sample_unit = "s";
    out.sample_dir = direction::lower_is_better;
    auto sum = stats::summarize(t);
    const double tps = double(tokens_per_step) / sum.median;
    const double fpt =
        model_flops_per_token(s.model, s.options.layers, s.options.seq, s.options.with_head);
    const double achieved = fpt * tps / 1e12;
    out.add_metric("tokens_per_s", tps, "tokens/s", direction::higher_is_better);
    out.add_metric("step_time", sum.median, "s", direction::lower_is_better);
    out.add_metric("forward_ms", 1e3 * stats::median(f), "ms", direction::lower_is_better);
    out.add_metric("backward_ms", 1e3 * stats::median(b), "ms", direction::lower_is_better);
    out.add_metric("optimizer_ms", 1e3 * stats::median(o), "ms", direction::lower_is_better);
    out.add_metric("model_flops_per_token", fpt, "FLOP", direction::lower_is_better);
    out.add_metric("achieved_tflops", achieved, "TFLOP/s", direction::higher_is_better);
    const std::optional<double> mfu = judge_against_peak(out, achieved, pk);
    if (mfu) {
      out.add_metric("mfu", *mfu, "%", direction::higher_is_better);
      // The causal kernels do about half of PaLM's attention term: the same step, counted at the
      // work they do (both backends, from here only).
      const double fpt_causal = model_flops_per_token_causal(s.model, s.options.layers,
                                                             s.options.seq, s.options.with_head);
      out.add_metric("mfu_causal", *mfu * fpt_causal / fpt, "%", direction::higher_is_better);
    }
    out.add_metric("loader_tokens_per_s", res.loader_tokens_per_s, "tokens/s",
                   direction::higher_is_better);
    out.add_metric("cv", sum.cv, "", direction::lower_is_better);
    out.extra["tokens_per_step"] = tokens_per_step;
    out.extra["parameters"] = num_params;
    // One convention for both backends (this is the only place MFU is computed): PaLM's, which
    // counts causal attention over the full T x T score matrix, as Megatron-LM's formula
    // (Narayanan et al. 2021) does too; the causal kernels do about half of that attention work.
    out.extra["flop_convention"] =
        "6*N + 12*L*H*Q*T per token (PaLM appendix B): causal attention counted over the full "
        "T x T score matrix, as PaLM and Megatron-LM count it; N excludes the embedding table; "
        "mfu_causal counts only the T(T+1)/2 visible pairs, 6*N + 6*L*H*Q*(T+1)";
    out.extra["init_s"] = res.init_s;
    if (s.subset()) {
      // Projection: the full model's step = L_full/L times the measured blocks, plus the LM head
      // (6*V*C FLOPs per token) at the FLOP rate the blocks achieved. Not a measurement.
      const double per_token = sum.median / double(tokens_per_step);
      const double rate = achieved * 1e12;
      const double head = 6.0 * double(s.model.vocab_size) * double(s.model.dim) / rate;
      const double full = per_token * double(s.model.n_layers) / double(s.options.layers) + head;
      out.add_metric("projected_tokens_per_s", 1.0 / full, "tokens/s", direction::higher_is_better);
      out.extra["projection"] = fmt::format(
          "PROJECTION, not a measurement: {} of {} decoder blocks of {} were run without the "
          "embedding and LM head; projected_tokens_per_s scales the measured block time to {} "
          "blocks and adds the LM head's 6*V*C FLOPs per token at the measured FLOP rate",
          s.options.layers, s.model.n_layers, s.model.name, s.model.n_layers);
    }
    if (ctx.log)
      *ctx.log << fmt::format("train.llama {} x{} seq {} batch {}: {:.0f} tokens/s, {}\n",
                              s.model.name, s.options.layers, s.options.seq, s.options.batch, tps,
                              mfu ? fmt::format("MFU {:.1f}%", *mfu)
                                  : "no MFU: " + pct_of_peak_unknown(out));
  }

  backend_set<training_backend> m_backends{built_backends(), unbuilt_backends()};
  workload_spec m_spec;
};

} // namespace

std::unique_ptr<workload> make_training_workload() { return std::make_unique<train_workload>(); }

void register_training(registry& reg) { reg.add(make_training_workload()); }

} // namespace accelbench::training
