// accelbench export: stored runs as one results document (schemas/results.schema.json).
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/row_export.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#ifdef ACCELBENCH_HAVE_MLPERF
#include "harness/app/cli/mlperf_commands.hpp"
#endif

namespace accelbench::cli {

namespace {

json systems_json(store::store& db) {
  json arr = json::array();
  for (const auto& s : db.systems())
    arr.push_back(store::to_json(s));
  return arr;
}

struct export_options {
  std::string db, output, selector, format = "json", rows;
  filter_options filter;
};

// Our results document (--format json), or rows (csv, jsonl).
std::string export_text(const export_options& o, store::store& db, const std::vector<run>& runs) {
  if (o.format == "json") {
    json scores = json::array();
#ifdef ACCELBENCH_HAVE_MLPERF
    scores = mlperf_scores(runs);
#endif
    return dump_json(results_document(runs, systems_json(db), scores), 2) + "\n";
  }
  std::ostringstream out;
  write_rows(out, runs, o.rows.empty() ? "run" : o.rows, o.format);
  return out.str();
}

int cmd_export(const export_options& o) {
  const std::string& db_path = o.db;
  const std::string& out = o.output;
  const bool to_stdout = out.empty() || out == "-";
  if (o.format != "json" && o.format != "csv" && o.format != "jsonl")
    throw usage_error(
        fmt::format("--format takes json, csv or jsonl, not '{}'", printable(o.format)));
  if (o.format == "json" && !o.rows.empty())
    throw usage_error("--rows applies to --format csv or jsonl (json exports whole runs)");
  // Checked before any work; the output may not replace the database it exports.
  if (!to_stdout)
    check_output_path(out, "--output", {resolve_db_path(db_path)});
  auto db = store::store::open(resolve_db_path(db_path), store::access::read_only);
  const std::string sel = combined_selector(o.selector, o.filter);
  auto f = sel.empty() ? store::run_filter{} : query::parse_selector(sel);
  f.with_log = o.format == "json";
  auto runs = db.query(f);
  query::keep_job(db, sel, runs);
  query::keep_accelerators(db, sel, runs);
  // As in compare: a selector that matches nothing is a mistake, not an empty export (the filter
  // flags alone may match nothing, as they always could).
  if (runs.empty() && !o.selector.empty())
    throw input_error(fmt::format("selector '{}' matches no runs in {}", printable(sel),
                                  printable(db.path().string())));
  const std::string text = export_text(o, db, runs);
  if (to_stdout)
    std::cout << text;
  else {
    write_file_atomic(out, text);
    std::cerr << fmt::format("accelbench: exported {} run(s) to {}\n", runs.size(), printable(out));
  }
  return exit_ok;
}

} // namespace

command_hook add_export(CLI::App& app, context&) {
  auto o = std::make_shared<export_options>();
  auto* exp = app.add_subcommand(
      "export",
      "Export runs as one JSON document (schemas/results.schema.json), CSV or JSON lines");
  add_db_option(exp, o->db);
  exp->add_option("selector", o->selector,
                  "Which runs: system name, system=, accelerator=, family=, tag=, workload=, "
                  "run=ID,ID, since=, until=, job= (joined with &; default: all)")
      ->check(text_value(false));
  add_filter_options(exp, o->filter, true);
  exp->add_option("--format", o->format,
                  "json (one results document, default) | csv | jsonl (rows for spreadsheets "
                  "and pandas)");
  exp->add_option("--rows", o->rows, "csv/jsonl: a row per run (default), metric or sample");
  add_output_option(exp, o->output, "Output file (default: stdout)");
  return {exp, [o] { return cmd_export(*o); }};
}

} // namespace accelbench::cli
