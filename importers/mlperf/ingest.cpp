#include "importers/mlperf/ingest.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/check.hpp"
#include "importers/mlperf/folder.hpp"
#include "importers/mlperf/package_params.hpp"
#include "importers/mlperf/power.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Name-based UUID: RFC 4122 §4.3 version 5 over SHA-1 (FIPS 180-4), written from the specs.
namespace {

std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  const uint64_t bit_len = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56)
    msg.push_back('\0');
  for (int i = 7; i >= 0; --i)
    msg.push_back(static_cast<char>((bit_len >> (i * 8)) & 0xff));
  auto rol = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[80];
    for (size_t i = 0; i < 16; ++i)
      w[i] = (uint32_t(uint8_t(msg[off + 4 * i])) << 24) |
             (uint32_t(uint8_t(msg[off + 4 * i + 1])) << 16) |
             (uint32_t(uint8_t(msg[off + 4 * i + 2])) << 8) |
             uint32_t(uint8_t(msg[off + 4 * i + 3]));
    for (int i = 16; i < 80; ++i)
      w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20)
        f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40)
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60)
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else
        f = b ^ c ^ d, k = 0xCA62C1D6;
      const uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = uint8_t(h[i] >> (24 - 8 * j));
  return out;
}

// The RFC 4122 URL namespace; the name is "accelbench:mlperf:<...>", so the id space is ours.
constexpr uint8_t url_namespace[16] = {0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
                                       0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

} // namespace

std::string name_uuid(std::string_view name) {
  std::string data(reinterpret_cast<const char*>(url_namespace), 16);
  data += "accelbench:mlperf:";
  data += name;
  auto d = sha1(data);
  d[6] = (d[6] & 0x0f) | 0x50; // version 5
  d[8] = (d[8] & 0x3f) | 0x80; // RFC 4122 variant
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      s += '-';
    s += fmt::format("{:02x}", d[i]);
  }
  return s;
}

std::string iso8601_from_ms(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
}

json system_description::to_json() const {
  json j = fields;
  j["derived"] = {{"org", org},
                  {"name", name},
                  {"round", round},
                  {"accelerator_model", accelerator_model},
                  {"accelerators_per_node", accelerators_per_node},
                  {"nodes", nodes},
                  {"total_accelerators", total_accelerators},
                  {"framework", framework},
                  {"software_stack", software_stack}};
  return j;
}

namespace {

// Sane bounds for the counts of a system description. The largest MLPerf Training systems
// published so far have about 12,000 accelerators; a million leaves room for growth while a
// sign error, a typo ("80000000") or an overflow is caught instead of being stored as a VALID
// result. accelerators_per_node may be 0 (a CPU-only system; result_summarizer counts such a
// node as one).
constexpr int64_t k_max_accelerators = 1'000'000;

// A whole number written as a JSON integer, an integral float, or a string of digits (published
// descriptions keep counts as strings); nullopt for anything else ("abc", "8 GPUs", 1.5).
std::optional<int64_t> whole_number(const json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned())
    return v.get<int64_t>();
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= uint64_t(INT64_MAX) ? std::optional<int64_t>(v.get<int64_t>())
                                                    : std::nullopt;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) <= 1e15)
      return static_cast<int64_t>(d);
    return std::nullopt;
  }
  if (!v.is_string())
    return std::nullopt;
  const std::string s = v.get<std::string>();
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  if (b == std::string::npos)
    return std::nullopt;
  std::string_view digits(s.data() + b, e - b + 1);
  const bool negative = digits.front() == '-';
  if (negative)
    digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 15 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const int64_t x = std::stoll(std::string(digits));
  return negative ? -x : x;
}

// The counts of a system description and the range each must be a whole number in.
struct count_rule {
  const char* key;
  int64_t lo, hi;
};
constexpr count_rule k_accelerators_per_node{"accelerators_per_node", 0, k_max_accelerators};
constexpr count_rule k_number_of_nodes{"number_of_nodes", 1, k_max_accelerators};
constexpr count_rule k_host_processors_per_node{"host_processors_per_node", 0, k_max_accelerators};

// The count under rule.key, when it is a whole number in [lo, hi]; else 0 and a problem naming
// the field and the value as written.
int64_t count_field(const json& j, const count_rule& rule, std::vector<std::string>& problems) {
  if (!j.contains(rule.key)) {
    problems.push_back(fmt::format("{} is missing", rule.key));
    return 0;
  }
  const auto n = whole_number(j[rule.key]);
  if (n && *n >= rule.lo && *n <= rule.hi)
    return *n;
  std::string shown = j[rule.key].dump();
  if (shown.size() > 40)
    shown = shown.substr(0, 40) + "...";
  problems.push_back(
      fmt::format("{} {} is not a whole number from {} to {}", rule.key, shown, rule.lo, rule.hi));
  return 0;
}

// The accelerator counts of `s` from its fields; every count is 0 (unknown) when one of them is
// not sane, and s.problems says why.
void derive_counts(system_description& s) {
  s.accelerators_per_node = count_field(s.fields, k_accelerators_per_node, s.problems);
  s.nodes = count_field(s.fields, k_number_of_nodes, s.problems);
  // result_summarizer: number_of_nodes x max(accelerators_per_node, 1).
  s.total_accelerators = s.nodes * std::max<int64_t>(s.accelerators_per_node, 1);
  if (s.problems.empty() && s.total_accelerators > k_max_accelerators)
    s.problems.push_back(fmt::format("{} nodes x {} accelerators per node = {} accelerators, more "
                                     "than {}",
                                     s.nodes, s.accelerators_per_node, s.total_accelerators,
                                     k_max_accelerators));
  if (!s.problems.empty())
    s.nodes = s.accelerators_per_node = s.total_accelerators = 0;
}

} // namespace

std::vector<std::string> system_count_problems(const json& fields) {
  std::vector<std::string> problems;
  for (const count_rule* rule :
       {&k_number_of_nodes, &k_accelerators_per_node, &k_host_processors_per_node})
    if (fields.is_object() && fields.contains(rule->key))
      count_field(fields, *rule, problems);
  return problems;
}

namespace {

std::string string_field(const json& j, const char* key) {
  if (!j.contains(key))
    return {};
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// Keys that describe the run's structure rather than its hyperparameters.
bool structural_key(const std::string& k) {
  static const std::set<std::string> keys = {
      "cache_clear",   "init_start",  "init_stop",  "run_start",
      "run_stop",      "block_start", "block_stop", "epoch_start",
      "epoch_stop",    "eval_start",  "eval_stop",  "eval_accuracy",
      "tracked_stats", "train_loss",  "seed",       "weights_initialization"};
  return keys.count(k) || k.rfind("submission_", 0) == 0;
}

json environment_of(const system_description& s) {
  return {{"source", "mlperf system description"},
          {"system", s.fields},
          {"cpu", {{"model", string_field(s.fields, "host_processor_model_name")}}},
          {"accelerator",
           {{"model", s.accelerator_model},
            {"per_node", s.accelerators_per_node},
            {"nodes", s.nodes},
            {"count", s.total_accelerators}}},
          {"os", string_field(s.fields, "operating_system")},
          {"framework", s.framework},
          {"software_stack", s.software_stack}};
}

// Bounds of a plausible time to train, in minutes: more than zero (run_stop after run_start) and
// less than a year. The longest published MLPerf Training runs take a few days; a year catches a
// mistyped or corrupted timestamp (a run_stop at 1e300 ms) without judging slow systems.
constexpr double k_max_train_minutes = 365.0 * 24 * 60;

std::string implausible_duration(double minutes) {
  if (minutes <= 0)
    return fmt::format("run_stop is {:.4g} min after run_start: a time to train must be more "
                       "than 0",
                       minutes);
  if (minutes >= k_max_train_minutes)
    return fmt::format("run_stop is {:.4g} min after run_start: a time to train must be less "
                       "than a year ({:g} min)",
                       minutes, k_max_train_minutes);
  return {};
}

} // namespace

namespace {

// The run's identity: uuid, config (benchmark, division, accelerators), system, ruleset,
// environment, and the log itself.
run identify_run(const parsed_log& log, const std::string& log_text, const result_context& ctx,
                 const std::string& division, const benchmark_info* info) {
  const std::string& file = log.file;
  run r;
  r.uuid = name_uuid(fmt::format("{}/{}", ctx.round.empty() ? "mlperf-training" : ctx.round, file));
  r.cfg.workload = "mlperf." + (info ? info->name : ctx.benchmark);
  r.cfg.backend = "mlperf";
  r.cfg.values["benchmark"] = info ? info->name : ctx.benchmark;
  std::string div = division;
  if (div.empty())
    if (const event* e = log.first("submission_division"); e && e->value.is_string())
      div = e->value;
  r.cfg.values["division"] = div.empty() ? "closed" : div;
  if (ctx.system_desc && ctx.system_desc->total_accelerators > 0)
    r.cfg.values["accelerators"] = std::to_string(ctx.system_desc->total_accelerators);
  r.system = ctx.system;
  r.source = "published";
  r.ruleset = ctx.round.empty() ? "mlperf-training" : "mlperf-training-v" + ctx.round;
  r.sample_unit = "min";
  r.sample_dir = direction::lower_is_better;
  r.mllog = log_text;
  r.tags = {"mlperf"};
  if (ctx.system_desc) {
    r.environment = environment_of(*ctx.system_desc);
    r.fingerprint = environment_fingerprint(r.environment);
  }
  return r;
}

// A count the log states, as a whole number in (0, limit]; nullopt otherwise (a count that is
// negative, fractional or absurd is left out rather than turned into FLOPs).
std::optional<int64_t> whole_count(const json& v, double limit) {
  if (!v.is_number())
    return std::nullopt;
  const double x = v.get<double>();
  if (!(x > 0) || x > limit || x != std::floor(x))
    return std::nullopt;
  return static_cast<int64_t>(x);
}

// Bounds of the counts behind the report's model FLOPs: far above any published run (MLPerf's
// largest trains about 3e5 samples of 8192 tokens) yet small enough that samples x sequence length
// x FLOPs per token stays a finite double.
constexpr double k_max_samples = 1e15;
constexpr double k_max_sequence_length = 1e9;

// What the run trained until it stopped, for the report's implied model-FLOP utilisation:
// samples (the samples_count run_stop carries, else the last eval_accuracy's), the sequence length
// (max_sequence_length) and the model the benchmark trains (the benchmark table). Only the facts
// the log states: an empty object when it states none.
json trained_of(const parsed_log& log, const benchmark_info* info) {
  json t = json::object();
  const event* stop = log.first("run_stop");
  std::optional<int64_t> samples;
  if (stop && stop->has_meta("samples_count"))
    samples = whole_count(stop->metadata["samples_count"], k_max_samples);
  if (!samples)
    for (const event* e : log.all("eval_accuracy"))
      if (e->has_meta("samples_count"))
        samples = whole_count(e->metadata["samples_count"], k_max_samples);
  if (samples)
    t["samples"] = *samples;
  if (const event* e = log.first("max_sequence_length"))
    if (auto seq = whole_count(e->value, k_max_sequence_length))
      t["sequence_length"] = *seq;
  if (info && !info->model.empty())
    t["model"] = info->model;
  return t;
}

// What the run's extra records of the log: where it came from, the convergence and eval curve,
// the seeds, the hyperparameters and submission_* values as logged, the initialisation time.
json extra_of(const parsed_log& log, const result_context& ctx, const log_check& lc,
              const benchmark_info* info) {
  json extra = {{"org", ctx.org},
                {"round", ctx.round},
                {"result_file", log.file},
                {"scaling_factor", ctx.scaling_factor},
                {"has_scaling_json", ctx.has_scaling},
                {"converged", lc.converged},
                {"status", lc.stop_status},
                {"eval_curve", lc.quality.eval_curve},
                {"target", info ? info->quality.to_json() : json(nullptr)},
                {"known_benchmark", info != nullptr}};
  // Seeds: one value when logged once (the published logs do), else the list.
  auto seeds = log.all("seed");
  if (seeds.size() == 1)
    extra["seed"] = seeds[0]->value;
  else if (!seeds.empty()) {
    extra["seed"] = json::array();
    for (const event* e : seeds)
      extra["seed"].push_back(e->value);
  }
  json hp = json::object();
  for (const event& e : log.events)
    if (e.type == event_type::point_in_time && !structural_key(e.key) && !hp.contains(e.key))
      hp[e.key] = e.value;
  extra["hyperparameters"] = hp;
  json sub = json::object();
  for (const event& e : log.events)
    if (e.key.rfind("submission_", 0) == 0 && !sub.contains(e.key.substr(11)))
      sub[e.key.substr(11)] = e.value;
  extra["submission"] = sub;
  if (const event* is = log.first("init_start"); is && log.first("init_stop"))
    extra["init_time_min"] = (log.first("init_stop")->time_ms - is->time_ms) / 60000.0;
  if (json t = trained_of(log, info); !t.empty())
    extra["trained"] = std::move(t);
  return extra;
}

// Time to train as the result summarizer's _query_run_start_stop reads it: in log order, the
// first run_stop and the last run_start before it (a repeated run_start is only a warning).
std::pair<const event*, const event*> timed_span(const parsed_log& log) {
  const event* start = nullptr;
  const event* stop = nullptr;
  for (const event& e : log.events) {
    if (e.key == "run_start")
      start = &e;
    if (e.key == "run_stop")
      stop = &e;
    if (start && stop)
      break;
  }
  return {start, stop};
}

// The one sample and the time_to_train_min metric of a run with both ends, or a failed run.
void record_time_to_train(run& r, const parsed_log& log, std::vector<diagnostic>& diags) {
  const auto [start, stop] = timed_span(log);
  if (!start || !stop) {
    const std::string why = !start ? "log has no run_start" : "log has no run_stop";
    diags.push_back({log.file, 0, why + " (run recorded as failed)"});
    r.mark_failed(why);
    r.extra["converged"] = false;
    if (start)
      r.started_at = iso8601_from_ms(start->time_ms);
    return;
  }
  // time_ms is bounded by the parser (0..year 9999), so the difference cannot overflow.
  const double minutes = static_cast<double>(stop->time_ms - start->time_ms) / 60000.0;
  if (const std::string why = implausible_duration(minutes); !why.empty()) {
    diagnostic d{log.file, stop->line, why};
    diags.push_back(d);
    r.mark_invalid(d.to_string());
  }
  r.started_at = iso8601_from_ms(start->time_ms);
  if (!(minutes > 0)) {
    // No sample: a time that is not more than 0 is no measurement (the store refuses it, and
    // compare and report take ratios of medians). The two ends stay on record for the reader.
    r.extra["run_start_ms"] = start->time_ms;
    r.extra["run_stop_ms"] = stop->time_ms;
    return;
  }
  sample s;
  s.index = 0;
  s.value = minutes;
  s.extra = {{"run_start_ms", start->time_ms}, {"run_stop_ms", stop->time_ms}};
  r.samples.push_back(s);
  r.add_metric("time_to_train_min", minutes, "min", direction::lower_is_better);
  r.finished_at = iso8601_from_ms(stop->time_ms);
}

} // namespace

run run_from_log(const std::string& text, const result_context& ctx, std::vector<diagnostic>& diags,
                 const benchmark_table& table) {
  const std::string file = log_file_name(ctx);
  // Repaired before parsing: a latin-1 byte inside an event's string must not lose the event.
  const std::string log_text = repair_text_lines(text, file, diags);
  return run_from_parsed_log(parse_mllog(log_text, file), log_text, ctx, diags, table);
}

run run_from_parsed_log(const parsed_log& log, const std::string& log_text,
                        const result_context& ctx, std::vector<diagnostic>& diags,
                        const benchmark_table& table) {
  const std::string file = log_file_name(ctx);
  const std::string division =
      ctx.system_desc && !ctx.system_desc->division.empty() ? ctx.system_desc->division : "";
  log_check lc = check_log(log, ctx.benchmark, division, ctx.round, table);
  const benchmark_info* info = table.find(ctx.benchmark);

  run r = identify_run(log, log_text, ctx, division, info);
  // Every compliance problem is a diagnostic of the import and a reason the run is INVALID.
  for (const auto& e : lc.errors) {
    diags.push_back(e);
    r.mark_invalid(e.to_string());
  }
  // Not a compliance error, but a run without a time to train.
  if (lc.not_converged) {
    diags.push_back(*lc.not_converged);
    r.mark_invalid(lc.not_converged->to_string());
  }
  // A run on a system whose description is broken cannot be compared (how many accelerators?).
  if (!ctx.system_problem.empty())
    r.mark_invalid(ctx.system_problem);
  if (!info)
    diags.push_back(
        {file, 0,
         fmt::format("unknown benchmark '{}': ingested without a quality target", ctx.benchmark)});
  r.extra = extra_of(log, ctx, lc, info);
  record_time_to_train(r, log, diags);
  return r;
}

namespace {

// "rel/name" for diagnostics ("name" at the top).
std::string rel_name(const std::string& rel, const fs::path& p) {
  const std::string n = repair_utf8(p.filename().string());
  return rel.empty() || rel == "." ? n : rel + "/" + n;
}

// The entries of `dir` (folder.hpp), sorted, without its links: each is a diagnostic naming it
// and its target, and is skipped (never followed). An entry that cannot be read (no permission)
// is reported by whoever reads it.
std::vector<folder_entry> entries(const fs::path& dir, const std::string& rel,
                                  std::vector<diagnostic>& diags) {
  std::vector<folder_entry> listed = list_folder(dir), out;
  out.reserve(listed.size());
  for (auto& e : listed) {
    if (e.kind == entry_kind::link)
      diags.push_back({rel_name(rel, e.path), 0, link_refusal(e.path) + "; skipped"});
    else
      out.push_back(std::move(e));
  }
  return out;
}

// Names become run names, uuids and JSON output; one that is not UTF-8 (a folder copied from a
// latin-1 file system) is skipped with a diagnostic rather than stored.
bool usable_name(const fs::path& p, const std::string& rel, std::vector<diagnostic>& diags) {
  if (valid_utf8(p.filename().string()))
    return true;
  diags.push_back({rel_name(rel, p), 0, "the name is not valid UTF-8; skipped"});
  return false;
}

// result_<i>.txt sorted by i (result_10 after result_9). Entries of any type but links are
// listed: a folder or a FIFO named like a result is reported when it is read, not silently
// skipped.
std::vector<std::pair<long, fs::path>> result_files(const fs::path& dir, const std::string& rel,
                                                    std::vector<diagnostic>& diags) {
  std::vector<std::pair<long, fs::path>> out;
  for (const auto& e : entries(dir, rel, diags)) {
    const std::string n = e.path.filename().string();
    if (n.size() < 11 || n.rfind("result_", 0) != 0 || e.path.extension() != ".txt")
      continue;
    if (!usable_name(e.path, rel, diags))
      continue;
    const std::string idx = n.substr(7, n.size() - 11);
    char* end = nullptr;
    long i = std::strtol(idx.c_str(), &end, 10);
    out.emplace_back(end && *end == '\0' && !idx.empty() ? i : 1L << 30, e.path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> subdirs(const fs::path& dir, const std::string& rel,
                              std::vector<diagnostic>& diags) {
  std::vector<fs::path> out;
  for (const auto& e : entries(dir, rel, diags))
    if (e.kind == entry_kind::folder && usable_name(e.path, rel, diags))
      out.push_back(e.path);
  return out;
}

// Reads and parses one JSON file of a results folder (a system description, scaling.json):
// bounded size and depth, invalid UTF-8 repaired with a diagnostic. Throws input_error.
json read_json(const fs::path& path, const std::string& rel, const std::string& what,
               std::vector<diagnostic>& diags) {
  return parse_folder_json(repair_text_lines(read_folder_file(path, what), rel, diags), rel, what,
                           diags);
}

// <org>/systems/*.json. A description that cannot be used is a diagnostic, and `broken` records
// why under the system's name (its runs are then INVALID).
void read_systems(const fs::path& org_dir, const std::string& org, const std::string& round,
                  ingest_result& res, std::map<std::string, std::string>& broken) {
  const std::string rel_dir = org + "/systems";
  if (kind_of(org_dir / "systems") == entry_kind::link) {
    res.diagnostics.push_back({rel_dir, 0, link_refusal(org_dir / "systems") + "; skipped"});
    return;
  }
  for (const auto& e : entries(org_dir / "systems", rel_dir, res.diagnostics)) {
    if (e.path.extension() != ".json" || !usable_name(e.path, rel_dir, res.diagnostics))
      continue;
    const std::string rel = rel_name(rel_dir, e.path);
    const std::string name = e.path.stem().string();
    json j;
    try {
      j = read_json(e.path, rel, "system description", res.diagnostics);
      if (!j.is_object())
        throw input_error("system description is not a JSON object");
    } catch (const input_error& x) {
      res.diagnostics.push_back({rel, 0, x.what()});
      broken[name] = fmt::format("{}: {}", rel, x.what());
      continue;
    }
    system_description s;
    s.org = org;
    s.name = name;
    s.round = round;
    s.file = e.path;
    s.fields = j;
    s.accelerator_model = string_field(j, "accelerator_model_name");
    derive_counts(s);
    for (const auto& p : s.problems)
      res.diagnostics.push_back(
          {rel, 0, p + " (the accelerator count is unknown; the system's runs are INVALID)"});
    s.framework = string_field(j, "framework");
    if (j.contains("other_software_stack"))
      s.software_stack = j["other_software_stack"];
    s.division = string_field(j, "division");
    s.status = string_field(j, "status");
    res.systems.push_back(std::move(s));
  }
  std::sort(res.systems.begin(), res.systems.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
}

// Largest scaling factor accepted. The factor (RCP rules) is the ratio of a submission's epochs
// to converge to the reference's and stays near 1; a factor of 100 would already mean a run a
// hundred times the reference, so anything larger is a broken file, not a penalty.
constexpr double k_max_scaling_factor = 100;

// <bench>/scaling.json, when present, into ctx (else the factor stays 1).
void read_scaling(const fs::path& bench_dir, const std::string& rel_bench, result_context& ctx,
                  std::vector<diagnostic>& diags) {
  const fs::path scaling = bench_dir / "scaling.json";
  if (kind_of(scaling) == entry_kind::missing) // a link exists, and is refused when read
    return;
  const std::string rel = rel_bench + "/scaling.json";
  try {
    const json j = read_json(scaling, rel, "scaling.json", diags);
    if (j.is_object() && j.contains("scaling_factor") && j["scaling_factor"].is_number()) {
      const double f = j["scaling_factor"].get<double>();
      if (std::isfinite(f) && f > 0 && f <= k_max_scaling_factor) {
        ctx.scaling_factor = f;
        ctx.has_scaling = true;
        return;
      }
    }
    diags.push_back(
        {rel, 0,
         fmt::format("no numeric scaling_factor in (0, {:g}]; using 1", k_max_scaling_factor)});
  } catch (const input_error& x) {
    diags.push_back({rel, 0, fmt::format("{}; using a scaling factor of 1", x.what())});
  }
}

// The RCP check of a closed benchmark folder of a round with RCP data (MLCommons' package
// checker runs it there), recorded on each of its runs as extra.rcp: the score of a folder that
// fails is INVALID (score.cpp), and one that passes faster than the reference mean is scaled by
// the norm factor, as the scaling.json the package checker writes would scale it, when the
// folder publishes no scaling.json of its own. A package_checker_params bypass is honoured as
// the package checker honours it. A folder without the benchmark's number of result files is
// not checked: its score is INVALID for that already, and an olympic mean of too few runs says
// nothing of convergence.
void attach_rcp(std::vector<run>& runs, size_t first, const std::vector<parsed_log>& logs,
                const fs::path& bench_dir, const result_context& ctx, const std::string& rel_bench,
                const benchmark_table& table, std::vector<diagnostic>& diags) {
  const auto rounds = rcp_rounds();
  const benchmark_info* info = table.find(ctx.benchmark);
  if (!ctx.system_desc || ctx.system_desc->division != "closed" || !info ||
      logs.size() != static_cast<size_t>(info->required_runs) ||
      std::find(rounds.begin(), rounds.end(), ctx.round) == rounds.end())
    return;
  std::vector<const parsed_log*> ptrs;
  ptrs.reserve(logs.size());
  for (const auto& l : logs)
    ptrs.push_back(&l);
  const bool bypass = package_param(bench_dir.parent_path(), k_rcp_bypass_param) ||
                      package_param(bench_dir, k_rcp_bypass_param);
  rcp_verdict v = check_rcp(ptrs, ctx.round, bypass);
  v.folder = rel_bench;
  json j = v.to_json();
  j["summary"] = v.summary();
  if (!v.pass)
    diags.push_back({rel_bench, 0, v.summary() + " (the folder's score is INVALID)"});
  const bool scale = v.pass && !ctx.has_scaling && v.norm_factor && *v.norm_factor > 1;
  for (size_t i = first; i < runs.size(); ++i) {
    runs[i].extra["rcp"] = j;
    if (scale)
      runs[i].extra["scaling_factor"] = *v.norm_factor;
  }
}

// The folder's own name, also for "DIR/", "." and "..".
std::string folder_name(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  return p.filename().string();
}

} // namespace

ingest_result ingest_org(const fs::path& org_dir, const benchmark_table& table) {
  ingest_result res;
  const std::string org = folder_name(org_dir);
  if (!valid_utf8(org))
    throw input_error(
        fmt::format("organisation folder name '{}' is not valid UTF-8", repair_utf8(org)));
  const std::string round = round_from_path(org_dir);
  if (kind_of(org_dir / "results") == entry_kind::link)
    throw input_error(fmt::format("'{}' is {}", (org_dir / "results").string(),
                                  link_refusal(org_dir / "results")));
  if (!is_dir(org_dir / "results"))
    throw input_error(
        fmt::format("'{}' is not an MLPerf organisation folder (no results/)", org_dir.string()));

  std::map<std::string, std::string> broken;
  read_systems(org_dir, org, round, res, broken);

  for (const auto& sys_dir : subdirs(org_dir / "results", org + "/results", res.diagnostics)) {
    const std::string system = sys_dir.filename().string();
    const std::string rel_sys = fmt::format("{}/results/{}", org, system);
    const system_description* desc = nullptr;
    for (const auto& s : res.systems)
      if (s.name == system)
        desc = &s;
    std::string problem;
    if (auto b = broken.find(system); b != broken.end())
      problem = "system description " + b->second;
    else if (desc && !desc->problems.empty())
      problem = fmt::format("system description {}/systems/{}.json: {}", org, system,
                            fmt::join(desc->problems, "; "));
    else if (!desc)
      res.diagnostics.push_back(
          {rel_sys, 0, fmt::format("no system description {}/systems/{}.json", org, system)});
    for (const auto& bench_dir : subdirs(sys_dir, rel_sys, res.diagnostics)) {
      result_context ctx;
      ctx.org = org;
      ctx.system = system;
      ctx.benchmark = bench_dir.filename().string();
      ctx.round = round;
      ctx.system_desc = desc;
      ctx.system_problem = problem;
      const std::string rel_bench = rel_sys + "/" + ctx.benchmark;
      read_scaling(bench_dir, rel_bench, ctx, res.diagnostics);
      const size_t first_run = res.runs.size();
      std::vector<parsed_log> logs; // the folder's, for its RCP check
      for (const auto& [idx, path] : result_files(bench_dir, rel_bench, res.diagnostics)) {
        ctx.relative_path = rel_bench + "/" + path.filename().string();
        std::string text;
        try {
          text = read_folder_file(path, "MLPerf log");
        } catch (const input_error& e) {
          res.diagnostics.push_back({ctx.relative_path, 0, e.what()});
          continue;
        }
        // run_from_log's steps, the parsed log kept: repaired first, so a latin-1 byte inside an
        // event's string does not lose the event.
        const std::string log_text = repair_text_lines(text, ctx.relative_path, res.diagnostics);
        logs.push_back(parse_mllog(log_text, ctx.relative_path));
        res.runs.push_back(run_from_parsed_log(logs.back(), log_text, ctx, res.diagnostics, table));
        res.runs.back().extra["run_index"] = idx;
        // Energy from the benchmark's power/ folder, when the submission publishes one.
        attach_energy(res.runs.back(), bench_dir, path.stem().string(), res.diagnostics);
      }
      attach_rcp(res.runs, first_run, logs, bench_dir, ctx, rel_bench, table, res.diagnostics);
    }
  }
  return res;
}

ingest_result ingest(const fs::path& dir, const benchmark_table& table,
                     const org_progress& on_org) {
  // The folder the user named may be a link (their choice); nothing below it is followed.
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw input_error(fmt::format("'{}' is not a directory", dir.string()));
  ingest_result all;
  std::vector<fs::path> orgs;
  // Breadth-first: the folder itself, then up to three levels below (rounds / orgs).
  std::vector<fs::path> level = {dir};
  for (int depth = 0; depth <= 3 && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const auto& d : level) {
      if (is_dir(d / "results"))
        orgs.push_back(d);
      else
        for (const auto& s : subdirs(d, d.lexically_relative(dir).string(), all.diagnostics))
          next.push_back(s);
    }
    level = std::move(next);
  }
  if (orgs.empty())
    throw input_error(fmt::format(
        "no MLPerf organisation folder (<org>/results/...) under '{}'{}", dir.string(),
        all.diagnostics.empty() ? "" : " (" + all.diagnostics.front().to_string() + ")"));
  std::sort(orgs.begin(), orgs.end());
  for (size_t i = 0; i < orgs.size(); ++i) {
    const fs::path& o = orgs[i];
    if (on_org)
      on_org(i, orgs.size(), o.lexically_relative(dir).string());
    ingest_result r;
    try {
      r = ingest_org(o, table);
    } catch (const input_error& e) {
      all.diagnostics.push_back({o.lexically_relative(dir).string(), 0, e.what()});
      continue;
    }
    std::move(r.systems.begin(), r.systems.end(), std::back_inserter(all.systems));
    std::move(r.runs.begin(), r.runs.end(), std::back_inserter(all.runs));
    std::move(r.diagnostics.begin(), r.diagnostics.end(), std::back_inserter(all.diagnostics));
  }
  return all;
}

} // namespace accelbench::mlperf
