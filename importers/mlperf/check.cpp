#include "importers/mlperf/check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/folder.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

const std::vector<std::string>& required_system_fields() {
  static const std::vector<std::string> fields = {"submitter",
                                                  "division",
                                                  "status",
                                                  "system_name",
                                                  "number_of_nodes",
                                                  "host_processors_per_node",
                                                  "host_processor_model_name",
                                                  "host_processor_core_count",
                                                  "host_processor_vcpu_count",
                                                  "host_processor_frequency",
                                                  "host_processor_caches",
                                                  "host_processor_interconnect",
                                                  "host_memory_capacity",
                                                  "host_storage_type",
                                                  "host_storage_capacity",
                                                  "host_networking",
                                                  "host_networking_topology",
                                                  "host_memory_configuration",
                                                  "accelerators_per_node",
                                                  "accelerator_model_name",
                                                  "accelerator_host_interconnect",
                                                  "accelerator_frequency",
                                                  "accelerator_on-chip_memories",
                                                  "accelerator_memory_configuration",
                                                  "accelerator_memory_capacity",
                                                  "accelerator_interconnect",
                                                  "accelerator_interconnect_topology",
                                                  "cooling",
                                                  "hw_notes",
                                                  "framework",
                                                  "other_software_stack",
                                                  "operating_system",
                                                  "sw_notes"};
  return fields;
}

namespace {

std::string short_value(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

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

bool all_same(const std::vector<const event*>& evs) {
  for (const event* e : evs)
    if (!values_equal(e->value, evs.front()->value))
      return false;
  return true;
}

// Evaluates a closed-division check (benchmarks.json "check_ops"); returns "" when it holds,
// else a description of the expectation.
std::string eval_check(const json& c, const json& v, const parsed_log& log) {
  const std::string op = c.value("op", "");
  auto num = [&](const json& x) -> std::optional<double> {
    if (x.is_number())
      return x.get<double>();
    return std::nullopt;
  };
  auto other = [&](const std::string& key) -> std::optional<double> {
    const event* e = log.first(key);
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

bool rule_applies(const hparam_rule& r, const std::string& round, const parsed_log& log) {
  if (!r.rounds.empty()) {
    if (round.empty())
      return false;
    if (std::find(r.rounds.begin(), r.rounds.end(), round) == r.rounds.end())
      return false;
  }
  for (const auto& [key, want] : r.when) {
    const event* e = log.first(key);
    if (!e || !values_equal(e->value, want))
      return false;
  }
  return true;
}

} // namespace

namespace {

// One log against the rules of common.yaml, closed_common.yaml and the benchmark's closed rules,
// as mlp_compliance.py applies them: one method per group of rules, in the checker's order (the
// order of the errors reported).
class log_checker {
public:
  log_checker(const parsed_log& log, const std::string& round, const benchmark_table& table)
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
    check_quality();
    m_out.converged = m_stop != nullptr && m_out.stop_status == "success" &&
                      (!m_info || !closed() || m_out.quality.reached);
    return std::move(m_out);
  }

private:
  // An event rule of the timing structure: what must hold where the key is logged.
  using event_rule = void (log_checker::*)(const event&);
  static const std::map<std::string, event_rule>& event_rules();

  bool closed() const { return m_division == "closed"; }
  void err(int64_t line, std::string msg) {
    m_out.errors.push_back({m_log.file, line, std::move(msg)});
  }
  void warn(int64_t line, std::string msg) {
    m_out.warnings.push_back({m_log.file, line, std::move(msg)});
  }

  // ---- occurrence requirements (REQ of the checker YAML) ----

  // REQ: EXACTLY_ONE. Repeats with one value are a warning, with different values an error
  // (mlp_compliance.py configured_checks), for the timing events as for any other key: the result
  // summarizer then times the run from the last run_start before the first run_stop.
  const event* exactly_one(const std::string& key) {
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
  void report_repeats(const std::string& key, const std::vector<const event*>& evs) {
    if (all_same(evs)) {
      warn(evs[1]->line,
           fmt::format("EXACTLY_ONE key '{}' logged {} times (same value)", key, evs.size()));
      return;
    }
    std::vector<std::string> vals;
    vals.reserve(evs.size());
    for (const event* e : evs)
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
  void non_empty(const event* e) {
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
    if (const event* e = exactly_one("submission_division")) {
      const std::string v = e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
      if (v != "closed" && v != "open") {
        err(e->line, fmt::format("submission_division '{}' is not 'closed' or 'open'", v));
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
    if (const event* e = exactly_one("submission_benchmark")) {
      const std::string v = e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
      if (benchmark.empty())
        benchmark = v;
      const benchmark_info* a = m_table.find(v);
      const benchmark_info* b = m_table.find(benchmark);
      if (v != benchmark && !(a && a == b))
        err(e->line, fmt::format("submission_benchmark '{}' does not match the result folder '{}'",
                                 v, benchmark));
      check_closed_benchmark(*e, v);
    }
    m_info = m_table.find(benchmark);
    m_out.known_benchmark = m_info != nullptr;
    if (!m_info)
      warn(0, fmt::format("unknown benchmark '{}': no quality target or hyperparameter rules "
                          "checked",
                          benchmark));
  }
  void check_closed_benchmark(const event& e, const std::string& v) {
    if (!closed() || m_round.empty())
      return;
    if (const auto* list = m_table.round_benchmarks(m_round))
      if (std::find(list->begin(), list->end(), v) == list->end())
        err(e.line, fmt::format("submission_benchmark '{}' is not a closed benchmark of round {}",
                                v, m_round));
  }

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
    for (const event& e : m_log.events)
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

  void on_init_start(const event& e) {
    if (m_init_stopped || m_run_started)
      err(e.line, "init_start after init_stop or run_start");
    if (!m_init_started || e.time_ms < m_first_init_start)
      m_first_init_start = e.time_ms;
    m_init_started = true;
  }
  void on_init_stop(const event& e) {
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
  void on_run_start(const event& e) {
    if (!m_init_stopped)
      err(e.line, "run_start before init_stop");
    m_run_started = true;
  }
  void on_run_stop(const event& e) {
    if (!m_run_started)
      err(e.line, "run_stop before run_start");
    if (!e.has_meta("status"))
      err(e.line, "run_stop has no status in its metadata");
  }
  void on_block_start(const event& e) {
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
  void on_block_stop(const event& e) {
    if (!e.has_meta("first_epoch_num") && !e.has_meta("samples_count"))
      err(e.line, "block_stop has neither first_epoch_num nor samples_count in its metadata");
  }
  void on_epoch_or_eval(const event& e) {
    if (!e.has_meta("epoch_num") && !e.has_meta("samples_count"))
      err(e.line, fmt::format("{} has neither epoch_num nor samples_count in its metadata", e.key));
  }

  void check_stop() {
    if (m_stop)
      m_out.stop_status = m_stop->meta_string("status");
    if (m_stop && m_stop->has_meta("status") && m_out.stop_status != "success")
      err(m_stop->line,
          fmt::format("run did not converge: run_stop status is '{}'", m_out.stop_status));
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
        check_rule(*r);
  }
  void check_rule(const hparam_rule& r) {
    if (r.req == "EXACTLY_ONE")
      exactly_one(r.key);
    else if (r.req == "AT_LEAST_ONE")
      at_least_one(r.key);
    if (r.check.is_null())
      return;
    if (const event* e = m_log.first(r.key)) {
      const std::string want = eval_check(r.check, e->value, m_log);
      if (!want.empty())
        err(e->line, fmt::format("closed-division rule: {} = {} must be {}", r.key,
                                 short_value(e->value), want));
    }
  }

  // The quality target: evaluated always, required in the closed division.
  void check_quality() {
    if (!m_info) {
      m_out.quality = evaluate_quality(quality_spec{}, m_log);
      return;
    }
    const quality_spec& q = m_info->quality;
    m_out.quality = evaluate_quality(q, m_log);
    if (!closed())
      return;
    for (const event* e : m_log.all("eval_accuracy"))
      if (!e->has_meta(q.eval_metadata))
        err(e->line, fmt::format("eval_accuracy has no {} in its metadata", q.eval_metadata));
    if (m_out.quality.eval_points < q.min_eval_points)
      err(0, fmt::format("{} evaluation point(s) logged, {} required", m_out.quality.eval_points,
                         q.min_eval_points));
    if (!m_out.quality.reached)
      err(0, fmt::format("quality target not reached: no eval_accuracy meets {} {}", q.metric,
                         q.to_json().dump()));
  }

  const parsed_log& m_log;
  const std::string m_round;
  const benchmark_table& m_table;
  log_check m_out;
  std::set<std::string> m_counted; // keys whose occurrence count was already checked
  std::string m_division;
  const benchmark_info* m_info = nullptr;
  const event* m_stop = nullptr;
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

log_check check_log(const parsed_log& log, const std::string& benchmark,
                    const std::string& division, const std::string& round,
                    const benchmark_table& table) {
  return log_checker(log, round, table).run(benchmark, division);
}

std::vector<std::string> check_system_description(const json& desc, const std::string& round,
                                                  const benchmark_table& table,
                                                  std::vector<std::string>* warnings) {
  std::vector<std::string> out;
  auto note = [&](std::string w) {
    if (warnings)
      warnings->push_back(std::move(w));
  };
  if (!desc.is_object())
    return {"system description is not a JSON object"};
  // system_desc_checker.py: every required field present (any JSON type) ...
  for (const auto& f : required_system_fields()) {
    if (!desc.contains(f)) {
      out.push_back(fmt::format("missing field '{}'", f));
      continue;
    }
    // Published descriptions mostly keep values as strings, but lists and numbers occur and
    // MLCommons accepts them: noted only.
    const json& v = desc[f];
    if (!v.is_string() && !(f == "other_software_stack" && v.is_object()))
      note(fmt::format("field '{}' is not a string ({}); MLCommons checks only that it is present",
                       f, short_value(v)));
  }
  // ... and, from round 4.0, a status of the allowed list (a list or a number is never in it).
  if (desc.contains("status")) {
    const json& st = desc["status"];
    const bool checked = round.empty() || compare_rounds(normalize_round(round), "4.0") >= 0;
    if (!st.is_string() || !table.status_allowed(st, round)) {
      std::string w =
          fmt::format("field 'status' is {}, must be one of: {}",
                      st.is_string() ? "'" + st.get<std::string>() + "'" : short_value(st),
                      fmt::join(table.allowed_status(), "; "));
      if (checked)
        out.push_back(std::move(w));
      else
        note(w + " (not checked before round 4.0)");
    }
  }
  // Not checked by MLCommons (the package checker treats any division but "closed" as open).
  if (desc.contains("division") && !(desc["division"] == "closed" || desc["division"] == "open"))
    note(fmt::format("field 'division' is {}, expected 'closed' or 'open'",
                     short_value(desc["division"])));
  for (const char* f : {"submitter", "system_name"})
    if (desc.contains(f) && desc[f].is_string() && desc[f].get<std::string>().empty())
      note(fmt::format("field '{}' is empty", f));
  return out;
}

json check_result::to_json() const {
  return {{"valid", valid},
          {"verdict", valid ? "VALID" : "INVALID"},
          {"reasons", reasons},
          {"warnings", warnings},
          {"round", round},
          {"systems", systems},
          {"result_files", result_files}};
}

namespace {

bool is_result_file(const std::string& name) {
  return name.size() > 11 && name.rfind("result_", 0) == 0 &&
         name.compare(name.size() - 4, 4, ".txt") == 0;
}

// int() of a logged seed, as the seed checker does; nullopt when not convertible.
std::optional<long long> seed_int(const json& v) {
  if (v.is_number_integer())
    return v.get<long long>();
  if (v.is_number_float()) {
    // int() of a float; one outside the range of long long is not a seed (and the conversion
    // would be undefined).
    const double d = v.get<double>();
    if (!(std::abs(d) < 9.2e18))
      return std::nullopt;
    return static_cast<long long>(d);
  }
  if (v.is_boolean())
    return v.get<bool>() ? 1 : 0;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      size_t n = 0;
      long long x = std::stoll(s, &n);
      while (n < s.size() && std::isspace(static_cast<unsigned char>(s[n])))
        ++n;
      if (n == s.size())
        return x;
    } catch (...) {
    }
  }
  return std::nullopt;
}

} // namespace

namespace {

// One submission folder as package_checker.py walks it: the folders, the system descriptions,
// then each system's benchmarks, each benchmark's result files, each file's log and seeds. Every
// defect is a reason (INVALID); what MLCommons tolerates is a warning.
class package_checker {
public:
  package_checker(const fs::path& org_dir, const check_options& opt)
      : m_org(org_dir), m_table(opt.table ? *opt.table : benchmark_table::builtin()) {
    m_r.round = normalize_round(opt.round.empty() ? round_from_path(org_dir) : opt.round);
  }

  check_result run() {
    if (check_folders()) {
      read_systems();
      check_results();
    }
    m_r.valid = m_r.reasons.empty();
    return std::move(m_r);
  }

private:
  void reason(std::string s) { m_r.reasons.push_back(std::move(s)); }
  void warning(std::string s) { m_r.warnings.push_back(std::move(s)); }

  // Folders (dirs) or everything else (files, FIFOs and devices, so that a broken entry is
  // reported when read rather than skipped) in `dir`, sorted. A link is neither: it is a reason
  // of its own, said once, and never followed (folder.hpp).
  std::vector<fs::path> entries(const fs::path& dir, bool dirs) {
    const std::vector<folder_entry> listed = list_folder(dir);
    std::vector<fs::path> out;
    out.reserve(listed.size());
    for (const auto& e : listed) {
      if (e.kind == entry_kind::link) {
        if (m_links.insert(e.path).second)
          reason(fmt::format("{}: {}", e.path.string(), link_refusal(e.path)));
      } else if ((e.kind == entry_kind::folder) == dirs) {
        out.push_back(e.path);
      }
    }
    return out;
  }

  // m_org/NAME must be a folder (not a link to one).
  void need_folder(const std::string& name) {
    const fs::path p = m_org / name;
    if (kind_of(p) == entry_kind::link)
      reason(fmt::format("{}: {}", p.string(), link_refusal(p)));
    else if (!is_dir(p))
      reason(fmt::format("{}: missing {}/ folder", m_org.string(), name));
  }

  // The organisation folder and its systems/ and results/ folders; false when one is missing.
  bool check_folders() {
    std::error_code ec;
    if (!fs::is_directory(m_org, ec)) { // the folder the user named may be a link: their choice
      reason(fmt::format("'{}' is not a directory", m_org.string()));
      return false;
    }
    need_folder("systems");
    need_folder("results");
    if (!is_dir(m_org / "benchmarks"))
      warning(fmt::format("{}: no benchmarks/ folder (implementation code)", m_org.string()));
    return m_r.reasons.empty();
  }

  // System descriptions (system_desc_checker checks every systems/*.json).
  void read_systems() {
    const fs::path systems_dir = m_org / "systems";
    // Folders named *.json too: they are refused when read.
    std::vector<fs::path> system_files = entries(systems_dir, false);
    for (const auto& d : entries(systems_dir, true))
      system_files.push_back(d);
    for (const auto& p : system_files)
      if (p.extension() == ".json")
        read_system(p);
  }
  void read_system(const fs::path& p) {
    // A file that cannot be read or parsed (too large, a folder, nested too deep, not JSON) is a
    // reason for an INVALID verdict, like every other defect of the package: exit 1, not 2.
    json desc;
    try {
      std::vector<diagnostic> repaired;
      desc = parse_json_input(
          repair_text_lines(read_folder_file(p, "system description"), p.string(), repaired),
          "system description");
      for (const auto& d : repaired)
        warning(d.to_string());
    } catch (const input_error& e) {
      reason(fmt::format("{}: {}", p.string(), e.what()));
      return;
    }
    std::vector<std::string> desc_warnings;
    for (const auto& problem : check_system_description(desc, m_r.round, m_table, &desc_warnings))
      reason(fmt::format("{}: {}", p.string(), problem));
    for (const auto& w : desc_warnings)
      warning(fmt::format("{}: {}", p.string(), w));
    m_systems[p.stem().string()] = desc;
    ++m_r.systems;
  }

  void check_results() {
    const fs::path results_dir = m_org / "results";
    const auto system_dirs = entries(results_dir, true);
    if (system_dirs.empty())
      reason(fmt::format("{}: no system folders", results_dir.string()));
    for (const auto& sys_dir : system_dirs) {
      const std::string division = division_of(sys_dir);
      for (const auto& bench_dir : entries(sys_dir, true))
        if (const benchmark_info* info = benchmark_to_check(bench_dir))
          check_benchmark(bench_dir, *info, division);
    }
  }

  // The division of a system folder from its description ("closed" when it names none).
  std::string division_of(const fs::path& sys_dir) {
    const std::string system = sys_dir.filename().string();
    auto it = m_systems.find(system);
    if (it == m_systems.end()) {
      reason(fmt::format("{}: no system description systems/{}.json", sys_dir.string(), system));
      return "closed";
    }
    const json& d = it->second;
    if (d.is_object() && d.contains("division") && d["division"].is_string())
      return d["division"];
    return "closed";
  }

  // The benchmark of a folder, or null when package_checker.py skips it (with a warning).
  const benchmark_info* benchmark_to_check(const fs::path& bench_dir) {
    const std::string bench = bench_dir.filename().string();
    const benchmark_info* info = m_table.find(bench);
    if (!info) {
      warning(fmt::format("{}: unknown benchmark '{}', skipped", bench_dir.string(), bench));
      return nullptr;
    }
    if (m_r.round.empty())
      return info;
    const auto* list = m_table.round_benchmarks(m_r.round);
    if (list && std::find(list->begin(), list->end(), bench) == list->end()) {
      warning(fmt::format("{}: '{}' is not a benchmark of round {}, skipped", bench_dir.string(),
                          bench, m_r.round));
      return nullptr;
    }
    return info;
  }

  // The result files of a benchmark folder, sorted; other files are warned about.
  std::vector<fs::path> result_files(const fs::path& bench_dir) {
    std::vector<fs::path> results;
    for (const auto& f : entries(bench_dir, false)) {
      const std::string name = f.filename().string();
      if (is_result_file(name))
        results.push_back(f);
      else if (name != "scaling.json" && name != "package_checker_params")
        warning(
            fmt::format("{}: unexpected file (result files are named result_<i>.txt)", f.string()));
    }
    // A folder named like a result is counted and then refused when read.
    for (const auto& d : entries(bench_dir, true))
      if (is_result_file(d.filename().string()))
        results.push_back(d);
    std::sort(results.begin(), results.end());
    return results;
  }

  void check_benchmark(const fs::path& bench_dir, const benchmark_info& info,
                       const std::string& division) {
    const std::vector<fs::path> results = result_files(bench_dir);
    m_r.result_files += results.size();
    // benchmark_meta.py: the number of result files must be exact.
    if (static_cast<int>(results.size()) != info.required_runs)
      reason(fmt::format("{}: {} result files, {} requires exactly {}", bench_dir.string(),
                         results.size(), info.name, info.required_runs));
    // Per-file compliance; olympic scoring tolerates max_dropped non-compliant files.
    std::vector<std::vector<std::string>> bad;
    m_seen_seeds.clear();
    for (const auto& f : results)
      check_result_file(f, bench_dir.filename().string(), division, bad);
    judge_non_compliant(bench_dir, info, results.size(), bad);
  }

  void check_result_file(const fs::path& f, const std::string& bench, const std::string& division,
                         std::vector<std::vector<std::string>>& bad) {
    std::string text;
    try {
      text = read_folder_file(f, "MLPerf log");
    } catch (const input_error& e) {
      // Not a log at all (a folder, unreadable, too large): a defect of the package, never the
      // run olympic scoring drops.
      reason(fmt::format("{}: {}", f.string(), e.what()));
      return;
    }
    // Invalid UTF-8 (latin-1 from framework output) is replaced and warned about: the lines
    // still count, as they do when the folder is imported.
    std::vector<diagnostic> repaired;
    text = repair_text_lines(text, f.string(), repaired);
    for (const auto& d : repaired)
      warning(d.to_string());
    parsed_log log = parse_mllog(text, f.string());
    log_check lc = check_log(log, bench, division, m_r.round, m_table);
    for (const auto& w : lc.warnings)
      warning(w.to_string());
    if (!lc.compliant()) {
      std::vector<std::string> msgs;
      for (const auto& e : lc.errors)
        msgs.push_back(e.to_string());
      bad.push_back(std::move(msgs));
    }
    if (division == "closed")
      check_seeds(f, log);
  }

  // Seed checker (closed division, training_rules.adoc "Random numbers"): every run logs a seed
  // convertible by int(); no two runs log the same seed at the same file:line.
  void check_seeds(const fs::path& f, const parsed_log& log) {
    auto seeds = log.all("seed");
    if (seeds.empty())
      reason(fmt::format("{}: logs no seed", f.string()));
    for (const event* e : seeds) {
      auto s = seed_int(e->value);
      if (!s) {
        reason(fmt::format("{}:{}: seed {} is not an integer", f.string(), e->line,
                           short_value(e->value)));
        continue;
      }
      auto key = std::make_tuple(e->meta_string("file"), e->meta_string("lineno"), *s);
      auto [pos, inserted] = m_seen_seeds.emplace(key, f.filename().string());
      if (!inserted)
        reason(fmt::format("{}:{}: seed {} logged at {}:{} was already logged there by {}",
                           f.string(), e->line, *s, std::get<0>(key), std::get<1>(key),
                           pos->second));
    }
  }

  // Up to max_dropped non-compliant files are the runs olympic scoring drops (warnings); more
  // make the benchmark INVALID, with every file's errors.
  void judge_non_compliant(const fs::path& bench_dir, const benchmark_info& info, size_t files,
                           const std::vector<std::vector<std::string>>& bad) {
    const size_t allowed = static_cast<size_t>(info.max_dropped);
    if (bad.size() > allowed) {
      reason(fmt::format("{}: {} of {} result files do not comply (at most {} tolerated under "
                         "olympic scoring)",
                         bench_dir.string(), bad.size(), files, allowed));
      for (const auto& msgs : bad)
        for (const auto& m : msgs)
          reason(m);
      return;
    }
    for (const auto& msgs : bad) {
      warning(fmt::format("{}: 1 result file does not comply, accepted under olympic scoring as "
                          "the dropped run",
                          bench_dir.string()));
      for (const auto& m : msgs)
        warning(m);
    }
  }

  const fs::path m_org;
  const benchmark_table& m_table;
  check_result m_r;
  std::map<std::string, json> m_systems;
  std::set<fs::path> m_links; // the links already given as reasons
  // (file, lineno, seed) of the closed-division seeds of one benchmark folder, and who logged it.
  std::map<std::tuple<std::string, std::string, long long>, std::string> m_seen_seeds;
};

} // namespace

check_result check_package(const fs::path& org_dir, const check_options& opt) {
  return package_checker(org_dir, opt).run();
}

} // namespace accelbench::mlperf
