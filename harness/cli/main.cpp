// accelbench — command line entry point: argument parsing, commands, exit codes.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/completion_command.hpp"
#include "harness/cli/usage.hpp"
#ifdef ACCELBENCH_HAVE_MLPERF
#include "harness/cli/mlperf_commands.hpp"
#endif
#ifdef ACCELBENCH_HAVE_COMPARE
#include "harness/cli/compare_commands.hpp"
#endif
#include "harness/cli/selector.hpp"
#ifdef ACCELBENCH_HAVE_REPORT
#include "harness/cli/report_command.hpp"
#endif
#ifdef ACCELBENCH_HAVE_NET
#include "harness/net/http.hpp"
#include "harness/net/publish.hpp"
#endif
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
#include "reporters/gbench/gbench_import.hpp"
#endif
#ifdef ACCELBENCH_HAVE_SERVER
#include "harness/server/server.hpp"
#endif
#include "harness/cli/register_all.hpp"
#include "harness/cli/table.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/output_file.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ranks.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "harness/dist/dist.hpp"
#include "harness/store/pg_store.hpp"
#include "reporters/json/json_export.hpp"

using namespace accelbench;
using accelbench::cli::table;

namespace {

// Option values are checked when the command line is parsed: a value that would silently disable
// or invert what the option controls (a timeout of 0, NaN or 1e30, a negative count) is a usage
// error naming the option and the value. CLI11's own Range lets NaN through (it compares false).
CLI::Validator number_in(double lo, double hi, bool lo_open, bool hi_open) {
  const std::string range =
      fmt::format("{}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(in.c_str(), &end);
        const bool ok = !in.empty() && *end == '\0' && std::isfinite(v) &&
                        (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
        return ok ? std::string() : fmt::format("'{}' is not a number in {}", printable(in), range);
      },
      "NUMBER in " + range);
}

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = fmt::format("[{}, {}]", lo, hi);
  return CLI::Validator(
      [=](std::string& in) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        const bool ok =
            !in.empty() && ec == std::errc() && end == in.data() + in.size() && v >= lo && v <= hi;
        return ok ? std::string()
                  : fmt::format("'{}' is not an integer in {}", printable(in), range);
      },
      "INTEGER in " + range);
}

// A seed is any 64-bit unsigned value; "-1" would otherwise wrap to 2^64-1.
CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        const bool ok = !in.empty() && ec == std::errc() && end == in.data() + in.size();
        return ok ? std::string()
                  : fmt::format("'{}' is not an integer in [0, 2^64-1]", printable(in));
      },
      "UINT64");
}

// Adapts a check that throws (one home for the rule, shared with the commands) to CLI11.
template <class F> CLI::Validator checked_by(F check, const std::string& description) {
  return CLI::Validator(
      [check](std::string& in) -> std::string {
        try {
          check(in);
        } catch (const error& e) {
          return e.what();
        }
        return {};
      },
      description);
}

// Stored or matched against stored text: UTF-8, and (for tags) not empty.
CLI::Validator text_value(bool allow_empty) {
  return checked_by(
      [allow_empty](const std::string& v) { cli::require_text(v, "value", allow_empty); }, "TEXT");
}

CLI::Validator date_value() {
  return checked_by([](const std::string& v) { cli::require_date(v, "date"); }, "YYYY-MM-DD");
}

int cmd_env(bool as_json, bool reprobe) {
  json env = capture_environment();
  auto peak = cached_cpu_peak(reprobe);
  json backends = json::array();
  for (const auto& b : cli::backend_statuses())
    backends.push_back({{"name", b.name},
                        {"available", b.available},
                        {"detail", b.detail},
                        {"devices", b.devices}});
  if (as_json) {
    std::cout << dump_json(json{{"environment", env},
                                {"backends", backends},
                                {"peak", peak.to_json()},
                                {"fingerprint", environment_fingerprint(env)}},
                           2)
              << "\n";
    return exit_ok;
  }
  std::cout << fmt::format("accelbench {} (revision {}{})\n", build_info::version(),
                           build_info::git_revision(), build_info::git_dirty() ? ", dirty" : "");
  std::cout << fmt::format("cpu        {} — {} logical cores, {} MHz, {}\n",
                           env["cpu"]["model"].get<std::string>(),
                           env["cpu"]["logical_cores"].get<int>(), env["cpu"]["mhz"].get<double>(),
                           env["cpu"]["isa"].get<std::string>());
  std::cout << fmt::format("memory     {:.1f} GiB total, {:.1f} GiB available\n",
                           env["memory"]["total_bytes"].get<double>() / 1073741824.0,
                           env["memory"]["available_bytes"].get<double>() / 1073741824.0);
  std::cout << fmt::format("os         {} ({})\n", env["os"]["name"].get<std::string>(),
                           env["os"]["kernel"].get<std::string>());
  std::cout << fmt::format("compiler   {} [{}]\n", env["compiler"].get<std::string>(),
                           env["build_type"].get<std::string>());
  for (const auto& [k, v] : env["libraries"].items())
    std::cout << fmt::format("library    {:<9} {}\n", k, v.get<std::string>().substr(0, 100));
  std::cout << fmt::format("peak       fp32 {:.3f} TFLOP/s, bf16 {:.3f} TFLOP/s ({} threads, {} "
                           "FMA probe, measured {})\n",
                           peak.fp32_tflops, peak.bf16_tflops, peak.threads, peak.isa,
                           peak.measured_at);
  for (const auto& b : cli::backend_statuses())
    std::cout << fmt::format("backend    {:<5} {} — {}\n", b.name,
                             b.available ? "available" : "unavailable", b.detail);
  std::cout << fmt::format("fingerprint {}\n", environment_fingerprint(env));
  return exit_ok;
}

int cmd_list(const registry& reg, const std::string& what, bool as_json) {
  if (what == "workloads" || what.empty()) {
    json out = json::array();
    table t({"workload", "family", "backends", "ruleset", "parameters"});
    for (const auto* w : reg.all()) {
      const auto& s = w->spec();
      json axes = json::array();
      std::string params;
      for (const auto& a : s.axes) {
        axes.push_back({{"name", a.name},
                        {"type", to_string(a.type)},
                        {"default", a.default_value},
                        {"choices", a.choices},
                        {"description", a.description}});
        params +=
            (params.empty() ? "" : " ") + a.name +
            (a.choices.empty() ? "" : "{" + fmt::format("{}", fmt::join(a.choices, "|")) + "}");
      }
      out.push_back({{"name", s.name},
                     {"family", s.family},
                     {"description", s.description},
                     {"backends", s.backends},
                     {"default_ruleset", s.default_ruleset},
                     {"primary_metric", s.primary_metric},
                     {"axes", axes}});
      t.add({s.name, s.family, fmt::format("{}", fmt::join(s.backends, ",")), s.default_ruleset,
             params});
    }
    if (as_json)
      std::cout << dump_json(out, 2) << "\n";
    else
      t.print(std::cout);
    return exit_ok;
  }
  if (what == "rulesets") {
    json out = json::array();
    table t({"ruleset", "version", "applies to", "description"});
    for (const auto& r : list_rulesets()) {
      out.push_back({{"id", r.id},
                     {"version", r.version},
                     {"applies_to", r.applies_to},
                     {"description", r.description},
                     {"path", r.path.string()}});
      t.add({r.id, r.version, fmt::format("{}", fmt::join(r.applies_to, ",")),
             cli::clip(r.description, 80)});
    }
    if (as_json)
      std::cout << dump_json(out, 2) << "\n";
    else
      t.print(std::cout);
    return exit_ok;
  }
  if (what == "suites" || what == "catalogues") {
    namespace fs = std::filesystem;
    json out = json::array();
    table t({"name", "workload", "description"});
    std::error_code ec;
    std::vector<fs::path> files;
    if (what == "suites") {
      for (const auto& f : fs::directory_iterator(data_root() / "suites", ec))
        files.push_back(f.path());
    } else {
      for (const auto& w : fs::directory_iterator(data_root() / "workloads", ec))
        for (const auto& f : fs::directory_iterator(w.path() / "catalogues", ec))
          files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (f.extension() != ".json")
        continue;
      json d;
      try {
        d = read_json_file(f, "file");
      } catch (const input_error&) {
        continue; // listed files are ours; one that does not read is left out, not fatal
      }
      if (!d.is_object())
        continue;
      std::string desc = d.value("description", d.value("source", ""));
      out.push_back({{"name", f.stem().string()},
                     {"workload", d.value("workload", "")},
                     {"description", desc},
                     {"path", f.string()}});
      t.add({f.stem().string(), d.value("workload", "(several)"), cli::clip(desc, 90)});
    }
    if (as_json)
      std::cout << dump_json(out, 2) << "\n";
    else
      t.print(std::cout);
    return exit_ok;
  }
  throw usage_error(
      fmt::format("list takes workloads, rulesets, suites or catalogues, not '{}'", what));
}

// A run across ranks (issue 15): the topology, and the spread of the per-rank sample times with
// the rank that was consistently the slowest, if one was.
void print_ranks(const run& r) {
  const json d = r.environment.value("distributed", json());
  if (d.is_object()) {
    const json mpi = d.value("mpi", json::object());
    std::cout << fmt::format(
        "  ranks      {} ({} per node, {} node(s); launcher {}; {})\n",
        dump_json(d.value("world_size", json())), dump_json(d.value("ranks_per_node", json())),
        dump_json(d.value("nodes", json())), printable(d.value("launcher", std::string("?"))),
        printable(mpi.is_object() ? mpi.value("library", std::string("?")) : std::string("?")));
  }
  const json k = r.extra.value("ranks", json());
  if (!k.is_object() || !k.contains("median_s") || !k["median_s"].is_array())
    return;
  std::string medians;
  for (size_t i = 0; i < k["median_s"].size(); ++i)
    medians += fmt::format(
        "{}r{} {}", i ? "  " : "", i,
        k["median_s"][i].is_number() ? cli::format_value(k["median_s"][i].get<double>()) : "?");
  std::cout << fmt::format("    per-rank median ({}): {}\n", printable(r.sample_unit), medians);
  const double spread = k.value("spread_pct", 0.0), share = k.value("slowest_share", 0.0);
  std::cout << fmt::format("    spread {:.1f}% (slowest rank median vs fastest); rank {} slowest "
                           "in {:.0f}% of {} samples\n",
                           spread, dump_json(k.value("slowest_rank", json())), 100 * share,
                           dump_json(k.value("samples", json())));
  if (k.contains("consistently_slow_rank") && k["consistently_slow_rank"].is_number())
    std::cout << fmt::format("    rank {} is consistently slow\n",
                             dump_json(k["consistently_slow_rank"]));
}

// The environment a run was measured in, as `show RUN` prints it (the whole record: --json).
void print_environment(const json& env) {
  if (!env.is_object() || env.empty())
    return;
  auto text = [&env](const char* a, const char* b = nullptr) -> std::string {
    const json* v = env.contains(a) ? &env[a] : nullptr;
    if (v && b)
      v = v->is_object() && v->contains(b) ? &(*v)[b] : nullptr;
    if (!v || v->is_null())
      return "";
    return printable(v->is_string() ? v->get<std::string>() : dump_json(*v));
  };
  std::cout << "  environment\n";
  if (auto host = text("hostname"); !host.empty())
    std::cout << fmt::format("    host       {}\n", host);
  if (auto cpu = text("cpu", "model"); !cpu.empty())
    std::cout << fmt::format("    cpu        {} ({} logical cores, {})\n", cpu,
                             text("cpu", "logical_cores"), text("cpu", "isa"));
  if (auto mem = env.value("memory", json::object());
      mem.is_object() && mem.contains("total_bytes") && mem["total_bytes"].is_number())
    std::cout << fmt::format("    memory     {:.1f} GiB\n",
                             mem["total_bytes"].get<double>() / 1073741824.0);
  if (auto os = text("os", "name"); !os.empty())
    std::cout << fmt::format("    os         {} ({})\n", os, text("os", "kernel"));
  if (auto c = text("compiler"); !c.empty())
    std::cout << fmt::format("    compiler   {} [{}]\n", c, text("build_type"));
  if (env.contains("libraries") && env["libraries"].is_object())
    for (const auto& [k, v] : env["libraries"].items())
      std::cout << fmt::format("    library    {:<9} {}\n", printable(k),
                               printable(v.is_string() ? v.get<std::string>() : dump_json(v)));
  if (auto model = text("accelerator", "model"); !model.empty())
    std::cout << fmt::format("    accelerator {} x {}\n", text("accelerator", "count"), model);
}

void print_run_detail(const registry& reg, const run& r) {
  std::cout << fmt::format("run {}  ({})\n", r.id, printable(r.uuid));
  std::cout << fmt::format("  workload   {} on {}\n", printable(r.cfg.workload),
                           printable(r.cfg.backend));
  std::cout << fmt::format("  config     {}\n", printable(cli::short_config(r.cfg)));
  std::cout << fmt::format("  system     {}\n", printable(r.system));
  std::cout << fmt::format("  ruleset    {}\n", printable(r.ruleset));
  std::cout << fmt::format("  source     {}\n", printable(r.source));
  std::cout << fmt::format("  started    {}   finished {}\n", printable(r.started_at),
                           printable(r.finished_at));
  std::cout << fmt::format("  status     {}{}\n", to_string(r.status),
                           r.status_reason.empty() ? "" : " — " + printable(r.status_reason));
  std::cout << fmt::format("  validity   {}\n", r.valid ? "VALID" : "INVALID");
  for (const auto& why : r.invalid_reasons)
    std::cout << "    reason: " << printable(why) << "\n";
  if (!r.tags.empty())
    std::cout << fmt::format("  tags       {}\n",
                             printable(fmt::format("{}", fmt::join(r.tags, ", "))));
  std::cout << fmt::format("  revision   {}  fingerprint {}\n", printable(r.harness_revision),
                           printable(r.fingerprint));
  if (!r.metrics.empty()) {
    std::cout << "  metrics\n";
    for (const auto& m : r.metrics)
      std::cout << fmt::format("    {:<22} {:>16} ({} is better)\n", printable(m.name),
                               printable(format_quantity(m.value, m.unit)), to_string(m.dir));
  }
  if (!r.samples.empty()) {
    std::vector<double> v;
    for (const auto& s : r.samples)
      v.push_back(s.value);
    auto s = stats::summarize(v);
    std::cout << fmt::format("  samples    {} × {} ({} is better)\n", s.n, printable(r.sample_unit),
                             to_string(r.sample_dir));
    auto q = [&r](double v) { return printable(format_quantity(v, r.sample_unit)); };
    std::cout << fmt::format("    median {}  mean {}  stddev {}  cv {:.2f}%\n", q(s.median),
                             q(s.mean), q(s.stddev), 100 * s.cv);
    std::cout << fmt::format("    min {}  p5 {}  p95 {}  max {}\n", q(s.min), q(s.p5), q(s.p95),
                             q(s.max));
    std::cout << fmt::format("    median 95% CI [{}, {}] (bootstrap)\n", q(s.ci_low), q(s.ci_high));
  }
  if (r.extra.contains("implementation") && r.extra["implementation"].is_string())
    std::cout << fmt::format("  kernel     {}\n",
                             printable(r.extra["implementation"].get<std::string>()));
  print_ranks(r);
  for (const auto& w : cli::run_notes(r))
    std::cout << "  warning    " << printable(w) << "\n";
  print_environment(r.environment);
}

store::run_filter filter_from(const std::string& system, const std::string& workload,
                              const std::vector<std::string>& tags) {
  store::run_filter f;
  if (!system.empty())
    f.systems.push_back(system);
  if (!workload.empty())
    f.workloads.push_back(workload);
  f.tags = tags;
  return f;
}

int cmd_show(const registry& reg, const std::string& db_path, int64_t id, const std::string& system,
             const std::string& workload, const std::vector<std::string>& tags, int limit,
             bool as_json) {
  auto db = store::store::open(cli::resolve_db_path(db_path), store::access::read_only);
  if (id > 0) {
    auto r = db.get_run(id);
    if (!r)
      throw input_error(fmt::format("no run with id {} in {} (it holds {} runs)", id,
                                    db.path().string(), db.count_runs()));
    if (as_json)
      std::cout << dump_json(to_json(*r), 2) << "\n";
    else
      print_run_detail(reg, *r);
    return exit_ok;
  }
  auto f = filter_from(system, workload, tags);
  f.with_samples = false;
  auto runs = db.query(f);
  if (limit > 0 && (int)runs.size() > limit)
    runs.erase(runs.begin(), runs.end() - limit);
  if (as_json) {
    json arr = json::array();
    for (const auto& r : runs)
      arr.push_back(to_json(r));
    std::cout << dump_json(arr, 2) << "\n";
    return exit_ok;
  }
  table t(
      {"id", "started", "system", "workload", "config", "status", "validity", "result", "notes"});
  std::vector<std::string> footnotes;
  for (const auto& r : runs) {
    const metric* m = cli::headline_metric(reg, r);
    const auto notes = cli::run_notes(r);
    for (const auto& n : notes)
      footnotes.push_back(fmt::format("run {}: {}", r.id, printable(n)));
    t.add({std::to_string(r.id), r.started_at.substr(0, 19), r.system, r.cfg.workload,
           cli::clip(cli::short_config(r.cfg), 70), to_string(r.status),
           r.status == run_status::skipped ? "-" : (r.valid ? "VALID" : "INVALID"),
           m ? format_quantity(m->value, m->unit) : "",
           notes.empty() ? "" : fmt::format("{} warning(s)", notes.size())});
  }
  t.print(std::cout);
  for (const auto& f : footnotes)
    std::cout << "warning: " << f << "\n";
  std::cout << fmt::format("{} run(s) shown from {}\n", runs.size(), printable(db.path().string()));
#ifdef ACCELBENCH_HAVE_MLPERF
  // MLPerf results: the official-style score per system and benchmark over all matching runs.
  auto all = db.query(filter_from(system, workload, tags));
  json scores = cli::mlperf_scores(all);
  if (!scores.empty()) {
    table st({"system", "benchmark", "ruleset", "runs", "score (min)", "validity", "notes"});
    for (const auto& s : scores)
      st.add({s.value("system", ""), s.value("benchmark", ""), s.value("ruleset", ""),
              std::to_string(s.value("runs", 0)),
              s.value("valid", false) ? fmt::format("{:.4f}", s.value("score_min", 0.0)) : "-",
              s.value("valid", false) ? "VALID" : "INVALID",
              s.contains("reasons") && !s["reasons"].empty()
                  ? cli::clip(s["reasons"][0].get<std::string>(), 60)
                  : ""});
    std::cout << "\nMLPerf scores (olympic mean of per-run minutes x scaling factor)\n";
    st.print(std::cout);
  }
#endif
  return exit_ok;
}

json systems_json(store::store& db) {
  json arr = json::array();
  for (const auto& s : db.systems())
    arr.push_back(store::to_json(s));
  return arr;
}

int cmd_export(const std::string& db_path, const std::string& system, const std::string& workload,
               const std::vector<std::string>& tags, const std::string& out) {
  const bool to_stdout = out.empty() || out == "-";
  // Checked before any work; the output may not replace the database it exports.
  if (!to_stdout)
    check_output_path(out, "--output", {cli::resolve_db_path(db_path)});
  auto db = store::store::open(cli::resolve_db_path(db_path), store::access::read_only);
  auto f = filter_from(system, workload, tags);
  f.with_log = true;
  auto runs = db.query(f);
  json scores = json::array();
#ifdef ACCELBENCH_HAVE_MLPERF
  scores = cli::mlperf_scores(runs);
#endif
  json doc = reporters::results_document(runs, systems_json(db), scores);
  std::string text = dump_json(doc, 2) + "\n";
  if (to_stdout)
    std::cout << text;
  else {
    write_file_atomic(out, text);
    std::cerr << fmt::format("accelbench: exported {} run(s) to {}\n", runs.size(), printable(out));
  }
  return exit_ok;
}

struct net_cli_options {
  bool insecure = false, allow_http = false;
  std::string token_env = "ACCELBENCH_TOKEN";
  double connect_timeout_s = 10, timeout_s = 60;
  int retries = 5;
  size_t batch_size = 1;
  std::string system; // gbench import: the system name to store
};

#ifdef ACCELBENCH_HAVE_NET
net::http_options http_options_from(const net_cli_options& n) {
  net::http_options h;
  h.token_env = n.token_env;
  h.insecure = n.insecure;
  h.allow_plain_http = n.allow_http;
  h.connect_timeout = std::chrono::milliseconds((int64_t)(n.connect_timeout_s * 1000));
  h.total_timeout = std::chrono::milliseconds((int64_t)(n.timeout_s * 1000));
  h.max_attempts = std::max(1, n.retries);
  h.log = [](const std::string& line) { std::cerr << "accelbench: " << line << "\n"; };
  return h;
}
#endif

int cmd_import(const std::string& db_path, const std::string& source, const std::string& format,
               const net_cli_options& n) {
#ifdef ACCELBENCH_HAVE_MLPERF
  if (format == "mlperf")
    return cli::cmd_import_mlperf(db_path, source, false);
#endif
  if (format != "accelbench" && format != "gbench")
    throw usage_error(
        fmt::format("unknown import format '{}' (accelbench, gbench, mlperf)", format));
  // Read and check everything before the store is touched: a bad file leaves the database as it
  // was.
  std::string text, origin = source;
  bool remote = source.rfind("http://", 0) == 0 || source.rfind("https://", 0) == 0;
  if (remote) {
#ifdef ACCELBENCH_HAVE_NET
    text = net::fetch_url(source, http_options_from(n));
    origin = net::redact_url(source);
#else
    throw usage_error("this build cannot fetch URLs (libcurl support not built)");
#endif
  } else {
    text = read_input_file(source, "input");
  }
  json systems = json::array();
  std::vector<run> runs;
  if (format == "gbench") {
#ifdef ACCELBENCH_HAVE_GBENCH_IMPORT
    std::string system = n.system;
    if (system.empty())
      system = capture_environment().value("hostname", "localhost");
    size_t repaired = 0;
    runs = reporters::runs_from_gbench_json(text, origin, system, &repaired);
    if (repaired > 0)
      std::cerr << fmt::format(
          "accelbench: warning: {}: {} byte(s) that are not UTF-8 replaced with U+FFFD\n",
          printable(origin), repaired);
#else
    throw usage_error("this build cannot import Google Benchmark JSON");
#endif
  } else {
    runs = reporters::read_results_document(text, origin, &systems);
  }
  std::vector<store::system_record> records;
  for (const auto& s : systems)
    records.push_back(store::system_from_json(s));
  // Only now, with everything read and checked, is the database opened (and perhaps created).
  auto db = store::store::open(cli::resolve_db_path(db_path), store::access::read_write);
  for (const auto& rec : records)
    db.upsert_system(rec);
  for (auto& r : runs)
    r.id = 0;
  size_t inserted = db.insert_runs(runs);
  std::cout << fmt::format("imported {} run(s) from {} ({} already present)\n", inserted, origin,
                           runs.size() - inserted);
  return exit_ok;
}

#ifdef ACCELBENCH_HAVE_NET
int cmd_publish(const std::string& db_path, const std::string& url, const std::string& sel,
                const net_cli_options& n) {
  auto db = store::store::open(cli::resolve_db_path(db_path), store::access::read_only);
  std::vector<run> runs;
  std::map<std::string, store::system_record> sysmap;
  if (sel.empty()) {
    store::run_filter f;
    f.with_log = true;
    runs = db.query(f);
    for (const auto& s : db.systems())
      sysmap[s.name] = s;
  } else {
    auto selection = cli::select_runs(db, sel);
    runs = std::move(selection.runs);
    sysmap = std::move(selection.systems);
  }
  if (runs.empty())
    throw input_error(fmt::format("nothing to publish: {} holds no runs", db.path().string()));
  json systems = json::array();
  for (const auto& [name, s] : sysmap)
    systems.push_back(store::to_json(s));
  net::publish_options po;
  po.url = url;
  po.http = http_options_from(n);
  po.batch_size = std::max<size_t>(1, n.batch_size);
  auto res = net::publish_runs(runs, systems, po);
  std::cout << fmt::format("published {} run(s) to {} in {} request(s) ({} attempt(s))\n", res.runs,
                           net::redact_url(url), res.requests, res.attempts);
  return exit_ok;
}
#endif

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
  app.set_version_flag("--version", [] { return cli::version_text(); });
  app.require_subcommand(1);
  app.fallthrough(false);

  bool as_json = false;
  std::string db_path;

  auto* env =
      app.add_subcommand("env", "Show the detected CPU, available backends and the measured peak");
  env->add_flag("--json", as_json, "Machine-readable output");
  bool reprobe = false;
  env->add_flag("--reprobe", reprobe,
                "Run the FMA peak probe again (keeps the higher of the cached and new rates)");

  std::string list_what = "workloads";
  auto* list = app.add_subcommand("list", "List workloads, rulesets, suites or catalogues");
  list->add_option("what", list_what, "workloads | rulesets | suites | catalogues")
      ->check(CLI::IsMember({"workloads", "rulesets", "suites", "catalogues"}));
  list->add_flag("--json", as_json, "Machine-readable output");

  cli::run_options ro;
  auto* run = app.add_subcommand("run", "Run a workload (or a suite) and store every run");
  run->add_option("workload", ro.workload, "Workload name (see accelbench list)");
  run->add_option("--backend", ro.backend, "Backend: cpu (default) or cuda");
  run->add_option("--set", ro.sets, "Parameter value KEY=VALUE (repeatable)")
      ->take_all()
      ->check(text_value(false));
  run->add_option("--sweep", ro.sweeps, "Cartesian sweep KEY=V1,V2,... (repeatable)")
      ->check(text_value(false));
  run->add_option("--shapes", ro.shapes,
                  "Run a shape catalogue (e.g. llama3-70b; see accelbench list catalogues)");
  run->add_option("--rules", ro.rules, "Ruleset id or file (default: the workload's)");
  run->add_option("--rule", ro.rule_overrides,
                  "Override a ruleset setting KEY=VALUE (e.g. repetitions=5)")
      ->check(text_value(false));
  run->add_option("--system", ro.system, "System name stored with the runs (default: hostname)")
      ->check(text_value(false));
  run->add_option("--tag", ro.tags, "Tag the runs (repeatable)")->check(text_value(false));
  run->add_option("--suite", ro.suite, "Run a suite by name (quick, nightly) or file");
  run->add_option("--db", ro.db,
                  "Database path (default: $ACCELBENCH_DB or results/accelbench.db)");
  run->add_option("--seed", ro.seed, "Seed for workloads that draw one (0: a fresh random seed)")
      ->check(unsigned_64());
  run->add_flag("--force", ro.force, "Allow sweeps over 10,000 configs");
  run->add_flag("--quiet", ro.quiet, "No progress on stderr");
  run->add_flag("--json", ro.json, "Machine-readable output");

  int64_t show_id = 0;
  std::string f_system, f_workload, out_file;
  std::vector<std::string> f_tags;
  int limit = 50;
  auto* show = app.add_subcommand("show", "Show stored runs, or one run in detail");
  show->add_option("run_id", show_id, "Run id")
      ->check(integer_in(1, std::numeric_limits<int64_t>::max()));
  show->add_option("--db", db_path, "Database path");
  show->add_option("--system", f_system, "Only this system")->check(text_value(false));
  show->add_option("--workload", f_workload, "Only this workload (prefix*)");
  show->add_option("--tag", f_tags, "Only runs with this tag")->check(text_value(false));
  show->add_option("--limit", limit, "Show the last N runs (default 50, 0: all)")
      ->check(integer_in(0, std::numeric_limits<int>::max()));
  show->add_flag("--json", as_json, "Machine-readable output");

  auto* exp = app.add_subcommand("export",
                                 "Export runs as one JSON document (schemas/results.schema.json)");
  exp->add_option("--db", db_path, "Database path");
  exp->add_option("--system", f_system, "Only this system")->check(text_value(false));
  exp->add_option("--workload", f_workload, "Only this workload (prefix*)");
  exp->add_option("--tag", f_tags, "Only runs with this tag")->check(text_value(false));
  exp->add_option("-o,--output", out_file, "Output file (default: stdout)")
      ->check(text_value(false));

  std::string import_src, import_format = "accelbench";
  net_cli_options net_opts;
  auto add_net_options = [&](CLI::App* a) {
    a->add_flag("--insecure", net_opts.insecure,
                "Do not verify TLS certificates (prints a warning on every request)");
    a->add_flag("--allow-http", net_opts.allow_http,
                "Allow plain http:// to a non-loopback host (prints a warning)");
    a->add_option("--token-env", net_opts.token_env,
                  "Environment variable holding the bearer token (default ACCELBENCH_TOKEN)");
    a->add_option("--connect-timeout", net_opts.connect_timeout_s,
                  "Connect timeout in seconds (default 10)")
        ->check(number_in(0.001, 86400, false, false));
    a->add_option("--timeout", net_opts.timeout_s,
                  "Total timeout per request in seconds (default 60)")
        ->check(number_in(0.001, 86400, false, false));
    a->add_option("--retries", net_opts.retries,
                  "Attempts per request on connection errors, 429 and 5xx (default 5)")
        ->check(integer_in(0, 100));
  };
  auto* imp = app.add_subcommand("import", "Import results from a file or URL (accelbench export, "
                                           "Google Benchmark JSON, MLPerf results folder)");
  imp->add_option("source", import_src, "File or http(s) URL (a folder for --format mlperf)")
      ->required();
  imp->add_option("--system", net_opts.system,
                  "System name for --format gbench (default: hostname)")
      ->check(text_value(false));
  add_net_options(imp);
  imp->add_option("--format", import_format,
                  "accelbench (our export format) | gbench (Google Benchmark "
                  "--benchmark_format=json) | mlperf (an MLCommons Training results folder)");

#ifdef ACCELBENCH_HAVE_NET
  std::string pub_url, pub_sel;
  auto* pub = app.add_subcommand("publish",
                                 "POST stored results (our export format) to an HTTP(S) endpoint");
  pub->add_option("--url", pub_url,
                  "Endpoint URL (https; http only to loopback or with --allow-http)")
      ->required();
  pub->add_option("selector", pub_sel, "Which runs (selector as in compare; default: all)");
  pub->add_option("--db", db_path, "Database path");
  pub->add_option("--batch-size", net_opts.batch_size, "Runs per POST (default 1)")
      ->check(integer_in(1, 100000));
  add_net_options(pub);
#endif
  imp->add_option("--db", db_path, "Database path");

#ifdef ACCELBENCH_HAVE_MLPERF
  cli::package_cli_options po;
  auto* pkg =
      app.add_subcommand("package", "Write an MLPerf Training submission package from stored runs");
  pkg->add_option("--org", po.org, "Submitting organisation (folder name)")->required();
  pkg->add_option("--system", po.system, "System name (as stored; also the package's system file)")
      ->required();
  pkg->add_option("--division", po.division, "closed | open")
      ->required()
      ->check(CLI::IsMember({"closed", "open"}));
  pkg->add_option("--out", po.out, "Output folder (the package is written under OUT/ORG)")
      ->required();
  pkg->add_option("--benchmark", po.benchmarks, "Only these benchmarks (repeatable)");
  pkg->add_option("--status", po.status,
                  "System status: Available on-premise | Available cloud | Research, Development, "
                  "or Internal (RDI) | Preview");
  pkg->add_option("--system-json", po.system_json,
                  "JSON file with system-description fields that cannot be detected");
  pkg->add_option("--db", po.db, "Database path");
  pkg->add_flag("--force", po.force, "Replace an existing package for this system and benchmark");

  std::string check_dir, check_round;
  auto* chk = app.add_subcommand(
      "check-package",
      "Check an MLPerf Training package (DIR/ORG) like the MLCommons package checker");
  chk->add_option("dir", check_dir, "Organisation folder of a package")->required();
  chk->add_option("--round", check_round, "Rules round, e.g. 5.0 (default: from the path)");
  chk->add_flag("--json", as_json, "Machine-readable output");
#endif

#ifdef ACCELBENCH_HAVE_REPORT
  cli::report_cli_options rpo;
  auto* rep = app.add_subcommand(
      "report", "A-vs-B report (e.g. H100 vs Blackwell) as JSON and a self-contained HTML page");
  rep->add_option("--baseline", rpo.baseline,
                  "Selector: system name, system=, accelerator=, tag=, workload=, run=ID,ID "
                  "(joined with &), or a results .json file")
      ->required();
  rep->add_option("--candidate", rpo.candidate, "Selector (as --baseline)")->required();
  rep->add_option("--json", rpo.json_path, "Write the report JSON (schemas/report.schema.json)");
  rep->add_option("--html", rpo.html_path, "Write the self-contained HTML page");
  rep->add_option("--db", rpo.db, "Database path");
  rep->add_option("--price", rpo.prices,
                  "Price per accelerator-hour MODEL=USD (repeatable), e.g. gb200=6.5");
  rep->add_option("--prices", rpo.prices_file, "Price table file (replaces results/prices.json)");
  rep->add_option("--devices", rpo.devices_file,
                  "Device catalogue file (replaces results/devices.json)");
  rep->add_flag("--quiet", rpo.quiet, "Only the one-sentence answer on stdout");
#endif

#ifdef ACCELBENCH_HAVE_COMPARE
  cli::compare_cli_options co;
  auto* cmp = app.add_subcommand(
      "compare", "Compare two selections of runs: verdicts per config, exit 1 on a regression");
  cmp->add_option("--baseline", co.baseline,
                  "Selector: system name, system=, accelerator=, tag=, workload=, run=ID,ID "
                  "(joined with &), or a results .json file")
      ->required();
  cmp->add_option("--candidate", co.candidate, "Selector (as --baseline)")->required();
  cmp->add_option("--format", co.format, "table | markdown | junit | json | bmf");
  cmp->add_option("-o,--output", co.output, "Write to FILE instead of stdout")
      ->check(text_value(false));
  cmp->add_option("--threshold", co.threshold,
                  "Minimum effect in percent (default: the ruleset's, else 5)")
      ->check(number_in(0, 1000, false, false));
  cmp->add_option("--alpha", co.alpha,
                  "Significance level of the Mann-Whitney U test (default 0.01)")
      ->check(number_in(0, 1, true, true));
  cmp->add_flag("--strict", co.strict,
                "Exit 4 when something is inconclusive and nothing regressed");
  cmp->add_flag("--color", co.color, "Colour verdicts on a terminal");
  cmp->add_flag("--only-changed", co.only_changed,
                "List only regressed and improved configs (table, markdown, json)");
  cmp->add_option("--db", co.db, "Database path");

  cli::history_cli_options ho;
  auto* hist = app.add_subcommand(
      "history", "Find step changes in a nightly series (E-divisive means + t-test)");
  hist->add_option("workload", ho.workload, "Workload (prefix*)")->required();
  hist->add_option("--set", ho.sets, "Only configs with KEY=VALUE (repeatable)");
  hist->add_option("--system", ho.system, "Only this system")->check(text_value(false));
  hist->add_option("--tag", ho.tags, "Only runs with this tag")->check(text_value(false));
  hist->add_option("--since", ho.since, "Only runs started on or after this date (YYYY-MM-DD)")
      ->check(date_value());
  hist->add_option("--format", ho.format, "table | json");
  hist->add_option("--min-segment", ho.min_segment,
                   "Fewest nights on each side of a change (default 5)")
      ->check(integer_in(2, 1000000));
  hist->add_option("--max-pvalue", ho.max_pvalue,
                   "Significance of a change (Welch t-test, default 0.001)")
      ->check(number_in(0, 1, true, true));
  hist->add_option("--window", ho.window,
                   "Analyse in windows of this many nights (0: whole series)")
      ->check(integer_in(0, 1000000));
  hist->add_flag("--fail-on-regression", ho.fail_on_regression,
                 "Exit 1 when a change point is a regression");
  hist->add_option("--db", ho.db, "Database path");
  hist->add_option("--html", ho.html, "Also write the series as a self-contained HTML page")
      ->check(text_value(false));
#endif

  auto* dbcmd = app.add_subcommand(
      "db", "Database tools: db copy moves runs between stores (SQLite file, postgresql:// URI)");
  dbcmd->require_subcommand(1);
  std::string copy_from, copy_to;
  size_t copy_batch = 200;
  bool copy_quiet = false;
  auto* dbcopy =
      dbcmd->add_subcommand("copy", "Copy every run (samples, metrics, tags, environment, log) and "
                                    "system from one store to another; reruns copy nothing twice");
  dbcopy
      ->add_option("--from", copy_from,
                   "Source database: file path or postgresql://USER@HOST/DB URI (opened read-only)")
      ->required();
  dbcopy
      ->add_option(
          "--to", copy_to,
          "Destination database: file path or postgresql:// URI (created and migrated when needed)")
      ->required();
  dbcopy->add_option("--batch", copy_batch, "Runs per transaction (default 200)")
      ->check(integer_in(1, 100000));
  dbcopy->add_flag("--quiet", copy_quiet, "No progress on stderr");
#ifdef ACCELBENCH_HAVE_SERVER
  server::serve_options so;
  size_t max_body_mib = 64;
  auto* srv = app.add_subcommand(
      "serve", "Results server for a fleet: HTTP API (/api/v1) and dashboard over a database");
  srv->add_option("--db", so.db,
                  "Database path (default: $ACCELBENCH_DB or results/accelbench.db)");
  srv->add_option("--listen", so.listen,
                  "ADDR:PORT to listen on (default 127.0.0.1:8080; port 0: any free port)");
  srv->add_flag("--public-read", so.public_read,
                "Serve GET endpoints and the dashboard without a token");
  srv->add_option("--cert", so.cert, "TLS certificate (PEM): serve HTTPS (with --key)");
  srv->add_option("--key", so.key, "TLS private key (PEM)");
  srv->add_option("--cors-origin", so.cors_origin,
                  "Allow this origin to call the API from a browser (default: no CORS)")
      ->check(text_value(false));
  srv->add_option("--max-body-mib", max_body_mib, "Largest request body in MiB (default 64)")
      ->check(integer_in(1, 256));
  srv->add_option("--threads", so.threads, "Request threads (default 32)")
      ->check(integer_in(1, 1024));
  srv->add_flag("--quiet", so.quiet, "No access log on stderr");

  server::token_cli_options tko;
  auto* tok =
      app.add_subcommand("token", "Bearer tokens of accelbench serve: create, list, revoke");
  tok->require_subcommand(1);
  auto* tok_create = tok->add_subcommand(
      "create", "Create a token (printed once; the database keeps a salted hash)");
  tok_create->add_option("--name", tko.name, "Who or what uses it (e.g. ci-h100-07)")
      ->required()
      ->check(text_value(false));
  tok_create->add_option("--role", tko.role, "read | write | admin (default read)")
      ->check(CLI::IsMember({"read", "write", "admin"}));
  tok_create->add_option("--db", tko.db, "Database path");
  tok_create->add_flag("--json", tko.json, "Machine-readable output");
  auto* tok_list = tok->add_subcommand("list", "List tokens (never their secrets)");
  tok_list->add_option("--db", tko.db, "Database path");
  tok_list->add_flag("--json", tko.json, "Machine-readable output");
  auto* tok_revoke = tok->add_subcommand("revoke", "Revoke a token by id");
  tok_revoke->add_option("id", tko.id, "Token id (accelbench token list)")
      ->required()
      ->check(integer_in(1, std::numeric_limits<int64_t>::max()));
  tok_revoke->add_option("--db", tko.db, "Database path");
#endif

  const cli::command_hook hooks[] = {cli::add_completion(app, reg), cli::add_man(app)};
  cli::add_examples(app);

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

  // Across ranks only `run` runs on every rank; any other command runs on rank 0 alone.
  if (dist::distributed() && !*run && !dist::is_root())
    return exit_ok;
  try {
    for (const auto& h : hooks)
      if (*h.app)
        return h.run();
    if (*env)
      return cmd_env(as_json, reprobe);
    if (*list)
      return cmd_list(reg, list_what, as_json);
    if (*run)
      return cli::cmd_run(reg, ro);
    if (*show)
      return cmd_show(reg, db_path, show_id, f_system, f_workload, f_tags, limit, as_json);
    if (*exp)
      return cmd_export(db_path, f_system, f_workload, f_tags, out_file);
    if (*imp)
      return cmd_import(db_path, import_src, import_format, net_opts);
    if (*dbcopy)
      return cmd_db_copy(copy_from, copy_to, copy_batch, copy_quiet);
#ifdef ACCELBENCH_HAVE_NET
    if (*pub)
      return cmd_publish(db_path, pub_url, pub_sel, net_opts);
#endif
#ifdef ACCELBENCH_HAVE_REPORT
    if (*rep)
      return cli::cmd_report(rpo);
#endif
#ifdef ACCELBENCH_HAVE_COMPARE
    if (*cmp)
      return cli::cmd_compare(co);
    if (*hist)
      return cli::cmd_history(ho);
#endif
#ifdef ACCELBENCH_HAVE_SERVER
    if (*srv) {
      so.max_body_bytes = max_body_mib << 20;
      return server::cmd_serve(so);
    }
    if (*tok_create)
      return server::cmd_token_create(tko);
    if (*tok_list)
      return server::cmd_token_list(tko);
    if (*tok_revoke)
      return server::cmd_token_revoke(tko);
#endif
#ifdef ACCELBENCH_HAVE_MLPERF
    if (*pkg) {
      std::string cmdline;
      for (int i = 0; i < argc; ++i)
        cmdline += (i ? " " : "") + std::string(argv[i]);
      po.command_line = cmdline;
      return cli::cmd_package(po);
    }
    if (*chk)
      return cli::cmd_check_package(check_dir, check_round, as_json);
#endif
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

namespace {

// Every rank must be given the same command line (issue 15): the first argument that differs
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

} // namespace

int main(int argc, char** argv) {
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
