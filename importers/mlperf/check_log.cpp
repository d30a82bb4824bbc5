#include "importers/mlperf/check_log.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "importers/mlperf/check_common.hpp"
#include "importers/mlperf/time_to_train.hpp"

namespace accelbench::mlperf {

namespace {
// Python's == on the JSON values the checker YAML compares (numbers by value, 16 == 16.0).
bool values_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number())
    return a.get<double>() == b.get<double>();
  if (a.is_boolean() && b.is_number())
    return (a.get<bool>() ? 1.0 : 0.0) == b.get<double>();
  if (a.is_number() && b.is_boolean())
    return values_equal(b, a);
  return a == b;
}

bool all_same(const std::vector<const mllog::event*>& evs) {
  for (const mllog::event* e : evs)
    if (!values_equal(e->value, evs.front()->value))
      return false;
  return true;
}

// Evaluates a closed-division check (benchmarks.json "check_ops"); returns "" when it holds,
// else a description of the expectation.
std::string eval_check(const json& c, const json& v, const mllog::parsed_log& log) {
  const std::string op = c.value("op", "");
  auto num = [&](const json& x) -> std::optional<double> {
    if (x.is_number())
      return x.get<double>();
    return std::nullopt;
  };
  auto other = [&](const std::string& key) -> std::optional<double> {
    const mllog::event* e = log.first(key);
    if (!e)
      return std::nullopt;
    return num(e->value);
  };
  const std::optional<double> x = num(v);
  if (op == "eq")
    return values_equal(v, c["value"]) ? "" : fmt::format("== {}", c["value"].dump());
  if (op == "ne")
    return !values_equal(v, c["value"]) ? "" : fmt::format("!= {}", c["value"].dump());
  if (op == "in") {
    for (const auto& a : c["values"])
      if (values_equal(v, a))
        return "";
    return fmt::format("one of {}", c["values"].dump());
  }
  if (op == "gt" || op == "ge" || op == "lt" || op == "le") {
    const double b = c["value"].get<double>();
    const std::string want = fmt::format("{} {}",
                                         op == "gt"   ? ">"
                                         : op == "ge" ? ">="
                                         : op == "lt" ? "<"
                                                      : "<=",
                                         b);
    if (!x)
      return want + " (value is not a number)";
    const bool ok = op == "gt" ? *x > b : op == "ge" ? *x >= b : op == "lt" ? *x < b : *x <= b;
    return ok ? "" : want;
  }
  if (op == "div_integer" || op == "log2_integer") {
    const double b = c["value"].get<double>();
    if (!x || b == 0)
      return "a number";
    const double q = op == "div_integer" ? *x / b : std::log2(*x / b);
    const bool ok =
        std::isfinite(q) && std::abs(q - std::round(q)) <= 1e-9 * std::max(1.0, std::abs(q));
    return ok ? ""
              : fmt::format("{} an integer", op == "div_integer"
                                                 ? fmt::format("value / {} to be", b)
                                                 : fmt::format("log2(value / {}) to be", b));
  }
  const std::string of = c.value("of", "");
  const std::optional<double> o = other(of);
  if (!o)
    return fmt::format("a value derived from '{}', which is not logged before it as a number", of);
  if (!x)
    return "a number";
  if (op == "mul_eq") {
    // closed_llama31_405b.yaml: v * 1152 == global_batch_size * 8e-5
    const double lhs = *x * c["mul"].get<double>(), rhs = *o * c["factor"].get<double>();
    const bool ok = std::abs(lhs - rhs) <= 1e-9 * std::max(std::abs(lhs), std::abs(rhs));
    return ok ? ""
              : fmt::format("value * {} == {} * {} (= {})", c["mul"].get<double>(), of,
                            c["factor"].get<double>(), rhs / c["mul"].get<double>());
  }
  if (op == "eq_ceil_diff") {
    const double want = std::ceil(c["a"].get<double>() / *o) - std::ceil(c["b"].get<double>() / *o);
    return *x == want ? ""
                      : fmt::format("== ceil({} / {}) - ceil({} / {}) = {}", c["a"].get<double>(),
                                    of, c["b"].get<double>(), of, want);
  }
  if (op == "eq_const_minus") {
    const double want = c["c"].get<double>() - *o;
    return *x == want ? "" : fmt::format("== {} - {} = {}", c["c"].get<double>(), of, want);
  }
  return fmt::format("unknown check op '{}'", op);
}

bool rule_applies(const hparam_rule& r, const std::string& round, const mllog::parsed_log& log) {
  if (!r.rounds.empty()) {
    if (round.empty())
      return false;
    if (std::find(r.rounds.begin(), r.rounds.end(), round) == r.rounds.end())
      return false;
  }
  for (const auto& [key, want] : r.when) {
    const mllog::event* e = log.first(key);
    if (!e || !values_equal(e->value, want))
      return false;
  }
  return true;
}

} // namespace

namespace {

// One log against the rules of common.yaml and, by the log's own submission_division, either
// closed_common.yaml and the benchmark's closed rules or open_common.yaml and the benchmark's open
// rules, as mlp_compliance.py applies them: one method per group of rules, in the checker's order
// (the order of the errors reported). Then what a reviewer would want flagged and MLCommons lets
// pass: time going backwards, a repeated run_start.
class log_checker {
public:
  log_checker(const mllog::parsed_log& log, const std::string& round, const benchmark_table& table)
      : m_log(log), m_round(normalize_round(round)), m_table(table) {}

  log_check run(const std::string& benchmark_in, const std::string& division_in) {
    check_parsing();
    check_submission_keys();
    check_division(division_in);
    check_benchmark(benchmark_in);
    check_timing();
    check_stop();
    if (closed())
      check_closed_rules();
    else
      check_open_rules();
    check_quality();
    if (!closed())
      check_open_quality();
    check_time_order();
    check_run_start_times();
    check_learning_rate();
    check_time_to_train();
    m_out.converged = m_stop != nullptr && m_out.stop_status == "success" &&
                      (!m_info || !closed() || m_out.quality.reached);
    return std::move(m_out);
  }

private:
  // An event rule of the timing structure: what must hold where the key is logged.
  using event_rule = void (log_checker::*)(const mllog::event&);
  static const std::map<std::string, event_rule>& event_rules();

  bool closed() const { return m_division == "closed"; }
  void err(int64_t line, std::string msg) {
    m_out.errors.push_back({m_log.file, line, std::move(msg)});
  }
  void warn(int64_t line, std::string msg) {
    m_out.warnings.push_back({m_log.file, line, std::move(msg)});
  }
  // An error MLCommons' checker raises an exception on (log_check::unprocessable).
  void unprocessable(int64_t line, std::string msg) {
    msg += " (MLCommons' checker stops with an exception here: the package cannot pass it)";
    m_out.unprocessable.push_back({m_log.file, line, msg});
    err(line, std::move(msg));
  }

  // ---- occurrence requirements (REQ of the checker YAML) ----

  // REQ: EXACTLY_ONE. Repeats with one value are a warning, with different values an error
  // (mlp_compliance.py configured_checks), for the timing events as for any other key: the result
  // summarizer then times the run from the last run_start before the first run_stop.
  const mllog::event* exactly_one(const std::string& key) {
    auto evs = m_log.all(key);
    if (!m_counted.insert(key).second)
      return evs.empty() ? nullptr : evs.front();
    if (evs.empty()) {
      err(0, fmt::format("required key '{}' (EXACTLY_ONE) is not logged", key));
      return nullptr;
    }
    if (evs.size() > 1)
      report_repeats(key, evs);
    return evs.front();
  }
  void report_repeats(const std::string& key, const std::vector<const mllog::event*>& evs) {
    if (all_same(evs)) {
      warn(evs[1]->line,
           fmt::format("EXACTLY_ONE key '{}' logged {} times (same value)", key, evs.size()));
      return;
    }
    std::vector<std::string> vals;
    vals.reserve(evs.size());
    for (const mllog::event* e : evs)
      vals.push_back(short_value(e->value));
    err(evs[1]->line,
        fmt::format("EXACTLY_ONE key '{}' logged {} times with different values: [{}]", key,
                    evs.size(), fmt::join(vals, ", ")));
  }
  void at_least_one(const std::string& key) {
    if (!m_counted.insert(key).second)
      return;
    if (m_log.count(key) == 0)
      err(0, fmt::format("required key '{}' (AT_LEAST_ONE) is not logged", key));
  }
  void one_of(const std::string& a, const std::string& b) {
    if (m_log.count(a) == 0 && m_log.count(b) == 0)
      err(0, fmt::format("required key '{}' or '{}' is not logged", a, b));
  }
  // common.yaml: CHECK " v['value'] != '' ": an empty string fails, null passes (noted).
  void non_empty(const mllog::event* e) {
    if (e && e->value.is_string() && e->value.get<std::string>().empty())
      err(e->line, fmt::format("'{}' has an empty value", e->key));
    else if (e && e->value.is_null())
      warn(e->line, fmt::format("'{}' has a null value (MLCommons requires only that it is not '')",
                                e->key));
  }

  // ---- the groups of rules ----

  // Lines that do not parse make the file non-compliant ("Log lines had parsing errors").
  void check_parsing() {
    for (const auto& d : m_log.diagnostics)
      m_out.errors.push_back(d);
    if (m_log.events.empty())
      err(0, "no :::MLLOG lines found");
  }

  // submission_* (common.yaml, closed_common.yaml). training_5.0.0/common.yaml dropped
  // submission_org and submission_platform (the rounds before and after require them): missing
  // there is a warning.
  void check_submission_keys() {
    if (m_round != "5.0") {
      non_empty(exactly_one("submission_org"));
      non_empty(exactly_one("submission_platform"));
      return;
    }
    for (const char* k : {"submission_org", "submission_platform"}) {
      m_counted.insert(k);
      if (m_log.count(k) == 0)
        warn(0, fmt::format("'{}' is not logged (round 5.0's rules do not require it)", k));
    }
  }

  void check_division(const std::string& division_in) {
    m_division = division_in;
    if (const mllog::event* e = exactly_one("submission_division")) {
      const std::string v = e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
      if (v != "closed" && v != "open") {
        // common.yaml's POST enqueues '<division>_common.yaml', which does not exist.
        unprocessable(e->line,
                      fmt::format("submission_division '{}' is not 'closed' or 'open'", v));
      } else {
        // mlp_compliance.py picks the closed or open rules by the log's own division; that the
        // system description says otherwise is not checked by MLCommons: noted.
        if (!division_in.empty() && v != division_in)
          warn(e->line,
               fmt::format("submission_division '{}' differs from the system's division '{}'", v,
                           division_in));
        m_division = v;
      }
    }
    if (m_division.empty())
      m_division = "closed";
  }

  void check_benchmark(const std::string& benchmark_in) {
    std::string benchmark = benchmark_in;
    if (const mllog::event* e = exactly_one("submission_benchmark")) {
      const std::string v = e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
      if (benchmark.empty())
        benchmark = v;
      const benchmark_info* a = m_table.find(v);
      const benchmark_info* b = m_table.find(benchmark);
      if (v != benchmark && !(a && a == b))
        err(e->line, fmt::format("submission_benchmark '{}' does not match the result folder '{}'",
                                 v, benchmark));
      check_round_benchmark(*e, v);
    }
    m_info = m_table.find(benchmark);
    m_out.known_benchmark = m_info != nullptr;
    if (!m_info)
      warn(0, fmt::format("unknown benchmark '{}': no quality target or hyperparameter rules "
                          "checked",
                          benchmark));
  }
  // closed_common.yaml / open_common.yaml: the round's list of benchmarks (the open one differs
  // in rounds 4.0 and 4.1).
  void check_round_benchmark(const mllog::event& e, const std::string& v) {
    if (m_round.empty())
      return;
    const auto* list =
        closed() ? m_table.round_benchmarks(m_round) : m_table.open_round_benchmarks(m_round);
    if (list && std::find(list->begin(), list->end(), v) == list->end())
      err(e.line, fmt::format("{}submission_benchmark '{}' is not {} benchmark of round {}",
                              rule_prefix(), v, closed() ? "a closed" : "an open", m_round));
  }
  // How an error from a division's own rules begins.
  std::string rule_prefix() const { return closed() ? "" : "open-division rule: "; }

  // The timing structure (common.yaml: init_start / init_stop / run_start / run_stop), the
  // metadata each timing event needs, and the keys required around it.
  void check_timing() {
    // cache_clear: CHECK "'value' in v" only; a null value passes (every parsed event has a value).
    at_least_one("cache_clear");
    at_least_one("init_start");
    exactly_one("init_stop");
    exactly_one("run_start");
    m_stop = exactly_one("run_stop");
    m_init_limit_ms = m_table.init_limit_min(m_division) * 60000.0;
    const auto& rules = event_rules();
    for (const mllog::event& e : m_log.events)
      if (auto it = rules.find(e.key); it != rules.end())
        (this->*(it->second))(e);
    one_of("block_start", "epoch_start");
    one_of("block_stop", "epoch_stop");
    one_of("eval_start", "block_start");
    one_of("eval_stop", "block_stop");
    at_least_one("eval_accuracy");
    non_empty(exactly_one("train_samples"));
    non_empty(exactly_one("eval_samples"));
  }

  void on_init_start(const mllog::event& e) {
    if (m_init_stopped || m_run_started)
      err(e.line, "init_start after init_stop or run_start");
    if (!m_init_started || e.time_ms < m_first_init_start)
      m_first_init_start = e.time_ms;
    m_init_started = true;
  }
  void on_init_stop(const mllog::event& e) {
    if (!m_init_started)
      err(e.line, "init_stop before any init_start");
    if (m_run_started)
      err(e.line, "init_stop after run_start");
    // training_rules.adoc: at most 30 minutes (closed) / 4 hours (open) of untimed
    // initialisation, counted from the very first init_start.
    if (m_init_started && static_cast<double>(e.time_ms - m_first_init_start) >= m_init_limit_ms)
      err(e.line, fmt::format("initialisation took {:.2f} min (init_stop - first init_start), "
                              "the {} division allows less than {:g} min",
                              (e.time_ms - m_first_init_start) / 60000.0, m_division,
                              m_init_limit_ms / 60000.0));
    m_init_stopped = true;
  }
  void on_run_start(const mllog::event& e) {
    if (!m_init_stopped)
      err(e.line, "run_start before init_stop");
    m_run_started = true;
  }
  void on_run_stop(const mllog::event& e) {
    if (!m_run_started)
      err(e.line, "run_stop before run_start");
    if (!e.has_meta("status"))
      err(e.line, "run_stop has no status in its metadata");
  }
  void on_block_start(const mllog::event& e) {
    if (!m_run_started)
      err(e.line, "block_start before run_start");
    if (!e.has_meta("epoch_count") && !e.has_meta("samples_count"))
      err(e.line, "block_start has neither epoch_count nor samples_count in its metadata");
    if (e.has_meta("epoch_count") && !e.has_meta("first_epoch_num"))
      err(e.line, "block_start has epoch_count but no first_epoch_num");
    if (e.has_meta("epoch_count") && !(e.meta_number("epoch_count") > 0))
      err(e.line, "block_start epoch_count is not > 0");
    if (e.has_meta("samples_count") && !(e.meta_number("samples_count", -1) >= 0))
      err(e.line, "block_start samples_count is not >= 0");
  }
  void on_block_stop(const mllog::event& e) {
    if (!e.has_meta("first_epoch_num") && !e.has_meta("samples_count"))
      err(e.line, "block_stop has neither first_epoch_num nor samples_count in its metadata");
  }
  void on_epoch_or_eval(const mllog::event& e) {
    if (!e.has_meta("epoch_num") && !e.has_meta("samples_count"))
      err(e.line, fmt::format("{} has neither epoch_num nor samples_count in its metadata", e.key));
  }

  void check_stop() {
    if (m_stop)
      m_out.stop_status = m_stop->meta_string("status");
    if (m_stop && m_stop->has_meta("status") && m_out.stop_status != "success")
      m_out.not_converged = mllog::diagnostic{
          m_log.file, m_stop->line,
          fmt::format("run did not converge: run_stop status is '{}'", m_out.stop_status)};
  }

  // Closed division: the hyperparameter rules of closed_common.yaml and the benchmark's.
  void check_closed_rules() {
    std::vector<const hparam_rule*> rules;
    for (const auto& r : m_table.closed_common())
      rules.push_back(&r);
    if (m_info)
      for (const auto& r : m_info->closed_rules)
        rules.push_back(&r);
    for (const hparam_rule* r : rules)
      if (rule_applies(*r, m_round, m_log))
        check_rule(*r, "closed-division rule");
  }
  // Open division: the benchmark's open rules (open_common.yaml has none of closed_common.yaml's).
  void check_open_rules() {
    if (!m_info)
      return;
    for (const hparam_rule& r : m_info->open_rules)
      if (rule_applies(r, m_round, m_log))
        check_rule(r, "open-division rule");
  }
  void check_rule(const hparam_rule& r, const char* what) {
    if (r.req == "EXACTLY_ONE")
      exactly_one(r.key);
    else if (r.req == "AT_LEAST_ONE")
      at_least_one(r.key);
    if (r.check.is_null())
      return;
    if (const mllog::event* e = m_log.first(r.key)) {
      const std::string want = eval_check(r.check, e->value, m_log);
      if (!want.empty())
        err(e->line,
            fmt::format("{}: {} = {} must be {}", what, r.key, short_value(e->value), want));
    }
  }

  // The quality target: evaluated always (the report's eval curve), required in the closed
  // division.
  void check_quality() {
    if (!m_info) {
      m_out.quality = evaluate_quality(quality_spec{}, m_log);
      return;
    }
    const quality_spec& q = m_info->quality;
    m_out.quality = evaluate_quality(q, m_log);
    if (!closed())
      return;
    check_eval_values(q);
    for (const mllog::event* e : m_log.all("eval_accuracy"))
      if (!e->has_meta(q.eval_metadata))
        err(e->line, fmt::format("eval_accuracy has no {} in its metadata", q.eval_metadata));
    if (m_out.quality.eval_points < q.min_eval_points)
      err(0, fmt::format("{} evaluation point(s) logged, {} required", m_out.quality.eval_points,
                         q.min_eval_points));
    if (!m_out.quality.reached)
      err(0, fmt::format("quality target not reached: no eval_accuracy meets {} {}", q.metric,
                         q.to_json().dump()));
  }

  // Open division: open_<benchmark>.yaml's check of the eval lines. Not the closed target: only
  // the metadata each line carries and a sanity bound at least one value meets (value < 1.0).
  // The quality check (ATLEAST_ONE_CHECK, e.g. "v['value'] <= 0.925") is evaluated on every eval
  // line outside the checker's exception handling: a value Python cannot compare with a number
  // (a string, null, a list) stops the checker. A bool compares as 0 or 1. Multi-metric
  // evaluations are aggregated first and checked by their own rule.
  void check_eval_values(const quality_spec& q) {
    if (q.multi_metric())
      return;
    for (const mllog::event* e : m_log.all(q.key))
      if (!e->value.is_number() && !e->value.is_boolean())
        unprocessable(e->line,
                      fmt::format("{} value {} is not a number", q.key, short_value(e->value)));
  }

  void check_open_quality() {
    if (!m_info)
      return;
    const quality_spec* q = m_info->open_quality_in(m_round);
    if (!q) {
      if (!m_round.empty())
        err(0, fmt::format("open-division rule: round {} has no open rules for '{}' (MLCommons' "
                           "checker has no open_{}.yaml there)",
                           m_round, m_info->name, m_info->name));
      return;
    }
    if (!q->multi_metric())
      at_least_one(q->key);
    check_eval_values(*q);
    check_eval_metadata(*q);
    const quality_outcome o = evaluate_quality(*q, m_log);
    for (double pos : o.incomplete_points)
      err(0, fmt::format("open-division rule: the evaluation at samples_count {:g} lacks one of "
                         "the metrics of {}",
                         pos, q->describe()));
    if (o.eval_points < q->min_eval_points)
      err(0, fmt::format("open-division rule: {} evaluation point(s) logged, {} required",
                         o.eval_points, q->min_eval_points));
    if (!o.reached)
      err(0,
          fmt::format("open-division rule: no {} meets {} ({})", q->key, q->describe(), q->metric));
  }
  // Each line of the quality key carries the metadata the division requires; multi-metric evals
  // are checked where they are aggregated, on the lines that name a metric. One error for all the
  // lines that lack it: a whole log logs its evals one way.
  void check_eval_metadata(const quality_spec& q) {
    const auto lines = m_log.all(q.key);
    std::vector<const mllog::event*> lacking;
    for (const mllog::event* e : lines)
      if ((!q.multi_metric() || e->has_meta("metric")) && !e->has_meta(q.eval_metadata))
        lacking.push_back(e);
    if (!lacking.empty())
      err(lacking.front()->line,
          fmt::format("open-division rule: {} has no {} in its metadata ({} of {} lines)", q.key,
                      q.eval_metadata, lacking.size(), lines.size()));
  }

  // ---- warnings MLCommons does not give ----

  // A base learning rate that is not above 0 (the closed rules of most benchmarks leave its value
  // free, so MLCommons passes a negated one).
  void check_learning_rate() {
    for (const mllog::event* e : m_log.all("opt_base_learning_rate"))
      if (e->value.is_number() && !(e->value.get<double>() > 0))
        warn(e->line, fmt::format("opt_base_learning_rate {} is not above 0: no optimizer trains "
                                  "with it",
                                  short_value(e->value)));
  }

  // Time going backwards along the timing structure: an event timed earlier than the latest event
  // of an earlier phase (init_start < init_stop < run_start < eval_accuracy, run_stop). Only the
  // phases are compared, not neighbouring lines: the published logs step back all the time where
  // that is harmless (several ranks log init_start, up to 2.8 s apart; stable_diffusion evaluates
  // offline and logs run_stop, timed at the end of training, after evaluations timed hours later),
  // and none of the 1,768 published v4.0/v5.0 result files steps back between phases. The
  // tolerance is above that rank-to-rank spread.
  void check_time_order() {
    static const std::map<std::string, int> phase = {{"init_start", 0},
                                                     {"init_stop", 1},
                                                     {"run_start", 2},
                                                     {"eval_accuracy", 3},
                                                     {"run_stop", 3}};
    std::map<int, const mllog::event*> latest; // phase -> its latest-timed event so far
    for (const mllog::event& e : m_log.events) {
      auto it = phase.find(e.key);
      if (it == phase.end())
        continue;
      if (const mllog::event* before = latest_before(latest, it->second))
        report_step_back(*before, e);
      const mllog::event*& mine = latest[it->second];
      if (!mine || e.time_ms > mine->time_ms)
        mine = &e;
    }
  }
  static const mllog::event* latest_before(const std::map<int, const mllog::event*>& latest,
                                           int phase) {
    const mllog::event* out = nullptr;
    for (auto it = latest.begin(); it != latest.end() && it->first < phase; ++it)
      if (!out || it->second->time_ms > out->time_ms)
        out = it->second;
    return out;
  }
  void report_step_back(const mllog::event& before, const mllog::event& e) {
    static constexpr int64_t k_tolerance_ms = 5000;
    if (before.time_ms - e.time_ms <= k_tolerance_ms)
      return;
    warn(e.line, fmt::format("time goes backwards: {} (time_ms {}) is {:.1f} s earlier than {} "
                             "at line {} (time_ms {})",
                             e.key, e.time_ms, (before.time_ms - e.time_ms) / 1000.0, before.key,
                             before.line, before.time_ms));
  }

  // A repeated run_start at another time: MLCommons warns only that the key repeats (or errs when
  // the values differ); say which one the score is timed from. The result summarizer times from
  // the last run_start before the first run_stop (time_to_train.hpp's timed_span).
  void check_run_start_times() {
    const auto starts = m_log.all("run_start");
    if (starts.size() < 2 || all_same_time(starts))
      return;
    const mllog::event* timed = timed_span(m_log).first;
    std::vector<std::string> at;
    at.reserve(starts.size());
    for (const mllog::event* e : starts)
      at.push_back(fmt::format("line {}: time_ms {}", e->line, e->time_ms));
    warn(starts[1]->line,
         fmt::format("run_start logged {} times at different times ({}): the score is timed from "
                     "the one at line {}, the last before the first run_stop ({:+.2f} min from the "
                     "first)",
                     starts.size(), fmt::join(at, ", "), timed ? timed->line : 0,
                     timed ? (timed->time_ms - starts.front()->time_ms) / 60000.0 : 0.0));
  }
  static bool all_same_time(const std::vector<const mllog::event*>& evs) {
    for (const mllog::event* e : evs)
      if (e->time_ms != evs.front()->time_ms)
        return false;
    return true;
  }
  // ---- accelbench's own rule, stricter than MLCommons ----

  // A time to train that is none (run_stop not after run_start) or more than a year: MLCommons'
  // checkers accept the file and its summarizer would score the difference, a negative number of
  // minutes among them; the import stores such a run INVALID (time_to_train.hpp's one rule). The
  // file does not comply: olympic scoring may drop one, more reject the package (docs/mlperf.md).
  void check_time_to_train() {
    const auto [start, stop] = timed_span(m_log);
    if (!start || !stop)
      return; // the timing rules already ask for both
    if (std::string why = implausible_duration(span_minutes(*start, *stop)); !why.empty())
      err(stop->line, fmt::format("{} (run_start at line {}; accelbench's rule, MLCommons' "
                                  "checker lets it pass)",
                                  why, start->line));
  }

  const mllog::parsed_log& m_log;
  const std::string m_round;
  const benchmark_table& m_table;
  log_check m_out;
  std::set<std::string> m_counted; // keys whose occurrence count was already checked
  std::string m_division;
  const benchmark_info* m_info = nullptr;
  const mllog::event* m_stop = nullptr;
  // The timing structure as the events go by.
  bool m_init_started = false, m_init_stopped = false, m_run_started = false;
  int64_t m_first_init_start = 0;
  double m_init_limit_ms = 0;
};

const std::map<std::string, log_checker::event_rule>& log_checker::event_rules() {
  static const std::map<std::string, event_rule> rules = {
      {"init_start", &log_checker::on_init_start},
      {"init_stop", &log_checker::on_init_stop},
      {"run_start", &log_checker::on_run_start},
      {"run_stop", &log_checker::on_run_stop},
      {"block_start", &log_checker::on_block_start},
      {"block_stop", &log_checker::on_block_stop},
      {"epoch_start", &log_checker::on_epoch_or_eval},
      {"epoch_stop", &log_checker::on_epoch_or_eval},
      {"eval_start", &log_checker::on_epoch_or_eval},
      {"eval_stop", &log_checker::on_epoch_or_eval},
      {"eval_accuracy", &log_checker::on_epoch_or_eval},
  };
  return rules;
}

} // namespace

log_check check_log(const mllog::parsed_log& log, const std::string& benchmark,
                    const std::string& division, const std::string& round,
                    const benchmark_table& table) {
  return log_checker(log, round, table).run(benchmark, division);
}

} // namespace accelbench::mlperf
