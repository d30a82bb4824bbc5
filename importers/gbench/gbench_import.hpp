#pragma once
// Import of Google Benchmark results (--benchmark_format=json or --benchmark_out=FILE, as written
// by Google Benchmark 1.7.x): one run per benchmark (run_name), one sample per repetition.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench::importers {

// Converts Google Benchmark's JSON output into runs:
//  - benchmarks with "run_type": "iteration" become samples (aggregates such as _mean, _median,
//    _stddev, _cv, BigO and RMS are skipped: every statistic is recomputed from raw samples);
//  - one run per run_name, samples in repetition_index order, value = real_time converted from
//    time_unit to seconds per iteration, iterations = "iterations", cpu time and user counters in
//    the sample's extra;
//  - workload "gbench.<family>" (the name up to the first '/'), backend "cpu", config
//    {benchmark: run_name, threads: N}; source "imported", ruleset "gbench-import";
//  - metrics (medians over the repetitions): time, cpu_time, and every user counter (flops,
//    bytes_per_second, items_per_second, custom rates) whose direction is known, from
//    gbench_counter_kind (a counter named time or cpu_time is stored as counter_time,
//    counter_cpu_time: gbench_counter_metric_name); compare --metric NAME compares them sample by
//    sample;
//  - uuid: deterministic from (context date, host_name, executable, run_name), so importing the
//    same file twice adds nothing the second time;
//  - started_at and finished_at: the context's date in UTC (a date in the future is refused), or
//    accelbench's clock when it ran the program (gbench_import_options::measured);
//  - environment from the context (host_name, num_cpus, mhz_per_cpu, cpu_scaling_enabled,
//    library_build_type, caches, load_avg); a benchmark that reported an error is a failed run.
// `system` names the system the runs are stored under (empty: the context's host_name).
// Throws input_error naming `origin` and the line/column of a JSON syntax error ("nesting too
// deep" past 256 levels), or the path of a missing, mistyped or out-of-range field
// (benchmarks[3].time_unit, a negative real_time, an integer beyond int64, a number beyond a
// double) with the offending value, or the first run require_storable_runs (harness/core/
// results_document.hpp) refuses (a time of 0, a date that is not one). Bytes that are not UTF-8
// are replaced with U+FFFD;
// `repaired` (if given) gets how many.
std::vector<run> runs_from_gbench_json(const std::string& text, const std::string& origin,
                                       const std::string& system, std::size_t* repaired = nullptr);

// When accelbench itself ran the program (run gbench): its clock before and after, ISO 8601 UTC.
struct measured_times {
  std::string started_at, finished_at;
};

struct gbench_import_options {
  std::string system; // empty: the context's host_name
  // The runs' started_at and finished_at. Given (run gbench, a measured run): these, and the
  // context's date is kept as what the program claimed (extra.gbench.claimed_date), since a claimed
  // 1970 would let gc --keep-days delete the new runs and 2099 make them immortal. Not given
  // (import of a file we did not measure): the context's date, refused (input_error) when it lies
  // more than a day after this machine's clock.
  std::optional<measured_times> measured;
  // A user counter's direction where its name does not tell it (import --counter NAME=higher).
  std::map<std::string, direction> counter_directions;
  // When given: gets the user counters stored under another name (gbench_counter_metric_name),
  // for the caller to say so.
  std::set<std::string>* renamed_counters = nullptr;
};
std::vector<run> runs_from_gbench_json(const std::string& text, const std::string& origin,
                                       const gbench_import_options& o,
                                       std::size_t* repaired = nullptr);

// What a user counter is: its unit (from its name: bytes_per_second B/s, items_per_second
// items/s, *flop* FLOP/s, other *_per_second /s) and whether its direction is known: given in
// `o`, else a rate is better higher and a time, latency, miss, cycle or stall count lower. A
// counter whose direction is not known stays in the samples' extra only (import says so).
struct counter_kind {
  std::string unit;
  bool known = false;
  direction dir = direction::higher_is_better;
};
counter_kind gbench_counter_kind(const std::string& name, const gbench_import_options& o = {});

// The name a user counter is stored under, in the metrics and in the samples' counters: its own,
// except that a counter named like a metric every imported run has (time, cpu_time) becomes
// counter_<name> (counter_time), so that it never replaces that metric. A file that also has a
// counter of the new name is refused.
std::string gbench_counter_metric_name(const std::string& counter);

// True when `text` looks like Google Benchmark output (an object with "context" and
// "benchmarks"): lets `accelbench import` guess the format of a file.
bool looks_like_gbench_json(const std::string& text);

} // namespace accelbench::importers
