#include "harness/app/cli/report_command.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/query/formats.hpp"
#include "harness/app/query/report_side.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/error.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::cli {

int cmd_report(const report_cli_options& o) {
  if (o.baseline.empty() || o.candidate.empty())
    throw usage_error("report needs --baseline SEL and --candidate SEL");
  // Every output is checked before any work: a bad --html must not leave a fresh --json behind.
  std::string db_path = o.db;
  if (db_path.empty())
    db_path = store::store::default_path().string();
  const std::vector<std::filesystem::path> inputs = {db_path, o.baseline, o.candidate};
  if (!o.json_path.empty())
    check_output_path(o.json_path, "--output", inputs);
  if (!o.html_path.empty())
    check_output_path(o.html_path, "--html", inputs);
  std::error_code same_ec;
  if (!o.json_path.empty() && !o.html_path.empty() &&
      (o.json_path == o.html_path ||
       std::filesystem::equivalent(o.json_path, o.html_path, same_ec)))
    throw usage_error(fmt::format("--output and --html name the same file '{}'", o.json_path));
  report::options opt;
  opt.devices = o.devices_file.empty() ? report::device_catalogue::builtin()
                                       : report::device_catalogue::load(o.devices_file);
  opt.prices = o.prices_file.empty() ? report::price_table::builtin()
                                     : report::price_table::load(o.prices_file);
  for (const auto& p : o.prices)
    opt.prices.apply_override(p, opt.devices);
  opt.trust_loaded = o.trust_loaded;

  // A file selector needs no database; open one only when a side needs it (and never create it).
  auto needs_db = [](const std::string& sel) { return !(sel.ends_with(".json")); };
  std::optional<store::store> db;
  auto select = [&](const std::string& sel) {
    if (needs_db(sel) && !db)
      db.emplace(store::store::open(db_path, store::access::read_only));
    if (!db) {
      // select_runs reads files without touching the database; it still takes one by reference.
      db.emplace(store::store::in_memory());
    }
    return query::select_runs(*db, sel);
  };
  query::selection b = select(o.baseline);
  query::selection c = select(o.candidate);
  opt.floor_by_ruleset = compare::settings_from_rulesets({&b.runs, &c.runs}).floor_by_ruleset;
  report::side bs = query::report_side(b.label, std::move(b.runs), std::move(b.systems));
  report::side cs = query::report_side(c.label, std::move(c.runs), std::move(c.systems));
  // CPU runs measured before extra.peak existed get this machine's cached peak, as data.
  if (report::needs_machine_cpu_peak(bs, cs, opt.devices))
    opt.machine_cpu_peak = cached_cpu_peak();
  report::report_model rep = report::build_report(bs, cs, opt);

  // Each output is a format of the one table (harness/app/query/formats.hpp), chosen by the flag
  // that names its file. Both files or neither.
  auto write = [&rep](std::string_view format) {
    return output::find_format(query::report_formats(), format)->write(rep, {});
  };
  std::vector<std::pair<std::filesystem::path, std::string>> outputs;
  if (!o.json_path.empty())
    outputs.emplace_back(o.json_path, write("json"));
  if (!o.html_path.empty())
    outputs.emplace_back(o.html_path, write("html"));
  write_files_atomic(outputs);

  if (o.quiet && !o.json_stdout)
    std::cout << rep.headline << "\n";
  else
    std::cout << write(o.json_stdout ? "json" : "text");
  if (!o.json_path.empty())
    std::cerr << fmt::format("accelbench: wrote {}\n", printable(o.json_path));
  if (!o.html_path.empty())
    std::cerr << fmt::format("accelbench: wrote {}\n", printable(o.html_path));
  if (rep.pairs.empty()) {
    std::cerr << fmt::format("accelbench: no pairs: '{}' and '{}' share no workload and config; {} "
                             "unpaired group(s) are listed in the report\n",
                             printable(o.baseline), printable(o.candidate), rep.unpaired.size());
    return exit_failed;
  }
  return exit_ok;
}

command_hook add_report(CLI::App& app, context&) {
  auto o = std::make_shared<report_cli_options>();
  auto* rep = app.add_subcommand(
      "report", "A-vs-B report (e.g. H100 vs Blackwell) as JSON and a self-contained HTML page");
  add_sides_options(rep, o->baseline, o->candidate);
  add_output_option(rep, o->json_path,
                    "Write the report JSON (schemas/report.schema.json) to FILE");
  // --json alone: the report JSON on stdout, as --json elsewhere. --json FILE is the old spelling
  // of -o FILE (scripts use it): still accepted, with a note on stderr.
  auto* json_opt =
      rep->add_option("--json", o->json_arg,
                      "The report JSON on stdout instead of the summary (--json FILE: deprecated "
                      "spelling of -o FILE)")
          ->expected(0, 1)
          ->check(text_value(true));
  rep->add_option("--html", o->html_path, "Write the self-contained HTML page");
  add_db_option(rep, o->db);
  rep->add_option("--price", o->prices,
                  "Price per accelerator-hour MODEL=USD (repeatable), e.g. gb200=6.5");
  rep->add_option("--prices", o->prices_file, "Price table file (replaces results/prices.json)");
  rep->add_option("--devices", o->devices_file,
                  "Device catalogue file (replaces results/devices.json)");
  rep->add_flag("--quiet", o->quiet, "Only the one-sentence answer on stdout");
  rep->add_flag("--trust-loaded", o->trust_loaded,
                "Call changes from runs measured while other processes loaded the machine "
                "(otherwise such pairs are inconclusive)");
  return {rep, [o, json_opt] {
            if (json_opt->count() > 0 && !o->json_arg.empty()) {
              if (!o->json_path.empty())
                throw usage_error("--json FILE and -o FILE both name the report JSON; give -o");
              std::cerr << "accelbench: note: report --json FILE is deprecated; use -o FILE "
                           "(--json alone prints the JSON on stdout)\n";
              o->json_path = o->json_arg;
            } else if (json_opt->count() > 0) {
              o->json_stdout = true;
            }
            return cmd_report(*o);
          }};
}

} // namespace accelbench::cli
