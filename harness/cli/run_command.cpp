// accelbench run: plan every config first (bad input stops here, before anything runs or is
// stored), then execute each config and store it in its own transaction.
#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "harness/cli/command.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/options.hpp"
#include "harness/cli/table.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/checked_math.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/progress.hpp"
#include "harness/core/ranks.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "harness/dist/dist.hpp"

namespace accelbench::cli {

namespace fs = std::filesystem;

std::pair<std::string, std::string> split_assignment(const std::string& arg,
                                                     const std::string& option) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw usage_error(fmt::format("{} expects KEY=VALUE, got '{}'", option, arg));
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

void require_text(const std::string& value, const std::string& option, bool allow_empty) {
  if (!allow_empty && value.empty())
    throw usage_error(fmt::format("{} must not be empty", option));
  if (!valid_utf8(value))
    throw usage_error(fmt::format("{} '{}' is not valid UTF-8 (invalid bytes shown as U+FFFD)",
                                  option, printable(value)));
}

std::string resolve_db_path(const std::string& db) {
  if (!db.empty())
    return db;
  return store::store::default_path().string();
}

std::string format_value(double v) {
  if (v == 0)
    return "0";
  double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-3)
    return fmt::format("{:.3e}", v);
  if (a >= 100)
    return fmt::format("{:.1f}", v);
  if (a >= 1)
    return fmt::format("{:.3f}", v);
  return fmt::format("{:.4f}", v);
}

std::string short_config(const config& c) {
  std::string s;
  for (const auto& [k, v] : c.values) {
    if (!s.empty())
      s += ' ';
    s += k;
    s += '=';
    s += v;
  }
  return s;
}

std::vector<std::string> run_notes(const run& r) {
  std::vector<std::string> notes = run_warnings(r);
  const size_t n = r.samples.size();
  // The thresholds of harness/compare: fewer than 5 a side is inconclusive, fewer than 9 flagged.
  if (n > 0 && n < 5)
    notes.push_back(
        fmt::format("only {} sample(s): compare needs at least 5 a side to call a change", n));
  else if (n > 0 && n < 9)
    notes.push_back(fmt::format(
        "{} samples: a comparison with it has little power (9 or more recommended)", n));
  return notes;
}

const metric* headline_metric(const registry& reg, const run& r) {
  if (const workload* w = reg.find(r.cfg.workload))
    if (const metric* m = r.find_metric(w->spec().primary_metric))
      return m;
  if (const metric* m = r.find_metric("time_to_train_min"))
    return m;
  if (const metric* m = r.find_metric("tflops"))
    return m;
  if (const metric* m = r.find_metric("tokens_per_s"))
    return m;
  return r.metrics.empty() ? nullptr : &r.metrics.front();
}

namespace {

// Numbers keep their written form: 2^64-1 converted to int64_t first would wrap to -1.
std::string value_text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "1" : "0";
  return dump_json(v);
}

// A shape catalogue: workloads/<w>/catalogues/<name>.json (or a file path).
json load_catalogue(const std::string& workload, const std::string& name) {
  fs::path file;
  if (name.find('/') != std::string::npos || name.ends_with(".json")) {
    file = name;
  } else {
    std::error_code ec;
    std::vector<std::string> known;
    for (const auto& w : fs::directory_iterator(data_root() / "workloads", ec)) {
      fs::path dir = w.path() / "catalogues";
      if (!fs::is_directory(dir, ec))
        continue;
      for (const auto& f : fs::directory_iterator(dir, ec)) {
        if (f.path().extension() != ".json")
          continue;
        json d = read_json_file(f.path(), "catalogue");
        if (d.value("workload", "") != workload)
          continue;
        known.push_back(f.path().stem().string());
        if (f.path().stem() == name)
          file = f.path();
      }
    }
    if (file.empty()) {
      std::sort(known.begin(), known.end());
      throw input_error(
          fmt::format("unknown catalogue '{}' for workload {} (known: {})", name, workload,
                      known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
  }
  json doc = read_json_file(file, "catalogue");
  static const json_schema schema = load_builtin_schema("catalogue.schema.json");
  schema.require_valid(doc, fmt::format("catalogue {}", file.string()));
  if (doc["workload"] != workload)
    throw input_error(fmt::format("catalogue '{}' is for workload {}, not {}", name,
                                  doc["workload"].get<std::string>(), workload));
  return doc;
}

// More configs than this need --force: a typo in a sweep should not start a week of runs.
constexpr uint64_t k_configs_without_force = 10'000;
// The plan holds every config (with its ruleset and settings) before the first one runs: about
// 7 KiB each, measured. Past a million, or past half the memory available, it cannot be planned,
// --force or not.
constexpr uint64_t k_max_configs = 1'000'000;
constexpr uint64_t k_plan_bytes_per_config = 8 << 10;

// Counts configs with saturating arithmetic: sixteen sweeps of 16 values are 2^64 configs, which
// wrapped to 0 would pass every limit and then exhaust memory.
void check_config_count(size_t base,
                        const std::vector<std::pair<std::string, std::vector<std::string>>>& sweeps,
                        bool force) {
  uint64_t total = base;
  for (const auto& [k, vs] : sweeps)
    total = sat_mul(total, vs.size());
  const std::string count = total == k_saturated ? "more than 2^64" : fmt::format("{}", total);
  if (total > k_max_configs)
    throw input_error(
        fmt::format("the sweep expands to {} configs, more than the 1,000,000 a plan can hold "
                    "(even with --force); split it into several runs",
                    count));
  const uint64_t avail = read_memory_info().available_bytes;
  if (total > k_configs_without_force && avail > 0 && total * k_plan_bytes_per_config > avail / 2)
    throw input_error(fmt::format(
        "the sweep expands to {} configs, whose plan needs about {:.1f} GiB, more than half "
        "the {:.1f} GiB of memory available (even with --force); split it into several runs",
        count, double(total * k_plan_bytes_per_config) / (1 << 30), double(avail) / (1 << 30)));
  if (total > k_configs_without_force && !force)
    throw input_error(fmt::format(
        "the sweep expands to {} configs, more than 10,000; pass --force to run it", count));
}

// --set of a catalogue parameter (tokens=2048) must have the parameter's type: the value is
// substituted into the configs, where a bad one would be blamed on the axis it lands in (M).
void check_catalogue_parameter(const std::string& catalogue, const std::string& name,
                               const json& declared, const std::string& value) {
  const char* want = nullptr;
  if (declared.is_number_integer() || declared.is_number_unsigned()) {
    int64_t i = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), i);
    if (ec != std::errc() || end != value.data() + value.size())
      want = "an integer";
    // Catalogue parameters are sizes (tokens, batch): a zero one would be blamed on M.
    else if (i <= 0 && declared.get<double>() > 0)
      want = "a positive integer";
  } else if (declared.is_number()) {
    char* end = nullptr;
    double d = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(d))
      want = "a number";
  }
  if (want)
    throw input_error(fmt::format("--set {}={}: parameter {} of catalogue {} must be {}", name,
                                  printable(value), name, catalogue, want));
}

struct planned {
  const workload* w = nullptr;
  config cfg;
  ruleset rules;
  json user = json::object();
  std::string label;       // catalogue entry name
  std::string skip_reason; // non-empty: stored as skipped
};

// Expands one request (workload + sets + sweeps + catalogue) into configs.
std::vector<std::pair<std::string, std::map<std::string, std::string>>>
expand(const std::string& workload, const std::map<std::string, std::string>& sets,
       const std::vector<std::pair<std::string, std::vector<std::string>>>& sweeps,
       const std::string& shapes, bool force) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> base;
  if (!shapes.empty()) {
    json cat = load_catalogue(workload, shapes);
    std::map<std::string, std::string> params;
    const json cat_params = cat.value("parameters", json::object());
    for (const auto& [k, v] : cat_params.items())
      params[k] = value_text(v);
    std::map<std::string, std::string> axis_sets;
    for (const auto& [k, v] : sets) {
      if (params.count(k)) {
        check_catalogue_parameter(shapes, k, cat_params[k], v);
        params[k] = v; // --set tokens=2048 changes a catalogue parameter
      } else
        axis_sets[k] = v;
    }
    for (const auto& e : cat["configs"]) {
      std::map<std::string, std::string> vals;
      for (const auto& [k, v] : e["set"].items()) {
        std::string t = value_text(v);
        if (v.is_string() && params.count(t))
          t = params[t];
        vals[k] = t;
      }
      for (const auto& [k, v] : axis_sets)
        vals[k] = v;
      base.emplace_back(e.value("name", ""), vals);
    }
  } else {
    base.emplace_back("", sets);
  }
  check_config_count(base.size(), sweeps, force);
  auto out = base;
  for (const auto& [k, vs] : sweeps) {
    std::vector<std::pair<std::string, std::map<std::string, std::string>>> next;
    for (const auto& [label, vals] : out)
      for (const auto& v : vs) {
        auto copy = vals;
        copy[k] = v;
        next.emplace_back(label, copy);
      }
    out = std::move(next);
  }
  return out;
}

ruleset pick_rules(const workload& w, const std::string& rules_name,
                   const std::map<std::string, std::string>& overrides, json& user) {
  ruleset base = load_ruleset(rules_name);
  if (!base.applies(w.spec()))
    throw input_error(fmt::format("ruleset {} does not apply to workload {} (it applies to: {})",
                                  base.id, w.spec().name, fmt::join(base.applies_to, ", ")));
  return apply_overrides(base, overrides, user);
}

// A config recorded as skipped, with the reason (a suite or batch goes on without it).
planned skipped_plan(const workload* w, const std::string& wname, const std::string& backend,
                     const std::map<std::string, std::string>& sets, std::string why) {
  planned p;
  p.w = w;
  p.cfg.workload = wname;
  p.cfg.backend = backend;
  p.cfg.values = sets;
  p.skip_reason = std::move(why);
  return p;
}

// Why the workload cannot run on this backend in this build ("" when it can).
std::string backend_refusal(const workload& w, const std::string& wname,
                            const std::string& backend) {
  for (const auto& b : w.spec().backends)
    if (b == backend)
      return "";
  return backend == "cuda" ? fmt::format("backend cuda is unavailable for {}: this build has no "
                                         "CUDA backend for it (see accelbench env)",
                                         wname)
                           : fmt::format("unknown backend '{}' for workload {} (available: {})",
                                         backend, wname, fmt::join(w.spec().backends, ", "));
}

// Across ranks, a sample is timed by harness/measure (a barrier before it, the slowest rank's
// time) for kernel workloads; others run across ranks only when they coordinate their ranks
// themselves (train.llama's data parallelism). Returns why the workload cannot ("" when it can).
std::string ranks_refusal(const workload& w, const std::string& wname) {
  if (!dist::distributed() || w.spec().family == "kernel" || w.spec().across_ranks)
    return "";
  return fmt::format(
      "workload {} does not run across ranks yet (world size {}); run it as one process", wname,
      dist::size());
}

// Rules by name, resolved once each: the user's, else each config's default.
class rules_cache {
public:
  rules_cache(const workload& w, const std::string& rules_arg,
              const std::map<std::string, std::string>& overrides)
      : w_(w), rules_arg_(rules_arg), overrides_(overrides) {}

  const std::pair<ruleset, json>& for_config(const config& cfg) {
    std::string name = rules_arg_.empty() ? w_.default_ruleset(cfg) : rules_arg_;
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      json user;
      ruleset r = pick_rules(w_, name, overrides_, user);
      it = by_name_.emplace(name, std::make_pair(std::move(r), std::move(user))).first;
    }
    return it->second;
  }

private:
  const workload& w_;
  const std::string& rules_arg_;
  const std::map<std::string, std::string>& overrides_;
  std::map<std::string, std::pair<ruleset, json>> by_name_;
};

// Why this config cannot run here: the workload's own reason, or more host memory than is
// available ("" when it can).
std::string config_refusal(const workload& w, const config& cfg, uint64_t avail) {
  std::string why = w.unavailable_reason(cfg);
  uint64_t need = w.estimate_host_bytes(cfg);
  if (why.empty() && need == k_saturated)
    why = "needs more host memory than 64 bits can count (2^64 bytes or more)";
  if (why.empty() && avail > 0 && need > avail * 9 / 10)
    why = fmt::format("needs {:.2f} GiB of host memory, more than the {:.2f} GiB available",
                      need / 1073741824.0, avail / 1073741824.0);
  return why;
}

// One expanded config, resolved, validated and given its rules. A single run (not `many`) refuses
// before allocating; a catalogue, sweep or suite records the skip.
planned plan_config(const workload& w, const std::string& backend, const std::string& label,
                    const std::map<std::string, std::string>& vals, rules_cache& rules, bool many,
                    uint64_t avail) {
  planned p;
  p.w = &w;
  p.cfg = resolve_config(w.spec(), backend, vals); // bad values: exit 2 before anything runs
  w.validate(p.cfg);
  w.normalize(p.cfg);
  const auto& [r, user] = rules.for_config(p.cfg);
  p.rules = r;
  p.user = user;
  p.label = label;
  std::string why = config_refusal(w, p.cfg, avail);
  if (!why.empty()) {
    if (!many)
      throw input_error(fmt::format("{}: {}", p.cfg.key(), why));
    p.skip_reason = why;
  }
  return p;
}

void plan_request(const registry& reg, const std::string& wname, const std::string& backend,
                  const std::map<std::string, std::string>& sets,
                  const std::vector<std::pair<std::string, std::vector<std::string>>>& sweeps,
                  const std::string& shapes, const std::string& rules_arg,
                  const std::map<std::string, std::string>& overrides, bool force, bool batch,
                  std::vector<planned>& out) {
  const workload* w = reg.find(wname);
  if (!w) {
    // A suite may name a workload this build does not have (e.g. a CUDA-only one): skipped.
    if (batch) {
      out.push_back(skipped_plan(nullptr, wname, backend, sets,
                                 fmt::format("workload {} is not available in this build", wname)));
      return;
    }
    reg.get(wname); // throws the listing error
  }
  std::string why = backend_refusal(*w, wname, backend);
  if (why.empty())
    why = ranks_refusal(*w, wname);
  if (!why.empty()) {
    if (!batch)
      throw input_error(why);
    out.push_back(skipped_plan(w, wname, backend, sets, why));
    return;
  }
  rules_cache rules(*w, rules_arg, overrides);
  if (!rules_arg.empty())
    rules.for_config(config{}); // a bad --rules is an error even before configs resolve
  auto configs = expand(wname, sets, sweeps, shapes, force);
  bool many = batch || configs.size() > 1 || !shapes.empty();
  auto avail = read_memory_info().available_bytes;
  for (auto& [label, vals] : configs)
    out.push_back(plan_config(*w, backend, label, vals, rules, many, avail));
}

std::vector<std::pair<std::string, std::vector<std::string>>>
parse_sweeps(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& a : args) {
    require_text(a, "--sweep");
    auto [k, v] = split_assignment(a, "--sweep");
    std::vector<std::string> vals;
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty())
        throw usage_error(fmt::format("--sweep {} has an empty value in '{}'", k, v));
      vals.push_back(item);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    for (const auto& [seen, _] : out)
      if (seen == k)
        throw usage_error(fmt::format(
            "--sweep {} is given twice: give every value in one --sweep {}=V1,V2", k, k));
    out.emplace_back(k, vals);
  }
  return out;
}

std::map<std::string, std::string> parse_sets(const std::vector<std::string>& args,
                                              const std::string& opt) {
  std::map<std::string, std::string> out;
  for (const auto& a : args) {
    require_text(a, opt);
    auto [k, v] = split_assignment(a, opt);
    // The last of two values silently winning hides a typo in a long command line.
    if (auto it = out.find(k); it != out.end())
      throw usage_error(fmt::format("{} {} is given twice ('{}' and '{}')", opt, k, it->second, v));
    out[k] = v;
  }
  return out;
}

// A key both set and swept: which one the user meant cannot be guessed.
void refuse_set_and_sweep(
    const std::map<std::string, std::string>& sets,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& sweeps) {
  for (const auto& [k, _] : sweeps)
    if (sets.count(k))
      throw usage_error(fmt::format("{} is given by both --set and --sweep: give one", k));
}

fs::path find_suite(const std::string& name) {
  if (name.find('/') != std::string::npos || name.ends_with(".json"))
    return name;
  fs::path p = data_root() / "suites" / (name + ".json");
  if (fs::exists(p))
    return p;
  std::vector<std::string> known;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(data_root() / "suites", ec))
    if (f.path().extension() == ".json")
      known.push_back(f.path().stem().string());
  std::sort(known.begin(), known.end());
  throw input_error(fmt::format("unknown suite '{}' (known: {})", name, fmt::join(known, ", ")));
}

volatile std::sig_atomic_t g_interrupted = 0;

// The first Ctrl-C asks for a clean stop: the current run finishes and is stored, the rest are
// not started. A second one exits at once (a run can take minutes): the database keeps every run
// stored so far, since each is its own transaction. Only async-signal-safe calls here.
void on_interrupt(int) {
  if (g_interrupted) {
    static const char again[] = "\naccelbench: interrupted again; exiting now\n";
    (void)!::write(STDERR_FILENO, again, sizeof again - 1);
    ::_exit(130);
  }
  g_interrupted = 1;
  static const char first[] =
      "\naccelbench: interrupted; stopping after the current run (Ctrl-C again to exit now)\n";
  (void)!::write(STDERR_FILENO, first, sizeof first - 1);
}

} // namespace

namespace {

// Every config of the request, resolved and checked (bad input throws, before anything runs).
// What a suite says of the job as a whole: its name (the runs' suite: tag) and its rounds.
struct suite_facts {
  std::string name;
  int64_t rounds = 0; // 0: the suite does not say
};

std::vector<planned> make_plan(const registry& reg, const run_options& o, suite_facts& suite_out) {
  std::vector<planned> plan;
  // Stored with every run: text that is not UTF-8 would make every JSON output of the database
  // fail.
  require_text(o.system, "--system");
  for (const auto& t : o.tags)
    require_text(t, "--tag", false);
  auto overrides = parse_sets(o.rule_overrides, "--rule");
  if (!o.suite.empty()) {
    if (!o.workload.empty())
      throw usage_error(
          fmt::format("give either a workload ('{}') or --suite, not both", o.workload));
    fs::path file = find_suite(o.suite);
    json suite = read_json_file(file, "suite");
    static const json_schema schema = load_builtin_schema("suite.schema.json");
    schema.require_valid(suite, fmt::format("suite {}", file.string()));
    suite_out.name = suite["name"];
    suite_out.rounds = suite.value("rounds", int64_t{0});
    // A suite fixes its own configs: a --set, --sweep or --shapes would be silently ignored.
    if (!o.sets.empty() || !o.sweeps.empty() || !o.shapes.empty())
      throw usage_error(fmt::format(
          "--suite {} fixes its configs: --set, --sweep and --shapes apply to a WORKLOAD only",
          o.suite));
    for (const auto& e : suite["entries"]) {
      std::map<std::string, std::string> sets;
      const json entry_sets = e.value("set", json::object());
      for (const auto& [k, v] : entry_sets.items())
        sets[k] = value_text(v);
      std::vector<std::pair<std::string, std::vector<std::string>>> sweeps;
      const json entry_sweeps = e.value("sweep", json::object());
      for (const auto& [k, v] : entry_sweeps.items()) {
        std::vector<std::string> vals;
        for (const auto& x : v)
          vals.push_back(value_text(x));
        sweeps.emplace_back(k, vals);
      }
      std::string rules = !o.rules.empty() ? o.rules : e.value("rules", suite.value("rules", ""));
      std::string backend = e.value("backend", o.backend);
      plan_request(reg, e["workload"], backend, sets, sweeps, e.value("shapes", ""), rules,
                   overrides, o.force, true, plan);
    }
  } else {
    if (o.workload.empty())
      throw usage_error("run needs a WORKLOAD or --suite NAME (see accelbench list)");
    const auto sets = parse_sets(o.sets, "--set");
    const auto sweeps = parse_sweeps(o.sweeps);
    refuse_set_and_sweep(sets, sweeps);
    plan_request(reg, o.workload, o.backend, sets, sweeps, o.shapes, o.rules, overrides, o.force,
                 false, plan);
  }
  return plan;
}

// What every rank must agree on before anything runs: the build, the options that reach the
// stored runs, and every planned config with its rules.
json plan_settings(const std::vector<planned>& plan, const run_options& o) {
  json runs = json::array();
  for (const auto& p : plan)
    runs.push_back({{"workload", p.cfg.workload},
                    {"backend", p.cfg.backend},
                    {"values", p.cfg.values},
                    {"ruleset", p.rules.doc},
                    {"rule_overrides", p.user},
                    {"catalogue_entry", p.label},
                    {"skipped", p.skip_reason}});
  return {{"build",
           {{"version", build_info::version()},
            {"git_revision", build_info::git_revision()},
            {"git_dirty", build_info::git_dirty()},
            {"compiler", build_info::compiler()},
            {"compiler_flags", build_info::compiler_flags()},
            {"cuda_built", build_info::cuda_built()},
            {"mpi_built", dist::mpi_built()}}},
          {"system", o.system},
          {"tags", o.tags},
          {"seed", o.seed},
          {"runs", runs}};
}

// An error every rank agreed on: each rank exits with its code.
class agreed_error : public error {
public:
  agreed_error(const std::string& what, int code) : error(what), m_code(code) {}
  int exit_code() const override { return m_code; }

private:
  int m_code;
};

// The plan on every rank: each rank plans; a rank whose planning failed tells all (the
// lowest such rank's message); then rank 0's settings are compared with each rank's and the first
// difference found (lowest rank first) is an input error on every rank, naming the setting.
std::vector<planned> agree_on_plan(const registry& reg, const run_options& o, suite_facts& suite) {
  if (!dist::distributed())
    return make_plan(reg, o, suite);
  std::vector<planned> plan;
  std::string failure;
  try {
    plan = make_plan(reg, o, suite);
  } catch (const error& e) {
    failure = fmt::format("{}|rank {}: {}", e.exit_code(), dist::rank(), e.what());
  }
  if (std::string f = dist::first_nonempty(failure); !f.empty()) {
    const auto bar = f.find('|');
    throw agreed_error(f.substr(bar + 1), std::stoi(f.substr(0, bar)));
  }
  const json mine = plan_settings(plan, o);
  const std::string text = dump_json(mine);
  const std::string root_hash = dist::broadcast(fmt::format("{:016x}", fnv1a64(text)));
  std::string diff;
  const bool differs = root_hash != fmt::format("{:016x}", fnv1a64(text));
  if (dist::any(differs)) {
    const json root = json::parse(dist::broadcast(text));
    if (differs)
      diff = first_difference(root, mine, dist::rank());
  }
  if (std::string d = dist::first_nonempty(diff); !d.empty())
    throw agreed_error(
        fmt::format(
            "the ranks disagree on the config (each rank must be given the same command and "
            "build): {}",
            d),
        exit_usage);
  return plan;
}

// A failure or INVALID reason of another rank, told to rank 0 (which stores the run).
void agree_on_outcome(run& r) {
  if (!dist::distributed())
    return;
  const std::string failed = dist::first_nonempty(
      r.status == run_status::failed ? fmt::format("rank {}: {}", dist::rank(), r.status_reason)
                                     : "");
  if (!failed.empty() && r.status != run_status::failed)
    r.mark_failed(failed);
  std::string invalid;
  if (!r.valid)
    invalid = fmt::format("rank {}: {}", dist::rank(), fmt::join(r.invalid_reasons, "; "));
  const std::string first_invalid = dist::first_nonempty(invalid);
  if (!first_invalid.empty() && r.valid)
    r.mark_invalid(first_invalid);
  if (json ranks = summarize_rank_times(r.samples); !ranks.is_null())
    r.extra["ranks"] = ranks;
}

// Runs one planned config into r: a failure inside the workload is data (the run is failed), not
// a crash of the whole command; the machine's conditions around it are judged.
void execute_one(const planned& p, run& r, bool interactive, uint64_t seed) {
  run_context ctx;
  ctx.rules = &p.rules;
  ctx.log = &std::cerr;
  ctx.interactive = interactive;
  ctx.seed = seed;
  const machine_state before = read_machine_state();
  try {
    const_cast<workload*>(p.w)->execute(p.cfg, r, ctx);
  } catch (const error& e) {
    r.mark_failed(e.what());
  } catch (const std::bad_alloc&) {
    r.mark_failed("out of memory");
  }
  judge_conditions(r, conditions_of(p.rules), before, read_machine_state());
}

// The run's row of the result table: its headline metric (with the CI of TFLOP/s) or the reason.
std::vector<std::string> result_row(const registry& reg, const run& r) {
  const metric* m = headline_metric(reg, r);
  std::string ci;
  if (r.status == run_status::ok && m && m->name == "tflops") {
    auto lo = r.find_metric("tflops_ci_low"), hi = r.find_metric("tflops_ci_high");
    if (lo && hi)
      ci = fmt::format("[{}, {}]", format_quantity(lo->value, lo->unit),
                       format_quantity(hi->value, hi->unit));
  }
  return {std::to_string(r.id),
          r.cfg.workload,
          short_config(r.cfg),
          to_string(r.status),
          r.status == run_status::skipped ? "-" : (r.valid ? "VALID" : "INVALID"),
          m ? format_quantity(m->value, m->unit)
            : (r.status_reason.empty() ? "" : clip(r.status_reason, 60)),
          ci};
}

// Why a run is INVALID or skipped, and its warnings, as messages beside the progress line.
void tell_about(const run& r, progress& bar) {
  for (const auto& why : r.valid ? std::vector<std::string>{} : r.invalid_reasons)
    bar.message(fmt::format("accelbench: run {} INVALID: {}", r.id, printable(why)));
  if (r.status == run_status::skipped)
    bar.message(fmt::format("accelbench: run {} skipped: {}", r.id, printable(r.status_reason)));
  for (const auto& w : run_warnings(r))
    bar.message(fmt::format("accelbench: run {} warning: {}", r.id, printable(w)));
}

// What was stored: the runs as JSON (--json), else the result table and where they went.
void print_results(bool as_json, const std::vector<run>& done, const table& t,
                   const std::string& db_path) {
  if (as_json) {
    json arr = json::array();
    for (const auto& r : done)
      arr.push_back(to_json(r));
    std::cout << dump_json(json{{"database", db_path}, {"runs", arr}}, 2) << "\n";
    return;
  }
  t.print(std::cout);
  std::cout << fmt::format("{} run(s) stored in {}\n", done.size(), printable(db_path));
}

// What every run of a job shares: where it ran and how it is labelled. clang-tidy 14 reads its
// implicit moves as throwing (a json member): they are noexcept.
struct job_context { // NOLINT(bugprone-exception-escape)
  json env;
  std::string fingerprint, system;
  std::vector<std::string> tags;
  int64_t rounds = 1;
  std::string id; // one uuid for the job: its rounds are one point of a history
};

job_context describe_job(const run_options& o, const suite_facts& suite,
                         const std::vector<planned>& plan) {
  job_context j;
  j.env = capture_environment();
  if (json topo = dist::topology(); !topo.is_null())
    j.env["distributed"] = topo; // collective
  j.fingerprint = environment_fingerprint(j.env);
  j.id = new_uuid();
  j.system = o.system.empty() ? j.env.value("hostname", "localhost") : o.system;
  j.tags = o.tags;
  if (!suite.name.empty())
    j.tags.push_back("suite:" + suite.name);
  // --rounds, else the suite's rounds, else the largest measurement.rounds of the job's rules.
  j.rounds = o.rounds > 0 ? o.rounds : suite.rounds;
  if (j.rounds <= 0) {
    j.rounds = 1;
    for (const auto& p : plan)
      j.rounds = std::max(j.rounds, p.rules.measurement().rounds);
  }
  return j;
}

// One config of one round, measured (or recorded as skipped) into a run record.
run measure_planned(const planned& p, const job_context& j, int64_t round, bool interactive,
                    uint64_t seed) {
  run r;
  r.uuid = new_uuid();
  r.cfg = p.cfg;
  r.system = j.system;
  r.ruleset = p.rules.id.empty() ? "none" : p.rules.id;
  r.user_settings = p.user;
  r.effective_settings = {{"ruleset", p.rules.doc}};
  r.environment = j.env;
  r.fingerprint = j.fingerprint;
  r.tags = j.tags;
  if (!p.label.empty())
    r.extra["catalogue_entry"] = p.label;
  r.extra["job_id"] = j.id; // selectors name a job by it (job=latest, job=previous)
  if (j.rounds > 1) {
    r.extra["job_round"] = round + 1;
    r.extra["job_rounds"] = j.rounds;
  }
  r.started_at = now_iso8601();
  if (!p.skip_reason.empty())
    r.mark_skipped(p.skip_reason);
  else
    execute_one(p, r, interactive, seed);
  agree_on_outcome(r);
  r.finished_at = now_iso8601();
  return r;
}

// The job's order: round by round, every config in each (asv's interleaved rounds), so that a
// drift of the machine over the job lands in the spread between a config's runs instead of
// between two configs. A skipped config is recorded once.
std::vector<std::pair<int64_t, size_t>> job_order(const std::vector<planned>& plan,
                                                  int64_t rounds) {
  std::vector<std::pair<int64_t, size_t>> order;
  for (int64_t round = 0; round < rounds; ++round)
    for (size_t i = 0; i < plan.size(); ++i)
      if (round == 0 || plan[i].skip_reason.empty())
        order.emplace_back(round, i);
  return order;
}

int execute_plan(const registry& reg, const run_options& o, std::vector<planned>& plan,
                 const suite_facts& suite) {
  // Only rank 0 prints and stores; the other ranks run the same configs in step.
  const bool root = dist::is_root();
  const bool quiet = o.quiet || !root;
  // Open (and migrate) the database before running anything: an unwritable or corrupt file is
  // reported now, not after an hour of benchmarks.
  std::optional<store::store> db;
  if (root)
    db.emplace(store::store::open(resolve_db_path(o.db), store::access::read_write));
  const job_context job = describe_job(o, suite, plan);
  // A rank killed mid-run makes the launcher end the others: they exit 1, nothing half-stored.
  dist::exit_1_on_launcher_termination();
  const bool tty = isatty(STDERR_FILENO);
  struct sigaction on_int {
  }, prev{};
  on_int.sa_handler = on_interrupt;
  sigemptyset(&on_int.sa_mask);
  sigaction(SIGINT, &on_int, &prev);
  table t({"id", "workload", "config", "status", "validity", "result", "ci95"});
  std::vector<run> done;
  int worst = exit_ok;
  const auto order = job_order(plan, job.rounds);
  progress bar(order.size(), progress::for_stderr(quiet));
  for (size_t k = 0; k < order.size(); ++k) {
    if (dist::any(g_interrupted != 0)) {
      g_interrupted = 1;
      if (root)
        bar.message(fmt::format("accelbench: interrupted; {} of {} runs stored", k, order.size()));
      break;
    }
    const auto [round, i] = order[k];
    const planned& p = plan[i];
    bar.step(
        k, printable(fmt::format(
               "{}{} {}", job.rounds > 1 ? fmt::format("round {}/{} ", round + 1, job.rounds) : "",
               p.cfg.workload, short_config(p.cfg))));
    run r = measure_planned(p, job, round, tty && !quiet, o.seed);
    if (!root)
      continue;
    db->insert_run(r);
    if (r.status == run_status::failed || !r.valid)
      worst = exit_failed;
    t.add(result_row(reg, r));
    if (!quiet)
      tell_about(r, bar);
    done.push_back(std::move(r));
  }
  sigaction(SIGINT, &prev, nullptr);
  if (!root)
    return dist::broadcast(0); // rank 0's exit code
  bar.finish();
  print_results(o.json, done, t, db->path().string());
  return dist::broadcast(g_interrupted ? 130 : worst);
}

} // namespace

int cmd_run(const registry& reg, const run_options& o) {
  suite_facts suite;
  std::vector<planned> plan = agree_on_plan(reg, o, suite);
  if (o.plan_only)
    return exit_ok;
  try {
    return execute_plan(reg, o, plan, suite);
  } catch (const error& e) {
    if (!dist::distributed())
      throw;
    // The other ranks may be waiting in a collective for this one: end the whole job.
    std::cerr << "accelbench: rank " << dist::rank() << ": error: " << printable(e.what()) << "\n";
    dist::abort_job(e.exit_code());
  }
}

command_hook add_run(CLI::App& app, context& ctx) {
  auto o = std::make_shared<run_options>();
  auto* run = app.add_subcommand("run", "Run a workload (or a suite) and store every run");
  run->add_option("workload", o->workload, "Workload name (see accelbench list)");
  run->add_option("--backend", o->backend, "Backend: cpu (default) or cuda");
  run->add_option("--set", o->sets, "Parameter value KEY=VALUE (repeatable)")
      ->take_all()
      ->check(text_value(false));
  run->add_option("--sweep", o->sweeps, "Cartesian sweep KEY=V1,V2,... (repeatable)")
      ->check(text_value(false));
  run->add_option("--shapes", o->shapes,
                  "Run a shape catalogue (e.g. llama3-70b; see accelbench list catalogues)");
  run->add_option("--rules", o->rules, "Ruleset id or file (default: the workload's)");
  run->add_option("--rule", o->rule_overrides,
                  "Override a ruleset setting KEY=VALUE (e.g. repetitions=5)")
      ->check(text_value(false));
  run->add_option("--system", o->system, "System name stored with the runs (default: hostname)")
      ->check(text_value(false));
  run->add_option("--tag", o->tags, "Tag the runs (repeatable)")->check(text_value(false));
  run->add_option("--suite", o->suite, "Run a suite by name (quick, nightly) or file");
  add_db_option(run, o->db);
  run->add_option("--rounds", o->rounds,
                  "Runs of each config, interleaved round by round (default: the rules' "
                  "measurement.rounds); comparisons then measure the noise between runs")
      ->check(CLI::Range(1, 100));
  run->add_option("--seed", o->seed, "Seed for workloads that draw one (0: a fresh random seed)")
      ->check(unsigned_64());
  run->add_flag("--force", o->force, "Allow sweeps over 10,000 configs");
  run->add_flag("--quiet", o->quiet, "No progress on stderr");
  add_json_flag(run, o->json);
  const registry* reg = &ctx.reg;
  return {run, [o, reg] { return cmd_run(*reg, *o); }};
}

} // namespace accelbench::cli
