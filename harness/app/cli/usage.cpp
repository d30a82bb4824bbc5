#include "harness/app/cli/usage.hpp"

#include <cstdlib>
#include <map>
#include <vector>

#include <CLI/Version.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "harness/core/build_info.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/suggest.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/workload.hpp"

namespace accelbench::cli {

namespace {

// "cpu, cuda (sm 90 100)": every backend name of the registered workloads, with what the build
// made of it or why it was not built. From the build alone: --version starts no driver.
std::string backends_line(const registry& reg) {
  std::vector<std::string> parts;
  const std::vector<backend_build> builds = reg.backend_builds();
  parts.reserve(builds.size());
  for (const backend_build& b : builds)
    parts.push_back(b.detail.empty() ? b.name : fmt::format("{} ({})", b.name, b.detail));
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

std::string version_text(const registry& reg) {
  std::string out = fmt::format("accelbench {}\n", build_info::version());
  out += fmt::format("revision   {}{}\n", build_info::git_revision(),
                     build_info::git_dirty() ? " (dirty)" : "");
  out += fmt::format("build      {}, {}\n", build_info::build_type(), build_info::compiler());
  out += fmt::format("backends   {}\n", backends_line(reg));
  // Registered by the backends when the workloads are registered (oneDNN, OpenBLAS, cuBLASLt, ...).
  const json env = capture_environment();
  if (env.contains("libraries") && env["libraries"].is_object())
    for (const auto& [name, v] : env["libraries"].items())
      out += fmt::format("library    {:<9} {}\n", name,
                         v.is_string() ? printable(v.get<std::string>()) : dump_json(v));
  out += fmt::format("built with fmt {}.{}.{}, CLI11 {}, nlohmann_json {}.{}.{}, SQLite {}\n",
                     FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100, CLI11_VERSION,
                     NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                     NLOHMANN_JSON_VERSION_PATCH, SQLITE_VERSION);
  out.pop_back(); // CLI11 ends the version text with a newline
  return out;
}

namespace {

// Real command lines, each runnable as shown (given the runs or files it names).
const std::map<std::string, std::vector<std::string>>& examples() {
  static const std::map<std::string, std::vector<std::string>> e = {
      {"env", {"accelbench env", "accelbench env --json", "accelbench env --reprobe"}},
      {"list",
       {"accelbench list", "accelbench list catalogues", "accelbench list rulesets --json"}},
      {"run",
       {"accelbench run gemm --set M=1024 --set N=1024 --set K=1024 --tag before",
        "accelbench run gemm --sweep dtype=fp32,bf16 --sweep library=onednn,openblas --rule "
        "repetitions=10",
        "accelbench run --suite quick --tag nightly-$(date +%F)"}},
      {"show",
       {"accelbench show --limit 10", "accelbench show 42",
        "accelbench show --tag before --workload 'gemm*'"}},
      {"export",
       {"accelbench export -o results.json",
        "accelbench export tag=nightly-2026-12-02 --system ci-box -o n.json",
        "accelbench export --format csv --rows sample workload=gemm -o samples.csv"}},
      {"import",
       {"accelbench import results.json --tag from-ci",
        "accelbench import bm.json --system ci-box --tag pr-123",
        "accelbench import --format mlperf results/published/mlperf"}},
      {"delete",
       {"accelbench delete tag=scratch --dry-run", "accelbench delete run=12,13 --yes",
        "accelbench delete --system old-box --workload 'gemm*'"}},
      {"gc",
       {"accelbench gc --keep-days 90 --keep-tag baseline --dry-run",
        "accelbench gc --keep-days 30 --system ci-box --yes"}},
      {"publish",
       {"ACCELBENCH_TOKEN=... accelbench publish --url https://results.example/api/runs "
        "tag=nightly-2026-12-02",
        "accelbench publish --url http://127.0.0.1:8080/runs 'run=1,2,3' --batch-size 50"}},
      {"package",
       {"accelbench package --org MyOrg --system mybox --division closed --out pkg",
        "accelbench package --org MyOrg --system mybox --division open --out pkg --benchmark "
        "llama31_8b --force"}},
      {"check-package",
       {"accelbench check-package pkg/MyOrg",
        "accelbench check-package pkg/MyOrg --round 5.0 --json"}},
      {"report",
       {"accelbench report --baseline accelerator=H100 --candidate family=Blackwell --html "
        "h100-vs-blackwell.html",
        "accelbench report --baseline tag=before --candidate tag=after -o r.json --html r.html "
        "--quiet"}},
      {"compare",
       {"accelbench compare --baseline tag=before --candidate tag=after",
        "accelbench compare --baseline main.json --candidate tag=pr-123 --format junit -o "
        "junit.xml",
        "accelbench compare --baseline tag=A --candidate tag=B --metric cpu_time"}},
      {"ab",
       {"accelbench ab gemm --set M=1024 --set N=1024 --set K=1024 --baseline-args "
        "\"--set library=onednn\" --candidate-args \"--set library=openblas\" --tag blas",
        "accelbench ab --suite quick --baseline-exe old/accelbench --candidate-exe "
        "build/accelbench --rounds 20",
        "accelbench ab external --name step --baseline-args \"-- python3 step.py\" "
        "--candidate-args \"-- python3 step_new.py\" --seed 42"}},
      {"history",
       {"accelbench history gemm --set M=2048 --system ci-box",
        "accelbench history 'gemm*' --since 2026-11-01 --fail-on-regression"}},
      {"db",
       {"accelbench db copy --from results/accelbench.db --to "
        "postgresql://bench@db.example/accelbench",
        "accelbench db copy --from postgresql://bench@db.example/accelbench --to backup.db --batch "
        "500"}},
      {"serve",
       {"accelbench serve --db fleet.db --listen 127.0.0.1:8080 --public-read",
        "accelbench serve --db postgresql://bench@db.example/accelbench --listen 0.0.0.0:8443 "
        "--cert cert.pem --key key.pem"}},
      {"token",
       {"accelbench token create --db fleet.db --name ci-h100-07 --role write",
        "accelbench token list --db fleet.db", "accelbench token revoke 3 --db fleet.db"}},
      {"completion",
       {"accelbench completion bash > /etc/bash_completion.d/accelbench",
        "accelbench completion zsh > ~/.zfunc/_accelbench"}},
      {"man", {"accelbench man > accelbench.1 && man -l accelbench.1"}},
  };
  return e;
}

bool is_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

} // namespace

void add_examples(CLI::App& app) {
  for (auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    auto it = examples().find(sub->get_name());
    if (it == examples().end())
      continue;
    std::string text = "\nExamples:";
    for (const auto& line : it->second)
      text += "\n  " + line;
    sub->footer(text);
  }
}

std::string unknown_command_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 2)
    return "";
  const std::string first = argv[1];
  if (first == "-h" || first == "--help" || first == "--version" || first == "--help-all")
    return "";
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == first)
      return "";
    if (!sub->get_group().empty())
      names.push_back(sub->get_name()); // hidden commands are not suggested
  }
  const bool option = first.rfind('-', 0) == 0;
  return fmt::format("unknown {} '{}'{} (commands: see accelbench --help)",
                     option ? "option" : "command", printable(first),
                     option ? did_you_mean(first, {"--help", "--version"})
                            : did_you_mean(first, names));
}

std::string unknown_option_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 3)
    return "";
  const CLI::App* sub = nullptr;
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == argv[1])
      sub = s;
  if (!sub)
    return "";
  // Nested commands (db copy, token create): the options are the innermost command's.
  int first_arg = 2;
  std::string path = sub->get_name();
  for (bool deeper = true; deeper && first_arg < argc;) {
    deeper = false;
    for (const auto* s : sub->get_subcommands([](const CLI::App*) { return true; }))
      if (s->get_name() == argv[first_arg]) {
        sub = s, path += " " + s->get_name(), ++first_arg, deeper = true;
        break;
      }
  }
  std::vector<std::string> names = {"--help", "-h"};
  for (const auto* opt : sub->get_options()) {
    for (const auto& l : opt->get_lnames())
      names.push_back("--" + l);
    for (const auto& s : opt->get_snames())
      names.push_back("-" + s);
  }
  for (int i = first_arg; i < argc; ++i) {
    std::string tok = argv[i];
    if (tok == "--")
      break;
    if (tok.size() < 2 || tok[0] != '-' || is_number(tok))
      continue;
    if (auto eq = tok.find('='); eq != std::string::npos && tok.rfind("--", 0) == 0)
      tok.resize(eq);
    if (std::find(names.begin(), names.end(), tok) != names.end())
      continue;
    return fmt::format("unknown option '{}' for '{}'{} (see accelbench {} --help)", printable(tok),
                       path, did_you_mean(tok, names), path);
  }
  return "";
}

} // namespace accelbench::cli
