#pragma once
// The result model: the nouns every module shares (docs/architecture.md, "The nouns").
// Spec (what a workload accepts) / config (one resolved point) / run (what was measured)
// are kept apart, as nvbench keeps its benchmark spec, state and summaries apart.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace accelbench {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// metric
enum class direction { higher_is_better, lower_is_better };
std::string to_string(direction d); // "higher" | "lower"
direction direction_from_string(const std::string& s);

struct metric {
  std::string name; // tflops, tokens_per_s, time_to_train_min, pct_of_peak, mfu, ...
  double value = 0;
  std::string unit; // "TFLOP/s", "s", "%", ...
  direction dir = direction::higher_is_better;
};

// A run's metrics in the order they were added, with an index by name kept beside them, so that
// finding or setting a metric by name takes constant time whatever their number (an external
// program may report thousands: a linear search per metric made 100,000 of them take 80 s).
// Elements are read-only from outside: every change goes through a member that keeps the index.
// A name may appear twice (a document from outside may say so, and its check names it); find
// returns the first.
class metric_list {
public:
  using const_iterator = std::vector<metric>::const_iterator;
  metric_list() = default;
  metric_list(std::initializer_list<metric> ms);

  const_iterator begin() const { return m_items.begin(); }
  const_iterator end() const { return m_items.end(); }
  std::size_t size() const { return m_items.size(); }
  bool empty() const { return m_items.empty(); }
  const metric& operator[](std::size_t i) const { return m_items[i]; }
  const metric& front() const { return m_items.front(); }
  const metric& back() const { return m_items.back(); }

  const metric* find(const std::string& name) const; // the first of that name; nullptr: none
  void push_back(metric m);                          // appended, even when the name is there
  void set(metric m); // replaces the first of its name in place, else appends
  // Removes the metrics `drop` says true for, keeping the order. Returns how many.
  template <class Pred> std::size_t erase_if(Pred drop) {
    const std::size_t n = std::erase_if(m_items, drop);
    if (n > 0)
      reindex();
    return n;
  }
  void truncate(std::size_t n); // keeps the first n
  void clear();
  void reserve(std::size_t n) {
    m_items.reserve(n);
    m_first.reserve(n);
  }

private:
  void reindex();
  std::vector<metric> m_items;
  std::unordered_map<std::string, std::size_t> m_first; // name -> index of its first metric
};

// ---------------------------------------------------------------------------------------------
// sample: one timed measurement (a repetition, a training step, an MLPerf run).
struct sample {
  int64_t index = 0;
  double value = 0;            // in the run's sample_unit (seconds per iteration for kernels)
  int64_t iterations = 1;      // iterations the value is averaged over
  json extra = json::object(); // per-sample facts: clock_mhz, throttled, loss, ...
};

// ---------------------------------------------------------------------------------------------
// workload spec: typed parameter axes and backends.
enum class axis_type { integer, number, string, boolean };
std::string to_string(axis_type t);

struct axis {
  std::string name;
  axis_type type = axis_type::integer;
  std::string default_value;        // empty: the axis is required
  std::vector<std::string> choices; // for strings: the allowed values (empty: any)
  int64_t min_int = 1;              // for integers: smallest allowed value
  std::string description;
  // In the config (and its key) only when the user states it: an axis added after results were
  // stored, whose unstated value the workload derives, so that older keys keep matching.
  bool only_when_stated = false;
};

struct workload_spec {
  std::string name;   // gemm, attention, train.llama, mlperf.llama31_405b
  std::string family; // kernel | training | mlperf
  std::string description;
  std::vector<axis> axes;
  std::vector<std::string> backends; // backends this build can run ("cpu", "cuda")
  std::string default_ruleset;       // ruleset id used when --rules is not given
  std::string primary_metric;        // the metric reports lead with
  // Runs across ranks (mpirun -np N) by itself: kernel workloads are timed across ranks by
  // harness/measure; any other workload must say it coordinates its ranks (train.llama does).
  bool across_ranks = false;
  // Accepts parameters beyond `axes` as strings (an external program's own settings, which it
  // reads through {K} placeholders and ACCELBENCH_K variables); the workload validates their names.
  bool open_axes = false;
  const axis* find_axis(const std::string& name) const;
};

// ---------------------------------------------------------------------------------------------
// config: one point of the parameter space, every axis resolved.
struct config {
  std::string workload;
  std::string backend;
  std::map<std::string, std::string> values; // ordered: the key is canonical

  // "gemm/cpu/K=1024,M=1024,N=1024,dtype=fp32,library=onednn,trans_a=0,trans_b=0"
  std::string key() const;
  const std::string& at(const std::string& name) const; // throws input_error when missing
  int64_t get_int(const std::string& name) const;
  double get_number(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  json to_json() const; // the values as an object (numbers as numbers)
};

// Resolve user values (--set KEY=VALUE) against a spec: fills defaults, checks types, choices and
// ranges. Throws input_error naming the parameter and the value.
config resolve_config(const workload_spec& spec, const std::string& backend,
                      const std::map<std::string, std::string>& user_values);

// ---------------------------------------------------------------------------------------------
// run: one execution of one config on one system under one ruleset.
enum class run_status { ok, failed, skipped };
std::string to_string(run_status s);
run_status run_status_from_string(const std::string& s);

struct run {
  int64_t id = 0;      // database id (0 until stored)
  std::string uuid;    // stable across databases; the idempotency key when publishing
  config cfg;          // workload, backend and values
  std::string system;  // system name
  std::string ruleset; // ruleset id, e.g. "kernel-v1"
  json user_settings = json::object();      // what the user asked for (overrides)
  json effective_settings = json::object(); // what was applied (ruleset + overrides + limits)
  json environment = json::object();
  std::string fingerprint;       // hash of the environment fields that must match
  std::string sample_unit = "s"; // unit of sample values
  direction sample_dir = direction::lower_is_better;
  std::vector<sample> samples;
  metric_list metrics;
  run_status status = run_status::ok;
  std::string status_reason; // why failed / skipped
  bool valid = true;         // VALID / INVALID
  std::vector<std::string> invalid_reasons;
  std::vector<std::string> tags;
  std::string source = "measured"; // measured | published | imported
  std::string started_at;          // ISO-8601 UTC
  std::string finished_at;
  std::string harness_revision;
  json extra = json::object(); // workload facts: algorithm, eval curve, score...
  std::string mllog;           // MLPerf log (training, ingested MLPerf runs)

  const metric* find_metric(const std::string& name) const;
  void add_metric(std::string name, double value, std::string unit, direction dir);
  void mark_invalid(std::string reason);
  void mark_failed(std::string reason);
  void mark_skipped(std::string reason);
};

// JSON forms shared by the store, the exporter and the importers (schemas/results.schema.json).
json to_json(const run& r);
run run_from_json(const json& j); // throws input_error on a malformed document

// A new random UUID (v4) as text.
std::string new_uuid();
// Current time as ISO-8601 UTC with milliseconds: 2026-12-02T10:13:01.123Z
std::string now_iso8601();

} // namespace accelbench
