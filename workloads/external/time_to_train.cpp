#include "workloads/external/time_to_train.hpp"

#include <chrono>
#include <random>
#include <set>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/score.hpp"
#include "harness/core/text_input.hpp"
#include "workloads/external/program_runs.hpp"

namespace accelbench::external {

ttt_settings ttt_settings_of(const ruleset& rules) {
  ttt_settings s;
  const json& t = rules.section("training");
  if (!t.is_object())
    return s;
  s.mode = t.value("mode", "");
  s.runs = t.value("runs", int64_t{0});
  s.round = t.value("round", "");
  s.seed_variable = t.value("seed_variable", s.seed_variable);
  s.rcp_bypass = t.value("rcp_bypass", false);
  if (const auto g = t.find("target"); g != t.end() && g->is_object()) {
    if (const auto v = g->find("eval_accuracy"); v != g->end() && v->is_number())
      s.target = v->get<double>();
    s.target_dir = direction_from_string(g->value("direction", "higher"));
  }
  return s;
}

namespace {

// What the training runs have brought in so far.
struct ttt_tally {
  std::vector<double> minutes; // 0 for a run without a time
  std::vector<bool> converged;
  std::set<uint64_t> seeds;
  json runs = json::array(), logs = json::array();
  std::string all_logs;
  std::string benchmark;
  bool known_benchmark = false;
  int required_runs = 0;
  int max_dropped = 1;
  json target;
  std::random_device rd;
};

// MLPerf: each run has its own seed from a proper entropy source. A harness seed (--seed) makes
// the set reproducible instead. Below 2^31, which every trainer's RNG takes (numpy's 32 bits).
uint64_t next_seed(const config& cfg, const run_context& ctx, int64_t i, ttt_tally& t) {
  for (uint64_t k = 0;; ++k) {
    const uint64_t raw = ctx.seed ? seed_of(ctx.seed, fmt::format("{}/{}/{}", cfg.key(), i, k))
                                  : (uint64_t(t.rd()) << 32 | t.rd());
    const uint64_t seed = 1 + raw % ((uint64_t{1} << 31) - 1);
    if (t.seeds.insert(seed).second)
      return seed;
  }
}

// How many training runs the set has: the ruleset's number, else the benchmark's (known once
// the first log is read), else 5.
int64_t planned_runs(const ttt_settings& s, const ttt_tally& t) {
  if (s.runs > 0)
    return s.runs;
  if (t.runs.empty())
    return 1;
  return t.required_runs > 0 ? t.required_runs : 5;
}

// Whether an eval_accuracy of the log meets the ruleset's own target.
bool ruleset_target_reached(const std::string& log, const ttt_settings& s) {
  const mllog::parsed_log parsed = mllog::parse_mllog(log, "<stdout>");
  for (const auto& e : parsed.events) {
    if (e.key != "eval_accuracy" || !e.value.is_number())
      continue;
    const double v = e.value.get<double>();
    if (s.target_dir == direction::higher_is_better ? v >= *s.target : v <= *s.target)
      return true;
  }
  return false;
}

// Why a training run does not count as converged (empty: it does).
std::vector<std::string> not_converged_reasons(const log_verdict& v, const std::string& log,
                                               const ttt_settings& s) {
  std::vector<std::string> why;
  const run& r = v.as_run;
  if (r.status != accelbench::run_status::ok)
    why.push_back(r.status_reason);
  for (const auto& e : r.invalid_reasons)
    why.push_back("not compliant: " + e);
  const std::string status = r.extra.value("status", "");
  if (r.status == accelbench::run_status::ok && status != "success")
    why.push_back(fmt::format("run_stop status is '{}', not 'success'", status));
  if (v.quality_reached && !*v.quality_reached)
    why.push_back(fmt::format("no eval_accuracy reached {}'s quality target ({})", v.benchmark,
                              v.target.dump()));
  if (s.target && !ruleset_target_reached(log, s))
    why.push_back(
        fmt::format("no eval_accuracy reached the ruleset's target ({} {})",
                    s.target_dir == direction::higher_is_better ? ">=" : "<=", *s.target));
  return why;
}

// The seed the log records, as the seed checker reads it (int() of the value); nullopt when
// it records none, or more than one.
std::optional<long long> logged_seed(const run& r) {
  if (!r.extra.contains("seed") || !r.extra["seed"].is_number())
    return std::nullopt;
  return r.extra["seed"].get<long long>();
}

// Checks that hold for the set as a whole: one benchmark, the seed it was given, a time that
// fits in the process's life. A failed check makes the whole set INVALID.
void check_against_set(const log_verdict& v, uint64_t seed, double wall_s, int64_t i, ttt_tally& t,
                       run& out) {
  if (i == 0) {
    t.benchmark = v.benchmark;
    t.known_benchmark = v.known_benchmark;
    t.required_runs = v.required_runs;
    t.max_dropped = v.max_dropped;
    t.target = v.target;
  } else if (v.benchmark != t.benchmark) {
    out.mark_invalid(fmt::format("training run {} logged benchmark '{}', the first '{}'", i + 1,
                                 printable(v.benchmark), printable(t.benchmark)));
  }
  const auto logged = logged_seed(v.as_run);
  if (!logged)
    out.mark_invalid(fmt::format("training run {} logged no seed (one 'seed' event): MLPerf logs "
                                 "record the seed each run used",
                                 i + 1));
  else if (*logged != (long long)seed)
    out.mark_invalid(fmt::format("training run {} logged seed {}, not the {} accelbench gave it",
                                 i + 1, *logged, seed));
  // The log's clock against ours: run_start to run_stop cannot outlast the process.
  if (!v.as_run.samples.empty() && v.as_run.samples[0].value * 60 > wall_s + 1)
    out.mark_invalid(fmt::format("training run {} logged {:.3f} min from run_start to run_stop, "
                                 "but the program ran {:.3f} min",
                                 i + 1, v.as_run.samples[0].value, wall_s / 60));
}

// Records training run i: its time, whether it converged, its log.
void record_training_run(const log_verdict& v, const std::string& log, const ttt_settings& s,
                         uint64_t seed, const invocation& inv, ttt_tally& t, run& out) {
  const run& r = v.as_run;
  const double minutes = r.samples.empty() ? 0 : r.samples[0].value;
  const std::vector<std::string> why = not_converged_reasons(v, log, s);
  t.minutes.push_back(minutes);
  t.converged.push_back(why.empty() && minutes > 0);
  if (minutes > 0) {
    accelbench::sample smp;
    smp.index = (int64_t)out.samples.size();
    smp.value = minutes;
    smp.extra = {
        {"seed", seed}, {"converged", why.empty()}, {"status", r.extra.value("status", "")}};
    out.samples.push_back(std::move(smp));
  }
  t.runs.push_back({{"seed", seed},
                    {"minutes", minutes},
                    {"converged", why.empty()},
                    {"status", r.extra.value("status", "")},
                    {"reasons", why},
                    {"wall_s", inv.outcome.wall_seconds},
                    {"eval_curve", r.extra.value("eval_curve", json::array())}});
  t.logs.push_back(log);
  t.all_logs += log;
}

// One training run: false (the set ends) when the program failed, was cut short or printed no
// MLPerf log.
bool train_once(const launch& l, const program_settings& ps, const ttt_settings& s,
                const log_judge& judge, uint64_t seed, ttt_tally& t, run& out) {
  const int64_t i = (int64_t)t.runs.size();
  const std::string which = fmt::format("training run {}", i + 1);
  const invocation inv = invoke(l, ps);
  if (!inv.outcome.succeeded()) {
    record_failure(out, which, inv);
    return false;
  }
  const std::string log = repair_utf8(mllog_lines(inv.outcome.stdout_text));
  if (log.empty() || inv.outcome.stdout_truncated) {
    out.mark_failed(log.empty() ? which + " printed no MLPerf log line (:::MLLOG) on stdout"
                                : fmt::format("{} printed over {} bytes on stdout: its MLPerf log "
                                              "was cut",
                                              which, l.max_stdout_bytes));
    out.extra["stderr_tail"] = repair_utf8(inv.outcome.stderr_tail);
    return false;
  }
  const log_verdict v = judge(log, s.round);
  check_against_set(v, seed, inv.outcome.wall_seconds, i, t, out);
  record_training_run(v, log, s, seed, inv, t, out);
  return true;
}

// A warning of the run (extra.warnings: `accelbench run` prints them, compare and report show
// them).
void add_warning(run& out, const std::string& what) {
  if (!out.extra.contains("warnings") || !out.extra["warnings"].is_array())
    out.extra["warnings"] = json::array();
  out.extra["warnings"].push_back(what);
}

// Why a set gets no RCP check before the judge is asked ("" : ask it).
std::string rcp_not_asked(const ttt_tally& t, const set_judge& judge) {
  if (!judge)
    return "this build of the external workload has no MLPerf RCP checker";
  if (!t.known_benchmark)
    return fmt::format("benchmark '{}' is not one MLPerf defines", printable(t.benchmark));
  if ((int64_t)t.runs.size() < t.required_runs)
    return fmt::format("the RCP check takes the {} runs MLPerf's {} needs, this set has {}",
                       t.required_runs, t.benchmark, t.runs.size());
  return {};
}

// MLPerf's reference convergence points for the set (MLCommons' RCP check), recorded as
// extra.rcp: a failure makes the run INVALID with the verdict, a bypassed failure passes with a
// warning. Returns the factor the score is multiplied by: the norm factor of a pass faster than
// the reference mean, as the scaling.json MLCommons' package checker writes then (never for a
// bypassed failure: the checker writes none), else 1.
double check_reference(const ttt_settings& s, const set_judge& judge, const ttt_tally& t,
                       run& out) {
  const std::string not_asked = rcp_not_asked(t, judge);
  const set_verdict v = not_asked.empty()
                            ? judge(t.logs.get<std::vector<std::string>>(), s.round, s.rcp_bypass)
                            : set_verdict{};
  if (!v.checked) {
    out.extra["rcp_not_checked"] = not_asked.empty() ? v.not_checked : not_asked;
    return 1;
  }
  out.extra["rcp"] = v.record;
  if (!v.pass) {
    out.mark_invalid(v.summary);
    return 1;
  }
  if (v.bypassed) {
    add_warning(out, fmt::format("{}: the RCP check failed and training.rcp_bypass let it pass, "
                                 "as MLCommons' --rcp-bypass does (the submission committee "
                                 "reviews such a result)",
                                 v.summary));
    return 1;
  }
  if (v.norm_factor > 1) {
    out.extra["scaling_factor"] = v.norm_factor;
    return v.norm_factor;
  }
  return 1;
}

// How the score was computed, for extra.scoring.
std::string scoring_text(const ttt_tally& t, double factor) {
  std::string text = fmt::format(
      "olympic mean over the runs: drop the {0} fastest and {0} slowest, average the rest; a run "
      "that did not converge counts as one of the slowest, more than {0} make the result INVALID",
      t.max_dropped);
  if (factor > 1)
    text += fmt::format("; times {:.6g}, the RCP norm factor (the reference mean over the set's "
                        "faster mean: MLCommons' scaling.json)",
                        factor);
  return text;
}

// What the set is recorded with besides its score.
void describe_set(const ttt_settings& s, const ttt_tally& t, double factor, run& out) {
  out.extra["benchmark"] = t.benchmark;
  out.extra["target"] =
      s.target
          ? json{{"metric", "eval_accuracy"},
                 {"target", *s.target},
                 {"direction", s.target_dir == direction::higher_is_better ? "higher" : "lower"},
                 {"source", "the ruleset"}}
          : t.target;
  out.extra["runs"] = t.runs;
  out.extra["mllogs"] = t.logs;
  out.mllog = t.all_logs;
  out.extra["scoring"] = scoring_text(t, factor);
}

// The olympic mean of the set (scaled by the RCP norm factor), and what makes it INVALID besides.
void score_set(const ttt_settings& s, const set_judge& judge, ttt_tally& t, run& out) {
  out.sample_unit = "min";
  out.sample_dir = direction::lower_is_better;
  const olympic_result score = olympic_mean(t.minutes, t.converged, t.max_dropped);
  if (!score.valid)
    out.mark_invalid(score.reason);
  const auto n = (int64_t)t.runs.size();
  if (t.known_benchmark && n < t.required_runs)
    out.mark_invalid(
        fmt::format("MLPerf's {} needs {} runs, this set has {}", t.benchmark, t.required_runs, n));
  if (!t.known_benchmark && !s.target)
    out.mark_invalid(fmt::format("no quality target: benchmark '{}' is not one MLPerf defines and "
                                 "the ruleset sets none (--rule training.target.eval_accuracy=V)",
                                 printable(t.benchmark)));
  const double factor = check_reference(s, judge, t, out);
  if (score.valid)
    out.add_metric("time_to_train_min", score.mean * factor, "min", direction::lower_is_better);
  describe_set(s, t, factor, out);
}

// False (the run failed) unless the ruleset is a time-to-train one and the rules can be judged.
bool can_train(const ttt_settings& s, const run_context& ctx, const log_judge& judge, run& out) {
  if (s.mode != "time_to_train") {
    out.mark_failed(fmt::format("mode=time_to_train needs a time-to-train ruleset (--rules "
                                "external-ttt-v1); '{}' has none",
                                ctx.rules->id));
    return false;
  }
  if (!judge) {
    out.mark_failed("this build of the external workload has no MLPerf log checker");
    return false;
  }
  return true;
}

} // namespace

void run_time_to_train(const config& cfg, run& out, run_context& ctx, const mlperf_judges& judges) {
  const ttt_settings s = ttt_settings_of(*ctx.rules);
  if (!can_train(s, ctx, judges.log, out))
    return;
  const program_settings ps = program_settings_of(*ctx.rules);
  launch l = launch_of(cfg, ps, ctx);
  ttt_tally t;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < planned_runs(s, t); ++i) {
    if (i > 0 && seconds_since(t0) > ps.max_time_s) {
      out.mark_invalid(fmt::format("{} of {} training runs within max_time_s {} s", i,
                                   planned_runs(s, t), ps.max_time_s));
      break;
    }
    const uint64_t seed = next_seed(cfg, ctx, i, t);
    l.env[s.seed_variable] = std::to_string(seed);
    if (!train_once(l, ps, s, judges.log, seed, t, out))
      return;
    if (ctx.log)
      *ctx.log << fmt::format("training run {}/{}: seed {}, {}\n", i + 1, planned_runs(s, t), seed,
                              t.runs.back()["converged"].get<bool>() ? "converged"
                                                                     : "did not converge");
  }
  out.extra["mode"] = "time_to_train";
  out.extra["argv"] = argv_json(substitute_placeholders(l.argv, l.config));
  score_set(s, judges.set, t, out);
}

} // namespace accelbench::external
