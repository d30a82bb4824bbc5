#pragma once
// Hidden commands that describe the command line itself, generated from the CLI11 definitions so
// they cannot drift from it: `accelbench completion bash|zsh` (shell completion) and
// `accelbench man` (a man page in roff). The install target installs their output.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "harness/app/cli/command.hpp"

#include "harness/core/workload.hpp"

namespace accelbench::cli {

command_hook add_completion(CLI::App& app, const registry& reg);
command_hook add_man(CLI::App& app);

// The generated texts (also used by the tests).
std::string bash_completion(const CLI::App& app, const registry& reg);
std::string zsh_completion(const CLI::App& app, const registry& reg);
std::string man_page(const CLI::App& app);

} // namespace accelbench::cli
