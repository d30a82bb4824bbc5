// The runner's planning: every config of a request resolved, checked and given its rules before
// anything runs (bad input stops here), and agreed on by every rank.
#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "harness/app/runner/runner.hpp"
#include "harness/core/assignment.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/checked_math.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/json_schema.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/ranks.hpp"
#include "harness/core/text_input.hpp"
#include "harness/dist/dist.hpp"

namespace accelbench::runner {

namespace fs = std::filesystem;

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

// Why the workload cannot run on this backend in this build ("" when it can): a backend whose
// folder the build did not build says why (its unbuilt_backend), any other name is unknown.
std::string backend_refusal(const workload& w, const std::string& wname,
                            const std::string& backend) {
  for (const auto& b : w.spec().backends)
    if (b == backend)
      return "";
  for (const auto& u : w.backends_not_built())
    if (u.name == backend)
      return fmt::format("backend {} is unavailable for {}: {} (see accelbench env)", backend,
                         wname, u.why());
  return fmt::format("unknown backend '{}' for workload {} (available: {})", backend, wname,
                     fmt::join(w.spec().backends, ", "));
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

// One workload's part of a request, parsed: the command line's, or one entry of a suite's.
struct workload_request {
  std::string workload;
  std::string backend;
  std::map<std::string, std::string> sets;
  std::vector<std::pair<std::string, std::vector<std::string>>> sweeps;
  std::string shapes;
  std::string rules;
  std::map<std::string, std::string> rule_overrides;
  bool force = false;
  bool batch = false; // a suite's entry: a refusal is a skipped run, not an error
};

void plan_request(const registry& reg, const workload_request& r, std::vector<planned>& out) {
  const std::string& wname = r.workload;
  const std::string& backend = r.backend;
  const bool batch = r.batch;
  const workload* w = reg.find(wname);
  if (!w) {
    // A suite may name a workload this build does not have (e.g. a CUDA-only one): skipped.
    if (batch) {
      out.push_back(skipped_plan(nullptr, wname, backend, r.sets,
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
    out.push_back(skipped_plan(w, wname, backend, r.sets, why));
    return;
  }
  rules_cache rules(*w, r.rules, r.rule_overrides);
  if (!r.rules.empty())
    rules.for_config(config{}); // a bad --rules is an error even before configs resolve
  auto configs = expand(wname, r.sets, r.sweeps, r.shapes, r.force);
  bool many = batch || configs.size() > 1 || !r.shapes.empty();
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

// A suite entry's settings: its "set", and the argv of an external program ("command", an array)
// as the external workload's command parameter (the same JSON array as after run external's --).
std::map<std::string, std::string> entry_sets(const json& e) {
  std::map<std::string, std::string> sets;
  const json set = e.value("set", json::object()); // items() of a temporary would dangle
  for (const auto& [k, v] : set.items())
    sets[k] = value_text(v);
  if (e.contains("command"))
    sets["command"] = e["command"].dump();
  return sets;
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

// The suite document of a name or file, checked against its schema.
json read_suite(const std::string& name) {
  const fs::path file = find_suite(name);
  json suite = read_json_file(file, "suite");
  static const json_schema schema = load_builtin_schema("suite.schema.json");
  schema.require_valid(suite, fmt::format("suite {}", file.string()));
  return suite;
}

} // namespace

std::vector<std::string> suite_plugins(const std::string& suite) {
  if (suite.empty())
    return {};
  return read_suite(suite).value("plugins", std::vector<std::string>{});
}

namespace {

job_plan make_plan(const registry& reg, const request& o) {
  job_plan out;
  std::vector<planned>& plan = out.configs;
  // Stored with every run: text that is not UTF-8 would make every JSON output of the database
  // fail.
  require_text(o.system, "--system");
  for (const auto& t : o.tags)
    require_text(t, "--tag", false);
  if (std::string why = limits::tags_problem(o.tags); !why.empty())
    throw usage_error("--tag: " + why);
  auto overrides = parse_sets(o.rule_overrides, "--rule");
  if (!o.suite.empty()) {
    if (!o.workload.empty())
      throw usage_error(
          fmt::format("give either a workload ('{}') or --suite, not both", o.workload));
    const json suite = read_suite(o.suite);
    out.suite = suite["name"];
    out.suite_rounds = suite.value("rounds", int64_t{0});
    // A suite fixes its own configs: a --set, --sweep or --shapes would be silently ignored.
    if (!o.sets.empty() || !o.sweeps.empty() || !o.shapes.empty())
      throw usage_error(fmt::format(
          "--suite {} fixes its configs: --set, --sweep and --shapes apply to a WORKLOAD only",
          o.suite));
    for (const auto& e : suite["entries"]) {
      workload_request r{.workload = e["workload"],
                         .backend = e.value("backend", o.backend),
                         .sets = entry_sets(e),
                         .sweeps = {},
                         .shapes = e.value("shapes", ""),
                         .rules = !o.rules.empty() ? o.rules
                                                   : e.value("rules", suite.value("rules", "")),
                         .rule_overrides = overrides,
                         .force = o.force,
                         .batch = true};
      const json entry_sweeps = e.value("sweep", json::object());
      for (const auto& [k, v] : entry_sweeps.items()) {
        std::vector<std::string> vals;
        for (const auto& x : v)
          vals.push_back(value_text(x));
        r.sweeps.emplace_back(k, vals);
      }
      plan_request(reg, r, plan);
    }
  } else {
    if (o.workload.empty())
      throw usage_error("run needs a WORKLOAD or --suite NAME (see accelbench list)");
    const workload_request r{.workload = o.workload,
                             .backend = o.backend,
                             .sets = parse_sets(o.sets, "--set"),
                             .sweeps = parse_sweeps(o.sweeps),
                             .shapes = o.shapes,
                             .rules = o.rules,
                             .rule_overrides = overrides,
                             .force = o.force,
                             .batch = false};
    refuse_set_and_sweep(r.sets, r.sweeps);
    plan_request(reg, r, plan);
  }
  return out;
}

// What every rank must agree on before anything runs: the build, the options that reach the
// stored runs, and every planned config with its rules.
json plan_settings(const std::vector<planned>& plan, const request& o) {
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
job_plan agree_on_plan(const registry& reg, const request& o) {
  if (!dist::distributed())
    return make_plan(reg, o);
  job_plan plan;
  std::string failure;
  try {
    plan = make_plan(reg, o);
  } catch (const error& e) {
    failure = fmt::format("{}|rank {}: {}", e.exit_code(), dist::rank(), e.what());
  }
  if (std::string f = dist::first_nonempty(failure); !f.empty()) {
    const auto bar = f.find('|');
    throw agreed_error(f.substr(bar + 1), std::stoi(f.substr(0, bar)));
  }
  const json mine = plan_settings(plan.configs, o);
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

} // namespace

job_plan plan(const registry& reg, const request& r) { return agree_on_plan(reg, r); }

} // namespace accelbench::runner
