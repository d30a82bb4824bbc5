// accelbench db: database tools (db copy).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/pg_store.hpp"
#include "harness/store/store.hpp"

namespace accelbench::cli {

namespace {

// --to as a file: its folder must exist. Other write commands create the folder of a new database
// (the results/ folder of a fresh checkout); a copy's destination is named on purpose, so a
// mistyped folder is refused rather than made. A folder that cannot be looked at is named with
// the system's reason (permission denied), never taken for a missing one.
void require_destination_folder(const std::string& to) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(to).has_parent_path() ? fs::path(to).parent_path() : ".";
  std::error_code ec;
  const auto st = fs::status(folder, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw storage_error(fmt::format("db copy: --to '{}': cannot look at its folder '{}': {}",
                                    printable(to), printable(folder.string()), ec.message()));
  if (!fs::exists(st))
    throw storage_error(fmt::format("db copy: --to '{}': the folder '{}' does not exist (db copy "
                                    "creates the database file, not its folders)",
                                    printable(to), printable(folder.string())));
  if (!fs::is_directory(st))
    throw storage_error(fmt::format("db copy: --to '{}': '{}' is not a folder", printable(to),
                                    printable(folder.string())));
  // A new file needs a folder this process may write: asked of the system directly, since SQLite
  // reports the refusal as "unable to open database file (No such file or directory)".
  if (!fs::exists(fs::path(to), ec) &&
      faccessat(AT_FDCWD, folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
    throw storage_error(fmt::format("db copy: --to '{}': cannot create the database in the folder "
                                    "'{}': {}",
                                    printable(to), printable(folder.string()),
                                    std::strerror(errno)));
}

// accelbench db copy: every system and run of one store into another (SQLite file or
// postgresql:// URI, either way). Idempotent by run uuid: a rerun, or a copy started again after
// an interruption, stores nothing twice.
int cmd_db_copy(const std::string& from, const std::string& to, size_t batch, bool quiet) {
  if (from.empty() || to.empty())
    throw usage_error("db copy: --from and --to must name databases");
  std::error_code ec;
  const bool same = from == to || (!store::is_postgres_uri(from) && !store::is_postgres_uri(to) &&
                                   std::filesystem::equivalent(from, to, ec));
  if (same)
    throw usage_error(
        fmt::format("db copy: --from and --to name the same database '{}'",
                    store::is_postgres_uri(from) ? store::redact_uri(from) : printable(from)));
  if (!store::is_postgres_uri(to))
    require_destination_folder(to);
  auto src = store::store::open(from, store::access::read_only);
  auto dst = store::store::open(to, store::access::read_write);
  const auto t0 = std::chrono::steady_clock::now();
  auto progress = [&](const store::copy_result& r) {
    if (!quiet)
      std::cerr << fmt::format("\raccelbench: db copy: {} run(s) read, {} copied", r.runs_seen,
                               r.runs_copied);
  };
  store::copy_result r = store::copy_store(src, dst, batch, progress);
  if (!quiet && r.runs_seen > 0)
    std::cerr << "\n";
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format(
      "{} run(s) copied from {} to {} ({} already present), {} sample(s), {} system(s), {:.2f} s\n",
      r.runs_copied, printable(src.path().string()), printable(dst.path().string()),
      r.runs_seen - r.runs_copied, r.samples_copied, r.systems, s);
  return exit_ok;
}

} // namespace

command_hook add_db(CLI::App& app, context&) {
  struct options {
    std::string from, to;
    size_t batch = 200;
    bool quiet = false;
  };
  auto o = std::make_shared<options>();
  auto* db = app.add_subcommand(
      "db", "Database tools: db copy moves runs between stores (SQLite file, postgresql:// URI)");
  db->require_subcommand(1);
  auto* copy =
      db->add_subcommand("copy", "Copy every run (samples, metrics, tags, environment, log) and "
                                 "system from one store to another; reruns copy nothing twice");
  copy->add_option("--from", o->from,
                   "Source database: file path or postgresql://USER@HOST/DB URI (opened read-only)")
      ->required();
  copy->add_option(
          "--to", o->to,
          "Destination database: file path (in a folder that exists) or postgresql:// URI (created "
          "and migrated when needed)")
      ->required();
  copy->add_option("--batch", o->batch, "Runs per transaction (default 200)")
      ->check(integer_in(1, 100000));
  copy->add_flag("--quiet", o->quiet, "No progress on stderr");
  return {copy, [o] { return cmd_db_copy(o->from, o->to, o->batch, o->quiet); }};
}

} // namespace accelbench::cli
