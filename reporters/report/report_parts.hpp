#pragma once
// The report's parts (report_groups, report_side, report_plausibility, report_pairs,
// report_builder, report_writers: one file per concept), as they call each other. Internal to
// reporters/report; the public face is report.hpp.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/model_catalogue.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report::detail {

struct system_facts {
  std::string accelerator_model;
  int64_t accelerators = 1;
  int64_t per_node = 1; // accelerators per node (the "most likely reading" of a per-GPU figure)
};

// ---------------------------------------------------------------------------------------------
// A side's group: the runs of one system for one pair key.
struct group {
  std::string key, workload, family, system;
  std::vector<const run*> runs;
  system_facts facts;
  const ttt_score* mlperf_score = nullptr; // MLPerf groups: the caller's score, when it gave one
};

using group_map = std::map<std::string, std::map<std::string, group>>; // key -> system -> group

// Values of one run in the quantity the family compares (kernels: TFLOP/s when the FLOPs are
// known; training: tokens/s), with the unit and direction.
struct run_series {
  std::string quantity, unit;
  direction dir = direction::higher_is_better;
  std::vector<double> values;
};

struct scored_side {
  side_score score;
  std::vector<double> values;    // sorted pooled values (kernels, training)
  std::vector<double> run_times; // MLPerf: converged run times (minutes)
  compare::run_samples runs;     // the units of compare's test: each run's values (MLPerf: each
                                 // converged run's time, one value per run)
  int drop = 1;                  // MLPerf: runs the olympic mean drops at each end
  int dropped_runs = 0;          // MLPerf: runs that did not converge or failed
  double scale = 1;
  const run* representative = nullptr; // latest run: its environment is compared
  std::vector<const run*> used;        // the runs whose values were used
};

// Geometric mean of the speed-ups of the summarised pairs among `pairs`. A baseline used by
// several pairs (one H100 figure against a B200 and a GB200) counts once: its pairs enter as
// the geometric mean of their speed-ups.
struct summary_mean {
  double speedup = 0;
  std::optional<double> per_accelerator;
  size_t pairs = 0, entries = 0;
};

// ---------------------------------------------------------------------------------------------
// Groups and the shared vocabulary (report_groups.cpp): families, pair keys, the runs of one
// system for one pair key, each run's values in the family's quantity, number formats.
std::string family_of(const std::string& workload);
int family_rank(const std::string& f);
std::string benchmark_of(const run& r);
std::string pair_key_of(const run& r);
std::string json_string_at(const json& j, const char* a, const char* b);
int64_t json_int_at(const json& j, const char* a, const char* b);
system_facts facts_of(const run& r, const side& s);
std::string format_count(int64_t n);
std::string short_name(const device_spec* d, const std::string& accel_model,
                       const std::string& system);
std::string fmt_num(double v);
// An optional figure in the report JSON: its value, or null when absent (never 0).
json optional_number(const std::optional<double>& v);
bool unit_is_per_accelerator(const std::string& unit);
std::string mlperf_group_key(const std::string& pair_key, const std::string& system);
group_map group_runs(const side& s);
run_series series_of(const run& r, const std::string& family);
double median_of(std::vector<double> v);
std::string dtype_of(const run& r);

// ---------------------------------------------------------------------------------------------
// One side of a pair (report_side.cpp): its device, usable runs, pooled values and CI, MLPerf
// score, peak, % of peak, roofline, cost and energy.
double resampled_score(const scored_side& s, const std::vector<double>& times);
const run* latest_of(const std::vector<const run*>& runs);
void add_provenance(side_score& s, const std::vector<const run*>& runs);
void add_eval_curves(side_score& s, const std::vector<const run*>& runs);
void take_mlperf_score(const group& g, scored_side& out);
void roofline_of(side_score& s, const std::vector<const run*>& ok, const device_spec* dev);
const device_spec* identify_side(side_score& s, const group& g, const device_catalogue& devices);
std::vector<const run*> usable_runs(const group& g, std::vector<std::string>& notes);
void mlperf_bootstrap_ci(scored_side& out, const options& opt);
void score_mlperf_side(const group& g, const options& opt, const device_spec* dev,
                       const model_catalogue& models, scored_side& out);
bool pool_samples(const group& g, const std::vector<const run*>& ok, scored_side& out,
                  std::vector<std::string>& notes);
void summarize_samples(scored_side& out, const options& opt);
void set_per_accelerator(side_score& s, bool per_accel_unit);
void find_peak(side_score& s, const device_spec* dev, const std::vector<const run*>& ok,
               const options& opt, const std::string& dtype);
void add_pct_of_peak(side_score& s, const group& g, const std::vector<const run*>& ok);
void add_size_points(side_score& s, const group& g, const std::vector<const run*>& ok);
scored_side score_group(const group& g, const options& opt, const device_catalogue& devices,
                        const model_catalogue& models, std::vector<std::string>& notes);
void cost_and_energy(side_score& s, const std::string& family, const options& opt,
                     const device_catalogue& devices, const std::vector<const run*>& runs);

// ---------------------------------------------------------------------------------------------
// Physical plausibility (report_plausibility.cpp): the utilisation of the peak a figure implies.
std::vector<std::string> assumed_of(const std::vector<const run*>& runs);
int64_t positive_config_int(const run& r, std::initializer_list<const char*> keys);
token_flops token_flops_of(const std::vector<const run*>& runs, const model_catalogue& models);
void add_likely_reading(plausibility_check& c, const side_score& s, const std::string& family,
                        const system_facts& facts, bool per_accel_unit);
plausibility_check assess_plausibility(const side_score& s, const std::string& family,
                                       const std::string& dtype, const std::vector<const run*>& ok,
                                       const system_facts& facts, const model_catalogue& models,
                                       bool per_accel_unit, bool probed_peak);

// ---------------------------------------------------------------------------------------------
// Pairs (report_pairs.cpp): the verdict, the statement, like for like, the summary and the
// headline.
std::string result_unit_of(const side_score& s);
std::string pair_label(const run& r, const std::string& family);
void judge_pair(pair_result& p, const scored_side& b, const scored_side& c, const options& opt,
                const compare::between_run_pool& pool);
std::string official_verdict(const pair_result& p);
bool all_skipped(const group& g);
void describe_pair(pair_result& p, const options& opt);
void compare_sides(pair_result& p, scored_side& b, scored_side& c, const options& opt,
                   const compare::between_run_pool& pool);
void flag_differences(pair_result& p, const scored_side& b, const scored_side& c);
std::string software_class_of(const run& r);
void judge_like_for_like(pair_result& p, const scored_side& b, const scored_side& c);
void decide_summary(pair_result& p);
summary_mean summary_geomean(const std::vector<const pair_result*>& pairs);
std::string verdict_text(const pair_result& p);
std::string make_headline(const report_model& r);

} // namespace accelbench::report::detail
