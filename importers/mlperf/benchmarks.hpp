#pragma once
// The MLPerf Training benchmark table (benchmarks.json, compiled into the library): quality
// targets, required number of runs, closed- and open-division rules, allowed system status
// values and the initialisation bound, each transcribed from MLCommons' logging and
// training_policies repositories (the file's "source" section cites them).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/mllog.hpp"
#include "harness/core/model.hpp"

namespace accelbench::mlperf {

// One closed- or open-division rule for a logged key (a KEY record of the compliance checker YAML).
struct hparam_rule {
  std::string key;
  std::string req;                  // "EXACTLY_ONE", "AT_LEAST_ONE" or "" (no count rule)
  json check;                       // {"op": ..., ...} or null (see benchmarks.json check_ops)
  std::vector<std::string> rounds;  // rounds the rule exists in ("5.1"); empty: every round
  std::map<std::string, json> when; // applies only when these keys were logged with these values
};

// One bound of the quality check, e.g. eval loss <= 0.925 (and > 0, the sanity limit).
struct quality_target {
  std::string metadata_metric; // for multi-metric evals (FID, CLIP): metadata "metric"
  // The target; none in most open-division checks, which bound only the other side (value < 1.0).
  std::optional<double> target;
  direction dir = direction::lower_is_better; // lower: value <= target; higher: value >= target
  std::optional<double> limit;                // the other bound (exclusive unless limit_inclusive)
  bool limit_inclusive = false;
  bool reached(double value) const;
  std::string describe() const; // "0 < value <= 0.925", "CLIP <= 1"
};

struct quality_spec {
  std::string metric;                          // "eval loss", "log perplexity", ...
  std::string key = "eval_accuracy";           // the logged key (open flux1: a loss of its own)
  std::vector<quality_target> targets;         // all must hold at one eval point
  std::string eval_metadata = "samples_count"; // what each line of `key` must carry
  size_t min_eval_points = 1;                  // stable_diffusion: AT_LEAST(2) aggregated evals
  std::vector<std::string> rounds;             // rounds the check exists in; empty: every round
  bool multi_metric() const;    // one line per metric and eval point (stable_diffusion's FID, CLIP)
  json to_json() const;         // {"metric", "target", "direction"} (+ "targets")
  std::string describe() const; // the targets as a condition: "value < 1"
};

struct benchmark_info {
  std::string name;
  std::string description;
  std::vector<std::string> aliases; // older folder names: ssd -> retinanet, gnn -> rgat
  int required_runs = 0;            // exact number of result files (benchmark_meta.py)
  int max_dropped = 1;              // runs dropped at each end by olympic scoring
  // The workloads/training/models.json entry whose every weight the benchmark trains (pre-training
  // from a checkpoint: model FLOPs 6N + attention per token), for the report's implied
  // utilisation; empty when the table names none (LoRA fine-tuning freezes the base weights, so
  // 6N would overcount; vision and recommendation models are not decoders).
  std::string model;
  quality_spec quality;
  std::vector<hparam_rule> closed_rules;
  // The open division's open_<benchmark>.yaml: its rules and its check of the eval values.
  std::vector<hparam_rule> open_rules;
  std::optional<quality_spec> open_quality;
  // The open quality check of `round` (empty: the table's only one); nullptr when MLCommons has no
  // open file for this benchmark in that round.
  const quality_spec* open_quality_in(const std::string& round) const;
};

// The result of looking for the quality target in a log's eval_accuracy events.
struct quality_outcome {
  bool reached = false;
  int64_t reached_line = 0;        // first line where the target was met
  size_t eval_points = 0;          // distinct evaluations
  json eval_curve = json::array(); // [{samples_count | epoch_num, value[, metric]}]
  // Multi-metric evals: the positions (samples_count) of eval points lacking one of the metrics.
  std::vector<double> incomplete_points;
};
quality_outcome evaluate_quality(const quality_spec& q, const mllog::parsed_log& log);

class benchmark_table {
public:
  // The table compiled into the library from importers/mlperf/benchmarks.json.
  static const benchmark_table& builtin();
  // Throws input_error naming the first malformed entry.
  static benchmark_table from_json(const json& doc);

  // By name or alias; nullptr when unknown.
  const benchmark_info* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // Benchmarks of a round ("5.0"); nullptr for a round the table does not know.
  const std::vector<std::string>* round_benchmarks(const std::string& round) const;
  // What an open-division log of a round may name as its benchmark (open_common.yaml).
  const std::vector<std::string>* open_round_benchmarks(const std::string& round) const;
  // The rounds the table knows ("4.0", "5.0", ...), in order.
  std::vector<std::string> rounds() const;
  // Whether `status` is an allowed system status in `round` (empty round: the strict list).
  bool status_allowed(const std::string& status, const std::string& round) const;
  const std::vector<std::string>& allowed_status() const { return m_allowed_status; }
  // Closed 30 minutes, open 240 (training_rules.adoc, "maximum model initialization time").
  double init_limit_min(const std::string& division) const;
  const std::vector<hparam_rule>& closed_common() const { return m_closed_common; }
  const json& doc() const { return m_doc; }

private:
  json m_doc;
  std::vector<benchmark_info> m_benchmarks;
  std::map<std::string, std::vector<std::string>> m_rounds, m_open_rounds;
  std::vector<std::string> m_allowed_status, m_legacy_status;
  std::string m_strict_status_since;
  std::map<std::string, double> m_init_limit;
  std::vector<hparam_rule> m_closed_common;
};

// "v5.0", "5.0", "5.0.0", "training_v5.0" -> "5.0"; "" when there is no round in it.
std::string normalize_round(std::string_view s);
// The round named by a path component such as "training_v5.0" or "training_results_v4.0";
// "" when none.
std::string round_from_path(const std::filesystem::path& p);
// Compares round strings numerically: -1, 0, 1.
int compare_rounds(const std::string& a, const std::string& b);

} // namespace accelbench::mlperf
