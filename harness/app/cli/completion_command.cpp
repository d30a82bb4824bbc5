#include "harness/app/cli/completion_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"

namespace accelbench::cli {

namespace {

namespace fs = std::filesystem;

struct option_info {
  std::vector<std::string> names; // --set, -o
  std::string description;
  bool takes_value = false, repeatable = false, positional = false;
  std::string value_name; // positional name
};

struct command_info {
  std::string name, description;
  std::vector<option_info> options;
};

// Visible commands (hidden ones have an empty group), in the order they were defined.
std::vector<command_info> commands_of(const CLI::App& app) {
  std::vector<command_info> out;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty())
      continue;
    command_info c{sub->get_name(), sub->get_description(), {}};
    for (const auto* opt : sub->get_options()) {
      if (opt == sub->get_help_ptr())
        continue; // every command has --help; added by the generators
      option_info o;
      for (const auto& s : opt->get_snames())
        o.names.push_back("-" + s);
      for (const auto& l : opt->get_lnames())
        o.names.push_back("--" + l);
      o.positional = o.names.empty() && opt->get_positional();
      if (o.names.empty() && !o.positional)
        continue;
      o.value_name = o.positional ? opt->get_name(true) : "";
      o.description = opt->get_description();
      o.takes_value = opt->get_items_expected_max() > 0; // 0 for a flag
      o.repeatable = opt->get_items_expected_max() > 1;
      c.options.push_back(std::move(o));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> file_stems(const std::vector<fs::path>& dirs) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& d : dirs)
    for (const auto& f : fs::directory_iterator(d, ec))
      if (f.path().extension() == ".json")
        out.push_back(f.path().stem().string());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()),
            out.end()); // a catalogue name used by two workloads
  return out;
}

// The values an option or positional takes, where they are a known set. Keyed "command option"
// ("run --backend"), or "* option" for every command.
std::map<std::string, std::vector<std::string>> value_choices(const registry& reg) {
  std::map<std::string, std::vector<std::string>> m;
  std::vector<std::string> workloads;
  for (const auto* w : reg.all())
    workloads.push_back(w->spec().name);
  m["run workload"] = workloads;
  m["history workload"] = workloads;
  m["ab workload"] = workloads;
  m["* --backend"] = {"cpu", "cuda"};
  m["list what"] = {"workloads", "rulesets", "suites", "catalogues"};
  m["compare --format"] = {"table", "markdown", "junit", "json", "bmf"};
  m["ab --format"] = m["compare --format"];
  m["history --format"] = {"table", "json"};
  m["import --format"] = {"accelbench", "gbench", "mlperf"};
  m["package --division"] = {"closed", "open"};
  m["completion shell"] = {"bash", "zsh"};
  m["run --suite"] = file_stems({data_root() / "suites"});
  m["ab --suite"] = m["run --suite"];
  std::vector<fs::path> catalogue_dirs, ruleset_dirs = {data_root() / "rulesets"};
  std::error_code ec;
  for (const auto& w : fs::directory_iterator(data_root() / "workloads", ec)) {
    catalogue_dirs.push_back(w.path() / "catalogues");
    ruleset_dirs.push_back(w.path() / "rulesets");
  }
  m["run --shapes"] = file_stems(catalogue_dirs);
  m["run --rules"] = file_stems(ruleset_dirs);
  m["ab --shapes"] = m["run --shapes"];
  m["ab --rules"] = m["run --rules"];
  return m;
}

const std::vector<std::string>*
choices_for(const std::map<std::string, std::vector<std::string>>& m, const std::string& command,
            const std::string& option) {
  std::string exact = command;
  exact.append(" ").append(option);
  std::string any = "* ";
  any.append(option);
  for (const auto& key : {exact, any})
    if (auto it = m.find(key); it != m.end())
      return &it->second;
  return nullptr;
}

std::string joined(const std::vector<std::string>& v) {
  return fmt::format("{}", fmt::join(v, " "));
}

// Options whose value is a path: completed with file names.
bool is_path_option(const option_info& o) {
  for (const auto& n : o.names)
    if (n == "--db" || n == "-o" || n == "--output" || n == "--html" || n == "--json" ||
        n == "--out" || n == "--prices" || n == "--devices" || n == "--system-json")
      return true;
  return false;
}

// Inside single quotes in zsh: a quote ends them; inside an _arguments spec [ ] and : are special.
std::string zsh_quote(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else if (c == '[' || c == ']' || c == ':')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// Roff: a backslash is \e, a minus \-, and a line may not start with . or '.
std::string roff(const std::string& s) {
  std::string out;
  bool line_start = true;
  for (char c : s) {
    if (line_start && (c == '.' || c == '\''))
      out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

} // namespace

std::string bash_completion(const CLI::App& app, const registry& reg) {
  const auto cmds = commands_of(app);
  const auto choices = value_choices(reg);
  std::vector<std::string> names = {"--help", "--version"};
  for (const auto& c : cmds)
    names.push_back(c.name);
  std::string s =
      "# bash completion for accelbench (generated by `accelbench completion bash`; do not edit)\n";
  s += "_accelbench() {\n";
  s += "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n";
  s += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  s += "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n";
  s += "  done\n";
  s += fmt::format(
      "  if [[ -z $cmd ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return; fi\n",
      joined(names));
  s += "  local opts= values= files= positional=\n";
  s += "  case $cmd in\n";
  for (const auto& c : cmds) {
    std::vector<std::string> opts = {"--help"};
    std::string prev_cases, positional;
    for (const auto& o : c.options) {
      if (o.positional) {
        if (auto* v = choices_for(choices, c.name, o.value_name))
          positional = joined(*v);
        continue;
      }
      opts.insert(opts.end(), o.names.begin(), o.names.end());
      if (!o.takes_value)
        continue;
      const std::string pattern = fmt::format("{}", fmt::join(o.names, "|"));
      if (auto* v = choices_for(choices, c.name, o.names.back()))
        prev_cases += fmt::format("        {}) values=\"{}\" ;;\n", pattern, joined(*v));
      else if (is_path_option(o))
        prev_cases += fmt::format("        {}) files=1 ;;\n", pattern);
      else
        prev_cases +=
            fmt::format("        {}) return ;;\n", pattern); // a free value: nothing to offer
    }
    s += fmt::format("    {})\n      opts=\"{}\"\n", c.name, joined(opts));
    if (!positional.empty())
      s += fmt::format("      positional=\"{}\"\n", positional);
    if (!prev_cases.empty())
      s += "      case $prev in\n" + prev_cases + "      esac\n";
    s += "      ;;\n";
  }
  s += "    *) return ;;\n  esac\n";
  s += "  if [[ -n $files ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n";
  s +=
      "  if [[ -n $values ]]; then COMPREPLY=($(compgen -W \"$values\" -- \"$cur\")); return; fi\n";
  s += "  if [[ $cur != -* && -n $positional ]]; then COMPREPLY=($(compgen -W \"$positional\" -- "
       "\"$cur\")); return; fi\n";
  s += "  COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n";
  s += "}\n";
  s += "complete -o default -F _accelbench accelbench\n";
  return s;
}

std::string zsh_completion(const CLI::App& app, const registry& reg) {
  const auto cmds = commands_of(app);
  const auto choices = value_choices(reg);
  std::string s = "#compdef accelbench\n";
  s += "# zsh completion for accelbench (generated by `accelbench completion zsh`; do not edit)\n";
  s += "_accelbench() {\n  local -a commands\n  commands=(\n";
  for (const auto& c : cmds)
    s += fmt::format("    '{}:{}'\n", c.name, zsh_quote(c.description));
  s += "  )\n";
  s += "  if (( CURRENT == 2 )); then\n    _describe -t commands 'accelbench command' commands\n   "
       " return\n  fi\n";
  s += "  local cmd=${words[2]}\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n";
  for (const auto& c : cmds) {
    s += fmt::format("    {})\n      _arguments \\\n        '(- *)'{{-h,--help}}'[Print this help "
                     "message and exit]' \\\n",
                     c.name);
    int position = 0;
    for (const auto& o : c.options) {
      std::string action;
      const std::string key = o.positional ? o.value_name : (o.names.empty() ? "" : o.names.back());
      if (auto* v = choices_for(choices, c.name, key))
        action = fmt::format(":value:({})", joined(*v));
      else if (is_path_option(o) || o.positional)
        action = ":file:_files";
      else if (o.takes_value)
        action = ":value: ";
      if (o.positional) {
        s += fmt::format("        '{}:{}{}' \\\n", ++position, zsh_quote(o.value_name),
                         action.substr(action.find(':', 1)));
        continue;
      }
      const std::string names =
          o.names.size() == 1 ? o.names[0] : fmt::format("{{{}}}", fmt::join(o.names, ","));
      s += fmt::format("        {}{}'[{}]{}' \\\n", o.repeatable ? "'*'" : "", names,
                       zsh_quote(o.description), action);
    }
    s += "      ;;\n";
  }
  s += "  esac\n}\n_accelbench \"$@\"\n";
  return s;
}

std::string man_page(const CLI::App& app) {
  const auto cmds = commands_of(app);
  std::string s = fmt::format(".\\\" generated by `accelbench man`; do not edit\n.TH ACCELBENCH 1 "
                              "\"\" \"accelbench {}\" \"User Commands\"\n",
                              build_info::version());
  s += ".SH NAME\naccelbench \\- benchmark harness and reporter for AI accelerators (MLPerf "
       "style)\n";
  s += ".SH SYNOPSIS\n.B accelbench\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B "
       "accelbench\n\\-\\-version | \\-\\-help\n";
  s += ".SH DESCRIPTION\n";
  s += "accelbench measures GEMM, attention and training workloads under fixed, versioned rules, "
       "stores every run "
       "with its raw samples and environment in SQLite, compares selections of runs with "
       "statistical verdicts, and "
       "writes reports, CI outputs (JUnit, Bencher BMF, markdown) and MLPerf-style submission "
       "packages. Every command "
       "takes \\fB\\-\\-help\\fR.\n";
  s += ".SH COMMANDS\n";
  for (const auto& c : cmds) {
    std::string synopsis = "accelbench " + c.name;
    for (const auto& o : c.options)
      if (o.positional)
        synopsis += " [" + o.value_name + "]";
    s += fmt::format(".SS \"{}\"\n{}\n", roff(synopsis), roff(c.description));
    for (const auto& o : c.options) {
      if (o.positional) {
        s += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff(o.value_name), roff(o.description));
        continue;
      }
      std::string names;
      for (const auto& n : o.names)
        names += (names.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff(n));
      s += fmt::format(".TP\n{}{}\n{}\n", names, o.takes_value ? " \\fIVALUE\\fR" : "",
                       roff(o.description));
    }
    for (const auto* sub :
         app.get_subcommands([&](const CLI::App* a) { return a->get_name() == c.name; }))
      if (!sub->get_footer().empty())
        s += fmt::format(".PP\n.nf\n{}\n.fi\n", roff(sub->get_footer().substr(1)));
  }
  s += ".SH EXIT STATUS\n";
  const std::vector<std::pair<std::string, std::string>> codes = {
      {"0", "success; every run VALID; compare: no regression; check-package: VALID"},
      {"1",
       "a run failed or was INVALID; compare: at least one regression; check-package: INVALID"},
      {"2", "usage or input error: the message names the problem and the value; nothing was stored "
            "or written"},
      {"3", "internal error (a bug: please report it)"},
      {"4", "compare \\-\\-strict: something was inconclusive and nothing regressed"},
      {"130", "interrupted (Ctrl\\-C) after storing the runs completed so far"}};
  for (const auto& [code, what] : codes)
    s += fmt::format(".TP\n.B {}\n{}\n", code, what);
  s += ".SH ENVIRONMENT\n";
  s += ".TP\n.B ACCELBENCH_DB\nThe database used when \\fB\\-\\-db\\fR is not given (default "
       "results/accelbench.db under the working directory).\n";
  s += ".TP\n.B ACCELBENCH_HOME\nWhere rulesets, suites, shape catalogues, schemas and reference "
       "results are read from "
       "(default: the source tree the binary was built from).\n";
  s += ".TP\n.B ACCELBENCH_TOKEN\nThe bearer token of \\fBpublish\\fR and \\fBimport\\fR URLs "
       "(another variable with \\fB\\-\\-token\\-env\\fR).\n";
  s += ".SH SEE ALSO\nREADME.md and docs/ in the accelbench repository.\n";
  return s;
}

command_hook add_completion(CLI::App& app, const registry& reg) {
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  sub->group(""); // hidden: a tool for packagers and the install target
  sub->add_option("shell", *shell, "bash | zsh")->required();
  return {sub, [&app, &reg, shell]() {
            if (*shell == "bash")
              std::cout << bash_completion(app, reg);
            else if (*shell == "zsh")
              std::cout << zsh_completion(app, reg);
            else
              throw usage_error(fmt::format("completion takes bash or zsh, not '{}'", *shell));
            return exit_ok;
          }};
}

command_hook add_man(CLI::App& app) {
  auto* sub = app.add_subcommand("man", "Print the man page (roff)");
  sub->group("");
  return {sub, [&app]() {
            std::cout << man_page(app);
            return exit_ok;
          }};
}

} // namespace accelbench::cli
