#pragma once
// How a command joins the command line: add_<command>(app, ctx), in the command's own file,
// declares the command and its options (in the shared style of harness/app/cli/options.hpp) and
// returns the hook that runs it when it was given.
#include <functional>

#include <CLI/CLI.hpp>

#include "harness/core/workload.hpp"

namespace accelbench::cli {

// A command added to the app, and what runs it when it was given (returns the exit code).
struct command_hook {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// What commands may need besides their options: the workloads, and the command line as given
// (package records it).
struct context {
  const registry& reg;
  int argc = 0;
  char** argv = nullptr;
};

command_hook add_env(CLI::App& app, context& ctx);
command_hook add_list(CLI::App& app, context& ctx);
command_hook add_run(CLI::App& app, context& ctx);
command_hook add_show(CLI::App& app, context& ctx);
command_hook add_export(CLI::App& app, context& ctx);
command_hook add_import(CLI::App& app, context& ctx);
command_hook add_publish(CLI::App& app, context& ctx); // only with ACCELBENCH_HAVE_NET
command_hook add_db(CLI::App& app, context& ctx);      // db copy
command_hook add_delete(CLI::App& app, context& ctx);
command_hook add_gc(CLI::App& app, context& ctx);
command_hook add_package(CLI::App& app, context& ctx);       // only with ACCELBENCH_HAVE_MLPERF
command_hook add_check_package(CLI::App& app, context& ctx); // only with ACCELBENCH_HAVE_MLPERF
command_hook add_report(CLI::App& app, context& ctx);        // only with ACCELBENCH_HAVE_REPORT
command_hook add_compare(CLI::App& app, context& ctx);       // only with ACCELBENCH_HAVE_COMPARE
command_hook add_history(CLI::App& app, context& ctx);       // only with ACCELBENCH_HAVE_COMPARE
command_hook add_ab(CLI::App& app, context& ctx);            // only with ACCELBENCH_HAVE_COMPARE
command_hook add_serve(CLI::App& app, context& ctx);         // only with ACCELBENCH_HAVE_SERVER
command_hook add_token(CLI::App& app, context& ctx);         // only with ACCELBENCH_HAVE_SERVER

} // namespace accelbench::cli
