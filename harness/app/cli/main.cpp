// accelbench — command line entry point: the commands (each added by its add_<command>, in its
// own file; harness/app/cli/command.hpp), parsing, exit codes, and the agreement of ranks.
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/completion_command.hpp"
#include "harness/app/cli/register_all.hpp"
#include "harness/app/cli/usage.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/dist/dist.hpp"

using namespace accelbench;

namespace {

// Every command, in the order --help lists them.
std::vector<cli::command_hook> add_commands(CLI::App& app, cli::context& ctx) {
  std::vector<cli::command_hook> hooks;
  hooks.push_back(cli::add_env(app, ctx));
  hooks.push_back(cli::add_list(app, ctx));
  hooks.push_back(cli::add_run(app, ctx));
  hooks.push_back(cli::add_show(app, ctx));
  hooks.push_back(cli::add_export(app, ctx));
  hooks.push_back(cli::add_import(app, ctx));
  hooks.push_back(cli::add_delete(app, ctx));
  hooks.push_back(cli::add_gc(app, ctx));
#ifdef ACCELBENCH_HAVE_NET
  hooks.push_back(cli::add_publish(app, ctx));
#endif
#ifdef ACCELBENCH_HAVE_MLPERF
  hooks.push_back(cli::add_package(app, ctx));
  hooks.push_back(cli::add_check_package(app, ctx));
#endif
#ifdef ACCELBENCH_HAVE_REPORT
  hooks.push_back(cli::add_report(app, ctx));
#endif
#ifdef ACCELBENCH_HAVE_COMPARE
  hooks.push_back(cli::add_compare(app, ctx));
  hooks.push_back(cli::add_ab(app, ctx));
  hooks.push_back(cli::add_history(app, ctx));
#endif
  hooks.push_back(cli::add_db(app, ctx));
#ifdef ACCELBENCH_HAVE_SERVER
  hooks.push_back(cli::add_serve(app, ctx));
  hooks.push_back(cli::add_token(app, ctx));
#endif
  hooks.push_back(cli::add_completion(app, ctx.reg));
  hooks.push_back(cli::add_man(app));
  return hooks;
}

// CLI11's parse: 0 when the command line holds a command to run, else the exit code (help,
// version, or a usage error with the nearest match).
int parse(CLI::App& app, int argc, char** argv, bool& done) {
  done = true;
  if (std::string why = cli::unknown_command_message(app, argc, argv); !why.empty()) {
    std::cerr << "accelbench: usage error: " << why << "\n";
    return exit_usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A mistyped option explains the error best ("--baselin" makes --baseline missing).
    std::string why = cli::unknown_option_message(app, argc, argv);
    if (why.empty())
      why = printable(e.what()) + " (see accelbench --help)";
    std::cerr << "accelbench: usage error: " << why << "\n";
    return exit_usage;
  }
  done = false;
  return exit_ok;
}

int run_hooks(const std::vector<cli::command_hook>& hooks) {
  try {
    for (const auto& h : hooks)
      if (*h.app)
        return h.run();
  } catch (const error& e) {
    // One line, whatever a name in the message holds (a newline, an escape sequence).
    std::cerr << "accelbench: error: " << printable(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "accelbench: internal error: " << printable(e.what()) << "\n";
    return exit_internal;
  }
  return exit_usage;
}

} // namespace

int run_command_line(int argc, char** argv) {
  registry reg;
  try {
    cli::register_all(reg);
  } catch (const std::exception& e) {
    std::cerr << "accelbench: internal error while registering workloads: " << e.what() << "\n";
    return exit_internal;
  }

  CLI::App app{
      "accelbench — benchmark harness and reporter for AI accelerators (MLPerf style)\n"
      "Exit codes: 0 all runs VALID, 1 a run failed or was INVALID (compare: a regression),\n"
      "2 usage or input error, 3 internal error, 4 compare --strict: inconclusive."};
  app.set_version_flag("--version", [&reg] { return cli::version_text(reg); });
  app.require_subcommand(1);
  app.fallthrough(false);

  cli::context ctx{reg, argc, argv};
  const auto hooks = add_commands(app, ctx);
  cli::add_examples(app);

  bool done = false;
  if (int rc = parse(app, argc, argv, done); done)
    return rc;
  // Across ranks only `run` runs on every rank; any other command runs on rank 0 alone.
  if (dist::distributed() && !dist::is_root() && !*app.get_subcommand("run"))
    return exit_ok;
  return run_hooks(hooks);
}

namespace {

// Every rank must be given the same command line: the first argument that differs
// from rank 0's is an input error on every rank, named with both values.
std::string command_line_disagreement(int argc, char** argv) {
  json mine = json::array();
  for (int i = 1; i < argc; ++i)
    mine.push_back(printable(argv[i]));
  const std::string text = dump_json(mine);
  const json root = json::parse(dist::broadcast(text));
  std::string diff;
  for (size_t i = 0; diff.empty() && i < std::max(root.size(), mine.size()); ++i) {
    const std::string a = i < root.size() ? dump_json(root[i]) : "nothing",
                      b = i < mine.size() ? dump_json(mine[i]) : "nothing";
    if (a != b)
      diff = fmt::format("argument {}: rank 0 has {}, rank {} has {}", i + 1, a, dist::rank(), b);
  }
  return dist::first_nonempty(diff);
}

// The exit code of the job: every rank ends with the same one (rank 0's for commands that only
// rank 0 runs), and MPI is finalized on every rank.
int finish(int rc) {
  if (dist::distributed())
    rc = (int)dist::max_all(rc);
  dist::finalize();
  return rc;
}

// Joins the launcher's world, checks that every rank was given the same command line, and runs
// it. Errors are caught here or in run_command_line; main adds a last guard.
int run_on_every_rank(int argc, char** argv) {
  try {
    dist::init(&argc, &argv);
  } catch (const error& e) {
    std::cerr << "accelbench: error: " << printable(e.what()) << "\n";
    return e.exit_code();
  }
  if (dist::distributed()) {
    if (std::string d = command_line_disagreement(argc, argv); !d.empty()) {
      std::cerr << "accelbench: error: the ranks were given different command lines (each rank "
                   "must be given the "
                   "same command): "
                << d << "\n";
      return finish(exit_usage);
    }
  }
  return finish(run_command_line(argc, argv));
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run_on_every_rank(argc, argv);
  } catch (...) { // printing the message itself failed (e.g. out of memory): exit, do not abort
    return exit_internal;
  }
}
