#pragma once
// Comparisons of two sides' runs and of two result sets: the ratio of the sides' run medians,
// its CI and a t-test that account for the variance between runs (harness/compare/between_runs),
// and a direction-aware verdict. docs/architecture.md, "Statistics": a regression needs both
// significance and a minimum effect size; verdicts are explicit (improved / regressed / unchanged
// / inconclusive, and skipped where neither side ran).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/compare/between_runs.hpp"
#include "harness/core/model.hpp"

namespace accelbench::compare {

enum class verdict { improved, regressed, unchanged, inconclusive, skipped };

// The words for a pair with one figure a side (nothing to test): compare's reason, and what every
// output of compare and of the report (reporters/report) says; none shows a CI or a p-value.
inline constexpr const char* untested_wording = "one figure per side: no CI, no test";
// "improved" | "regressed" | "unchanged" | "inconclusive" | "skipped"
std::string to_string(verdict v);

// ---------------------------------------------------------------------------------------------
// Two runs' raw samples.
struct sample_options {
  direction dir = direction::lower_is_better; // times: lower; throughput: higher
  double alpha = 0.01;      // significance of the t-test (ruleset comparison.alpha)
  double threshold_pct = 5; // minimum effect (ruleset comparison.min_effect_pct)
  size_t min_samples = 3;   // fewer values on either side (samples over its runs): inconclusive
  double ci_level = 0;      // level of the CI of the ratio; 0: 1 - alpha, the test's own
  // The standard deviation of a whole job's level, in % (ruleset
  // comparison.between_run_noise_pct): what one job's own rounds cannot see, the prior of the
  // between-job noise where the history is short (between_runs.hpp).
  double floor_pct = 0;
  // The comparison's pools (this pair included), for the empirical-Bayes moderation: the
  // between-round variance, the job-level variance and the variance of paired differences.
  const between_run_pool* pool = nullptr;
  const variance_pool* job_pool = nullptr;
  const variance_pool* paired_pool = nullptr;
  const variance_pool* within_pool = nullptr; // within-run variance of one-run sides
  job_history history;                        // this config's earlier jobs in the store
  // The job of each run, parallel to the run_samples (empty: each side is one job).
  std::vector<std::string> baseline_jobs, candidate_jobs;
  // An A/B of one job: each run's round (extra.ab.round), parallel to the run_samples; the test
  // pairs the sides round by round when both are given and hold two common rounds.
  std::vector<int64_t> baseline_rounds, candidate_rounds;
  double level() const { return ci_level > 0 ? ci_level : 1 - alpha; }
};

struct sample_comparison {
  direction dir = direction::lower_is_better; // the options the verdict was judged under
  double alpha = 0.01;
  double threshold_pct = 5;
  size_t n_baseline = 0, n_candidate = 0;
  double baseline_median = 0, candidate_median = 0;
  double baseline_min = 0, baseline_max = 0, candidate_min = 0, candidate_max = 0;
  size_t runs_baseline = 0, runs_candidate = 0; // runs (rounds) a side
  double ratio = 0; // candidate / baseline location (geometric mean of the run medians; with one
                    // run a side the ratio of medians); 0: undefined
  double ratio_ci_low = 0, ratio_ci_high = 0;
  bool has_ci = false;        // the CI was computed (ratio defined)
  double p_value = 1;         // two-sided, of the t-test below
  double df = 0;              // its degrees of freedom (0: the normal)
  double between_run_pct = 0; // the between-run standard deviation the test used, in %
  double between_job_pct = 0; // the between-job standard deviation a side the test used, in %
  bool tested = true;         // false: nothing could be tested (one figure a side): no CI, no p
  bool paired = false;        // an A/B of one job: the sides paired round by round
  size_t paired_rounds = 0;   // rounds both sides measured (paired only)
  // The smallest change this comparison would call with 80% power at its alpha and threshold, in
  // % (direction-free); 0 when nothing was tested. "Could only see changes above 9%".
  double detectable_pct = 0;
  std::string method;       // the test: "t on log run medians", "Welch t on log samples", ...
  std::string accounts_for; // which variance the verdict accounts for, in words
  verdict result = verdict::inconclusive;
  std::string reason; // one line: why this verdict
  // Direction-aware speed-up: > 1 means the candidate is better (baseline/candidate for times,
  // candidate/baseline for throughput); 0 when the ratio is undefined.
  double log_se = 0; // the SE of the log ratio (0: not tested), for the geomeans' CI
  double speedup() const;
};

// Verdict rules:
//  - fewer than min_samples on either side, or a non-positive / non-finite sample: inconclusive;
//  - regressed / improved: the t-test of between_runs.hpp is significant (p < alpha), its CI of
//    the ratio excludes 1 on the same side, and the ratio itself is beyond the minimum effect
//    (1 +- threshold) — in the bad / good direction;
//  - unchanged: the whole CI lies inside (1 - t, 1 + t), significant or not;
//  - anything else: inconclusive (the data support neither a change nor its absence).
// A pair whose CI contains 1 is therefore never called better or worse.
// Each side given as its runs' samples (one vector per run).
sample_comparison compare_runs(const run_samples& baseline, const run_samples& candidate,
                               const sample_options& opt = {});
// One run a side.
sample_comparison compare_samples(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate,
                                  const sample_options& opt = {});

// The verdict rule above on its own, for callers that computed the ratio (candidate / baseline),
// its CI and the p-value themselves: sets result and reason from n_baseline, n_candidate, ratio,
// ratio_ci_low/high, has_ci and p_value, exactly as compare_runs judges its own.
void judge_comparison(sample_comparison& c, const sample_options& opt);

// A side whose runs were measured on a loaded machine (harness/core loaded_share): "" when none
// was, else why, naming the side and the largest share of the cores other processes used.
std::string load_reason(const std::vector<const run*>& runs, const std::string& label);
// A regressed or improved verdict becomes inconclusive when a side was measured on a loaded
// machine (`why` from load_reason, "" when neither): the load moves the times as much as a
// change of the code would. Unchanged and inconclusive verdicts stay as they are.
void discount_loaded(sample_comparison& c, const std::string& why);

// ---------------------------------------------------------------------------------------------
// Two result sets.
enum class pooling {
  pool,   // several runs of one config on one side: their samples are pooled (default; nightly
          // jobs that repeat a config get more samples, hence more power)
  latest, // only the latest run (by finished_at, then started_at, then id) is used
};

struct set_options {
  double alpha = 0.01;
  double threshold_pct = 5;                            // default minimum effect
  std::map<std::string, double> threshold_by_workload; // workload -> min_effect_pct (ruleset)
  double floor_pct = 0;                                // default floor between jobs, in %
  std::map<std::string, double> floor_by_ruleset;      // ruleset id -> between_run_noise_pct
  size_t min_samples = 3;
  // Each pair's earlier jobs in the store (key: pair_result::name), from harness/app/query.
  std::map<std::string, job_history> history;
  pooling policy = pooling::pool;
  size_t threads = 0;        // pairs are judged on this many threads; 0: hardware concurrency
  bool trust_loaded = false; // judge pairs measured on a loaded machine like any other
  std::string baseline_label = "baseline";
  std::string candidate_label = "candidate";
};

// A metric of the candidate's runs (TFLOP/s, tokens/s...): the median, smallest and largest over
// the runs that contributed samples. Carried for outputs that track more than the samples (BMF).
struct metric_summary {
  std::string name, unit;
  direction dir = direction::higher_is_better;
  double median = 0, min = 0, max = 0;
  size_t runs = 0;
};

// One paired config: the same config key and ruleset on both sides, judged on its samples. The
// report (reporters/report) has its own pair (report::pair_result: systems, published scores,
// plausibility) and takes its verdict from this one's test.
struct pair_result {
  std::string key; // cfg.key()
  std::string ruleset;
  std::string workload, backend;
  std::string name; // key + " [" + ruleset + "]": unique, used as test/benchmark name
  std::string unit; // sample unit of the candidate
  size_t baseline_runs = 0, candidate_runs = 0; // runs that contributed samples
  sample_comparison cmp;
  bool environment_differs = false; // fingerprints of the representative runs differ
  std::vector<std::string> environment_differences; // "cpu.model", "libraries.onednn", ...
  std::vector<std::string> notes; // mixed fingerprints within a side, failed runs, ...
  std::vector<metric_summary> candidate_metrics; // sorted by name
  // When and where the candidate was measured (JUnit's time, timestamp and hostname): the summed
  // wall time of its contributing runs, the earliest start (ISO-8601 UTC), the latest run's host.
  double candidate_wall_s = 0;
  std::string candidate_started_at, candidate_host;
};

// A config present on one side only.
struct unpaired_run {
  std::string key, ruleset, workload, name;
  size_t runs = 0;
};

// Geometric mean per workload of the direction-aware speed-ups (> 1: candidate better), by
// stats::geomean, the one geometric mean (the report's family means use it too).
struct workload_summary {
  std::string workload;
  size_t pairs = 0;           // pairs with a defined speed-up (the geomean's inputs)
  double geomean_speedup = 0; // 0 when no pair had a defined speed-up
  // The geomean's own CI (of the speed-up, at the comparison's level 1 - alpha), test and verdict
  // (improved / regressed / unchanged / inconclusive by the pairs' rule, threshold the smallest
  // of the pairs'); has_ci false where no pair was tested.
  bool geomean_has_ci = false;
  double geomean_ci_low = 0, geomean_ci_high = 0, geomean_p = 1;
  verdict geomean_verdict = verdict::inconclusive;
  std::string geomean_reason;
  size_t improved = 0, regressed = 0, unchanged = 0, inconclusive = 0, skipped = 0;
};

struct set_comparison {
  std::string baseline_label, candidate_label;
  double alpha = 0.01;
  std::vector<pair_result> pairs;          // sorted by name
  std::vector<unpaired_run> only_baseline; // sorted by name
  std::vector<unpaired_run> only_candidate;
  std::vector<workload_summary> workloads; // sorted by workload
  workload_summary overall;                // every pair ("OVERALL_GEOMEAN", as compare.py)
  // Listing only: the outputs that list pairs (table, markdown, JSON) show only regressed and
  // improved ones, and say how many they left out; counts and geomeans still cover every pair.
  bool only_changed = false;
  // Said once for the whole comparison, not once per pair: which variance the verdicts account
  // for, and the pairs with little data.
  std::vector<std::string> notes;
  size_t count(verdict v) const;
};

// What the runs' rulesets fix for a comparison: each workload's minimum effect
// (comparison.min_effect_pct) and each ruleset's between-run noise floor
// (comparison.between_run_noise_pct). The ruleset of every run with status ok must load
// (imported and published runs name those of rulesets/): throws input_error naming the run and
// the ruleset when one does not, instead of judging by silent defaults. Skipped and failed runs
// bring no samples, and their rulesets are not looked up. The one home of these lookups for
// compare, the report and the server.
struct ruleset_settings {
  std::map<std::string, double> threshold_by_workload;
  std::map<std::string, double> floor_by_ruleset;
};
ruleset_settings settings_from_rulesets(const std::vector<const std::vector<run>*>& sides);

// Pairs runs by (cfg.key(), ruleset). Runs that failed, were skipped or are INVALID contribute no
// samples and are named in a note: a pair whose candidate side has none while its baseline has
// VALID runs is regressed (without a ratio); a pair whose runs were all skipped on both sides is
// skipped; any other pair whose baseline has none is inconclusive. The several runs of a config
// on one side (rounds, or nights pooled) are the units of the test, so the verdict accounts for
// the variance between runs; the variance is also pooled over every pair of the comparison. The
// representative run of a side (the latest) carries the environment compared with
// environment_differences.
set_comparison compare_sets(const std::vector<run>& baseline, const std::vector<run>& candidate,
                            const set_options& opt = {});

// Exit code of `accelbench compare` (harness/core/error.hpp): exit_failed when something
// regressed; with strict, exit_inconclusive when something is inconclusive and nothing regressed;
// exit_ok otherwise.
int exit_code_for(const set_comparison& c, bool strict);

// Seconds between two ISO-8601 UTC times ("2026-12-02T10:13:01.123Z"); 0 when either does not
// parse or the end is before the start.
double seconds_between(const std::string& from, const std::string& to);

} // namespace accelbench::compare
