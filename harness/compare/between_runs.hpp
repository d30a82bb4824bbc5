#pragma once
// The test behind every verdict: a difference of run locations judged against the variance
// between runs, not only within one.
//
// Samples taken inside one process do not see what changes between invocations (the CPU's
// frequency and thermal state, the page cache, where memory lands), so a test on the samples of
// one run a side is overconfident across runs: the same code a minute later is "improved" at the
// smallest p its sample count allows. The unit of a verdict is therefore the run:
//
//   location of a run      L = log(median of its samples)
//   within-run variance    v = the squared distribution-free standard error of that median
//                          (McKean-Schrader: from the order statistics around it)
//   between-run variance   tau^2 = variance of L over the runs of a side (rounds), pooled over
//                          the two sides; shrunk toward the same quantity pooled over every pair
//                          of the comparison (the machine's own run-to-run noise), with prior
//                          weight min(its degrees of freedom, 10); never below v
//   between-job variance   floor^2 a side, the ruleset's comparison.between_run_noise_pct: what a
//                          job's own rounds cannot see (the next job starts in another state),
//                          so it is not divided by the number of rounds
//   difference             d = mean(L candidate) - mean(L baseline); ratio = exp(d)
//   test                   Student's t on d with SE^2 = sum over sides of tau^2 / runs + floor^2,
//                          Welch-Satterthwaite degrees of freedom (the floor is known exactly);
//                          CI = exp(d +- t_q SE)
//
// With one run a side and nothing pooled, tau^2 is floor^2 + v and the degrees of freedom come
// from the within-run estimates (Welch-Satterthwaite): the test then says so. With one value per
// run (MLPerf's time to train, 3 to 10 runs a side) it is Welch's t on log times, which can decide
// at 3 runs a side where a rank test cannot (its smallest two-sided p at 3 and 3 is 0.1).
#include <cstddef>
#include <string>
#include <vector>

namespace accelbench::compare {

// The samples of one side, one vector per run (rounds), in any order.
using run_samples = std::vector<std::vector<double>>;

// Location and spread of one side's runs.
struct side_locations {
  std::vector<double> locations; // log median of each run
  double within_var = 0;         // mean over the runs of the within-run variance of L
  double ss = 0;                 // sum of squared deviations of the locations from their mean
  double mean = 0;               // mean location
  size_t samples = 0;            // samples over every run
  size_t min_run_samples = 0;    // fewest samples in one run
  size_t df() const { return locations.size() > 1 ? locations.size() - 1 : 0; }
};
side_locations locate(const run_samples& runs);

// The between-run variance of run locations pooled over several pairs (log scale).
struct between_run_pool {
  double ss = 0;
  double df = 0;
  size_t pairs = 0; // pairs that contributed (a side with two or more runs)
  void add(const side_locations& s);
  double variance() const { return df > 0 ? ss / df : 0; }
};

// What the test of one pair used, for its outputs.
struct noise_estimate {
  double tau = 0;           // the between-run standard deviation used (log scale ~ relative)
  double df = 0;            // degrees of freedom of the test (0: normal)
  bool from_rounds = false; // the pair's own rounds contributed
  bool from_pool = false;   // other pairs' rounds contributed
  std::string method;       // "t on log run medians" | "Welch t on log samples" ...
  std::string accounts_for; // one phrase: which variance the verdict accounts for
};

struct location_test {
  double d = 0, se = 0, t = 0, p_value = 1, ci_low = 0, ci_high = 0; // log scale
  noise_estimate noise;
};

// d, its SE, p and the CI at `level` for candidate vs baseline. `pool` holds every pair of the
// comparison (this pair included; it is taken out again); floor_pct is the ruleset's floor.
location_test test_locations(const side_locations& base, const side_locations& cand,
                             const between_run_pool& pool, double floor_pct, double level);

// Quantile of Student's t with df degrees of freedom (df <= 0: the normal's).
double student_t_quantile(double q, double df);

} // namespace accelbench::compare
