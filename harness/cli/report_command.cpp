#include "harness/cli/report_command.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "harness/cli/report_side.hpp"
#include "harness/cli/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "reporters/json/json_export.hpp"
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
    check_output_path(o.json_path, "--json", inputs);
  if (!o.html_path.empty())
    check_output_path(o.html_path, "--html", inputs);
  std::error_code same_ec;
  if (!o.json_path.empty() && !o.html_path.empty() &&
      (o.json_path == o.html_path ||
       std::filesystem::equivalent(o.json_path, o.html_path, same_ec)))
    throw usage_error(fmt::format("--json and --html name the same file '{}'", o.json_path));
  report::options opt;
  opt.devices = o.devices_file.empty() ? report::device_catalogue::builtin()
                                       : report::device_catalogue::load(o.devices_file);
  opt.prices = o.prices_file.empty() ? report::price_table::builtin()
                                     : report::price_table::load(o.prices_file);
  for (const auto& p : o.prices)
    opt.prices.apply_override(p, opt.devices);
  // CPU runs measured before extra.peak existed get this machine's cached peak.
  opt.use_cached_cpu_peak = true;

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
    return select_runs(*db, sel);
  };
  selection b = select(o.baseline);
  selection c = select(o.candidate);
  report::side bs = report_side(b.label, std::move(b.runs), std::move(b.systems));
  report::side cs = report_side(c.label, std::move(c.runs), std::move(c.systems));
  report::report_model rep = report::build_report(bs, cs, opt);

  // Both files or neither.
  std::vector<std::pair<std::filesystem::path, std::string>> outputs;
  if (!o.json_path.empty())
    outputs.emplace_back(o.json_path, dump_json(report::to_json(rep), 2) + "\n");
  if (!o.html_path.empty())
    outputs.emplace_back(o.html_path, report::to_html(rep));
  write_files_atomic(outputs);

  if (o.quiet)
    std::cout << rep.headline << "\n";
  else
    std::cout << report::summary_text(rep);
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

} // namespace accelbench::cli
