#include "importers/gbench/gbench_import.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::importers {

namespace {

// Fields Google Benchmark 1.7.1 writes for every benchmark entry (json_reporter.cc); any other
// numeric field is a counter (user counters, items_per_second, bytes_per_second).
const std::set<std::string> k_known_fields = {"name",
                                              "family_index",
                                              "per_family_instance_index",
                                              "run_name",
                                              "run_type",
                                              "repetitions",
                                              "repetition_index",
                                              "threads",
                                              "iterations",
                                              "real_time",
                                              "cpu_time",
                                              "time_unit",
                                              "aggregate_name",
                                              "aggregate_unit",
                                              "error_occurred",
                                              "error_message",
                                              "label",
                                              "big_o",
                                              "rms",
                                              "complexity"};

// A name-based UUID: the same benchmark of the same Google Benchmark invocation always gets the
// same id, so a re-import is recognised by the store (runs are unique by uuid). Version 8 is
// RFC 9562's "custom" layout: 122 bits of our hash, version and variant bits set.
std::string deterministic_uuid(const std::string& key) {
  auto [a, b] = fnv1a128(key);
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000008000ULL; // version 8
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", (uint32_t)(a >> 32),
                     (uint32_t)((a >> 16) & 0xffff), (uint32_t)(a & 0xffff), (uint32_t)(b >> 48),
                     b & 0xffffffffffffULL);
}

// Google Benchmark writes the date in local time with its offset ("2026-12-02T11:40:19+01:00"):
// its seconds since the epoch, or nullopt when the text is not such a date.
std::optional<std::time_t> gbench_date_seconds(const std::string& date) {
  int Y, M, D, h, m, s, oh = 0, om = 0;
  char sign = 0;
  int n = std::sscanf(date.c_str(), "%d-%d-%dT%d:%d:%d%c%d:%d", &Y, &M, &D, &h, &m, &s, &sign, &oh,
                      &om);
  if (n < 6)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = Y - 1900;
  tm.tm_mon = M - 1;
  tm.tm_mday = D;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  std::time_t t = timegm(&tm);
  if (n == 9 && (sign == '+' || sign == '-'))
    t -= (sign == '+' ? 1 : -1) * (std::time_t{oh} * 3600 + std::time_t{om} * 60);
  else if (n == 7 && sign != 'Z')
    return std::nullopt;
  return t;
}

// Runs store UTC ("2026-12-02T10:40:19.000Z") so that they sort with measured runs; a text that
// is not a date stays as it is (require_storable_runs refuses it, naming it).
std::string to_utc_iso8601(const std::string& date) {
  const auto t = gbench_date_seconds(date);
  if (!t)
    return date;
  std::tm out{};
  gmtime_r(&*t, &out);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &out);
  return std::string(buf) + ".000Z";
}

double seconds_per(const std::string& unit) {
  if (unit == "ns")
    return 1e-9;
  if (unit == "us")
    return 1e-6;
  if (unit == "ms")
    return 1e-3;
  if (unit == "s")
    return 1.0;
  return 0;
}

// A value as it may appear in a message: one line, at most 60 characters.
std::string shown(const json& v) {
  std::string s = dump_json(v);
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

// Reads fields with errors that name the origin, the field's path and the offending value.
class reader {
public:
  explicit reader(std::string origin) : m_origin(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw input_error(fmt::format("{}: Google Benchmark JSON: {}: {}", m_origin, path, what));
  }
  const json& need(const json& obj, const std::string& path, const char* key) const {
    if (!obj.contains(key))
      fail(path + "." + key, "missing");
    return obj.at(key);
  }
  std::string str(const json& obj, const std::string& path, const char* key) const {
    const json& v = need(obj, path, key);
    if (!v.is_string())
      fail(path + "." + key, fmt::format("expected a string, got {}", shown(v)));
    return v.get<std::string>();
  }
  std::string str_or(const json& obj, const std::string& path, const char* key,
                     const std::string& dflt) const {
    return obj.contains(key) ? str(obj, path, key) : dflt;
  }
  int64_t integer(const json& obj, const std::string& path, const char* key, int64_t min) const {
    const json& v = need(obj, path, key);
    if (!v.is_number_integer())
      fail(path + "." + key, fmt::format("expected an integer, got {}", shown(v)));
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(path + "." + key, fmt::format("{} is outside the 64-bit integer range", shown(v)));
    int64_t i = v.get<int64_t>();
    if (i < min)
      fail(path + "." + key, fmt::format("must be >= {}, got {}", min, i));
    return i;
  }
  int64_t integer_or(const json& obj, const std::string& path, const char* key, int64_t min,
                     int64_t dflt) const {
    return obj.contains(key) ? integer(obj, path, key, min) : dflt;
  }
  // A finite number of at least 0: times, rates and frequencies are never negative.
  double non_negative(const json& obj, const std::string& path, const char* key) const {
    const json& v = need(obj, path, key);
    if (!v.is_number())
      fail(path + "." + key, fmt::format("expected a number, got {}", shown(v)));
    const double x = v.get<double>();
    if (x < 0)
      fail(path + "." + key, fmt::format("must be >= 0, got {}", shown(v)));
    return x;
  }

private:
  std::string m_origin;
};

// The metrics every imported run has, computed from the repetitions' own times: a user counter
// of the same name would replace them (a counter "time" became the time metric).
const std::set<std::string> k_builtin_metrics = {"time", "cpu_time"};

struct pending {
  run r;
  std::map<int64_t, sample> by_repetition; // ordered by repetition_index
};

// The parts of a Google Benchmark file, checked: the context and the benchmarks array.
// clang-tidy 14 reads its implicit moves as throwing (a json member): they are noexcept.
struct document { // NOLINT(bugprone-exception-escape)
  json doc;
  const json* ctx = nullptr;
  const json* benches = nullptr;
};

document parse_document(const std::string& raw, const std::string& origin, const reader& rd,
                        std::size_t* repaired) {
  // Google Benchmark writes benchmark names and labels byte for byte, so a latin-1 label gives a
  // file that is not UTF-8. Like a framework log it is repaired (U+FFFD), and the caller told how
  // many bytes were replaced; the JSON structure is ASCII, so repairing cannot change it.
  std::size_t replaced = 0;
  const std::string text = valid_utf8(raw) ? raw : repair_utf8(raw, &replaced);
  if (repaired)
    *repaired = replaced;
  document d;
  d.doc = parse_json_input(text, origin);
  if (!d.doc.is_object())
    rd.fail("(top level)", "expected an object with context and benchmarks");
  d.ctx = &rd.need(d.doc, "(top level)", "context");
  if (!d.ctx->is_object())
    rd.fail("context", fmt::format("expected an object, got {}", shown(*d.ctx)));
  d.benches = &rd.need(d.doc, "(top level)", "benchmarks");
  if (!d.benches->is_array())
    rd.fail("benchmarks", "expected an array");
  return d;
}

// The environment of every run of the file, from its context.
json environment_from_context(const json& ctx, const reader& rd) {
  json env = json::object();
  env["hostname"] = rd.str(ctx, "context", "host_name");
  env["cpu"] = json::object();
  if (ctx.contains("num_cpus"))
    env["cpu"]["logical_cores"] = rd.integer(ctx, "context", "num_cpus", 0);
  if (ctx.contains("mhz_per_cpu"))
    env["cpu"]["mhz"] = rd.non_negative(ctx, "context", "mhz_per_cpu");
  if (ctx.contains("cpu_scaling_enabled"))
    env["cpu"]["scaling_enabled"] = ctx["cpu_scaling_enabled"];
  if (ctx.contains("caches")) {
    if (!ctx["caches"].is_array())
      rd.fail("context.caches", "expected an array");
    env["caches"] = ctx["caches"];
  }
  if (ctx.contains("load_avg"))
    env["load_avg"] = ctx["load_avg"];
  // The build type of the Google Benchmark library (not necessarily of the code it timed), and
  // the whole context verbatim: nothing the file said is lost.
  env["gbench"] = ctx;
  if (ctx.contains("library_build_type"))
    env["gbench_library_build_type"] = rd.str(ctx, "context", "library_build_type");
  return env;
}

// What every run of one file shares. clang-tidy 14 reads its implicit moves as throwing (a json
// member): they are noexcept.
struct file_context { // NOLINT(bugprone-exception-escape)
  std::string origin, system, date, host, executable, started, finished, fingerprint;
  json env;
  bool measured = false; // the times are accelbench's (run gbench); `date` is only claimed
};

// How far ahead of this machine's clock an imported file's date may be (a day: a clock set a
// little wrong, never a date that would keep its runs from ever ageing out of gc --keep-days).
constexpr std::time_t k_future_date_slack_s = std::time_t{24} * 3600;

// An imported file's date, refused when it lies in the future: its runs would be immortal under
// gc --keep-days and sort after every run measured since. A date that is not one is left to
// require_storable_runs, which names it.
void check_not_future(const std::string& date, const reader& rd) {
  const auto t = gbench_date_seconds(date);
  if (t && *t > std::time(nullptr) + k_future_date_slack_s)
    rd.fail("context.date", fmt::format("'{}' is in the future (more than a day after this "
                                        "machine's clock): fix the clock of the machine that wrote "
                                        "it, or the date",
                                        printable(date)));
}

// The run of a benchmark name, as its first entry in the file describes it.
run new_run(const file_context& fc, const json& b, const std::string& path,
            const std::string& run_name, int64_t threads, const reader& rd) {
  run r;
  r.uuid = deterministic_uuid(
      fmt::format("gbench\n{}\n{}\n{}\n{}", fc.date, fc.host, fc.executable, run_name));
  r.cfg.workload = "gbench." + run_name.substr(0, run_name.find('/'));
  // Google Benchmark times on the host; device-timed benchmarks (manual_time) report through it.
  r.cfg.backend = "cpu";
  r.cfg.values["benchmark"] = run_name;
  r.cfg.values["threads"] = std::to_string(threads);
  r.system = fc.system.empty() ? fc.host : fc.system;
  r.ruleset = "gbench-import";
  r.environment = fc.env;
  r.fingerprint = fc.fingerprint;
  r.sample_unit = "s";
  r.sample_dir = direction::lower_is_better;
  r.source = "imported";
  r.started_at = fc.started;
  r.finished_at = fc.finished;
  r.extra = {{"gbench",
              {{"origin", fc.origin},
               {"family_index", b.value("family_index", json())},
               {"per_family_instance_index", b.value("per_family_instance_index", json())}}}};
  if (fc.measured)
    r.extra["gbench"]["claimed_date"] = fc.date;
  if (b.contains("repetitions"))
    r.effective_settings["repetitions"] = rd.integer(b, path, "repetitions", 0);
  return r;
}

// One repetition: its time per iteration in seconds, CPU time and counters in its extra.
sample repetition_sample(const json& b, const std::string& path, size_t next_index,
                         const reader& rd) {
  const std::string unit = rd.str(b, path, "time_unit");
  const double scale = seconds_per(unit);
  if (scale == 0)
    rd.fail(path + ".time_unit",
            fmt::format("unknown time unit '{}' (expected ns, us, ms or s)", unit));
  sample s;
  s.index = rd.integer_or(b, path, "repetition_index", 0, (int64_t)next_index);
  // Google Benchmark's real_time is already per iteration (total / iterations).
  s.value = rd.non_negative(b, path, "real_time") * scale;
  s.iterations = rd.integer(b, path, "iterations", 1);
  if (b.contains("cpu_time"))
    s.extra["cpu_time_s"] = rd.non_negative(b, path, "cpu_time") * scale;
  json counters = json::object();
  for (const auto& [k, v] : b.items()) {
    if (k_known_fields.count(k) || !v.is_number())
      continue;
    const std::string name = gbench_counter_metric_name(k);
    if (counters.contains(name))
      rd.fail(fmt::format("{}.{}", path, k),
              fmt::format("the counter '{}' is renamed '{}' (a built-in metric has its name), "
                          "and the file has a counter '{}' as well",
                          printable(k), printable(name), printable(name)));
    counters[name] = v;
  }
  if (!counters.empty())
    s.extra["counters"] = counters;
  if (b.contains("label") && b["label"].is_string())
    s.extra["label"] = b["label"];
  return s;
}

// One entry of the benchmarks array into the run of its name; false for an aggregate (skipped:
// recomputed from the samples, never trusted).
bool add_entry(const file_context& fc, const json& b, const std::string& path, const reader& rd,
               std::vector<std::string>& order, std::map<std::string, pending>& runs) {
  if (!b.is_object())
    rd.fail(path, fmt::format("expected an object, got {}", shown(b)));
  const std::string name = rd.str(b, path, "name");
  const std::string run_type = rd.str_or(b, path, "run_type", "iteration");
  if (run_type == "aggregate")
    return false;
  if (run_type != "iteration")
    rd.fail(path + ".run_type",
            fmt::format("unknown run type '{}' (expected iteration or aggregate)", run_type));
  const std::string run_name = rd.str_or(b, path, "run_name", name);
  if (run_name.empty())
    rd.fail(path + ".run_name", "empty benchmark name");
  const int64_t threads = rd.integer_or(b, path, "threads", 1, 1);
  auto [it, fresh] = runs.try_emplace(run_name);
  pending& p = it->second;
  if (fresh) {
    order.push_back(run_name);
    p.r = new_run(fc, b, path, run_name, threads, rd);
  }
  if (b.contains("error_occurred") && b["error_occurred"].is_boolean() &&
      b["error_occurred"].get<bool>()) {
    std::string msg = b.contains("error_message") && b["error_message"].is_string()
                          ? b["error_message"].get<std::string>()
                          : std::string("error");
    if (p.r.status != run_status::failed)
      p.r.mark_failed("Google Benchmark reported: " + msg);
    return true; // an errored repetition has no meaningful time
  }
  sample s = repetition_sample(b, path, p.by_repetition.size(), rd);
  if (p.by_repetition.count(s.index))
    rd.fail(path + ".repetition_index",
            fmt::format("repetition {} of '{}' appears twice", s.index, run_name));
  p.r.effective_settings["iterations"] = s.iterations;
  p.r.effective_settings["time_unit"] = rd.str(b, path, "time_unit");
  p.by_repetition.emplace(s.index, std::move(s));
  return true;
}

// Never "0 runs" with success: a file of aggregates only (--benchmark_report_aggregates_only=true,
// common in CI) has no repetitions to recompute statistics from or to compare.
void require_repetitions(size_t runs, size_t aggregates, const reader& rd) {
  if (runs == 0 && aggregates > 0)
    rd.fail("benchmarks",
            fmt::format(
                "only aggregates ({} entries: mean, median, stddev...), no repetitions: the file "
                "was written with --benchmark_report_aggregates_only=true; run the benchmark "
                "again with --benchmark_display_aggregates_only=true, which keeps every "
                "repetition in the JSON file",
                aggregates));
  if (runs == 0)
    rd.fail("benchmarks", "no benchmark results (an empty array)");
}

// The metrics of a run, each the median over its repetitions: time (the samples), cpu_time, and
// every counter with a known direction that every repetition reported.
void add_metrics(run& r, const gbench_import_options& o) {
  std::vector<double> times, cpu;
  std::map<std::string, std::vector<double>> counters;
  for (const auto& s : r.samples) {
    times.push_back(s.value);
    if (s.extra.contains("cpu_time_s"))
      cpu.push_back(s.extra["cpu_time_s"].get<double>());
    if (s.extra.contains("counters"))
      for (const auto& [k, v] : s.extra["counters"].items())
        counters[k].push_back(v.get<double>());
  }
  if (times.empty())
    return;
  r.add_metric("time", stats::median(times), "s", direction::lower_is_better);
  if (cpu.size() == times.size())
    r.add_metric("cpu_time", stats::median(cpu), "s", direction::lower_is_better);
  for (const auto& [k, v] : counters) {
    const counter_kind c = gbench_counter_kind(k, o);
    if (v.size() == times.size() && c.known)
      r.add_metric(k, stats::median(v), c.unit, c.dir);
  }
}

} // namespace

std::string gbench_counter_metric_name(const std::string& counter) {
  return k_builtin_metrics.count(counter) ? "counter_" + counter : counter;
}

counter_kind gbench_counter_kind(const std::string& name, const gbench_import_options& o) {
  counter_kind c;
  std::string low = name;
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char ch) { return (char)std::tolower(ch); });
  auto has = [&low](const char* part) { return low.find(part) != std::string::npos; };
  if (low == "bytes_per_second")
    c.unit = "B/s";
  else if (low == "items_per_second")
    c.unit = "items/s";
  else if (has("flop"))
    c.unit = "FLOP/s";
  else if (has("per_second") || has("_per_s") || has("/s"))
    c.unit = "/s";
  if (auto it = o.counter_directions.find(name); it != o.counter_directions.end()) {
    c.known = true;
    c.dir = it->second;
    return c;
  }
  // Rates (Google Benchmark's kIsRate counters are per second: flops, bytes_per_second, custom
  // *_per_second, throughput, bandwidth) are better higher; times and misses are better lower.
  if (!c.unit.empty() || has("throughput") || has("bandwidth") || has("rate")) {
    c.known = true;
    c.dir = direction::higher_is_better;
  } else if (has("time") || has("latency") || has("miss") || has("cycles") || has("stall")) {
    c.known = true;
    c.dir = direction::lower_is_better;
  }
  return c;
}

namespace {

// The runs' times: accelbench's clock around the program when it ran it (the program's own date
// is then only what it claims), else the file's date, not in the future.
void set_times(file_context& fc, const gbench_import_options& o, const reader& rd) {
  fc.measured = o.measured.has_value();
  if (fc.measured) {
    fc.started = o.measured->started_at;
    fc.finished = o.measured->finished_at;
    return;
  }
  check_not_future(fc.date, rd);
  fc.started = fc.finished = to_utc_iso8601(fc.date);
}

} // namespace

bool looks_like_gbench_json(const std::string& text) {
  json doc = parse_json_lenient(valid_utf8(text) ? text : repair_utf8(text));
  return doc.is_object() && doc.contains("context") && doc.contains("benchmarks") &&
         doc["benchmarks"].is_array();
}

std::vector<run> runs_from_gbench_json(const std::string& raw, const std::string& origin,
                                       const std::string& system, std::size_t* repaired) {
  gbench_import_options o;
  o.system = system;
  return runs_from_gbench_json(raw, origin, o, repaired);
}

std::vector<run> runs_from_gbench_json(const std::string& raw, const std::string& origin,
                                       const gbench_import_options& o, std::size_t* repaired) {
  reader rd(origin);
  const document d = parse_document(raw, origin, rd, repaired);
  file_context fc;
  fc.origin = origin;
  fc.system = o.system;
  fc.date = rd.str(*d.ctx, "context", "date");
  fc.host = rd.str(*d.ctx, "context", "host_name");
  fc.executable = rd.str_or(*d.ctx, "context", "executable", "");
  fc.env = environment_from_context(*d.ctx, rd);
  fc.fingerprint = environment_fingerprint(fc.env);
  set_times(fc, o, rd);

  size_t aggregates = 0;          // aggregate entries skipped
  std::vector<std::string> order; // run_names in first-appearance order
  std::map<std::string, pending> runs;
  for (size_t i = 0; i < d.benches->size(); ++i)
    aggregates +=
        !add_entry(fc, (*d.benches)[i], fmt::format("benchmarks[{}]", i), rd, order, runs);
  require_repetitions(order.size(), aggregates, rd);
  if (o.renamed_counters)
    for (const auto& b : *d.benches)
      for (const auto& [k, v] : b.items())
        if (!k_known_fields.count(k) && v.is_number() && gbench_counter_metric_name(k) != k)
          o.renamed_counters->insert(k);

  std::vector<run> out;
  for (const auto& name : order) {
    pending& p = runs.at(name);
    run r = std::move(p.r);
    for (auto& [idx, s] : p.by_repetition)
      r.samples.push_back(std::move(s));
    add_metrics(r, o);
    if (r.status == run_status::ok && r.samples.empty())
      r.mark_failed("no iteration results in the file");
    // The conditions an imported run carries: the CV of its repetitions and the build type of the
    // Google Benchmark library (a debug library is a warning), judged by the default rules.
    if (fc.env.contains("gbench_library_build_type"))
      r.extra["library_build_type"] = fc.env["gbench_library_build_type"];
    judge_imported_conditions(r, condition_rules{});
    out.push_back(std::move(r));
  }
  // The check every run from outside passes (a time of 0, a date that is not one), so that what
  // this importer accepts our own export reads back.
  require_storable_runs(out, origin + ": Google Benchmark JSON");
  return out;
}

} // namespace accelbench::importers
