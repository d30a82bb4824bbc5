#include "workloads/external/external_workload.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "workloads/external/program_runs.hpp"

namespace accelbench::external {

std::string command_value(const std::vector<std::string>& argv) { return json(argv).dump(); }

std::vector<std::string> command_argv(const std::string& value) {
  const json j = json::parse(value, nullptr, false);
  const auto bad = [&] {
    return input_error(fmt::format(
        "parameter command must be the program and its arguments as a JSON array of strings "
        "(accelbench run external --name N -- CMD ARGS...), got '{}'",
        printable(value.substr(0, 120))));
  };
  if (!j.is_array() || j.empty())
    throw bad();
  std::vector<std::string> argv;
  for (const auto& a : j) {
    if (!a.is_string())
      throw bad();
    argv.push_back(a.get<std::string>());
  }
  return argv;
}

namespace {

// What the measured runs have brought in so far.
struct tally {
  int64_t runs = 0;
  bool whole_process = false;
  std::map<std::string, std::vector<double>> metrics; // the program's, by name, one per run
  std::map<std::string, std::pair<std::string, std::string>> metric_meta; // unit, direction
};

class external_workload final : public workload {
public:
  explicit external_workload(mlperf_judges judges)
      : spec_(make_spec()), judges_(std::move(judges)) {}
  const workload_spec& spec() const override { return spec_; }
  std::string default_ruleset(const config& cfg) const override {
    return is_time_to_train(cfg) ? "external-ttt-v1" : spec_.default_ruleset;
  }
  void validate(const config& cfg) const override;
  void execute(const config& cfg, run& out, run_context& ctx) const override;

private:
  static workload_spec make_spec();
  static bool is_time_to_train(const config& cfg) {
    const auto it = cfg.values.find("mode");
    return it != cfg.values.end() && it->second == "time_to_train";
  }
  workload_spec spec_;
  mlperf_judges judges_;
};

workload_spec external_workload::make_spec() {
  workload_spec s;
  s.name = "external";
  s.family = "external";
  s.description = "A program of your own, run under the ruleset: accelbench run external --name "
                  "NAME [--set K=V]... -- CMD ARGS... (docs/external.md)";
  axis name{"name", axis_type::string,
            "",     {},
            1,      "your name for the program (required: accelbench run external --name NAME)"};
  axis command{"command", axis_type::string,
               "",        {},
               1,         "the program and its arguments as a JSON array (what follows --)"};
  s.axes = {name, command};
  s.backends = {"cpu", "cuda"}; // a label of what the program uses: accelbench runs it the same
  s.default_ruleset = "external-v1";
  s.primary_metric = "time";
  s.open_axes = true;
  return s;
}

void external_workload::validate(const config& cfg) const {
  if (cfg.at("name").empty())
    throw input_error("run external needs a name for the program: --name NAME");
  for (const auto& [k, v] : cfg.values)
    if (!valid_key(k))
      throw input_error(fmt::format("parameter name '{}' is not usable as {{{}}}: a letter or _, "
                                    "then letters, digits, _, . or -",
                                    printable(k), printable(k)));
  if (const auto m = cfg.values.find("mode"); m != cfg.values.end() && m->second != "time_to_train")
    throw input_error(fmt::format("mode must be time_to_train (an MLPerf-style trainer run to its "
                                  "target), or not set (a program measured), not '{}'",
                                  printable(m->second)));
  if (cfg.at("command").empty())
    throw input_error("run external needs the program to run after --: accelbench run external "
                      "--name NAME -- CMD ARGS...");
  const std::vector<std::string> argv =
      substitute_placeholders(command_argv(cfg.at("command")), program_config(cfg));
  resolve_program(argv.front()); // not found: an input error before anything runs
}

// Adds one measured run's samples; false (the run INVALID) when it reports differently from the
// first (protocol samples after a whole-process time, or the reverse).
bool add_samples(run& out, const invocation& i, tally& t) {
  const judged_run& j = i.judged;
  if (t.runs > 0 && j.whole_process != t.whole_process) {
    out.mark_invalid(fmt::format("run {} of the program {} the results protocol while the first {}",
                                 t.runs + 1, j.whole_process ? "did not use" : "used",
                                 j.whole_process ? "did" : "did not"));
    return false;
  }
  t.whole_process = j.whole_process;
  for (size_t k = 0; k < j.seconds.size(); ++k) {
    accelbench::sample s;
    s.index = (int64_t)out.samples.size();
    s.value = j.seconds[k];
    s.extra["program_run"] = t.runs + 1;
    if (!j.whole_process) {
      const auto& p = j.protocol.samples[k];
      if (p.items)
        s.extra["items"] = *p.items;
      if (p.flops)
        s.extra["flops"] = *p.flops;
      if (p.bytes)
        s.extra["bytes"] = *p.bytes;
    }
    out.samples.push_back(std::move(s));
  }
  for (const auto& m : j.protocol.metrics) {
    t.metrics[m.name].push_back(m.value);
    t.metric_meta[m.name] = {m.unit, m.direction};
  }
  ++t.runs;
  return true;
}

// The median over samples of a per-sample count divided by the sample's seconds, when every
// sample reports the count; 0 when one does not.
double median_rate(const run& out, const char* count) {
  std::vector<double> rates;
  for (const auto& s : out.samples) {
    if (!s.extra.contains(count))
      return 0;
    rates.push_back(s.extra[count].get<double>() / s.value);
  }
  return rates.empty() ? 0 : stats::median(rates);
}

// The names of the figures accelbench derives for a program's run (from its samples, or its
// time to train) and that reports read as accelbench's own: a program's metric of one of these
// names is never stored, whether or not this run derived the figure itself (a 'tflops' of the
// program's beside samples without FLOPs would be read as measured TFLOP/s).
bool derived_name(const std::string& name) {
  static const std::set<std::string> names = {"time",           "cv",          "items_per_s",
                                              "tflops",         "gb_per_s",    "tflops_ci_low",
                                              "tflops_ci_high", "pct_of_peak", "time_to_train_min"};
  return names.count(name) > 0;
}

// Time, spread and rates from the samples; the program's own metrics as the median over its
// runs. A program metric named like one of ours makes the run INVALID (which would be believed?).
void add_metrics(run& out, const tally& t) {
  std::vector<double> secs;
  for (const auto& s : out.samples)
    secs.push_back(s.value);
  const stats::summary sum = stats::summarize(secs);
  out.add_metric("time", sum.median, "s", direction::lower_is_better);
  out.add_metric("cv", sum.cv, "", direction::lower_is_better);
  if (double r = median_rate(out, "items"); r > 0)
    out.add_metric("items_per_s", r, "items/s", direction::higher_is_better);
  if (double r = median_rate(out, "flops"); r > 0)
    out.add_metric("tflops", r / 1e12, "TFLOP/s", direction::higher_is_better);
  if (double r = median_rate(out, "bytes"); r > 0)
    out.add_metric("gb_per_s", r / 1e9, "GB/s", direction::higher_is_better);
  for (const auto& [name, values] : t.metrics) {
    if (derived_name(name)) {
      out.mark_invalid(fmt::format("the program reports a metric '{}', a name accelbench keeps "
                                   "for the figures it derives from the samples",
                                   printable(name)));
      continue;
    }
    const auto& [unit, dir] = t.metric_meta.at(name);
    out.add_metric(name, stats::median(values), unit, direction_from_string(dir));
  }
}

// What the last measured run said besides its samples: its check, its extra facts, its MLLOG.
void describe(run& out, const invocation& last, const tally& t, const program_settings& s) {
  const judged_run& j = last.judged;
  out.extra["mode"] = t.whole_process ? "whole_process" : "protocol";
  out.extra["program_runs"] = t.runs;
  out.extra["warmup_runs"] = s.warmups;
  out.extra["argv"] = argv_json(last.outcome.argv);
  if (!j.protocol.extra.empty())
    out.extra["program"] = j.protocol.extra;
  if (j.protocol.verdict)
    out.extra["correctness"] = {{"passed", j.protocol.verdict->passed},
                                {"reason", j.protocol.verdict->reason},
                                {"source", "the program"}};
  if (!j.mllog.events.empty()) {
    out.mllog = repair_utf8(mllog_lines(last.outcome.stdout_text));
    out.extra["mllog_events"] = (int64_t)j.mllog.events.size();
  }
}

// The untimed warm-up runs; false (the run ended) when one of them does not end well.
bool warm_up(run& out, const launch& l, const program_settings& s) {
  for (int64_t w = 0; w < s.warmups; ++w) {
    invocation i = invoke(l, s);
    if (i.judged.status != run_status::valid) {
      record_failure(out, fmt::format("warm-up run {}", w + 1), i);
      return false;
    }
  }
  return true;
}

void external_workload::execute(const config& cfg, run& out, run_context& ctx) const {
  if (is_time_to_train(cfg)) {
    run_time_to_train(cfg, out, ctx, judges_);
    return;
  }
  const program_settings s = program_settings_of(*ctx.rules);
  const launch l = launch_of(cfg, s, ctx);
  if (!warm_up(out, l, s))
    return;
  tally t;
  invocation last;
  const auto t0 = std::chrono::steady_clock::now();
  while ((int64_t)out.samples.size() < s.repetitions) {
    if (t.runs > 0 && seconds_since(t0) > s.max_time_s) {
      out.mark_invalid(fmt::format("{} of the ruleset's {} samples within max_time_s {} s",
                                   out.samples.size(), s.repetitions, s.max_time_s));
      break;
    }
    last = invoke(l, s);
    if (last.judged.status != run_status::valid) {
      record_failure(out, fmt::format("run {}", t.runs + 1), last);
      return;
    }
    if (!add_samples(out, last, t))
      return;
  }
  describe(out, last, t, s);
  add_metrics(out, t);
  // Each run of the program is held to a run's limits by the protocol parser; its runs together
  // may still pass them (repetitions of 100,000 met by two runs): the run is failed, not stored
  // past them.
  limits::fail_over_limits(out);
}

} // namespace

void register_external(registry& reg, mlperf_judges judges) {
  reg.add(std::make_unique<external_workload>(std::move(judges)));
}

} // namespace accelbench::external
