#include "importers/mlperf/ingest.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "importers/mlperf/check_log.hpp"
#include "importers/mlperf/system_desc.hpp"
#include "importers/mlperf/time_to_train.hpp"

namespace accelbench::mlperf {

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

namespace {

// Keys that describe the run's structure rather than its hyperparameters.
bool structural_key(const std::string& k) {
  static const std::set<std::string> keys = {
      "cache_clear",   "init_start",  "init_stop",  "run_start",
      "run_stop",      "block_start", "block_stop", "epoch_start",
      "epoch_stop",    "eval_start",  "eval_stop",  "eval_accuracy",
      "tracked_stats", "train_loss",  "seed",       "weights_initialization"};
  return keys.count(k) || k.rfind("submission_", 0) == 0;
}

} // namespace

namespace {

// The run's identity: uuid, config (benchmark, division, accelerators), system, ruleset,
// environment, and the log itself.
run identify_run(const mllog::parsed_log& log, const std::string& log_text,
                 const result_context& ctx, const std::string& division,
                 const benchmark_info* info) {
  const std::string& file = log.file;
  run r;
  r.uuid = name_uuid(fmt::format("{}/{}", ctx.round.empty() ? "mlperf-training" : ctx.round, file));
  r.cfg.workload = "mlperf." + (info ? info->name : ctx.benchmark);
  r.cfg.backend = "mlperf";
  r.cfg.values["benchmark"] = info ? info->name : ctx.benchmark;
  std::string div = division;
  if (div.empty())
    if (const mllog::event* e = log.first("submission_division"); e && e->value.is_string())
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
json trained_of(const mllog::parsed_log& log, const benchmark_info* info) {
  json t = json::object();
  const mllog::event* stop = log.first("run_stop");
  std::optional<int64_t> samples;
  if (stop && stop->has_meta("samples_count"))
    samples = whole_count(stop->metadata["samples_count"], k_max_samples);
  if (!samples)
    for (const mllog::event* e : log.all("eval_accuracy"))
      if (e->has_meta("samples_count"))
        samples = whole_count(e->metadata["samples_count"], k_max_samples);
  if (samples)
    t["samples"] = *samples;
  if (const mllog::event* e = log.first("max_sequence_length"))
    if (auto seq = whole_count(e->value, k_max_sequence_length))
      t["sequence_length"] = *seq;
  if (info && !info->model.empty())
    t["model"] = info->model;
  return t;
}

// What the run's extra records of the log: where it came from, the convergence and eval curve,
// the seeds, the hyperparameters and submission_* values as logged, the initialisation time.
json extra_of(const mllog::parsed_log& log, const result_context& ctx, const log_check& lc,
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
    for (const mllog::event* e : seeds)
      extra["seed"].push_back(e->value);
  }
  json hp = json::object();
  for (const mllog::event& e : log.events)
    if (e.type == mllog::event_type::point_in_time && !structural_key(e.key) && !hp.contains(e.key))
      hp[e.key] = e.value;
  extra["hyperparameters"] = hp;
  json sub = json::object();
  for (const mllog::event& e : log.events)
    if (e.key.rfind("submission_", 0) == 0 && !sub.contains(e.key.substr(11)))
      sub[e.key.substr(11)] = e.value;
  extra["submission"] = sub;
  if (const mllog::event* is = log.first("init_start"); is && log.first("init_stop"))
    extra["init_time_min"] = (log.first("init_stop")->time_ms - is->time_ms) / 60000.0;
  if (json t = trained_of(log, info); !t.empty())
    extra["trained"] = std::move(t);
  return extra;
}

// The one sample and the time_to_train_min metric of a run with both ends, or a failed run.
void record_time_to_train(run& r, const mllog::parsed_log& log,
                          std::vector<mllog::diagnostic>& diags) {
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
  const double minutes = span_minutes(*start, *stop);
  if (const std::string why = implausible_duration(minutes); !why.empty()) {
    mllog::diagnostic d{log.file, stop->line, why};
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

run run_from_log(const std::string& text, const result_context& ctx,
                 std::vector<mllog::diagnostic>& diags, const benchmark_table& table) {
  const std::string file = log_file_name(ctx);
  // Repaired before parsing: a latin-1 byte inside an event's string must not lose the event.
  const std::string log_text = mllog::repair_text_lines(text, file, diags);
  return run_from_parsed_log(mllog::parse_mllog(log_text, file), log_text, ctx, diags, table);
}

run run_from_parsed_log(const mllog::parsed_log& log, const std::string& log_text,
                        const result_context& ctx, std::vector<mllog::diagnostic>& diags,
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
} // namespace accelbench::mlperf
