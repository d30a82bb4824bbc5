#include "workloads/mlperf/package.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"
#include "workloads/mlperf/check.hpp"
#include "workloads/mlperf/mllog.hpp"
#include "workloads/mlperf/score.hpp"

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
    return std::to_string(v.get<int64_t>());
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

package_result write_package(const std::vector<run>& runs_in, const package_options& opt,
                             const benchmark_table& table) {
  check_path_name("organisation", opt.org);
  check_path_name("system", opt.system);
  check_path_name("implementation", opt.implementation);
  if (opt.out_dir.empty())
    throw input_error("package output folder is empty");

  // Which benchmark: the logs' submission_benchmark (else the run's config).
  std::vector<const run*> runs;
  std::string benchmark;
  std::string log_division;
  for (const run& r : runs_in) {
    if (r.mllog.empty())
      continue;
    parsed_log log = parse_mllog(r.mllog, r.uuid);
    std::string b = run_benchmark(r);
    if (const event* e = log.first("submission_benchmark"); e && e->value.is_string())
      b = e->value;
    const benchmark_info* info = table.find(b);
    if (!info)
      throw input_error(fmt::format("run {} is for unknown MLPerf benchmark '{}'", r.uuid, b));
    if (!benchmark.empty() && benchmark != info->name)
      throw input_error(
          fmt::format("runs are for different benchmarks: '{}' and '{}'", benchmark, info->name));
    benchmark = info->name;
    if (const event* e = log.first("submission_division"); e && e->value.is_string())
      log_division = e->value;
    runs.push_back(&r);
  }
  if (runs.empty())
    throw input_error(fmt::format("none of the {} runs carries an MLPerf log", runs_in.size()));
  const benchmark_info* info = table.find(benchmark);
  check_path_name("benchmark", benchmark);
  if (static_cast<int>(runs.size()) < info->required_runs)
    throw input_error(fmt::format("{} runs with an MLPerf log for {}, a package needs exactly {}",
                                  runs.size(), benchmark, info->required_runs));
  // Order by start time, then by the logs' run_start (the logs of one time-to-train run share
  // its started_at), then uuid.
  std::map<const run*, int64_t> run_start;
  for (const run* r : runs) {
    parsed_log log = parse_mllog(r->mllog, r->uuid);
    const event* e = log.first("run_start");
    run_start[r] = e ? e->time_ms : std::numeric_limits<int64_t>::max();
  }
  std::stable_sort(runs.begin(), runs.end(), [&](const run* a, const run* b) {
    return std::tie(a->started_at, run_start[a], a->uuid) <
           std::tie(b->started_at, run_start[b], b->uuid);
  });
  runs.resize(static_cast<size_t>(info->required_runs));

  package_options o = opt;
  if (o.division.empty())
    o.division = log_division.empty() ? "closed" : log_division;
  json user = json(nullptr);
  if (!opt.system_json.empty()) {
    user = json::parse(read_text_file(opt.system_json), nullptr, false);
    if (user.is_discarded() || !user.is_object())
      throw input_error(
          fmt::format("system description '{}' is not a JSON object", opt.system_json.string()));
  }
  json desc = system_description_from(runs.front()->environment, user, o);
  if (!table.status_allowed(desc["status"].get<std::string>(), ""))
    throw input_error(fmt::format("system status '{}' is not one of: {}",
                                  desc["status"].get<std::string>(),
                                  fmt::join(table.allowed_status(), "; ")));

  // Build everything in a temporary sibling folder, then rename it into place.
  fs::create_directories(opt.out_dir);
  const fs::path final_org = opt.out_dir / opt.org;
  if (fs::is_symlink(final_org))
    throw input_error(
        fmt::format("'{}' is a symbolic link; refusing to write through it", final_org.string()));
  temp_dir_guard tmp{opt.out_dir / fmt::format(".accelbench-package-{}", random_suffix())};
  fs::create_directory(tmp.path);
  const fs::path org_dir = tmp.path / opt.org;
  const bool existed = fs::exists(final_org);
  if (existed) {
    if (!fs::is_directory(final_org))
      throw input_error(fmt::format("'{}' exists and is not a folder", final_org.string()));
    fs::copy(final_org, org_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  } else {
    fs::create_directory(org_dir);
  }

  const fs::path system_file = org_dir / "systems" / (opt.system + ".json");
  const fs::path results_dir = org_dir / "results" / opt.system / benchmark;
  const fs::path impl_dir =
      org_dir / "benchmarks" / benchmark / "implementations" / opt.implementation;
  const std::string desc_text = desc.dump(4) + "\n";
  if (!opt.force) {
    if (fs::exists(results_dir))
      throw input_error(fmt::format("'{}' already exists; pass --force to replace it",
                                    (final_org / "results" / opt.system / benchmark).string()));
    if (fs::exists(system_file) && read_text_file(system_file) != desc_text)
      throw input_error(
          fmt::format("'{}' already exists with other content; pass --force to replace it",
                      (final_org / "systems" / (opt.system + ".json")).string()));
  }
  fs::remove_all(results_dir);

  package_result res;
  res.benchmark = benchmark;
  res.system_description = desc;
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

  // README: how to reproduce (training_rules.adoc: the implementation must be available). One
  // README per benchmark implementation, with one section per system; sections of other systems
  // already in the package are kept.
  const run& r0 = *runs.front();
  const fs::path readme_path = impl_dir / "README.md";
  std::map<std::string, std::string> sections;
  if (fs::exists(readme_path)) {
    const std::string old = read_text_file(readme_path);
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
  }
  std::string section =
      fmt::format("<!-- accelbench:system {} -->\n## Runs on {}\n\n"
                  "- accelbench version: {}\n- revision: {}{}\n- ruleset: {}\n- division: {}\n\n"
                  "How to reproduce: run this command {} times; each run writes one MLPerf log "
                  "(result_<i>.txt).\n\n```\n{}\n```\n\n| file | run uuid | started (UTC) | "
                  "minutes |\n|---|---|---|---|\n",
                  opt.system, opt.system, build_info::version(),
                  r0.harness_revision.empty() ? build_info::git_revision() : r0.harness_revision,
                  r0.harness_revision.empty() && build_info::git_dirty() ? " (dirty)" : "",
                  r0.ruleset, o.division, info->required_runs,
                  !opt.command_line.empty() ? opt.command_line
                                            : fmt::format("accelbench run {} --backend {}",
                                                          r0.cfg.workload, r0.cfg.backend));
  for (size_t i = 0; i < runs.size(); ++i) {
    const metric* m = runs[i]->find_metric("time_to_train_min");
    section +=
        fmt::format("| result_{}.txt | {} | {} | {} |\n", i, runs[i]->uuid, runs[i]->started_at,
                    m ? fmt::format("{:.4f}", m->value) : std::string("-"));
  }
  sections[opt.system] = section + "\n";
  std::string readme = fmt::format(
      "# {} ({} implementation)\n\n"
      "These results were produced with accelbench, a benchmark harness for AI accelerators.\n\n",
      benchmark, opt.implementation);
  for (const auto& [name, text] : sections)
    readme += text;
  write_file(readme_path, readme);

  // Swap into place: the package appears whole or not at all.
  if (existed) {
    const fs::path old = tmp.path / (opt.org + ".old");
    fs::rename(final_org, old);
    fs::rename(org_dir, final_org);
  } else {
    fs::rename(org_dir, final_org);
  }
  res.org_dir = final_org;
  res.system_file = final_org / "systems" / (opt.system + ".json");
  res.readme =
      final_org / "benchmarks" / benchmark / "implementations" / opt.implementation / "README.md";
  return res;
}

} // namespace accelbench::mlperf
