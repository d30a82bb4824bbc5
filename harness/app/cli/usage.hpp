#pragma once
// What a person sees before any command runs: --version, the examples at the end of each
// command's --help, and the nearest match for a mistyped command or option.
#include <string>

#include <CLI/CLI.hpp>

namespace accelbench {
class registry;
}

namespace accelbench::cli {

// accelbench --version: version, git revision, build type, compiler, the backends of reg's
// workloads (built ones with what the build made of them, the CUDA architectures; the others with
// the build's reason) and the versions of the libraries linked.
std::string version_text(const registry& reg);

// Appends "Examples:" with two or three real command lines to the --help of every command it knows.
void add_examples(CLI::App& app);

// The first argument must name a command (or be a global flag): names what it got and the nearest
// command. Empty when it does.
std::string unknown_command_message(const CLI::App& app, int argc, char** argv);

// After CLI11 found arguments it did not expect: the first unknown option of the command, with the
// nearest option of that command. Empty when no unknown option explains it.
std::string unknown_option_message(const CLI::App& app, int argc, char** argv);

} // namespace accelbench::cli
