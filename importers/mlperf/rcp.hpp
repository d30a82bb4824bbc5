#pragma once
// Reference convergence points (RCP): the check that a closed-division submission does not
// converge faster than the reference implementation allows, as MLCommons' RCP checker defines it
// (mlperf_logging/rcp_checker/rcp_checker.py at commit 7bbf792, run by package_checker.py with
// the pruned RCPs). The reference data (rcps/training_X/rcps_<benchmark>.json, copied unchanged)
// is compiled into the library.
//
// The rule, per reference record: the olympic mean (sorted, 1 dropped at each end, 4 for unet3d)
// and the population standard deviation of the epochs (or samples) to converge; the smallest
// submission mean a one-sided Student's t-test (alpha 0.05) cannot tell apart from the reference
// (bisection to 0.0001); Max Speedup = mean / that minimum. A submission's olympic mean of its
// convergence points must be at least RCP Mean / Max Speedup; faster than the reference mean but
// within it, the score is scaled by RCP Mean / submission mean (the norm factor).
#include <optional>
#include <string>
#include <vector>

#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

namespace detail {
// The RCP files, generated from rcps/training_*/rcps_*.json at build time
// (importers/mlperf/CMakeLists.txt, rcps_data.cpp.in).
struct rcp_file {
  const char* ruleset;   // "5.0.0"
  const char* benchmark; // "llama2_70b_lora"
  const char* text;      // the file, unchanged
};
const std::vector<rcp_file>& rcp_files();
} // namespace detail

// --- The statistics, as numpy and scipy compute them (tests compare them with those values) ---

// np.mean of `v` (numpy's pairwise summation, then one division); NaN when empty.
double np_mean(const std::vector<double>& v);
// np.std of `v` (population: divided by n); NaN when empty.
double np_std(const std::vector<double>& v);
// The CDF of Student's t distribution with `df` degrees of freedom.
double student_t_cdf(double t, double df);
// The one-sided p-value the RCP checker derives from scipy's ttest_ind_from_stats(m1, s1, n1,
// m2, s2, n2, equal_var=True): P(T <= t).
double one_sided_p_value(double mean1, double std1, double n1, double mean2, double std2,
                         double n2);
// _find_min_acceptable_mean: the bisection between 0 and `mean`. `ref_samples` is the count the
// Python pairs with the candidate mean, `submission_runs` the benchmark's count (minus 2 paired
// with the reference mean: the Python's argument order, kept).
double min_acceptable_mean(double mean, double stdev, double ref_samples, int submission_runs);

// Runs per submission of `benchmark` in the RCP checker's table (0 when it has none).
int rcp_submission_runs(const std::string& benchmark);

// --- The reference data ---

struct rcp_record {
  std::string name; // "llama2_70b_lora_ref_8"; "<benchmark>_interp_<bs>" when interpolated
  std::string benchmark;
  double batch_size = 0;
  std::vector<double> epochs; // to converge (samples for llama2_70b_lora and flux1), sorted
  double mean = 0;            // olympic mean
  double stdev = 0;           // population standard deviation of all of them
  double min_epochs = 0;      // the smallest accepted submission mean
  double max_speedup = 0;     // mean / min_epochs
};

// The RCP records of one (ruleset, benchmark).
class rcp_set {
public:
  // The built-in data of MLPerf Training round `round` ("5.0") for `benchmark` (the name the logs
  // give as submission_benchmark); nullopt when there is none.
  static std::optional<rcp_set> builtin(const std::string& round, const std::string& benchmark);
  // From an RCP file's document. `round` decides the llama31_405b tweak (from 5.0). Throws
  // input_error naming the record that is malformed.
  static rcp_set from_json(const json& doc, const std::string& round, const std::string& benchmark);

  const std::string& benchmark() const { return m_benchmark; }
  const std::string& round() const { return m_round; }
  const std::vector<rcp_record>& records() const { return m_records; } // by batch size
  const std::vector<rcp_record>& pruned() const { return m_pruned; }   // what the checker uses
  // The record for a batch size between `low` and `high` (np.interp of mean and stdev; its
  // minimum computed with submission_runs x 2 reference samples).
  rcp_record interpolate(double batch_size, const rcp_record& low, const rcp_record& high) const;

private:
  void prune();
  std::string m_round, m_benchmark;
  int m_submission_runs = 0;
  std::vector<rcp_record> m_records, m_pruned;
};

// The rounds whose RCP data is built in ("4.0", "4.1", "5.0", "5.1").
std::vector<std::string> rcp_rounds();

// --- One benchmark folder's check ---

// What the RCP checker reads from one result file (read_submission_file).
struct rcp_run {
  std::string file;
  json batch_size;       // the last global_batch_size value; null when none
  std::string benchmark; // the last submission_benchmark; "" when none
  bool converged = false;
  double epochs = 1e9; // the convergence point; 1e9 when not converged
  // Where the Python would stop with an exception: what is missing and where ("" when fine).
  std::string problem;
};
rcp_run read_rcp_run(const mllog::parsed_log& log);

struct rcp_verdict {
  std::string folder; // the benchmark folder
  std::string benchmark;
  bool pass = false;
  std::string message; // MLCommons' wording ("RCP found", ...), or what stopped the check
  std::string detail;  // why, where MLCommons' wording alone does not say ("" when it does)
  std::optional<double> batch_size, submission_mean, rcp_mean, rcp_stdev, min_mean, max_speedup,
      norm_factor;
  bool bypassed = false;
  json to_json() const; // the fields above, numbers null when absent
  // "RCP Test Passed: RCP found (submission mean ..., reference mean ..., minimum accepted ...)"
  std::string summary() const;
};

// check_directory over the parsed result files of one benchmark folder, for round `round`
// ("5.0"). With `bypass`, the three failures MLCommons lets --rcp-bypass pass do pass.
rcp_verdict check_rcp(const std::vector<const mllog::parsed_log*>& logs, const std::string& round,
                      bool bypass);

} // namespace accelbench::mlperf
