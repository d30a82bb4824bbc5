#pragma once
// Reports: an A-vs-B comparison (H100 vs Blackwell, or any two selections) as a report
// model, written as JSON (schemas/report.schema.json) and as one self-contained HTML page.
//
// The report pairs baseline and candidate runs by workload and config key (and ruleset); MLPerf
// runs pair by benchmark, since their configs differ in accelerator count. For every pair it gives
// each side's score with a CI, the direction-aware speed-up with its CI (every CI at the level of
// compare's test, 1 - alpha: ci_level below), % of peak from
// the device catalogue (results/devices.json), per-accelerator normalisation, cost and energy per
// result, and flags environment differences that matter. A reporter is a pure reader of the result
// model (docs/architecture.md, "Layers"): nothing here opens the store or runs anything.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/compare.hpp"
#include "harness/core/device_catalogue.hpp"
#include "harness/core/model.hpp"
#include "harness/core/model_catalogue.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/score.hpp"
#include "harness/core/system.hpp"

namespace accelbench::report {

constexpr int k_report_schema_version = 1;

// ---------------------------------------------------------------------------------------------
// Device catalogue (results/devices.json): harness/core/device_catalogue.hpp, shared with
// harness/device's datasheet peak.
using accelbench::device_catalogue;
using accelbench::device_spec;

// ---------------------------------------------------------------------------------------------
// Prices in USD per accelerator-hour (results/prices.json), keyed by device id.
struct price_entry {
  double usd_per_hour = 0;
  std::string source; // where the figure came from ("--price" for a command-line override)
};

class price_table {
public:
  static price_table load(const std::filesystem::path& file); // throws input_error
  static price_table from_json(const json& doc, const std::string& origin);
  static price_table builtin(); // results/prices.json under data_root()
  // --price MODEL=USD: MODEL is a device id, or text matched against device patterns through
  // `devices` (so "GB200=6.5" and "gb200=6.5" both set the gb200 price). Throws input_error on a
  // malformed assignment, a negative or non-numeric price, or a model no device matches.
  void apply_override(const std::string& assignment, const device_catalogue& devices);
  void set(const std::string& device_id, price_entry e) { m_prices[device_id] = std::move(e); }
  const price_entry* find(const std::string& device_id) const;
  const std::map<std::string, price_entry>& entries() const { return m_prices; }

private:
  std::map<std::string, price_entry> m_prices;
};

// ---------------------------------------------------------------------------------------------
// Inputs.
struct side {
  std::string label; // the selector as given
  std::vector<run> runs;
  std::map<std::string, system_record> systems; // every system the runs name
  // The MLPerf scores of the side's MLPerf groups, by mlperf_group::key. The report never scores
  // MLPerf runs itself: the caller scores each group of mlperf_groups() (importers/mlperf) and
  // hands the result in; a group without one is shown with an invalid score that says so.
  std::map<std::string, ttt_score> mlperf_scores;
};

// The runs of one system for one MLPerf benchmark, as the report pairs them, to be scored.
struct mlperf_group {
  std::string key; // where its score goes in side::mlperf_scores
  std::vector<run> runs;
};
std::vector<mlperf_group> mlperf_groups(const side& s);

// Whether a run of either side is on a CPU (a device whose peak accelbench measures) and carries
// no extra.peak, so that options::machine_cpu_peak would be used: the caller resolves it only then.
bool needs_machine_cpu_peak(const side& baseline, const side& candidate,
                            const device_catalogue& devices);

struct options {
  device_catalogue devices;
  price_table prices;
  int resamples = 2000;
  uint64_t seed = 42;
  // The peak of CPU runs that carry no extra.peak (measured before runs recorded it): this
  // machine's, resolved by the caller (the CLI: cached_cpu_peak(), when needs_machine_cpu_peak
  // says a side has such runs). None: those runs get no % of peak. The report never probes.
  std::optional<cpu_peak> machine_cpu_peak;
  // The verdict rule of `accelbench compare` (harness/compare): a pair is called faster or slower
  // only where compare would call it improved or regressed (dir is set per pair). Every CI of
  // the report is at its level, 1 - alpha (ci_level()): a pair's CI is then the test's own, and
  // one that excludes 1 never sits beside "not significant".
  compare::sample_options verdict_rule;
  // Judge pairs measured on a loaded machine like any other (compare --trust-loaded).
  bool trust_loaded = false;
  // Each ruleset's between-run noise floor (harness/compare settings_from_rulesets); a ruleset
  // not listed: verdict_rule.floor_pct.
  std::map<std::string, double> floor_by_ruleset;
  // Llama-style model dimensions for the FLOPs per token of training figures that do not report
  // them (harness/core/model_catalogue.hpp; the built-in workloads/training/models.json).
  model_catalogue models = model_catalogue::builtin();
  std::string generated_at;     // empty: now (tests fix it for golden files)
  std::string harness_revision; // empty: build_info::git_revision()
  std::string harness_version;  // empty: build_info::version()
};

// The level of every CI of the report: 1 - the verdict rule's alpha (0.99 at alpha 0.01). The
// one home of that rule for the report.
double ci_level(const options& opt);

// ---------------------------------------------------------------------------------------------
// The report model.
struct run_value {
  std::string uuid;
  double value = 0; // the run's result (minutes for time-to-train, median otherwise)
  bool used = true; // counted in the score (MLPerf: not dropped)
};

// The inputs and result of a time-to-train figure's implied model-FLOP utilisation
// (reporters/report/plausibility_ttt.hpp): MFU = samples x T x F / (t x A x peak).
struct ttt_utilisation {
  std::string model;  // the models catalogue entry the benchmark trains
  double samples = 0; // samples trained until run_stop, summed over the runs
  int64_t sequence_length = 0;
  double tokens = 0;         // samples x sequence_length
  double flop_per_token = 0; // F
  std::string flop_per_token_formula;
  double model_flops = 0; // tokens x F
  double minutes = 0;     // the runs' own minutes, summed (no scaling factor)
  size_t runs = 0;        // runs the score averages, over which the sums run
  int64_t accelerators = 0;
  double peak_tflops = 0; // per accelerator, dense
  std::string peak_dtype; // fp8 | bf16 | the dtype the runs state
  std::string peak_why;   // why this peak
  double utilisation_pct = 0;
  double bf16_peak_tflops = 0; // dense bf16, the literature's MFU convention (0: unknown)
  std::optional<double> bf16_utilisation_pct;
};

// Physical plausibility of one figure: the utilisation of the device's peak it implies. Kernels:
// TFLOP/s / peak. Training: tokens/s per accelerator x model FLOPs per token / peak, with the
// FLOPs per token of harness/core/model_flops.hpp (6N + 12 L H Q T, PaLM). Time to train (MLPerf):
// samples x sequence length x FLOPs per token / (minutes x accelerators) / peak (ttt). Above the
// peak by more than k_peak_margin (harness/core/peak.hpp) the figure cannot be true as stated.
struct plausibility_check {
  std::string status = "not assessed"; // plausible | implausible as stated | not assessed
  std::string basis;                   // how the implied rate was computed
  double implied_tflops = 0;           // per accelerator
  double peak_tflops = 0;
  std::string peak_dtype, peak_source;
  std::optional<double> utilisation_pct;
  double flop_per_token = 0; // training figures
  std::string flop_per_token_formula;
  bool lower_bound = false; // attention FLOPs left out: the utilisation is at least this
  std::string reason;       // why implausible, or why not assessed
  // The most likely reading of an implausible figure ("per 8-GPU node"), with the figure and the
  // utilisation under that reading; empty when no reading makes it plausible.
  std::string likely_reading;
  double likely_value = 0;
  std::string likely_unit;
  std::optional<double> likely_utilisation_pct;
  std::optional<ttt_utilisation> ttt; // time-to-train figures whose model FLOPs are known
  bool implausible() const { return status == "implausible as stated"; }
};

struct side_score {
  std::string system;
  std::string display; // "GB200 (512)"
  std::string accelerator_model;
  std::string device_id; // "" when no catalogue device matched
  std::string device_name;
  int64_t accelerators = 1;
  size_t runs = 0, samples = 0;
  std::string source;   // measured | published | imported | mixed
  std::string quantity; // tflops | tokens_per_s | time_to_train_min | <sample unit>
  std::string unit;
  direction dir = direction::higher_is_better;
  double value = 0;               // the score: median (kernels, training), olympic score (MLPerf)
  double ci_low = 0, ci_high = 0; // CI of the score (bootstrap) at the report's ci_level
  bool ci_degenerate = false;     // one sample (published figure): the CI is the point
  double per_accelerator = 0;     // value / accelerators (throughput), value x accelerators (time)
  std::string per_accelerator_unit;
  std::optional<double> pct_of_peak; // % of the catalogue peak (kernels: TFLOP/s; training: MFU)
  std::string pct_of_peak_kind;      // "tflops" | "mfu"
  double peak_tflops = 0;
  std::string peak_source;
  // Roofline (kernels whose runs record bytes_per_iteration): FLOP per byte of the config, and the
  // memory roof of the device (catalogue hbm_tb_s; 0: unknown).
  std::optional<double> intensity;
  double bandwidth_tb_s = 0;
  // MLPerf
  bool mlperf = false;
  bool score_valid = true;
  double scaling_factor = 1;
  std::vector<std::string> score_reasons;
  std::vector<run_value> run_values; // per-run results (time-to-train: minutes per run)
  // cost and energy per result (result_unit of the pair)
  std::optional<double> cost_usd;
  std::string cost_source;
  std::optional<double> energy_kwh;
  std::string energy_source; // "TDP" | "measured power" | "MLPerf power logs"
  plausibility_check plausibility;
  std::vector<std::string> assumed; // assumptions of the figures' sources (extra.assumed)
  // provenance
  std::vector<std::string> uuids;
  std::vector<std::string> revisions; // harness revisions of measured runs
  json provenance = json::array();    // published runs: extra.provenance of each
  std::vector<double> sample_values;  // for the distribution chart (capped)
  json eval_curves = json::array();   // [{uuid, points:[[x,y]...], x_label, y_label}]
  std::vector<std::pair<double, double>> size_points; // (problem size FLOPs, TFLOP/s)
};

// One pair of the report: a key on both sides, per system pairing. Not compare::pair_result, for a
// reason: a report pairs systems (one side may hold several, each with its own figures), compares
// scores of any family (published MLPerf times, figures without samples), and carries what a
// reader of two machines needs (plausibility, like-for-like, per-accelerator speed-up, cost). What
// is shared is the judgement: the verdict, p-value, detectable change, method and reason come
// from compare's test and rule (report_pairs.cpp judge_pair over compare::compare_runs), and the
// wording from harness/compare/format.hpp.
struct pair_result {
  std::string id;     // stable id: p1, p2, ... in sorted order
  std::string family; // kernel | training | mlperf
  std::string workload;
  std::string key;         // config key (+ ruleset) or "mlperf/<benchmark>"
  std::string label;       // human label: "gemm bf16 8192x8192x8192"
  std::string result_unit; // what cost/energy are per: "training run", "1M tokens", "EFLOP"
  side_score baseline, candidate;
  double speedup = 0; // > 1: candidate better (direction-aware); 0: undefined
  double speedup_ci_low = 0, speedup_ci_high = 0;
  bool ci_degenerate = false;
  std::optional<double> per_accelerator_speedup; // set when accelerator counts differ
  // The verdict, by compare's test and rule (harness/compare compare_runs): improved | regressed
  // | unchanged | inconclusive | skipped; "not tested" for one figure per side (published
  // figures).
  std::string verdict = "not tested";
  std::string verdict_reason;    // compare's one-line reason
  std::optional<double> p_value; // compare's t-test, two-sided; none when not tested
  // The smallest change compare's test could call here (80% power, %); none when not tested.
  std::optional<double> detectable_pct;
  std::string test_method;  // "t on log run medians, 3 + 3 run(s)"; empty: not tested
  std::string accounts_for; // which variance the verdict accounts for
  // MLPerf: the comparison of the official scores as MLPerf's rules make it (the scores side by
  // side, no test); empty for other families.
  std::string official_verdict;
  std::string statement;     // "1.52x faster", "no significant difference", "2.1x as published"
  std::string qualifier;     // "99% CI 1.40-1.65", "one figure per side: no CI, no test"
  bool like_for_like = true; // same family, model or shape, precision and software class
  std::vector<std::string> not_like_for_like; // why not
  bool in_summary = true;                     // counted in the headline and the geometric means
  std::vector<std::string> excluded_because;  // why not
  std::vector<std::string> flags; // differences that matter: ruleset, dtype, libraries...
  std::vector<std::string> environment_differences;
  std::vector<std::string> notes;
};

// A key found on one side only. Not compare::unpaired_run: the report names the side and the
// system it was found on and says why it stayed unpaired (another family, no like-for-like key).
struct unpaired_group {
  std::string side; // baseline | candidate
  std::string workload, key, system, label;
  size_t runs = 0;
  std::string reason;
};

// The geometric mean of a family's speed-ups: stats::geomean (harness/core/stats.hpp), the one
// geometric mean that compare's workload_summary uses too, over one entry per baseline (pairs
// sharing a baseline are averaged first, so a baseline compared with five candidates does not
// count five times); compare's geomean has a CI and a test, the report's families do not.
struct family_summary {
  std::string family;
  size_t pairs = 0;     // like-for-like, plausible pairs in the geometric mean
  size_t baselines = 0; // geometric-mean entries: pairs sharing a baseline count once
  size_t excluded = 0;  // pairs of the family left out (not like-for-like, implausible...)
  size_t faster = 0, slower = 0, no_difference = 0, inconclusive = 0, not_tested = 0;
  double geomean_speedup = 0;
  std::optional<double> geomean_per_accelerator_speedup;
  std::vector<std::string> workloads;
};

struct scaling_point {
  std::string system, side;
  int64_t accelerators = 0;
  double score_min = 0;
  double efficiency = 1; // (T_ref x N_ref) / (T x N); 1 at the smallest scale
};

struct scaling_series {
  std::string benchmark, device_id, device_name;
  std::vector<scaling_point> points; // by accelerator count
};

// Data-parallel scaling of measured training runs (report_scaling.cpp). A family is
// one workload on one system with one per-rank config (the same micro batch per rank; the
// world-size-only settings baseline, steps, overlap and bucket_kib set apart), measured at one
// or more world sizes (environment.distributed.world_size, 1 without a launcher).
struct dp_measured_point {
  int64_t world_size = 1;
  std::string overlap;                     // "1" | "0" | "" (world size 1: nothing to overlap)
  double tokens_per_s = 0;                 // global, median over the runs
  double efficiency = 0;                   // tokens/s / (N x one-rank tokens/s); 0: no reference
  std::string reference;                   // where the one-rank tokens/s came from
  std::optional<double> in_job_efficiency; // baseline=1: measured in the same job
  std::optional<double> projected_tokens_per_s, projection_error_pct;
  size_t runs = 0;
};
struct dp_projected_point {
  int64_t world_size = 1;
  double allreduce_s = 0, exposed_s = 0, step_s = 0, tokens_per_s = 0, efficiency = 0;
};
struct dp_scaling_series {
  std::string workload, system, key, label;
  std::vector<dp_measured_point> measured; // by world size, overlap
  // The projection (alpha-beta model with overlap; formula in k_dp_projection_formula): empty
  // points and a reason when an input is missing.
  std::string projection_missing;
  double compute_s = 0, backward_s = 0, gradient_bytes = 0, bucket_bytes = 0;
  int64_t buckets = 1;
  bool overlap = true;
  double alpha_s = 0, busbw_gb_s = 0; // from the collective all-reduce runs of the system
  int64_t busbw_at_bytes = 0, alpha_from_ranks = 0;
  std::vector<dp_projected_point> projection; // labelled "projection" wherever shown
};
extern const char* const k_dp_projection_formula;
// The projected step at world size n (s's inputs set; rank_tokens: tokens per rank per step).
dp_projected_point project_at(const dp_scaling_series& s, int64_t n, bool overlap,
                              double rank_tokens);
// The data-parallel scaling families of a set of runs (train.llama throughput runs, and the
// collective all-reduce runs of the same systems for the projection); families with neither two
// world sizes nor an in-job efficiency are left out.
std::vector<dp_scaling_series> build_dp_scaling(const std::vector<const run*>& runs);
json dp_scaling_json(const std::vector<dp_scaling_series>& s);
std::string dp_scaling_html(const std::vector<dp_scaling_series>& s); // "" when empty

// Every figure (run group) of the two selections, paired or not, with its plausibility and sources.
struct figure_entry {
  std::string side, system, display, workload, key, label, source;
  double value = 0;
  std::string unit;
  std::string dtype;
  json provenance = json::array();
  std::vector<std::string> assumed;
  plausibility_check plausibility;
};

struct report_model {
  int schema_version = k_report_schema_version;
  std::string generated_at, harness_version, harness_revision;
  std::string baseline_label, candidate_label;
  double ci_level = 0.99; // of every CI (ci_level(options))
  std::string headline;   // the answer in one sentence
  std::vector<pair_result> pairs;
  std::vector<unpaired_group> unpaired;
  std::vector<family_summary> summaries;
  std::vector<scaling_series> scaling;
  std::vector<dp_scaling_series> dp_scaling; // measured data-parallel scaling and its projection
  std::vector<figure_entry> figures;
  std::vector<std::string> notes;
  json devices = json::array(); // catalogue entries used, with sources
  json prices = json::array();  // prices used, with sources
};

// Builds the report. Runs with a status other than ok contribute no samples (noted). Never throws
// on odd data: a pair it cannot score gets a note and speed-up 0.
report_model build_report(const side& baseline, const side& candidate, const options& opt);

json to_json(const report_model& r);        // valid against schemas/report.schema.json
std::string to_html(const report_model& r); // one self-contained page
// The terminal summary: headline, then one line per pair (aligned table).
std::string summary_text(const report_model& r);

// Escaping used by the HTML writer and the server's dashboard (the one home): & < > " ' as
// entities, and control characters (U+0000..U+001F but tab and newline, U+007F, U+0080..U+009F)
// as U+FFFD.
std::string html_escape(const std::string& s);
// JSON text safe inside <script>: '<', '>', '&' and U+2028/9 as \u escapes, so "</script>" and
// "<!--" cannot end or alter the element.
std::string json_for_script(const json& j);

} // namespace accelbench::report
