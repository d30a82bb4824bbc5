#include "workloads/mlperf/check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

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

log_check check_log(const parsed_log& log, const std::string& benchmark_in,
                    const std::string& division_in, const std::string& round_in,
                    const benchmark_table& table) {
  log_check out;
  const std::string& file = log.file;
  const std::string round = normalize_round(round_in);
  auto err = [&](int64_t line, std::string msg) {
    out.errors.push_back({file, line, std::move(msg)});
  };
  auto warn = [&](int64_t line, std::string msg) {
    out.warnings.push_back({file, line, std::move(msg)});
  };

  // Lines that do not parse make the file non-compliant ("Log lines had parsing errors").
  for (const auto& d : log.diagnostics)
    out.errors.push_back(d);
  if (log.events.empty())
    err(0, "no :::MLLOG lines found");

  std::set<std::string> counted; // keys whose occurrence count was already checked
  // REQ: EXACTLY_ONE. Repeats with one value are a warning, with different values an error
  // (mlp_compliance.py configured_checks), for the timing events as for any other key: the result
  // summarizer then times the run from the last run_start before the first run_stop.
  auto exactly_one = [&](const std::string& key) -> const event* {
    auto evs = log.all(key);
    if (!counted.insert(key).second)
      return evs.empty() ? nullptr : evs.front();
    if (evs.empty()) {
      err(0, fmt::format("required key '{}' (EXACTLY_ONE) is not logged", key));
      return nullptr;
    }
    if (evs.size() > 1) {
      if (all_same(evs)) {
        warn(evs[1]->line,
             fmt::format("EXACTLY_ONE key '{}' logged {} times (same value)", key, evs.size()));
      } else {
        std::vector<std::string> vals;
        for (const event* e : evs)
          vals.push_back(short_value(e->value));
        err(evs[1]->line,
            fmt::format("EXACTLY_ONE key '{}' logged {} times with different values: [{}]", key,
                        evs.size(), fmt::join(vals, ", ")));
      }
    }
    return evs.front();
  };
  auto at_least_one = [&](const std::string& key) {
    if (!counted.insert(key).second)
      return;
    if (log.count(key) == 0)
      err(0, fmt::format("required key '{}' (AT_LEAST_ONE) is not logged", key));
  };
  auto one_of = [&](const std::string& a, const std::string& b) {
    if (log.count(a) == 0 && log.count(b) == 0)
      err(0, fmt::format("required key '{}' or '{}' is not logged", a, b));
  };
  // common.yaml: CHECK " v['value'] != '' ": an empty string fails, null passes (noted).
  auto non_empty = [&](const event* e) {
    if (e && e->value.is_string() && e->value.get<std::string>().empty())
      err(e->line, fmt::format("'{}' has an empty value", e->key));
    else if (e && e->value.is_null())
      warn(e->line, fmt::format("'{}' has a null value (MLCommons requires only that it is not '')",
                                e->key));
  };

  // --- submission_* (common.yaml, closed_common.yaml) ---
  // training_5.0.0/common.yaml dropped submission_org and submission_platform (the rounds before
  // and after require them): missing there is a warning.
  if (round == "5.0") {
    for (const char* k : {"submission_org", "submission_platform"}) {
      counted.insert(k);
      if (log.count(k) == 0)
        warn(0, fmt::format("'{}' is not logged (round 5.0's rules do not require it)", k));
    }
  } else {
    non_empty(exactly_one("submission_org"));
    non_empty(exactly_one("submission_platform"));
  }
  std::string division = division_in;
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
      division = v;
    }
  }
  if (division.empty())
    division = "closed";
  const bool closed = division == "closed";

  std::string benchmark = benchmark_in;
  if (const event* e = exactly_one("submission_benchmark")) {
    const std::string v = e->value.is_string() ? e->value.get<std::string>() : e->value.dump();
    if (benchmark.empty())
      benchmark = v;
    const benchmark_info* a = table.find(v);
    const benchmark_info* b = table.find(benchmark);
    if (v != benchmark && !(a && a == b))
      err(e->line, fmt::format("submission_benchmark '{}' does not match the result folder '{}'", v,
                               benchmark));
    if (closed && !round.empty()) {
      if (const auto* list = table.round_benchmarks(round))
        if (std::find(list->begin(), list->end(), v) == list->end())
          err(e->line,
              fmt::format("submission_benchmark '{}' is not a closed benchmark of round {}", v,
                          round));
    }
  }
  const benchmark_info* info = table.find(benchmark);
  out.known_benchmark = info != nullptr;
  if (!info)
    warn(0, fmt::format("unknown benchmark '{}': no quality target or hyperparameter rules checked",
                        benchmark));

  // --- timing structure (common.yaml: init_start / init_stop / run_start / run_stop) ---
  // cache_clear: CHECK "'value' in v" only; a null value passes (every parsed event has a value).
  at_least_one("cache_clear");
  at_least_one("init_start");
  exactly_one("init_stop");
  exactly_one("run_start");
  const event* stop = exactly_one("run_stop");
  bool init_started = false, init_stopped = false, run_started = false;
  int64_t first_init_start = 0;
  const double init_limit_ms = table.init_limit_min(division) * 60000.0;
  for (const event& e : log.events) {
    const auto& k = e.key;
    if (k == "init_start") {
      if (init_stopped || run_started)
        err(e.line, "init_start after init_stop or run_start");
      if (!init_started || e.time_ms < first_init_start)
        first_init_start = e.time_ms;
      init_started = true;
    } else if (k == "init_stop") {
      if (!init_started)
        err(e.line, "init_stop before any init_start");
      if (run_started)
        err(e.line, "init_stop after run_start");
      // training_rules.adoc: at most 30 minutes (closed) / 4 hours (open) of untimed
      // initialisation, counted from the very first init_start.
      if (init_started && static_cast<double>(e.time_ms - first_init_start) >= init_limit_ms)
        err(e.line, fmt::format("initialisation took {:.2f} min (init_stop - first init_start), "
                                "the {} division allows less than {:g} min",
                                (e.time_ms - first_init_start) / 60000.0, division,
                                init_limit_ms / 60000.0));
      init_stopped = true;
    } else if (k == "run_start") {
      if (!init_stopped)
        err(e.line, "run_start before init_stop");
      run_started = true;
    } else if (k == "run_stop") {
      if (!run_started)
        err(e.line, "run_stop before run_start");
      if (!e.has_meta("status"))
        err(e.line, "run_stop has no status in its metadata");
    } else if (k == "block_start") {
      if (!run_started)
        err(e.line, "block_start before run_start");
      if (!e.has_meta("epoch_count") && !e.has_meta("samples_count"))
        err(e.line, "block_start has neither epoch_count nor samples_count in its metadata");
      if (e.has_meta("epoch_count") && !e.has_meta("first_epoch_num"))
        err(e.line, "block_start has epoch_count but no first_epoch_num");
      if (e.has_meta("epoch_count") && !(e.meta_number("epoch_count") > 0))
        err(e.line, "block_start epoch_count is not > 0");
      if (e.has_meta("samples_count") && !(e.meta_number("samples_count", -1) >= 0))
        err(e.line, "block_start samples_count is not >= 0");
    } else if (k == "block_stop") {
      if (!e.has_meta("first_epoch_num") && !e.has_meta("samples_count"))
        err(e.line, "block_stop has neither first_epoch_num nor samples_count in its metadata");
    } else if (k == "epoch_start" || k == "epoch_stop" || k == "eval_start" || k == "eval_stop" ||
               k == "eval_accuracy") {
      if (!e.has_meta("epoch_num") && !e.has_meta("samples_count"))
        err(e.line, fmt::format("{} has neither epoch_num nor samples_count in its metadata", k));
    }
  }
  one_of("block_start", "epoch_start");
  one_of("block_stop", "epoch_stop");
  one_of("eval_start", "block_start");
  one_of("eval_stop", "block_stop");
  at_least_one("eval_accuracy");
  non_empty(exactly_one("train_samples"));
  non_empty(exactly_one("eval_samples"));

  if (stop)
    out.stop_status = stop->meta_string("status");
  if (stop && stop->has_meta("status") && out.stop_status != "success")
    err(stop->line, fmt::format("run did not converge: run_stop status is '{}'", out.stop_status));

  // --- closed division: hyperparameter rules and the quality target ---
  if (closed) {
    std::vector<const hparam_rule*> rules;
    for (const auto& r : table.closed_common())
      rules.push_back(&r);
    if (info)
      for (const auto& r : info->closed_rules)
        rules.push_back(&r);
    for (const hparam_rule* r : rules) {
      if (!rule_applies(*r, round, log))
        continue;
      if (r->req == "EXACTLY_ONE")
        exactly_one(r->key);
      else if (r->req == "AT_LEAST_ONE")
        at_least_one(r->key);
      if (r->check.is_null())
        continue;
      if (const event* e = log.first(r->key)) {
        const std::string want = eval_check(r->check, e->value, log);
        if (!want.empty())
          err(e->line, fmt::format("closed-division rule: {} = {} must be {}", r->key,
                                   short_value(e->value), want));
      }
    }
  }
  if (info) {
    out.quality = evaluate_quality(info->quality, log);
    if (closed) {
      for (const event* e : log.all("eval_accuracy"))
        if (!e->has_meta(info->quality.eval_metadata))
          err(e->line,
              fmt::format("eval_accuracy has no {} in its metadata", info->quality.eval_metadata));
      if (out.quality.eval_points < info->quality.min_eval_points)
        err(0, fmt::format("{} evaluation point(s) logged, {} required", out.quality.eval_points,
                           info->quality.min_eval_points));
      if (!out.quality.reached)
        err(0, fmt::format("quality target not reached: no eval_accuracy meets {} {}",
                           info->quality.metric, info->quality.to_json().dump()));
    }
  } else {
    out.quality = evaluate_quality(quality_spec{}, log);
  }
  out.converged =
      stop != nullptr && out.stop_status == "success" && (!info || !closed || out.quality.reached);
  return out;
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

// Folders (dirs) or everything else (files, and links that lead nowhere, so that a broken entry
// is reported when read rather than skipped) in `dir`, sorted. Never throws.
std::vector<fs::path> sorted_entries(const fs::path& dir, bool dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code tec;
    if (it->is_directory(tec) == dirs)
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

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

check_result check_package(const fs::path& org_dir, const check_options& opt) {
  const benchmark_table& table = opt.table ? *opt.table : benchmark_table::builtin();
  check_result r;
  r.round = normalize_round(opt.round.empty() ? round_from_path(org_dir) : opt.round);
  auto reason = [&](std::string s) { r.reasons.push_back(std::move(s)); };
  auto finish = [&]() {
    r.valid = r.reasons.empty();
    return r;
  };
  if (!is_dir(org_dir)) {
    reason(fmt::format("'{}' is not a directory", org_dir.string()));
    return finish();
  }
  const fs::path systems_dir = org_dir / "systems", results_dir = org_dir / "results";
  if (!is_dir(systems_dir))
    reason(fmt::format("{}: missing systems/ folder", org_dir.string()));
  if (!is_dir(results_dir))
    reason(fmt::format("{}: missing results/ folder", org_dir.string()));
  if (!is_dir(org_dir / "benchmarks"))
    r.warnings.push_back(
        fmt::format("{}: no benchmarks/ folder (implementation code)", org_dir.string()));
  if (!r.reasons.empty())
    return finish();

  // System descriptions (system_desc_checker checks every systems/*.json).
  std::map<std::string, json> systems;
  // Folders named *.json too: they are refused when read.
  std::vector<fs::path> system_files = sorted_entries(systems_dir, false);
  for (const auto& d : sorted_entries(systems_dir, true))
    system_files.push_back(d);
  for (const auto& p : system_files) {
    if (p.extension() != ".json")
      continue;
    // A file that cannot be read or parsed (too large, a folder, nested too deep, not JSON) is a
    // reason for an INVALID verdict, like every other defect of the package: exit 1, not 2.
    json desc;
    try {
      std::vector<diagnostic> repaired;
      desc = parse_json_input(
          repair_text_lines(read_text_file(p, "system description"), p.string(), repaired),
          "system description");
      for (const auto& d : repaired)
        r.warnings.push_back(d.to_string());
    } catch (const input_error& e) {
      reason(fmt::format("{}: {}", p.string(), e.what()));
      continue;
    }
    std::vector<std::string> desc_warnings;
    for (const auto& problem : check_system_description(desc, r.round, table, &desc_warnings))
      reason(fmt::format("{}: {}", p.string(), problem));
    for (const auto& w : desc_warnings)
      r.warnings.push_back(fmt::format("{}: {}", p.string(), w));
    systems[p.stem().string()] = desc;
    ++r.systems;
  }

  const auto system_dirs = sorted_entries(results_dir, true);
  if (system_dirs.empty())
    reason(fmt::format("{}: no system folders", results_dir.string()));
  for (const auto& sys_dir : system_dirs) {
    const std::string system = sys_dir.filename().string();
    std::string division = "closed";
    auto it = systems.find(system);
    if (it == systems.end()) {
      reason(fmt::format("{}: no system description systems/{}.json", sys_dir.string(), system));
    } else if (it->second.is_object() && it->second.contains("division") &&
               it->second["division"].is_string()) {
      division = it->second["division"];
    }
    for (const auto& bench_dir : sorted_entries(sys_dir, true)) {
      const std::string bench = bench_dir.filename().string();
      const benchmark_info* info = table.find(bench);
      if (!info) {
        // package_checker.py skips benchmarks it does not know, with a warning.
        r.warnings.push_back(
            fmt::format("{}: unknown benchmark '{}', skipped", bench_dir.string(), bench));
        continue;
      }
      if (!r.round.empty()) {
        const auto* list = table.round_benchmarks(r.round);
        if (list && std::find(list->begin(), list->end(), bench) == list->end()) {
          r.warnings.push_back(fmt::format("{}: '{}' is not a benchmark of round {}, skipped",
                                           bench_dir.string(), bench, r.round));
          continue;
        }
      }
      std::vector<fs::path> results;
      for (const auto& f : sorted_entries(bench_dir, false)) {
        const std::string name = f.filename().string();
        if (is_result_file(name))
          results.push_back(f);
        else if (name != "scaling.json" && name != "package_checker_params")
          r.warnings.push_back(fmt::format(
              "{}: unexpected file (result files are named result_<i>.txt)", f.string()));
      }
      // A folder named like a result is counted and then refused when read.
      for (const auto& d : sorted_entries(bench_dir, true))
        if (is_result_file(d.filename().string()))
          results.push_back(d);
      std::sort(results.begin(), results.end());
      r.result_files += results.size();
      // benchmark_meta.py: the number of result files must be exact.
      if (static_cast<int>(results.size()) != info->required_runs)
        reason(fmt::format("{}: {} result files, {} requires exactly {}", bench_dir.string(),
                           results.size(), info->name, info->required_runs));

      // Per-file compliance; olympic scoring tolerates max_dropped non-compliant files.
      std::vector<std::vector<std::string>> bad;
      std::map<std::tuple<std::string, std::string, long long>, std::string> seen_seeds;
      for (const auto& f : results) {
        std::string text;
        try {
          text = read_text_file(f, "MLPerf log");
        } catch (const input_error& e) {
          // Not a log at all (a folder, unreadable, too large): a defect of the package, never
          // the run olympic scoring drops.
          reason(fmt::format("{}: {}", f.string(), e.what()));
          continue;
        }
        // Invalid UTF-8 (latin-1 from framework output) is replaced and warned about: the lines
        // still count, as they do when the folder is imported.
        std::vector<diagnostic> repaired;
        text = repair_text_lines(text, f.string(), repaired);
        for (const auto& d : repaired)
          r.warnings.push_back(d.to_string());
        parsed_log log = parse_mllog(text, f.string());
        log_check lc = check_log(log, bench, division, r.round, table);
        for (const auto& w : lc.warnings)
          r.warnings.push_back(w.to_string());
        if (!lc.compliant()) {
          std::vector<std::string> msgs;
          for (const auto& e : lc.errors)
            msgs.push_back(e.to_string());
          bad.push_back(std::move(msgs));
        }
        // Seed checker (closed division, training_rules.adoc "Random numbers"): every run logs
        // a seed convertible by int(); no two runs log the same seed at the same file:line.
        if (division != "closed")
          continue;
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
          auto [pos, inserted] = seen_seeds.emplace(key, f.filename().string());
          if (!inserted)
            reason(fmt::format("{}:{}: seed {} logged at {}:{} was already logged there by {}",
                               f.string(), e->line, *s, std::get<0>(key), std::get<1>(key),
                               pos->second));
        }
      }
      const size_t allowed = static_cast<size_t>(info->max_dropped);
      if (bad.size() > allowed) {
        reason(fmt::format("{}: {} of {} result files do not comply (at most {} tolerated under "
                           "olympic scoring)",
                           bench_dir.string(), bad.size(), results.size(), allowed));
        for (const auto& msgs : bad)
          for (const auto& m : msgs)
            reason(m);
      } else {
        for (const auto& msgs : bad) {
          r.warnings.push_back(fmt::format("{}: 1 result file does not comply, accepted under "
                                           "olympic scoring as the dropped run",
                                           bench_dir.string()));
          for (const auto& m : msgs)
            r.warnings.push_back(m);
        }
      }
    }
  }
  return finish();
}

} // namespace accelbench::mlperf
