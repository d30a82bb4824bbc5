#include "importers/mlperf/package.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/folder.hpp"
#include "importers/mlperf/rcp.hpp"
#include "importers/mlperf/score.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

void check_path_name(const std::string& what, const std::string& name) {
  auto refuse = [&](const char* why) {
    throw input_error(fmt::format("{} name '{}' is not allowed: {}", what, name, why));
  };
  if (name.empty())
    refuse("it is empty");
  if (name == "." || name == "..")
    refuse("it names a relative folder");
  if (name.find("..") != std::string::npos)
    refuse("it contains '..'");
  for (unsigned char c : name) {
    if (c == '/' || c == '\\')
      refuse("it contains a path separator");
    if (c < 0x20 || c == 0x7f)
      refuse("it contains a control character");
  }
}

namespace {

const json* find_path(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* p : path) {
    if (!cur->is_object() || !cur->contains(p))
      return nullptr;
    cur = &(*cur)[p];
  }
  return cur;
}

std::string text_of(const json* v) {
  if (!v || v->is_null())
    return {};
  if (v->is_string())
    return v->get<std::string>();
  return v->dump();
}

std::string first_text(const json& env,
                       std::initializer_list<std::initializer_list<const char*>> paths) {
  for (auto p : paths) {
    std::string s = text_of(find_path(env, p));
    if (!s.empty())
      return s;
  }
  return {};
}

std::string human_bytes(double bytes) {
  const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1024)
    return fmt::format("{:.1f} TiB", gib / 1024);
  return fmt::format("{:.1f} GiB", gib);
}

// Values of a system description are strings (published files keep counts as strings too).
json stringify(const json& v) {
  if (v.is_string())
    return v;
  if (v.is_null())
    return "";
  if (v.is_number_integer() || v.is_number_unsigned())
    return v.dump(); // exact, also for unsigned values above INT64_MAX
  if (v.is_number_float())
    return fmt::format("{:g}", v.get<double>());
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  return v.dump();
}

struct temp_dir_guard {
  fs::path path;
  ~temp_dir_guard() {
    std::error_code ec;
    if (!path.empty())
      fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out)
    throw input_error(fmt::format("cannot write '{}'", p.string()));
  out << text;
  out.close();
  if (!out)
    throw input_error(fmt::format("error while writing '{}'", p.string()));
}

std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

} // namespace

json system_description_from(const json& env, const json& user, const package_options& opt) {
  json d = json::object();
  for (const auto& f : required_system_fields())
    d[f] = "";
  d["submitter"] = opt.org;
  d["division"] = opt.division.empty() ? "closed" : opt.division;
  d["status"] = "Available on-premise";
  d["system_name"] = opt.system;
  d["number_of_nodes"] = "1";
  d["host_processors_per_node"] =
      first_text(env, {{"cpu", "sockets"}}).empty() ? "1" : first_text(env, {{"cpu", "sockets"}});
  d["host_processor_model_name"] = first_text(env, {{"cpu", "model"}});
  const std::string logical = first_text(env, {{"cpu", "logical_cores"}});
  const std::string physical = first_text(env, {{"cpu", "physical_cores"}, {"cpu", "cores"}});
  d["host_processor_core_count"] = physical.empty() ? logical : physical;
  d["host_processor_vcpu_count"] = logical;
  const std::string mhz =
      first_text(env, {{"cpu", "mhz"}, {"cpu", "max_mhz"}, {"cpu", "frequency_mhz"}});
  if (!mhz.empty())
    d["host_processor_frequency"] = mhz + " MHz";
  if (const json* b = find_path(env, {"memory", "total_bytes"});
      b && b->is_number() && b->get<double>() > 0)
    d["host_memory_capacity"] = human_bytes(b->get<double>());
  // Accelerators: environment.accelerator {model|name, count} when the run used one.
  const std::string acc_model = first_text(
      env, {{"accelerator", "model"}, {"accelerator", "name"}, {"gpu", "name"}, {"gpu", "model"}});
  const std::string acc_count = first_text(env, {{"accelerator", "count"}, {"gpu", "count"}});
  d["accelerator_model_name"] = acc_model;
  d["accelerators_per_node"] = acc_count.empty() ? (acc_model.empty() ? "0" : "1") : acc_count;
  if (const json* m = find_path(env, {"accelerator", "memory_bytes"}); m && m->is_number())
    d["accelerator_memory_capacity"] = human_bytes(m->get<double>());
  const json* os = find_path(env, {"os"});
  if (os && os->is_object())
    d["operating_system"] =
        first_text(env, {{"os", "pretty_name"}, {"os", "name"}, {"os", "system"}});
  else
    d["operating_system"] = text_of(os);
  d["framework"] = fmt::format("accelbench {}", build_info::version());
  json stack = json::object();
  if (std::string k = first_text(env, {{"os", "kernel"}, {"kernel"}}); !k.empty())
    stack["kernel_version"] = k;
  if (std::string c = first_text(env, {{"compiler"}, {"build", "compiler"}}); !c.empty())
    stack["compiler"] = c;
  if (const json* libs = find_path(env, {"libraries"}); libs && libs->is_object())
    for (auto it = libs->begin(); it != libs->end(); ++it)
      stack[it.key() + "_version"] = stringify(it.value());
  if (std::string r = first_text(env, {{"git_revision"}, {"harness", "git_revision"}}); !r.empty())
    stack["accelbench_revision"] = r;
  d["other_software_stack"] = stack;

  if (!user.is_null() && !user.is_object())
    throw input_error("the user system description must be a JSON object");
  if (user.is_object())
    for (auto it = user.begin(); it != user.end(); ++it)
      d[it.key()] = it.value();
  if (!opt.division.empty())
    d["division"] = opt.division;
  if (!opt.status.empty())
    d["status"] = opt.status;
  for (auto it = d.begin(); it != d.end(); ++it) {
    if (it.key() == "other_software_stack" && it.value().is_object()) {
      for (auto s = it.value().begin(); s != it.value().end(); ++s)
        s.value() = stringify(s.value());
      continue;
    }
    it.value() = stringify(it.value());
  }
  return d;
}

namespace {

// One benchmark's part of a package, decided and validated before anything is written.
struct package_plan {
  const benchmark_info* info = nullptr;
  std::vector<const run*> runs;   // exactly the required number, in result_<i> order
  package_options opt;            // with the division resolved
  json desc;                      // the system description
  std::optional<rcp_verdict> rcp; // the RCP check of a closed package, where the round has data
};

// The division the chosen runs' logs declare ("" when none does). A package holds one division,
// and check-package compares every log's submission_division with the system's division, so a
// package whose logs disagree with it would be rejected by our own checker: refused here.
std::string logs_division(const std::vector<const run*>& runs,
                          const std::map<const run*, std::string>& divisions,
                          const std::string& wanted) {
  std::string found;
  const run* first = nullptr;
  for (const run* r : runs) {
    const std::string& d = divisions.at(r);
    if (d.empty())
      continue;
    if (!found.empty() && d != found)
      throw input_error(fmt::format("the runs' MLPerf logs declare different divisions ('{}' in "
                                    "run {}, '{}' in run {}); a package holds one division",
                                    found, first->uuid, d, r->uuid));
    if (found.empty())
      first = r;
    found = d;
  }
  if (!wanted.empty() && !found.empty() && wanted != found)
    throw input_error(fmt::format(
        "division '{}' does not match the runs' MLPerf logs, which declare submission_division "
        "'{}': a package must state the division its logs declare; package them in the {} division "
        "(logs "
        "cannot be moved to another division after the fact)",
        wanted, found, found));
  return found;
}

// The MLPerf Training round of the runs: their ruleset's ("mlperf-training-v5.0" -> "5.0"), else
// the round whose reference convergence points judged an external time-to-train set
// (extra.rcp.round); "" for any other run, accelbench's own train-ttt-v1 included.
std::string training_round(const run& r) {
  const std::string prefix = "mlperf-training-v";
  if (r.ruleset.rfind(prefix, 0) == 0)
    return normalize_round(r.ruleset);
  const auto rcp = r.extra.find("rcp");
  if (rcp != r.extra.end() && rcp->is_object() && rcp->contains("round") &&
      (*rcp)["round"].is_string())
    return normalize_round((*rcp)["round"].get<std::string>());
  return {};
}

// A closed package is checked against MLCommons' reference convergence points, as check-package
// checks it: one that fails is refused (check-package would call it INVALID), naming the RCP
// verdict; a pass is returned for the caller to show (a norm factor > 1 scales the score).
std::optional<rcp_verdict> check_plan_rcp(const package_plan& plan) {
  if (plan.opt.division != "closed")
    return std::nullopt;
  const std::string round = training_round(*plan.runs.front());
  const auto rounds = rcp_rounds();
  if (std::find(rounds.begin(), rounds.end(), round) == rounds.end())
    return std::nullopt;
  std::vector<mllog::parsed_log> logs;
  logs.reserve(plan.runs.size());
  for (size_t i = 0; i < plan.runs.size(); ++i)
    logs.push_back(mllog::parse_mllog(plan.runs[i]->mllog, fmt::format("result_{}.txt", i)));
  std::vector<const mllog::parsed_log*> ptrs;
  ptrs.reserve(logs.size());
  for (const auto& l : logs)
    ptrs.push_back(&l);
  rcp_verdict v = check_rcp(ptrs, round, false);
  if (!v.pass)
    throw input_error(fmt::format(
        "the {} runs of {} fail MLCommons' RCP check for round {}, so check-package would reject "
        "the closed package: {} (runs {} to {} by start time)",
        plan.runs.size(), plan.info->name, round, v.summary(), plan.runs.front()->uuid,
        plan.runs.back()->uuid));
  return v;
}

package_plan plan_package(const std::vector<run>& runs_in, const package_options& opt,
                          const benchmark_table& table) {
  // Which benchmark: the logs' submission_benchmark (else the run's config).
  std::vector<const run*> runs;
  std::map<const run*, std::string> divisions;
  std::map<const run*, int64_t> run_start;
  std::string benchmark;
  for (const run& r : runs_in) {
    if (r.mllog.empty())
      continue;
    mllog::parsed_log log = mllog::parse_mllog(r.mllog, r.uuid);
    std::string b = run_benchmark(r);
    if (const mllog::event* e = log.first("submission_benchmark"); e && e->value.is_string())
      b = e->value;
    const benchmark_info* info = table.find(b);
    if (!info)
      throw input_error(fmt::format("run {} is for unknown MLPerf benchmark '{}'", r.uuid, b));
    if (!benchmark.empty() && benchmark != info->name)
      throw input_error(
          fmt::format("runs are for different benchmarks: '{}' and '{}'", benchmark, info->name));
    benchmark = info->name;
    const mllog::event* d = log.first("submission_division");
    divisions[&r] = d && d->value.is_string() ? d->value.get<std::string>() : "";
    const mllog::event* e = log.first("run_start");
    run_start[&r] = e ? e->time_ms : std::numeric_limits<int64_t>::max();
    runs.push_back(&r);
  }
  if (runs.empty())
    throw input_error(fmt::format("none of the {} runs carries an MLPerf log", runs_in.size()));
  package_plan plan;
  plan.info = table.find(benchmark);
  check_path_name("benchmark", benchmark);
  if (static_cast<int>(runs.size()) < plan.info->required_runs)
    throw input_error(fmt::format("{} runs with an MLPerf log for {}, a package needs exactly {}",
                                  runs.size(), benchmark, plan.info->required_runs));
  // Order by start time, then by the logs' run_start (the logs of one time-to-train run share
  // its started_at), then uuid.
  std::stable_sort(runs.begin(), runs.end(), [&](const run* a, const run* b) {
    return std::tie(a->started_at, run_start[a], a->uuid) <
           std::tie(b->started_at, run_start[b], b->uuid);
  });
  runs.resize(static_cast<size_t>(plan.info->required_runs));
  plan.runs = runs;

  plan.opt = opt;
  const std::string log_division = logs_division(runs, divisions, opt.division);
  if (plan.opt.division.empty())
    plan.opt.division = log_division.empty() ? "closed" : log_division;
  json user = json(nullptr);
  if (!opt.system_json.empty()) {
    const std::string what = fmt::format("system description '{}'", opt.system_json.string());
    user = parse_json_input(mllog::read_text_file(opt.system_json, "system description"), what);
    if (!user.is_object())
      throw input_error(fmt::format("{} is not a JSON object", what));
  }
  plan.rcp = check_plan_rcp(plan);
  plan.desc = system_description_from(runs.front()->environment, user, plan.opt);
  if (!table.status_allowed(plan.desc["status"].get<std::string>(), ""))
    throw input_error(fmt::format("system status '{}' is not one of: {}",
                                  plan.desc["status"].get<std::string>(),
                                  fmt::join(table.allowed_status(), "; ")));
  return plan;
}

// Where a package is assembled: a temporary folder beside its final place, renamed into place at
// the end, so that a failure leaves neither a partial package nor an output folder it created.
struct staging {
  temp_dir_guard tmp;   // removed at the end, whatever happens
  fs::path org_dir;     // where ORG is assembled (inside tmp)
  fs::path created;     // the first folder of OUT that did not exist ("" when OUT exists): tmp is
                        // renamed to it at the end
  fs::path final_org;   // OUT/ORG
  bool existed = false; // OUT/ORG existed (it is copied first, then swapped)
};

// A package being updated holds no link (folder.hpp): its README is read and its files are
// replaced, and a link copied into the staged package would lead both out of it (a README.md ->
// ~/.bashrc overwritten, a results/SYSTEM -> elsewhere emptied by remove_all). `staged` is the
// copy, `shown` the package it came from, named in the message.
void refuse_links(const fs::path& staged, const fs::path& shown) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(staged, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_symlink(ec))
      throw input_error(fmt::format("'{}' is {}; a package that holds a link is not updated",
                                    (shown / it->path().lexically_relative(staged)).string(),
                                    link_refusal(it->path())));
}

void prepare_staging(const package_options& opt, staging& s) {
  std::error_code ec;
  fs::path out = fs::absolute(opt.out_dir, ec).lexically_normal();
  if (out.filename().empty())
    out = out.parent_path();
  const fs::path name = fmt::format(".accelbench-package-{}", random_suffix());
  s.final_org = opt.out_dir / opt.org;
  const fs::file_status st = fs::status(out, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw input_error(fmt::format("cannot use package output folder '{}': {}", opt.out_dir.string(),
                                  ec.message()));
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      throw input_error(fmt::format("package output folder '{}' exists and is not a folder",
                                    opt.out_dir.string()));
    s.tmp.path = out / name;
    s.org_dir = s.tmp.path / opt.org;
  } else {
    fs::path top = out;
    while (top.has_relative_path() && !fs::exists(top.parent_path(), ec))
      top = top.parent_path();
    if (!fs::is_directory(top.parent_path(), ec))
      throw input_error(fmt::format("cannot create package output folder '{}': '{}' is not a "
                                    "folder",
                                    opt.out_dir.string(), top.parent_path().string()));
    s.created = top;
    s.tmp.path = top.parent_path() / name;
    s.org_dir = s.tmp.path / out.lexically_relative(top) / opt.org;
  }
  if (fs::is_symlink(s.final_org, ec))
    throw input_error(
        fmt::format("'{}' is a symbolic link; refusing to write through it", s.final_org.string()));
  fs::create_directories(s.org_dir.parent_path());
  s.existed = fs::exists(s.final_org, ec);
  if (s.existed) {
    if (!fs::is_directory(s.final_org, ec))
      throw input_error(fmt::format("'{}' exists and is not a folder", s.final_org.string()));
    fs::copy(s.final_org, s.org_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    refuse_links(s.org_dir, s.final_org);
  } else {
    fs::create_directory(s.org_dir);
  }
}

// The sections of an existing README, by system ("<!-- accelbench:system NAME -->" starts each).
std::map<std::string, std::string> readme_sections(const fs::path& readme_path) {
  std::map<std::string, std::string> sections;
  if (!fs::exists(readme_path))
    return sections;
  const std::string old = read_folder_file(readme_path, "README");
  const std::string marker = "<!-- accelbench:system ";
  size_t pos = old.find(marker);
  while (pos != std::string::npos) {
    const size_t name_end = old.find(" -->", pos);
    if (name_end == std::string::npos)
      break;
    const std::string name = old.substr(pos + marker.size(), name_end - pos - marker.size());
    const size_t next = old.find(marker, name_end);
    sections[name] = old.substr(pos, (next == std::string::npos ? old.size() : next) - pos);
    pos = next;
  }
  return sections;
}

// This system's README section: how the runs were made and how to reproduce them, one row per
// result file.
std::string readme_section(const package_plan& plan) {
  const package_options& opt = plan.opt;
  const auto& runs = plan.runs;
  const run& r0 = *runs.front();
  std::string section =
      fmt::format("<!-- accelbench:system {} -->\n## Runs on {}\n\n"
                  "- accelbench version: {}\n- revision: {}{}\n- ruleset: {}\n- division: {}\n\n"
                  "How to reproduce: run this command {} times; each run writes one MLPerf log "
                  "(result_<i>.txt).\n\n```\n{}\n```\n\n| file | run uuid | started (UTC) | "
                  "minutes |\n|---|---|---|---|\n",
                  opt.system, opt.system, build_info::version(),
                  r0.harness_revision.empty() ? build_info::git_revision() : r0.harness_revision,
                  r0.harness_revision.empty() && build_info::git_dirty() ? " (dirty)" : "",
                  r0.ruleset, opt.division, plan.info->required_runs,
                  !opt.command_line.empty() ? opt.command_line
                                            : fmt::format("accelbench run {} --backend {}",
                                                          r0.cfg.workload, r0.cfg.backend));
  for (size_t i = 0; i < runs.size(); ++i) {
    const metric* m = runs[i]->find_metric("time_to_train_min");
    section +=
        fmt::format("| result_{}.txt | {} | {} | {} |\n", i, runs[i]->uuid, runs[i]->started_at,
                    m ? fmt::format("{:.4f}", m->value) : std::string("-"));
  }
  return section + "\n";
}

// README: how to reproduce (training_rules.adoc: the implementation must be available). One
// README per benchmark implementation, with one section per system; sections of other systems
// already in the package are kept.
void write_readme(const package_plan& plan, const fs::path& readme_path) {
  std::map<std::string, std::string> sections = readme_sections(readme_path);
  sections[plan.opt.system] = readme_section(plan);
  std::string readme = fmt::format(
      "# {} ({} implementation)\n\n"
      "These results were produced with accelbench, a benchmark harness for AI accelerators.\n\n",
      plan.info->name, plan.opt.implementation);
  for (const auto& [name, text] : sections)
    readme += text;
  write_file(readme_path, readme);
}

// Refuses to replace a benchmark's results or a different system description without --force.
void check_overwrite(const package_plan& plan, const staging& s, const fs::path& system_file,
                     const fs::path& results_dir, const std::string& desc_text) {
  const package_options& opt = plan.opt;
  if (opt.force)
    return;
  if (fs::exists(results_dir))
    throw input_error(
        fmt::format("'{}' already exists; pass --force to replace it",
                    (s.final_org / "results" / opt.system / plan.info->name).string()));
  if (fs::exists(system_file) && read_folder_file(system_file, "system description") != desc_text)
    throw input_error(
        fmt::format("'{}' already exists with other content; pass --force to replace it",
                    (s.final_org / "systems" / (opt.system + ".json")).string()));
}

// Writes one benchmark's files into the staged ORG folder (paths in the result: final ones).
package_result write_plan(const package_plan& plan, const staging& s) {
  const package_options& opt = plan.opt;
  const std::string& benchmark = plan.info->name;
  const fs::path& final_org = s.final_org;
  const auto& runs = plan.runs;
  const fs::path system_file = s.org_dir / "systems" / (opt.system + ".json");
  const fs::path results_dir = s.org_dir / "results" / opt.system / benchmark;
  const fs::path impl_dir =
      s.org_dir / "benchmarks" / benchmark / "implementations" / opt.implementation;
  const std::string desc_text = dump_json(plan.desc, 4) + "\n";
  check_overwrite(plan, s, system_file, results_dir, desc_text);
  fs::remove_all(results_dir);

  package_result res;
  res.benchmark = benchmark;
  res.system_description = plan.desc;
  res.rcp = plan.rcp;
  res.round = training_round(*plan.runs.front());
  write_file(system_file, desc_text);
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string text = runs[i]->mllog;
    if (text.back() != '\n')
      text += '\n';
    const fs::path f = results_dir / fmt::format("result_{}.txt", i);
    write_file(f, text);
    res.result_files.push_back(final_org / "results" / opt.system / benchmark / f.filename());
    res.runs_used.push_back(runs[i]->uuid);
  }
  write_readme(plan, impl_dir / "README.md");

  res.org_dir = final_org;
  res.system_file = final_org / "systems" / (opt.system + ".json");
  res.readme =
      final_org / "benchmarks" / benchmark / "implementations" / opt.implementation / "README.md";
  return res;
}

// Swaps the staged ORG into place: the package appears whole or not at all.
void publish_staging(const package_options& opt, staging& s) {
  if (!s.created.empty()) {
    fs::rename(s.tmp.path, s.created);
    s.tmp.path.clear(); // it is the output folder now
  } else if (s.existed) {
    const fs::path old = s.tmp.path / (opt.org + ".old");
    fs::rename(s.final_org, old);
    try {
      fs::rename(s.org_dir, s.final_org);
    } catch (const fs::filesystem_error&) {
      std::error_code ec;
      fs::rename(old, s.final_org, ec); // put the previous package back
      throw;
    }
  } else {
    fs::rename(s.org_dir, s.final_org);
  }
}

std::vector<package_result> assemble(const std::vector<package_plan>& plans,
                                     const package_options& opt) {
  staging s;
  prepare_staging(opt, s);
  std::vector<package_result> out;
  out.reserve(plans.size());
  for (const auto& plan : plans)
    out.push_back(write_plan(plan, s));
  publish_staging(opt, s);
  return out;
}

} // namespace

std::vector<package_result> write_packages(const std::vector<std::vector<run>>& groups,
                                           const package_options& opt,
                                           const benchmark_table& table) {
  check_path_name("organisation", opt.org);
  check_path_name("system", opt.system);
  check_path_name("implementation", opt.implementation);
  if (opt.out_dir.empty())
    throw input_error("package output folder is empty");
  std::vector<package_plan> plans;
  std::set<std::string> benchmarks;
  for (const auto& runs : groups) {
    plans.push_back(plan_package(runs, opt, table));
    if (!benchmarks.insert(plans.back().info->name).second)
      throw input_error(
          fmt::format("benchmark '{}' is given twice in one package", plans.back().info->name));
  }
  try {
    return assemble(plans, opt);
  } catch (const fs::filesystem_error& e) {
    // Every file-system failure (no permission, disk full, a folder changed under us) is the
    // user's environment, not a bug: exit 2 naming the place and the system's reason.
    throw input_error(fmt::format("cannot write the package under '{}': {}", opt.out_dir.string(),
                                  e.code().message()));
  }
}

package_result write_package(const std::vector<run>& runs, const package_options& opt,
                             const benchmark_table& table) {
  return write_packages({runs}, opt, table).front();
}

} // namespace accelbench::mlperf
