#include "harness/compare/between_runs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <tuple>

#include <fmt/format.h>

#include "harness/compare/changepoint.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

namespace {

// The prior weight of the other pairs' variance when there are too few pairs (under 3) to
// estimate it from their disagreement: a pair's own 2 + 2 rounds (df 4) then count for about a
// third.
constexpr double k_prior_df_fallback = 10;
// The other pairs' estimates are used only when they carry at least this many degrees of
// freedom: an estimate from one or two is so uncertain (a t quantile of 12.7 at one) that it would
// only blur a pair that has its own within-run information.
constexpr double k_prior_df_min = 3;

// Within-run variance of one run's log median: McKean and Schrader's (1984) distribution-free
// standard error of a median, from the order statistics that bound its 95% interval. Unlike a
// spread measured around the median (MAD), it widens when the samples fall in two clusters (a run
// that switched frequency halfway), where the median itself is unstable.
double median_variance(const std::vector<double>& logs) {
  const double se = stats::median_standard_error(logs);
  return se * se;
}

// IQR / 1.349 of a run's log samples (the standard deviation where they are normal), unmoved by a
// few outliers.
double robust_spread(std::vector<double> logs) {
  std::sort(logs.begin(), logs.end());
  return (stats::quantile_sorted(logs, 0.75) - stats::quantile_sorted(logs, 0.25)) / 1.349;
}

double normal_two_sided_p(double z) { return std::erfc(std::fabs(z) / std::numbers::sqrt2); }

// Welch-Satterthwaite degrees of freedom of a sum of variance components, each with its own
// degrees of freedom (0: known exactly, e.g. the floor).
double satterthwaite(const std::vector<std::pair<double, double>>& parts) {
  double total = 0, denom = 0;
  for (const auto& [var, df] : parts) {
    total += var;
    if (df > 0)
      denom += var * var / df;
  }
  return denom > 0 ? total * total / denom : 0;
}

std::string pct(double log_sd) { return fmt::format("{:.1f}%", 100 * std::expm1(log_sd)); }

// Digamma and trigamma by the recurrence up to x >= 6 and their asymptotic series (error below
// 1e-10 there), for the empirical-Bayes prior weight.
double digamma(double x) {
  double r = 0;
  for (; x < 6; x += 1)
    r -= 1 / x;
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252)));
}

double trigamma(double x) {
  double r = 0;
  for (; x < 6; x += 1)
    r += 1 / (x * x);
  const double f = 1 / (x * x);
  return r + 1 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30))));
}

// x with trigamma(x) = y (y > 0): trigamma decreases on (0, inf); bisection on log x.
double trigamma_inverse(double y) {
  double lo = std::log(1e-8), hi = std::log(1e8);
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (trigamma(std::exp(mid)) > y ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

} // namespace

double two_sided_p(double t, double df) {
  return df > 0 ? student_t_two_sided_p(t, df) : normal_two_sided_p(t);
}

double student_t_quantile(double q, double df) {
  // Two-sided tail beyond x is 2 (1 - q); bisection on the monotone p(x).
  const double tail = 2 * (1 - q);
  double lo = 0, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (two_sided_p(mid, df) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double detectable_change(double se, double df, double alpha, double threshold) {
  if (!(se > 0) || !std::isfinite(se))
    return 0;
  const double q = student_t_quantile(1 - alpha / 2, df);
  const double power80 = student_t_quantile(0.8, df); // one-sided 80th percentile
  return std::expm1(std::max(std::log1p(std::max(0.0, threshold)), q * se) + power80 * se);
}

size_t side_locations::df() const {
  return locations.size() > job_levels.size() ? locations.size() - job_levels.size() : 0;
}

side_locations locate(const run_samples& runs, const std::vector<std::string>& job) {
  side_locations s;
  s.min_run_samples = runs.empty() ? 0 : SIZE_MAX;
  std::map<std::string, size_t> index;         // job label -> job
  std::vector<std::pair<double, size_t>> sums; // per job: sum of locations, runs
  std::vector<double> spreads;                 // per run of 4 or more samples
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (r.empty())
      continue;
    std::vector<double> logs(r.size());
    std::transform(r.begin(), r.end(), logs.begin(), [](double x) { return std::log(x); });
    const double loc = stats::median(logs);
    const std::string label = i < job.size() ? job[i] : std::string();
    const auto [it, fresh] = index.try_emplace(label, sums.size());
    if (fresh)
      sums.emplace_back(0, 0);
    sums[it->second].first += loc;
    ++sums[it->second].second;
    s.locations.push_back(loc);
    s.job_of.push_back(it->second);
    s.within_var += median_variance(logs);
    if (logs.size() >= 4)
      spreads.push_back(robust_spread(logs));
    s.samples += r.size();
    s.min_run_samples = std::min(s.min_run_samples, r.size());
  }
  if (s.locations.empty()) {
    s.min_run_samples = 0;
    return s;
  }
  s.within_var /= static_cast<double>(s.locations.size());
  s.sample_spread = spreads.empty() ? 0 : stats::median(spreads);
  for (const auto& [sum, n] : sums)
    s.job_levels.push_back(sum / static_cast<double>(n));
  s.mean = stats::mean(s.job_levels);
  s.rounds = static_cast<double>(s.locations.size()) / static_cast<double>(s.job_levels.size());
  for (size_t i = 0; i < s.locations.size(); ++i) {
    const double dev = s.locations[i] - s.job_levels[s.job_of[i]];
    s.ss += dev * dev;
  }
  for (double l : s.job_levels)
    s.ss_jobs += (l - s.mean) * (l - s.mean);
  return s;
}

void variance_pool::add(double part_ss, double part_df) {
  if (!(part_df > 0))
    return;
  parts.emplace_back(part_ss, part_df);
  ss += part_ss;
  df += part_df;
}

// limma's moment estimate (Smyth 2004): log s^2 of a chi-square variance estimate has mean
// log sigma^2 + digamma(df/2) - log(df/2) and variance trigamma(df/2); what the pairs' log
// variances spread beyond that is the spread of their true variances, trigamma(d0/2). When they
// spread no more than sampling explains, the pairs share one noise level: d0 is infinite.
void variance_pool::finish() {
  std::vector<double> e, tg;
  for (const auto& [s, f] : parts)
    if (s > 0 && f > 0) {
      e.push_back(std::log(s / f) - digamma(f / 2) + std::log(f / 2));
      tg.push_back(trigamma(f / 2));
    }
  if (e.size() < 3) {
    d0 = k_prior_df_fallback;
    return;
  }
  const double mean = stats::mean(e);
  double var = 0;
  for (double x : e)
    var += (x - mean) * (x - mean);
  var = var / static_cast<double>(e.size() - 1) - stats::mean(tg);
  d0 = var > 0 ? 2 * trigamma_inverse(var) : std::numeric_limits<double>::infinity();
}

std::pair<double, double> variance_pool::prior_without(double own_ss, double own_df) const {
  const double other_df = std::max(0.0, df - std::max(0.0, own_df));
  const double other_ss = std::max(0.0, ss - (own_df > 0 ? own_ss : 0));
  if (other_df < k_prior_df_min)
    return {0, 0};
  return {other_ss / other_df, std::min(d0, other_df)};
}

void between_run_pool::add(const side_locations& s) {
  if (s.df() == 0)
    return;
  variance_pool::add(s.ss, static_cast<double>(s.df()));
  ++sides;
}

namespace {

// sigma_B^2: the pair's own rounds moderated toward the other pairs'; < 0 when neither exists.
double round_variance(const side_locations& b, const side_locations& c, const variance_pool* pool,
                      noise_estimate& e, double& df) {
  const double own_df = static_cast<double>(b.df() + c.df());
  const double own_ss = b.ss + c.ss;
  const auto [s0, d0] = pool ? pool->prior_without(own_ss, own_df) : std::pair{0.0, 0.0};
  e.from_rounds = own_df > 0;
  e.from_pool = d0 > 0;
  df = own_df + d0;
  return df > 0 ? (d0 * s0 + own_ss) / df : -1;
}

// The job-level variance V from data (the sides' own jobs and the history), moderated toward the
// other pairs'; 0 degrees of freedom when there is none.
std::pair<double, double> job_variance(const side_locations& b, const side_locations& c,
                                       const noise_sources& src) {
  const double own_ss = b.ss_jobs + c.ss_jobs + src.history.ss;
  const double own_df = static_cast<double>(b.df_jobs() + c.df_jobs()) + src.history.df;
  const auto [s0, d0] = src.jobs ? src.jobs->prior_without(own_ss, own_df) : std::pair{0.0, 0.0};
  const double df = own_df > 0 ? own_df + d0 : 0; // the pool alone never stands for this config
  return {df > 0 ? (d0 * s0 + own_ss) / df : 0, df};
}

// "between jobs 3% a side (the ruleset's floor; ...)" or what the data said.
std::string job_text(const side_locations& b, const side_locations& c, const noise_sources& src,
                     double data_df, double job_sd) {
  const double floor = effective_floor(b, c, src.floor_pct);
  const bool raised = floor > std::log1p(std::max(0.0, src.floor_pct) / 100) + 1e-12;
  const std::string prior =
      raised
          ? fmt::format("the runs' own spread within a run, wider than the ruleset's floor {:g}%",
                        src.floor_pct)
          : std::string("the ruleset's floor");
  if (data_df <= 0)
    return src.floor_pct > 0
               ? fmt::format("between jobs {} a side ({}; no earlier jobs in the "
                             "store to learn it from)",
                             raised ? pct(floor) : fmt::format("{:g}%", src.floor_pct), prior)
               : "nothing between jobs (no floor, no earlier jobs in the store)";
  std::string from;
  if (b.df_jobs() + c.df_jobs() > 0)
    from = fmt::format("the sides' own {} + {} jobs", b.jobs(), c.jobs());
  if (src.history.jobs > 0)
    from += fmt::format("{}{} earlier job(s) in the store", from.empty() ? "" : " and ",
                        src.history.jobs);
  return fmt::format("between jobs {} a side, learned from {} ({} {} a prior worth {:g} jobs)",
                     pct(job_sd), from, prior,
                     raised ? pct(floor) : fmt::format("{:g}%", src.floor_pct), k_floor_prior_jobs);
}

// One-run sides' within-run variances moderated toward the other pairs' (the pool holds
// (v * (n - 1), n - 1) per side): (v_b, df_b, v_c, df_c).
std::tuple<double, double, double, double>
moderated_within(const side_locations& b, const side_locations& c, const variance_pool* pool) {
  const double fb = static_cast<double>(b.min_run_samples) - 1;
  const double fc = static_cast<double>(c.min_run_samples) - 1;
  if (!pool)
    return {b.within_var, fb, c.within_var, fc};
  const std::pair<double, double> prior =
      pool->prior_without(b.within_var * fb + c.within_var * fc, fb + fc);
  const double s0 = prior.first, d0 = prior.second;
  const auto mod = [s0, d0](double v, double f) { return (d0 * s0 + f * v) / (d0 + f); };
  return {fb + d0 > 0 ? mod(b.within_var, fb) : b.within_var, fb + d0,
          fc + d0 > 0 ? mod(c.within_var, fc) : c.within_var, fc + d0};
}

} // namespace

double effective_floor(const side_locations& b, const side_locations& c, double floor_pct) {
  if (!(floor_pct > 0))
    return 0;
  return std::max(std::log1p(floor_pct / 100), std::max(b.sample_spread, c.sample_spread));
}

location_test test_locations(const side_locations& b, const side_locations& c,
                             const noise_sources& src, double level) {
  location_test out;
  noise_estimate& e = out.noise;
  const double floor = effective_floor(b, c, src.floor_pct);
  double df_rounds = 0;
  const double tau2 = round_variance(b, c, src.rounds, e, df_rounds);
  const auto [v_data, df_data] = job_variance(b, c, src);
  const double w_floor = df_data > 0 ? k_floor_prior_jobs / (k_floor_prior_jobs + df_data) : 1;
  const auto jb = static_cast<double>(b.jobs()), jc = static_cast<double>(c.jobs());
  // sigma_B^2 / rounds: what a job's rounds leave of their spread in its level.
  const double rb = (tau2 >= 0 ? std::max(tau2, b.within_var) : b.within_var) / b.rounds;
  const double rc = (tau2 >= 0 ? std::max(tau2, c.within_var) : c.within_var) / c.rounds;
  const double k = 1 / jb + 1 / jc;
  const double floor_part = w_floor * floor * floor * k;
  const double rb_part = w_floor * rb / jb, rc_part = w_floor * rc / jc;
  // The data's V is a job level's whole variance; never below what its rounds alone leave.
  const double data_b = (1 - w_floor) * std::max(v_data, rb) / jb;
  const double data_c = (1 - w_floor) * std::max(v_data, rc) / jc;
  std::vector<std::pair<double, double>> parts = {{floor_part, 0}, {data_b + data_c, df_data}};
  if (tau2 >= 0) {
    parts.emplace_back(rb_part + rc_part, df_rounds);
    e.tau = std::sqrt(std::max({tau2, b.within_var, c.within_var}));
    e.method = "t on log run medians";
  } else {
    const auto [mb, df_b, mc, df_c] = moderated_within(b, c, src.within);
    parts.emplace_back(w_floor * mb / b.rounds / jb, df_b);
    parts.emplace_back(w_floor * mc / c.rounds / jc, df_c);
    e.from_pool = src.within && df_b > static_cast<double>(b.min_run_samples) - 1;
    e.method = b.min_run_samples > 1 || c.min_run_samples > 1 ? "Welch t on log samples"
                                                              : "z on log values (floor only)";
  }
  e.df = satterthwaite(parts);
  double var = 0;
  for (const auto& [v, f] : parts)
    var += v;
  const double job_var = w_floor * floor * floor + (1 - w_floor) * std::max(0.0, v_data - rc);
  e.job_sd = std::sqrt(std::max(0.0, job_var));
  out.d = c.mean - b.mean;
  out.se = std::sqrt(var);
  if (out.se > 0) {
    out.t = out.d / out.se;
    out.p_value = two_sided_p(out.t, e.df);
  } else {
    out.p_value = out.d == 0 ? 1.0 : 0.0; // two flat sides: any gap is certain
  }
  const double q = student_t_quantile(1 - (1 - level) / 2, e.df);
  out.ci_low = out.d - q * out.se;
  out.ci_high = out.d + q * out.se;
  std::string rounds = "variance within runs only (one run a side, no rounds)";
  if (e.from_rounds || e.from_pool) {
    std::string from = e.from_rounds
                           ? fmt::format("{} + {} runs", b.locations.size(), c.locations.size())
                           : "one run a side";
    if (e.from_pool)
      from += e.from_rounds ? ", shrunk toward the other configs' rounds"
                            : ", the other configs' rounds";
    rounds = fmt::format("variance between runs ({}: {})", from, pct(e.tau));
  }
  e.accounts_for = rounds + "; " + job_text(b, c, src, df_data, e.job_sd);
  return out;
}

paired_rounds pair_by_round(const run_samples& base, const std::vector<int64_t>& base_rounds,
                            const run_samples& cand, const std::vector<int64_t>& cand_rounds) {
  // round -> (sum of locations, within variances, runs) per side
  struct at_round {
    double loc = 0, var = 0;
    size_t n = 0;
  };
  const auto by_round = [](const run_samples& runs, const std::vector<int64_t>& rounds) {
    std::map<int64_t, at_round> m;
    for (size_t i = 0; i < runs.size() && i < rounds.size(); ++i) {
      if (runs[i].empty())
        continue;
      const side_locations s = locate({runs[i]});
      at_round& a = m[rounds[i]];
      a.loc += s.mean;
      a.var += s.within_var;
      ++a.n;
    }
    return m;
  };
  const auto mb = by_round(base, base_rounds), mc = by_round(cand, cand_rounds);
  paired_rounds p;
  for (const auto& [round, b] : mb)
    if (auto it = mc.find(round); it != mc.end()) {
      const at_round& c = it->second;
      const auto nb = static_cast<double>(b.n), nc = static_cast<double>(c.n);
      p.d.push_back(c.loc / nc - b.loc / nb);
      p.within_var += b.var / (nb * nb) + c.var / (nc * nc);
    }
  if (p.d.size() < 2) {
    p.d.clear();
    return p;
  }
  p.within_var /= static_cast<double>(p.d.size());
  return p;
}

location_test test_paired(const paired_rounds& p, const variance_pool& pool, double level) {
  location_test out;
  noise_estimate& e = out.noise;
  const auto n = static_cast<double>(p.d.size());
  const double mean = stats::mean(p.d);
  double ss = 0;
  for (double x : p.d)
    ss += (x - mean) * (x - mean);
  const auto [s0, d0] = pool.prior_without(ss, n - 1);
  e.df = n - 1 + d0;
  const double s2 = std::max((d0 * s0 + ss) / e.df, p.within_var);
  e.tau = std::sqrt(s2);
  e.from_rounds = true;
  e.from_pool = d0 > 0;
  e.paired = true;
  e.paired_rounds = p.d.size();
  e.method = "paired t on per-round log ratios";
  out.d = mean;
  out.se = std::sqrt(s2 / n);
  if (out.se > 0) {
    out.t = out.d / out.se;
    out.p_value = two_sided_p(out.t, e.df);
  } else {
    out.p_value = out.d == 0 ? 1.0 : 0.0;
  }
  const double q = student_t_quantile(1 - (1 - level) / 2, e.df);
  out.ci_low = out.d - q * out.se;
  out.ci_high = out.d + q * out.se;
  e.accounts_for = fmt::format(
      "the spread of the per-round differences {} over {} paired rounds{} (both sides in one job, "
      "in a randomized order: the job's level and its drift cancel)",
      pct(e.tau), p.d.size(),
      e.from_pool ? fmt::format(", moderated toward the other configs' ({:g} df)", d0) : "");
  return out;
}

} // namespace accelbench::compare
