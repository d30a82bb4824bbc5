#include "importers/mlperf/rcp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "importers/mlperf/benchmarks.hpp"

namespace accelbench::mlperf {

// ---------------------------------------------------------------------------------------------
// Statistics

namespace {

// numpy's pairwise summation (numpy/core/src/umath/loops_utils.h, pairwise_sum): under 8
// values a plain loop, up to 128 eight partial sums combined as a tree, above that halves. The
// RCP checker's means and deviations come from it, so ours are the same doubles.
double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.;
    for (size_t i = 0; i < n; ++i)
      res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j)
      r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; ++j)
        r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

} // namespace

double np_mean(const std::vector<double>& v) {
  if (v.empty())
    return std::nan("");
  return pairwise_sum(v.data(), v.size()) / static_cast<double>(v.size());
}

double np_std(const std::vector<double>& v) {
  if (v.empty())
    return std::nan("");
  const double mean = np_mean(v);
  std::vector<double> sq;
  sq.reserve(v.size());
  for (double x : v)
    sq.push_back((x - mean) * (x - mean));
  return std::sqrt(pairwise_sum(sq.data(), sq.size()) / static_cast<double>(v.size()));
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0))
    return std::nan("");
  if (std::isinf(t))
    return t > 0 ? 1.0 : 0.0;
  // P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2).
  const double tail = 0.5 * stats::regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t < 0 ? tail : 1.0 - tail;
}

double one_sided_p_value(double mean1, double std1, double n1, double mean2, double std2,
                         double n2) {
  // scipy.stats.ttest_ind_from_stats(equal_var=True): pooled variance over n1 + n2 - 2.
  const double df = n1 + n2 - 2.0;
  const double svar = ((n1 - 1) * (std1 * std1) + (n2 - 1) * (std2 * std2)) / df;
  const double denom = std::sqrt(svar * (1.0 / n1 + 1.0 / n2));
  const double t = (mean1 - mean2) / denom;
  // The checker halves the two-sided p-value (t < 0) or takes 1 minus the half: P(T <= t).
  return student_t_cdf(t, df);
}

double min_acceptable_mean(double mean, double stdev, double ref_samples, int submission_runs) {
  if (stdev == 0)
    return mean;
  constexpr double alpha = 0.05, tolerance = 0.0001;
  const double subm_samples = submission_runs - 2;
  double hi = mean, lo = 0.0, mid = (lo + hi) / 2;
  while (hi - lo > tolerance) {
    // The Python passes (mid, stdev, ref_samples, mean, stdev, subm_samples): the candidate mean
    // with the reference's count. Kept as it is, so the minimum is the same number.
    if (one_sided_p_value(mid, stdev, ref_samples, mean, stdev, subm_samples) > alpha)
      hi = mid;
    else
      lo = mid;
    mid = (lo + hi) / 2;
  }
  return mid;
}

int rcp_submission_runs(const std::string& benchmark) {
  // rcp_checker.py, submission_runs["training"].
  static const std::map<std::string, int> runs = {{"bert", 10},
                                                  {"dlrm_dcnv2", 10},
                                                  {"gpt3", 3},
                                                  {"maskrcnn", 5},
                                                  {"resnet", 5},
                                                  {"ssd", 5},
                                                  {"retinanet", 5},
                                                  {"unet3d", 40},
                                                  {"rnnt", 10},
                                                  {"stable_diffusion", 10},
                                                  {"gnn", 10},
                                                  {"rgat", 10},
                                                  {"llama2_70b_lora", 10},
                                                  {"flux1", 10},
                                                  {"llama31_405b", 3},
                                                  {"llama31_8b", 10},
                                                  {"gpt_oss_20b", 10},
                                                  {"deepseekv3_671b", 3},
                                                  {"qwen35_397b_grpo", 3}};
  auto it = runs.find(benchmark);
  return it == runs.end() ? 0 : it->second;
}

// ---------------------------------------------------------------------------------------------
// The reference data

namespace {

// Runs dropped at each end of the olympic means (the reference's and the submission's).
size_t rejected_runs(const std::string& benchmark) { return benchmark == "unet3d" ? 4 : 1; }

// The converged points' olympic mean: sorted, `rejected` dropped at each end (NaN when nothing
// is left, as np.mean of an empty list).
double olympic(std::vector<double> v, size_t rejected) {
  std::sort(v.begin(), v.end());
  if (v.size() <= 2 * rejected)
    return std::nan("");
  return np_mean(std::vector<double>(v.begin() + static_cast<long>(rejected),
                                     v.end() - static_cast<long>(rejected)));
}

// np.interp at x between (x0, y0) and (x1, y1), as numpy computes it.
double np_interp(double x, double x0, double x1, double y0, double y1) {
  if (x <= x0)
    return y0;
  if (x >= x1)
    return y1;
  const double slope = (y1 - y0) / (x1 - x0);
  double r = slope * (x - x0) + y0;
  if (std::isnan(r))
    r = slope * (x - x1) + y1;
  return r;
}

std::string ruleset_of(const std::string& round) { return round + ".0"; }

} // namespace

rcp_set rcp_set::from_json(const json& doc, const std::string& round,
                           const std::string& benchmark) {
  rcp_set s;
  s.m_round = round;
  s.m_benchmark = benchmark;
  s.m_submission_runs = rcp_submission_runs(benchmark);
  if (s.m_submission_runs == 0)
    throw input_error(
        fmt::format("the RCP checker has no run count for benchmark '{}'", benchmark));
  if (!doc.is_object())
    throw input_error("an RCP file must be a JSON object of records");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const json& r = it.value();
    auto bad = [&](const char* what) {
      return input_error(fmt::format("RCP record '{}': {}", it.key(), what));
    };
    if (!r.is_object() || !r.contains("Benchmark") || !r["Benchmark"].is_string() ||
        !r.contains("BS") || !r["BS"].is_number())
      throw bad("needs Benchmark (a string) and BS (a number)");
    rcp_record rec;
    rec.name = it.key();
    rec.benchmark = r["Benchmark"];
    rec.batch_size = r["BS"].get<double>();
    const char* unit = rec.benchmark == "llama2_70b_lora" || rec.benchmark == "flux1"
                           ? "samples to converge"
                           : "Epochs to converge";
    if (!r.contains(unit) || !r[unit].is_array() || r[unit].empty())
      throw bad("has no list of convergence points");
    for (const json& e : r[unit]) {
      if (!e.is_number())
        throw bad("a convergence point is not a number");
      rec.epochs.push_back(e.get<double>());
    }
    std::sort(rec.epochs.begin(), rec.epochs.end());
    const size_t rej = rejected_runs(rec.benchmark);
    rec.mean = olympic(rec.epochs, rej);
    rec.stdev = np_std(rec.epochs);
    rec.min_epochs = min_acceptable_mean(
        rec.mean, rec.stdev, static_cast<double>(rec.epochs.size() - 2 * rej), s.m_submission_runs);
    rec.max_speedup = rec.mean / rec.min_epochs;
    s.m_records.push_back(std::move(rec));
  }
  // Python's sorted() of the records by BS: stable, so records of one batch size keep file order.
  std::stable_sort(
      s.m_records.begin(), s.m_records.end(),
      [](const rcp_record& a, const rcp_record& b) { return a.batch_size < b.batch_size; });
  s.prune();
  return s;
}

rcp_record rcp_set::interpolate(double bs, const rcp_record& low, const rcp_record& high) const {
  rcp_record r;
  r.name = fmt::format("{}_interp_{}", m_benchmark, bs);
  r.benchmark = m_benchmark;
  r.batch_size = bs;
  r.mean = np_interp(bs, low.batch_size, high.batch_size, low.mean, high.mean);
  r.stdev = np_interp(bs, low.batch_size, high.batch_size, low.stdev, high.stdev);
  r.min_epochs = min_acceptable_mean(r.mean, r.stdev, m_submission_runs * 2.0, m_submission_runs);
  r.max_speedup = r.mean / r.min_epochs;
  return r;
}

// _prune_rcps: drop the records with a smaller batch size than the fastest-converging one, then
// every record that converges slower than the interpolation of its two neighbours.
void rcp_set::prune() {
  if (m_records.empty())
    return;
  const auto fastest =
      std::min_element(m_records.begin(), m_records.end(),
                       [](const rcp_record& a, const rcp_record& b) { return a.mean < b.mean; });
  std::vector<rcp_record> kept;
  kept.reserve(m_records.size());
  for (const auto& r : m_records)
    if (r.batch_size >= fastest->batch_size)
      kept.push_back(r);
  size_t i = 1;
  while (i + 1 < kept.size()) {
    const rcp_record interp = interpolate(kept[i].batch_size, kept[i - 1], kept[i + 1]);
    // After a removal the Python's i - 1 and i + 1 leave i where it was: the record that moved
    // into place is judged next, between the same low neighbour and its new high one.
    if (kept[i].mean > interp.mean)
      kept.erase(kept.begin() + static_cast<long>(i));
    else
      ++i;
  }
  // Every record of a kept (benchmark, batch size), in the full data's order.
  for (const auto& r : m_records)
    for (const auto& k : kept)
      if (k.benchmark == r.benchmark && k.batch_size == r.batch_size) {
        m_pruned.push_back(r);
        break;
      }
}

std::optional<rcp_set> rcp_set::builtin(const std::string& round, const std::string& benchmark) {
  const std::string ruleset = ruleset_of(normalize_round(round));
  for (const auto& f : detail::rcp_files())
    if (f.ruleset == ruleset && f.benchmark == benchmark)
      return from_json(json::parse(f.text), normalize_round(round), benchmark);
  return std::nullopt;
}

std::vector<std::string> rcp_rounds() {
  std::set<std::string> rulesets;
  for (const auto& f : detail::rcp_files())
    rulesets.insert(f.ruleset);
  std::vector<std::string> out;
  out.reserve(rulesets.size());
  for (const auto& r : rulesets)
    out.push_back(normalize_round(r));
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return compare_rounds(a, b) < 0; });
  return out;
}

// ---------------------------------------------------------------------------------------------
// One result file, as read_submission_file reads it

namespace {

// Benchmarks whose convergence point is the samples_count of the last eval before run_stop.
bool counts_samples(const std::string& benchmark) {
  static const std::set<std::string> names = {"llama2_70b_lora", "flux1",       "llama31_405b",
                                              "llama31_8b",      "gpt_oss_20b", "deepseekv3_671b",
                                              "qwen35_397b_grpo"};
  return names.count(benchmark) > 0;
}

// What the convergence point counts, for the printed means: MLCommons calls every one "epochs",
// but bert logs samples as epoch_num and gpt3 tokens, and the samples_count benchmarks and
// stable_diffusion count samples.
std::string progress_unit(const std::string& benchmark) {
  if (counts_samples(benchmark) || benchmark == "bert" || benchmark == "stable_diffusion")
    return "samples";
  return benchmark == "gpt3" ? "tokens" : "epochs";
}

// Python's round(x, 3): the double nearest the decimal that printf rounds the exact binary value
// to (both round the exact value, ties to even).
double round3(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return std::strtod(buf, nullptr);
}

bool is_eval_key(const std::string& key) {
  // The Python takes a line when "eval_accuracy" or "eval_error" occurs in it; in published logs
  // that is the key (checked on every v5.0 result file).
  return key.find("eval_accuracy") != std::string::npos ||
         key.find("eval_error") != std::string::npos;
}

// Reads one file; throws std::string (the problem) where the Python stops with an exception.
class run_reader {
public:
  explicit run_reader(const mllog::parsed_log& log) : m_log(log) { m_run.file = log.file; }

  rcp_run read() {
    try {
      for (const mllog::event& e : m_log.events)
        take(e);
      if (m_run.benchmark.empty())
        throw fmt::format("{}: logs no submission_benchmark", m_log.file);
    } catch (const std::string& problem) {
      m_run.problem = problem;
    }
    return std::move(m_run);
  }

private:
  [[noreturn]] void missing(const mllog::event& e, const std::string& what) {
    throw fmt::format("{}:{}: {} {} (the RCP checker needs it)", m_log.file, e.line, e.key, what);
  }

  double number_meta(const mllog::event& e, const char* name) {
    if (!e.has_meta(name))
      missing(e, fmt::format("has no {}", name));
    const json& v = e.metadata[name];
    if (!v.is_number())
      missing(e, fmt::format("has {} {}, not a number", name, v.dump()));
    return v.get<double>();
  }

  void take(const mllog::event& e) {
    if (e.key.find("global_batch_size") != std::string::npos)
      m_run.batch_size = e.value;
    if (e.key.find("submission_benchmark") != std::string::npos) {
      if (!e.value.is_string())
        missing(e, fmt::format("is {}, not a benchmark name", e.value.dump()));
      m_run.benchmark = e.value.get<std::string>();
    }
    if (is_eval_key(e.key))
      take_eval(e);
    if (e.key == "run_stop")
      take_stop(e);
  }

  // The branch the Python takes depends on the benchmark logged so far.
  void take_eval(const mllog::event& e) {
    if (m_run.benchmark == "stable_diffusion") {
      const double step = number_meta(e, "samples_count");
      if (!e.has_meta("metric") || !e.metadata["metric"].is_string())
        missing(e, "has no metric (FID or CLIP)");
      if (!e.value.is_number())
        missing(e, fmt::format("has value {}, not a number", e.value.dump()));
      m_sd_evals[step][e.metadata["metric"].get<std::string>()] = e.value.get<double>();
    } else if (counts_samples(m_run.benchmark)) {
      m_point = number_meta(e, "samples_count");
    } else {
      m_point = round3(number_meta(e, "epoch_num"));
    }
  }

  void take_stop(const mllog::event& e) {
    if (!e.has_meta("status"))
      missing(e, "has no status");
    if (e.metadata["status"] != "success") {
      m_run.converged = false;
      m_run.epochs = 1e9;
      return;
    }
    m_run.converged = true;
    if (m_run.benchmark == "stable_diffusion")
      m_point = first_passing_step(e);
    if (!m_point)
      missing(e, "with status success follows no eval_accuracy");
    m_run.epochs = *m_point;
  }

  // Stable Diffusion: the smallest eval step with FID <= 90 and CLIP >= 0.15.
  double first_passing_step(const mllog::event& stop) {
    std::optional<double> best;
    for (const auto& [step, scores] : m_sd_evals) {
      auto fid = scores.find("FID"), clip = scores.find("CLIP");
      if (fid == scores.end() || clip == scores.end())
        throw fmt::format("{}: the eval at samples_count {} has no {} score (the RCP checker "
                          "needs FID and CLIP at every eval step)",
                          m_log.file, step, fid == scores.end() ? "FID" : "CLIP");
      if (fid->second <= 90.0 && clip->second >= 0.15 && (!best || step < *best))
        best = step;
    }
    if (!best)
      throw fmt::format("{}:{}: run_stop with status success, but no eval step has FID <= 90 and "
                        "CLIP >= 0.15",
                        m_log.file, stop.line);
    return *best;
  }

  const mllog::parsed_log& m_log;
  rcp_run m_run;
  std::optional<double> m_point; // the convergence point of the last eval so far
  // stable_diffusion: eval step (samples_count) -> metric (FID, CLIP) -> score.
  std::map<double, std::map<std::string, double>> m_sd_evals;
};

} // namespace

rcp_run read_rcp_run(const mllog::parsed_log& log) { return run_reader(log).read(); }

// ---------------------------------------------------------------------------------------------
// The verdict

namespace {

json optional_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

// A batch size as Python's str() writes it in "please submit RCP with BS = ...".
std::string python_number(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned())
    return v.dump();
  std::string s = fmt::format("{}", v.get<double>());
  if (s.find_first_of(".eni") == std::string::npos)
    s += ".0";
  return s;
}

class directory_check {
public:
  directory_check(const std::vector<const mllog::parsed_log*>& logs, const std::string& round)
      : m_logs(logs), m_round(normalize_round(round)) {}

  rcp_verdict run(bool bypass) {
    decide();
    if (bypass && !m_v.pass && bypassable()) {
      m_v.message += " passed using rcp_bypass";
      m_v.pass = true;
      m_v.bypassed = true;
    }
    return std::move(m_v);
  }

private:
  // The three failures --rcp-bypass lets pass (check_directory's last block).
  bool bypassable() const {
    return m_v.message == "RCP found" || m_v.message == "RCP Interpolation" ||
           m_v.message.rfind("Missing RCP, please submit RCP with BS = ", 0) == 0;
  }

  void fail(std::string message, std::string detail = {}) {
    m_v.pass = false;
    m_v.message = std::move(message);
    m_v.detail = std::move(detail);
  }

  void decide() {
    std::vector<rcp_run> runs;
    runs.reserve(m_logs.size());
    for (const mllog::parsed_log* log : m_logs) {
      runs.push_back(read_rcp_run(*log));
      if (!runs.back().problem.empty())
        return fail(runs.back().problem);
    }
    if (!same_batch_and_benchmark(runs))
      return;
    m_v.benchmark = runs.front().benchmark;
    const json& bs = runs.front().batch_size;
    if (!bs.is_number())
      return fail(
          fmt::format("{}: global_batch_size {} is not a number", runs.front().file, bs.dump()));
    m_bs = bs;
    m_v.batch_size = bs.get<double>();
    const std::optional<rcp_set> set = rcp_set::builtin(m_round, m_v.benchmark);
    if (!set)
      return fail("Cannot find any RCPs",
                  fmt::format("no reference data for {} in round {}", m_v.benchmark, m_round));
    if (!enough_converged(runs))
      return fail("Insufficient convergence");
    for (const auto& r : runs)
      m_epochs.push_back(r.epochs);
    judge(*set);
  }

  // get_submission_epochs: one batch size and one benchmark in every file. Stricter than the
  // Python, whose outcome depends on the listing order when a file has none.
  bool same_batch_and_benchmark(const std::vector<rcp_run>& runs) {
    const char* msg = "Could not detect global_batch_size";
    if (runs.empty()) {
      fail(msg, "no result files");
      return false;
    }
    for (const auto& r : runs) {
      if (r.batch_size.is_null()) {
        fail(msg, fmt::format("{} logs no global_batch_size", r.file));
        return false;
      }
      if (r.batch_size != runs.front().batch_size) {
        fail(msg,
             fmt::format("batch sizes differ: {} in {}, {} in {}", runs.front().batch_size.dump(),
                         runs.front().file, r.batch_size.dump(), r.file));
        return false;
      }
      if (r.benchmark != runs.front().benchmark) {
        fail(msg, fmt::format("benchmarks differ: '{}' in {}, '{}' in {}", runs.front().benchmark,
                              runs.front().file, r.benchmark, r.file));
        return false;
      }
    }
    return true;
  }

  // More than one run that did not converge (4 for unet3d) fails the check.
  bool enough_converged(const std::vector<rcp_run>& runs) const {
    const size_t not_converged = static_cast<size_t>(
        std::count_if(runs.begin(), runs.end(), [](const rcp_run& r) { return !r.converged; }));
    return not_converged <= (m_v.benchmark == "unet3d" ? 4u : 1u);
  }

  // check_directory's cases over the pruned records.
  void judge(const rcp_set& set) {
    const auto& data = set.pruned();
    const double bs = *m_v.batch_size;
    const rcp_record* found = nullptr;
    const rcp_record* below = nullptr; // the largest batch size under bs
    const rcp_record* above = nullptr; // the smallest batch size over bs
    for (const auto& r : data) {
      if (r.batch_size == bs && !found)
        found = &r;
      if (r.batch_size < bs && r.batch_size > 0 && (!below || r.batch_size > below->batch_size))
        below = &r;
      if (r.batch_size > bs && r.batch_size < 1e9 && (!above || r.batch_size < above->batch_size))
        above = &r;
    }
    const std::string missing = "Missing RCP, please submit RCP with BS = " + python_number(m_bs);
    if (found) {
      m_v.message = "RCP found";
      evaluate(*found);
    } else if (below && above) {
      m_v.message = "RCP Interpolation";
      evaluate(set.interpolate(bs, *below, *above));
    } else if (below) {
      fail(missing);
    } else if (above) {
      // Smaller than every reference: compared with the smallest one.
      evaluate(data.front());
      m_v.message =
          m_v.pass ? "RCP not found but slower convergence on smaller batch size" : missing;
    } else {
      fail("Cannot find any RCPs");
    }
  }

  // _eval_submission_record.
  void evaluate(rcp_record rec) {
    if (m_v.benchmark == "llama31_405b" && compare_rounds(m_round, "5.0") >= 0)
      rec.max_speedup = rec.mean / (rec.min_epochs - 46080);
    const double mean = olympic(m_epochs, rejected_runs(rec.benchmark));
    const double min_mean = rec.mean / rec.max_speedup;
    const double norm = rec.mean / mean;
    m_v.submission_mean = mean;
    m_v.rcp_mean = rec.mean;
    m_v.rcp_stdev = rec.stdev;
    m_v.max_speedup = rec.max_speedup;
    m_v.min_mean = min_mean;
    m_v.norm_factor = norm < 1 ? 1.0 : norm;
    m_v.pass = mean >= min_mean;
  }

  const std::vector<const mllog::parsed_log*>& m_logs;
  std::string m_round;
  rcp_verdict m_v;
  json m_bs;
  std::vector<double> m_epochs;
};

} // namespace

json rcp_verdict::to_json() const {
  return {{"folder", folder},
          {"benchmark", benchmark},
          {"pass", pass},
          {"message", message},
          {"detail", detail},
          {"batch_size", optional_number(batch_size)},
          {"submission_mean", optional_number(submission_mean)},
          {"rcp_mean", optional_number(rcp_mean)},
          {"rcp_stdev", optional_number(rcp_stdev)},
          {"min_mean", optional_number(min_mean)},
          {"max_speedup", optional_number(max_speedup)},
          {"norm_factor", optional_number(norm_factor)},
          {"bypassed", bypassed}};
}

std::string rcp_verdict::summary() const {
  std::string s = fmt::format("RCP Test {}: {}", pass ? "Passed" : "Failed", message);
  if (!detail.empty())
    s += fmt::format(" ({})", detail);
  if (submission_mean && rcp_mean && min_mean) {
    const std::string unit = progress_unit(benchmark);
    s += fmt::format(" (batch size {}, submission mean {:.4f} {}, reference mean {:.4f}, minimum "
                     "accepted {:.4f}",
                     batch_size ? fmt::format("{}", *batch_size) : "?", *submission_mean, unit,
                     *rcp_mean, *min_mean);
    if (norm_factor && *norm_factor > 1)
      s += fmt::format(", norm factor {:.4f}", *norm_factor);
    s += ")";
  }
  return s;
}

rcp_verdict check_rcp(const std::vector<const mllog::parsed_log*>& logs, const std::string& round,
                      bool bypass) {
  return directory_check(logs, round).run(bypass);
}

} // namespace accelbench::mlperf
