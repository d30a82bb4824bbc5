// accelbench list: workloads, rulesets, suites or catalogues.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

namespace {

void print_list(const json& out, const table& t, bool as_json) {
  if (as_json)
    std::cout << dump_json(out, 2) << "\n";
  else
    t.print(std::cout);
}

int list_workloads(const registry& reg, bool as_json) {
  json out = json::array();
  table t({"workload", "family", "backends", "ruleset", "parameters"});
  for (const auto* w : reg.all()) {
    const auto& s = w->spec();
    json axes = json::array();
    std::string params;
    for (const auto& a : s.axes) {
      axes.push_back({{"name", a.name},
                      {"type", to_string(a.type)},
                      {"default", a.default_value},
                      {"choices", a.choices},
                      {"description", a.description}});
      params += (params.empty() ? "" : " ") + a.name +
                (a.choices.empty() ? "" : "{" + fmt::format("{}", fmt::join(a.choices, "|")) + "}");
    }
    out.push_back({{"name", s.name},
                   {"family", s.family},
                   {"description", s.description},
                   {"backends", s.backends},
                   {"default_ruleset", s.default_ruleset},
                   {"primary_metric", s.primary_metric},
                   {"axes", axes}});
    t.add({s.name, s.family, fmt::format("{}", fmt::join(s.backends, ",")), s.default_ruleset,
           params});
  }
  print_list(out, t, as_json);
  return exit_ok;
}

int list_ruleset_files(bool as_json) {
  json out = json::array();
  table t({"ruleset", "version", "applies to", "description"});
  for (const auto& r : list_rulesets()) {
    out.push_back({{"id", r.id},
                   {"version", r.version},
                   {"applies_to", r.applies_to},
                   {"description", r.description},
                   {"path", r.path.string()}});
    t.add({r.id, r.version, fmt::format("{}", fmt::join(r.applies_to, ",")),
           cli::clip(r.description, 80)});
  }
  print_list(out, t, as_json);
  return exit_ok;
}

// Suites, or the shape catalogues of every workload: the JSON files shipped with the data.
int list_files(const std::string& what, bool as_json) {
  namespace fs = std::filesystem;
  json out = json::array();
  table t({"name", "workload", "description"});
  std::error_code ec;
  std::vector<fs::path> files;
  if (what == "suites") {
    for (const auto& f : fs::directory_iterator(data_root() / "suites", ec))
      files.push_back(f.path());
  } else {
    for (const auto& w : fs::directory_iterator(data_root() / "workloads", ec))
      for (const auto& f : fs::directory_iterator(w.path() / "catalogues", ec))
        files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (f.extension() != ".json")
      continue;
    json d;
    try {
      d = read_json_file(f, "file");
    } catch (const input_error&) {
      continue; // listed files are ours; one that does not read is left out, not fatal
    }
    if (!d.is_object())
      continue;
    std::string desc = d.value("description", d.value("source", ""));
    out.push_back({{"name", f.stem().string()},
                   {"workload", d.value("workload", "")},
                   {"description", desc},
                   {"path", f.string()}});
    t.add({f.stem().string(), d.value("workload", "(several)"), cli::clip(desc, 90)});
  }
  print_list(out, t, as_json);
  return exit_ok;
}

int cmd_list(const registry& reg, const std::string& what, bool as_json) {
  if (what == "workloads" || what.empty())
    return list_workloads(reg, as_json);
  if (what == "rulesets")
    return list_ruleset_files(as_json);
  if (what == "suites" || what == "catalogues")
    return list_files(what, as_json);
  throw usage_error(
      fmt::format("list takes workloads, rulesets, suites or catalogues, not '{}'", what));
}

} // namespace

command_hook add_list(CLI::App& app, context& ctx) {
  struct options {
    std::string what = "workloads";
    bool as_json = false;
  };
  auto o = std::make_shared<options>();
  auto* list = app.add_subcommand("list", "List workloads, rulesets, suites or catalogues");
  list->add_option("what", o->what, "workloads | rulesets | suites | catalogues")
      ->check(CLI::IsMember({"workloads", "rulesets", "suites", "catalogues"}));
  add_json_flag(list, o->as_json);
  const registry* reg = &ctx.reg;
  return {list, [o, reg] { return cmd_list(*reg, o->what, o->as_json); }};
}

} // namespace accelbench::cli
