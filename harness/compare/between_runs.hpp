#pragma once
// The test behind every verdict: a difference of locations judged against the variance between
// runs and between jobs, not only within one run. docs/statistics.md writes the model down.
//
// Samples taken inside one process do not see what changes between invocations (the CPU's
// frequency and thermal state, the page cache, where memory lands), and the rounds of one job do
// not see what changes between jobs (the next job starts in another state). The units are:
//
//   location of a run      L = log(median of its samples)
//   within-run variance    v = the squared distribution-free standard error of that median
//                          (McKean-Schrader: from the order statistics around it)
//   level of a job         the mean of its runs' locations (its rounds)
//   between-round variance sigma_B^2 = variance of L between the rounds of one job, pooled over
//                          the jobs of both sides and moderated toward the same quantity over the
//                          comparison's other pairs (empirical Bayes, its weight from the data);
//                          never below v
//   job-level variance     V = variance of a job's level = sigma_J^2 + sigma_B^2 / rounds, from
//                          the spread of the levels of the sides' own jobs (a side with several
//                          jobs) and of earlier jobs in the store's history (same system, config,
//                          ruleset and environment), moderated over the comparison's pairs; the
//                          ruleset's floor (floor^2 + sigma_B^2 / rounds) is a prior worth
//                          k_floor_prior_jobs jobs, so it decides alone only where there is no
//                          history
//   unpaired difference    d = mean of the candidate's job levels - the baseline's;
//                          SE^2 = V_b / jobs_b + V_c / jobs_c
//   paired difference      an A/B of one job (`accelbench ab`): both sides share the job, so its
//                          level cancels; D_r = L_candidate,r - L_baseline,r per round,
//                          d = mean D, SE^2 = s_D^2 / rounds (s_D^2 moderated over the pairs)
//   test                   Student's t on d, Welch-Satterthwaite degrees of freedom (the floor is
//                          known exactly); CI = exp(d +- t_q SE) at the test's own level
//
// With one run a side, nothing pooled and no history, V is floor^2 + v and the degrees of freedom
// come from the within-run estimates (Welch-Satterthwaite). With one value per run (MLPerf's time
// to train, 3 to 10 runs a side) it is Welch's t on log times.
#include <cstddef>
#include <string>
#include <vector>

namespace accelbench::compare {

// The samples of one side, one vector per run (rounds), in any order.
using run_samples = std::vector<std::vector<double>>;

// The ruleset's floor between jobs counts as this many jobs of history: it decides alone where the
// store holds no earlier job, shares with a short history, and fades under a long one.
inline constexpr double k_floor_prior_jobs = 2;

// Location and spread of one side's runs, grouped by job.
struct side_locations {
  std::vector<double> locations;  // log median of each run
  std::vector<size_t> job_of;     // the job (0-based) of each run
  std::vector<double> job_levels; // mean location of each job's runs
  double within_var = 0;          // mean over the runs of the within-run variance of L
  double ss = 0;                  // squared deviations of the locations from their job's level
  double ss_jobs = 0;             // squared deviations of the job levels from their mean
  double mean = 0;                // mean of the job levels
  double rounds = 0;              // runs per job (mean)
  size_t samples = 0;             // samples over every run
  size_t min_run_samples = 0;     // fewest samples in one run
  // The median over the runs of the robust spread of a run's log samples (IQR / 1.349; runs of 4
  // or more samples): how much this machine typically moved within seconds while it measured this
  // side.
  double sample_spread = 0;
  size_t jobs() const { return job_levels.size(); }
  size_t df() const; // between rounds within the jobs: runs - jobs
  size_t df_jobs() const { return job_levels.size() > 1 ? job_levels.size() - 1 : 0; }
};
// `job` gives the job of each run (any labels; empty: one job).
side_locations locate(const run_samples& runs, const std::vector<std::string>& job = {});

// A variance estimated by several pairs of a comparison (log scale), each with its degrees of
// freedom; a pair's own estimate is moderated toward the others' (limma's empirical Bayes: the
// prior's weight d0 is estimated from how much the pairs' estimates disagree, so configs with
// one noise level pool fully and configs that differ keep their own).
struct variance_pool {
  std::vector<std::pair<double, double>> parts; // (sum of squares, degrees of freedom) per pair
  double ss = 0, df = 0;
  void add(double part_ss, double part_df);
  double variance() const { return df > 0 ? ss / df : 0; }
  size_t pairs() const { return parts.size(); }
  // The prior for a pair whose own part is (own_ss, own_df): the others' pooled variance and its
  // weight in degrees of freedom (0: none). Computed once by finish() for the weight.
  std::pair<double, double> prior_without(double own_ss, double own_df) const;
  void finish(); // estimates the prior weight d0 from the parts
  double d0 = 0; // the empirical-Bayes prior weight (df); infinite when the parts agree
};

// The between-round variance of run locations pooled over several pairs (log scale), kept for
// callers that pool sides (the report).
struct between_run_pool : variance_pool {
  size_t sides = 0; // sides that contributed (two or more runs of one job)
  using variance_pool::add;
  void add(const side_locations& s);
};

// The job-level noise of one config learned from earlier jobs in the store.
struct job_history {
  double ss = 0;       // squared deviations of the earlier jobs' levels from their mean (log scale)
  double df = 0;       // jobs - 1 (after outliers and a change point were left out)
  size_t jobs = 0;     // earlier jobs used
  size_t left_out = 0; // jobs left out (outliers, before a change point)
};

// What the test of one pair used, for its outputs.
struct noise_estimate {
  double tau = 0;           // the between-round standard deviation used (log scale ~ relative)
  double job_sd = 0;        // the job-level standard deviation used (log scale; 0: none)
  double df = 0;            // degrees of freedom of the test (0: normal)
  bool from_rounds = false; // the pair's own rounds contributed
  bool from_pool = false;   // other pairs' rounds contributed
  bool paired = false;      // paired by round (an A/B of one job)
  size_t paired_rounds = 0;
  std::string method;       // "t on log run medians" | "Welch t on log samples" | "paired t..."
  std::string accounts_for; // one phrase: which variance the verdict accounts for
};

struct location_test {
  double d = 0, se = 0, t = 0, p_value = 1, ci_low = 0, ci_high = 0; // log scale
  noise_estimate noise;
};

// Everything the unpaired test draws on beside the two sides.
struct noise_sources {
  const variance_pool* rounds = nullptr; // between-round variance over every pair (this included)
  const variance_pool* jobs = nullptr;   // job-level variance over every pair (this included)
  // Within-run variance of one-run sides over every pair (this included): where no side has
  // rounds (imports), the configs' within-run estimates are moderated toward each other.
  const variance_pool* within = nullptr;
  job_history history;  // this config's earlier jobs
  double floor_pct = 0; // the ruleset's floor between jobs
};

// The floor between jobs a test assumes (log scale): the ruleset's, raised to the wider side's
// typical within-run spread where that is wider (a machine whose samples move by s within one run
// is not assumed steadier than s from one job to the next); 0 where the ruleset sets none.
double effective_floor(const side_locations& b, const side_locations& c, double floor_pct);

// d, its SE, p and the CI at `level` for candidate vs baseline.
location_test test_locations(const side_locations& base, const side_locations& cand,
                             const noise_sources& src, double level);

// The per-round differences of an A/B (rounds matched by number; a round missing on a side is
// left out). Fewer than two common rounds: empty.
struct paired_rounds {
  std::vector<double> d; // L_candidate - L_baseline per common round
  double within_var = 0; // mean within-run variance of the differences (v_b + v_c)
};
paired_rounds pair_by_round(const run_samples& base, const std::vector<int64_t>& base_rounds,
                            const run_samples& cand, const std::vector<int64_t>& cand_rounds);
// The paired test; `pool` holds the other paired pairs' variances of D (this one included).
location_test test_paired(const paired_rounds& p, const variance_pool& pool, double level);

// The smallest change (relative, > 0) that a test with this SE and df calls with 80% power at
// alpha, given that the rule also needs the estimate beyond `threshold` (relative).
double detectable_change(double se, double df, double alpha, double threshold);

// Quantile of Student's t with df degrees of freedom (df <= 0: the normal's).
double student_t_quantile(double q, double df);
// Two-sided p of t with df degrees of freedom (df <= 0: the normal's).
double two_sided_p(double t, double df);

} // namespace accelbench::compare
