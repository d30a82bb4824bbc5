// accelbench import: results from a file or URL (accelbench export, Google Benchmark JSON, an
// MLPerf results folder) into the database.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/net_options.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#ifdef ACCELBENCH_HAVE_MLPERF
#include "harness/app/cli/mlperf_commands.hpp"
#endif
#ifdef ACCELBENCH_HAVE_NET
#include "harness/app/net/publish.hpp"
#endif
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
#include "importers/gbench/gbench_import.hpp"
#endif

namespace accelbench::cli {

namespace {

struct import_options {
  std::string db, source, format;    // format "": detected from the content
  import_labels labels;              // --tag, --system
  std::vector<std::string> counters; // gbench: NAME=higher|lower
  net_cli_options net;
};

bool is_url(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
}

// A folder of MLPerf results: an organisation's results/ folder, or result_<i>.txt logs, within a
// few levels below it.
bool looks_like_mlperf_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string name = it->path().filename().string();
    if ((name == "results" && it->is_directory(ec)) ||
        (name.rfind("result_", 0) == 0 && name.ends_with(".txt")))
      return true;
  }
  return false;
}

// import without --format: a folder that holds MLPerf results, a JSON object with context and
// benchmarks (Google Benchmark), else our export format (whose reader says what is wrong with the
// file). `why` says what decided it, for the note on stderr; `say` is false for a document
// that names accelbench as its generator, whose format is known without a guess.
struct detected {
  std::string format, why;
  bool say = true;
};

detected detect_folder(const std::string& source) {
  if (looks_like_mlperf_folder(source))
    return {"mlperf", "a folder with MLPerf results"};
  return {"accelbench", "a folder without MLPerf results"}; // read_input_file says "a directory"
}

// An export of ours (or a file shipped in results/published) names its generator.
bool names_accelbench_as_generator(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  return doc.is_object() && doc.contains("generator") && doc["generator"].is_object() &&
         doc["generator"].value("name", "") == "accelbench";
}

detected detect_text([[maybe_unused]] const std::string& text) {
  if (names_accelbench_as_generator(text))
    return {"accelbench", "a document whose generator is accelbench", false};
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
  if (importers::looks_like_gbench_json(text))
    return {"gbench", "a JSON object with context and benchmarks"};
#endif
  return {"accelbench", "not Google Benchmark JSON (no context and benchmarks)"};
}

void say_detected(const std::string& source, const detected& d) {
  std::cerr << fmt::format("accelbench: import: {} is {}: read as --format {}\n", printable(source),
                           d.why, d.format);
}

std::map<std::string, direction> counter_directions(const std::vector<std::string>& args) {
  std::map<std::string, direction> out;
  for (const auto& a : args) {
    auto [name, dir] = split_assignment(a, "--counter");
    if (dir != "higher" && dir != "lower")
      throw usage_error(fmt::format("--counter {}: the direction must be higher or lower, not '{}'",
                                    printable(a), printable(dir)));
    out[name] = direction_from_string(dir);
  }
  return out;
}

// The text of a file or URL (the URL named without its credentials in `origin`).
std::string read_source(const import_options& o, std::string& origin) {
  origin = o.source;
  if (!is_url(o.source))
    return read_input_file(o.source, "input");
#ifdef ACCELBENCH_HAVE_NET
  origin = net::redact_url(o.source);
  return net::fetch_url(o.source, http_options_from(o.net));
#else
  throw usage_error("this build cannot fetch URLs (libcurl support not built)");
#endif
}

#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
// A user counter whose direction is not known is kept in the samples, not made a metric: said
// once per counter, with the way to make it one.
void note_unknown_counters(const std::vector<run>& runs,
                           const importers::gbench_import_options& g) {
  std::set<std::string> unknown;
  for (const auto& r : runs)
    for (const auto& s : r.samples)
      if (s.extra.contains("counters"))
        for (const auto& [k, v] : s.extra["counters"].items())
          if (!importers::gbench_counter_kind(k, g).known)
            unknown.insert(k);
  for (const auto& k : unknown)
    std::cerr << fmt::format(
        "accelbench: note: counter '{}' is kept in the samples but not made a "
        "metric: its direction is unknown (import --counter {}=higher|lower)\n",
        printable(k), printable(k));
}
#endif

std::vector<run> runs_from_gbench([[maybe_unused]] const std::string& text,
                                  [[maybe_unused]] const std::string& origin,
                                  [[maybe_unused]] const import_options& o) {
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
  importers::gbench_import_options g;
  g.system = o.labels.system;
  if (g.system.empty())
    g.system = capture_environment().value("hostname", "localhost");
  g.counter_directions = counter_directions(o.counters);
  std::set<std::string> renamed;
  g.renamed_counters = &renamed;
  size_t repaired = 0;
  auto runs = importers::runs_from_gbench_json(text, origin, g, &repaired);
  for (const auto& k : renamed)
    std::cerr << fmt::format("accelbench: note: counter '{}' is stored as '{}': every imported run "
                             "has a metric '{}' of its own\n",
                             printable(k), printable(importers::gbench_counter_metric_name(k)),
                             printable(k));
  if (repaired > 0)
    std::cerr << fmt::format(
        "accelbench: warning: {}: {} byte(s) that are not UTF-8 replaced with U+FFFD\n",
        printable(origin), repaired);
  note_unknown_counters(runs, g);
  return runs;
#else
  throw usage_error("this build cannot import Google Benchmark JSON");
#endif
}

// The job of an import command: a new id for the formats whose input is what one session measured
// (a Google Benchmark process's output; an MLPerf folder, whose logs of one system, benchmark and
// round are one submission). Our export format gets none: a results document holds the runs of
// any number of jobs, and its runs that bring no job id are not one job (history would take a
// month of nights as one point, comparisons a month of jobs as one).
std::string import_job_id(const std::string& format) {
  return format == "accelbench" ? "" : new_uuid();
}

// Only now, with everything read and checked, is the database opened (and perhaps created).
int store_imported(const import_options& o, std::vector<run>& runs, const json& systems,
                   const std::string& origin) {
  std::vector<store::system_record> records;
  for (const auto& s : systems)
    records.push_back(store::system_from_json(s));
  apply_import_labels(o.labels, runs, records);
  require_storable_runs(runs, origin); // --tag may have taken a run over the tags' limit
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_write);
  for (const auto& rec : records)
    db.upsert_system(rec);
  for (auto& r : runs)
    r.id = 0;
  size_t inserted = db.insert_runs(runs);
  std::cout << fmt::format("imported {} run(s) from {}{} ({} already present)\n", inserted, origin,
                           import_job_words(o.labels, runs, inserted), runs.size() - inserted);
  return exit_ok;
}

std::vector<run> read_runs(const import_options& o, const std::string& format,
                           const std::string& text, const std::string& origin, json& systems) {
  return format == "gbench" ? runs_from_gbench(text, origin, o)
                            : read_results_document(text, origin, &systems);
}

int cmd_import(import_options o) {
  if (!o.format.empty() && o.format != "accelbench" && o.format != "gbench" && o.format != "mlperf")
    throw usage_error(
        fmt::format("unknown import format '{}' (accelbench, gbench, mlperf)", o.format));
  if (!o.counters.empty() && !o.format.empty() && o.format != "gbench")
    throw usage_error("--counter applies to Google Benchmark files (--format gbench)");
  if (std::string why = limits::tags_problem(o.labels.tags); !why.empty())
    throw usage_error("--tag: " + why);
  detected d{o.format, ""};
  if (d.format.empty() && !is_url(o.source) && std::filesystem::is_directory(o.source))
    d = detect_folder(o.source);
#ifdef ACCELBENCH_HAVE_MLPERF
  if (d.format == "mlperf") {
    if (!d.why.empty())
      say_detected(o.source, d);
    o.labels.job_id = import_job_id(d.format);
    return cmd_import_mlperf(o.db, o.source, false, o.labels);
  }
#endif
  // Read and check everything before the store is touched: a bad file leaves the database as it
  // was. What was detected is said once the file was read (an error says it in its one line).
  std::string origin;
  const std::string text = read_source(o, origin);
  if (d.format.empty())
    d = detect_text(text);
  json systems = json::array();
  std::vector<run> runs;
  try {
    runs = read_runs(o, d.format, text, origin, systems);
  } catch (const input_error& e) {
    if (d.why.empty())
      throw;
    throw input_error(fmt::format("{} (read as --format {}: {})", e.what(), d.format, d.why));
  }
  if (!d.why.empty() && d.say)
    say_detected(origin, d);
  o.labels.job_id = import_job_id(d.format);
  return store_imported(o, runs, systems, origin);
}

} // namespace

namespace {
// Each of `tags` the run does not have yet, in order: hashed, since both lists may be long.
void add_tags(run& r, const std::vector<std::string>& tags) {
  std::unordered_set<std::string> have(r.tags.begin(), r.tags.end());
  for (const auto& t : tags)
    if (have.insert(t).second)
      r.tags.push_back(t);
}
} // namespace

void apply_import_labels(const import_labels& l, std::vector<run>& runs,
                         std::vector<store::system_record>& systems) {
  for (auto& r : runs) {
    add_tags(r, l.tags);
    if (!l.job_id.empty() && query::job_of(r).empty() && (r.extra.is_null() || r.extra.is_object()))
      r.extra["job_id"] = l.job_id;
  }
  if (l.system.empty())
    return;
  std::set<std::string> named;
  for (const auto& r : runs)
    named.insert(r.system);
  if (named.size() > 1)
    throw usage_error(fmt::format("--system {}: the runs name {} systems ({}); one name would "
                                  "merge them",
                                  printable(l.system), named.size(),
                                  printable(fmt::format("{}", fmt::join(named, ", ")))));
  for (auto& r : runs)
    r.system = l.system;
  std::vector<store::system_record> kept;
  for (auto& s : systems)
    if (named.count(s.name)) {
      s.name = l.system;
      kept.push_back(s);
    }
  systems = kept;
}

std::string import_job_words(const import_labels& l, const std::vector<run>& runs,
                             size_t inserted) {
  const bool any = std::any_of(runs.begin(), runs.end(),
                               [&](const run& r) { return query::job_of(r) == l.job_id; });
  return inserted > 0 && any && !l.job_id.empty() ? " as job=" + l.job_id : "";
}

command_hook add_import(CLI::App& app, context&) {
  auto o = std::make_shared<import_options>();
  auto* imp = app.add_subcommand("import", "Import results from a file or URL (accelbench export, "
                                           "Google Benchmark JSON, MLPerf results folder)");
  imp->add_option("source", o->source, "File or http(s) URL (a folder for --format mlperf)")
      ->required();
  imp->add_option("--system", o->labels.system,
                  "Store the runs under this system name (gbench default: hostname; others: "
                  "the file's own)")
      ->check(text_value(false));
  imp->add_option("--tag", o->labels.tags, "Tag every imported run (repeatable)")
      ->check(text_value(false));
  add_net_options(imp, o->net);
  imp->add_option("--format", o->format,
                  "accelbench (our export format) | gbench (Google Benchmark "
                  "--benchmark_format=json) | mlperf (an MLCommons Training results folder); "
                  "default: detected from the content");
  imp->add_option("--counter", o->counters,
                  "gbench: the direction of a user counter NAME=higher|lower (repeatable; rates "
                  "and times are known by name)")
      ->check(text_value(false));
  add_db_option(imp, o->db);
  return {imp, [o] { return cmd_import(*o); }};
}

} // namespace accelbench::cli
