#include "harness/compare/between_runs.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "harness/compare/changepoint.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

namespace {

// The prior weight of the comparison's pooled between-run variance, in degrees of freedom: a
// pair's own 2 + 2 rounds (df 4) count for about a third of the estimate. Capped so that one
// config noisier than the rest is not hidden entirely by the quiet ones (a limma-style moderated
// variance with a fixed prior weight).
constexpr double k_prior_df_cap = 10;
// The other pairs' rounds are used only when they carry at least this many degrees of freedom: an
// estimate from one or two is so uncertain (a t quantile of 12.7 at one) that it would only blur a
// pair that has its own within-run information.
constexpr double k_prior_df_min = 3;

// Within-run variance of one run's log median: McKean and Schrader's (1984) distribution-free
// standard error of a median, from the order statistics that bound its 95% interval,
//   c = max(1, round((n + 1) / 2 - 1.96 sqrt(n / 4))),  SE = (x_(n-c+1) - x_(c)) / (2 * 1.96).
// Unlike a spread measured around the median (MAD), it widens when the samples fall in two
// clusters (a run that switched frequency halfway), where the median itself is unstable.
double median_variance(const std::vector<double>& logs) {
  const double se = stats::median_standard_error(logs);
  return se * se;
}

double normal_two_sided_p(double z) { return std::erfc(std::fabs(z) / std::numbers::sqrt2); }

double two_sided_p(double t, double df) {
  return df > 0 ? student_t_two_sided_p(t, df) : normal_two_sided_p(t);
}

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

} // namespace

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

side_locations locate(const run_samples& runs) {
  side_locations s;
  s.min_run_samples = runs.empty() ? 0 : SIZE_MAX;
  for (const auto& r : runs) {
    if (r.empty())
      continue;
    std::vector<double> logs(r.size());
    std::transform(r.begin(), r.end(), logs.begin(), [](double x) { return std::log(x); });
    s.locations.push_back(stats::median(logs));
    s.within_var += median_variance(logs);
    s.samples += r.size();
    s.min_run_samples = std::min(s.min_run_samples, r.size());
  }
  if (s.locations.empty()) {
    s.min_run_samples = 0;
    return s;
  }
  const auto n = static_cast<double>(s.locations.size());
  s.within_var /= n;
  s.mean = stats::mean(s.locations);
  for (double l : s.locations)
    s.ss += (l - s.mean) * (l - s.mean);
  return s;
}

void between_run_pool::add(const side_locations& s) {
  if (s.df() == 0)
    return;
  ss += s.ss;
  df += static_cast<double>(s.df());
  ++pairs;
}

namespace {

// The pair's own between-run variance and the comparison's, shrunk together.
void moderated_tau(const side_locations& b, const side_locations& c, const between_run_pool& pool,
                   noise_estimate& e, double& tau2) {
  const double own_df = static_cast<double>(b.df() + c.df());
  const double own_ss = (b.df() ? b.ss : 0) + (c.df() ? c.ss : 0);
  const double other_df = std::max(0.0, pool.df - own_df);
  const double other_ss = std::max(0.0, pool.ss - own_ss);
  const double d0 = other_df >= k_prior_df_min ? std::min(other_df, k_prior_df_cap) : 0;
  const double s0 = other_df > 0 ? other_ss / other_df : 0;
  e.from_rounds = own_df > 0;
  e.from_pool = d0 > 0;
  if (own_df + d0 > 0) {
    tau2 = (d0 * s0 + own_ss) / (d0 + own_df);
    e.df = d0 + own_df;
  }
}

std::string accounts_for(const noise_estimate& e, const side_locations& b, const side_locations& c,
                         double floor_pct) {
  const std::string jobs =
      floor_pct > 0 ? fmt::format("; between jobs {:g}% a side (the ruleset's floor)", floor_pct)
                    : "; nothing between jobs (no floor)";
  if (e.from_rounds || e.from_pool) {
    std::string src = e.from_rounds
                          ? fmt::format("{} + {} runs", b.locations.size(), c.locations.size())
                          : "one run a side";
    if (e.from_pool)
      src += e.from_rounds ? ", shrunk toward the other configs' rounds"
                           : ", the other configs' rounds";
    return fmt::format("variance between runs ({}: {}){}", src, pct(e.tau), jobs);
  }
  if (floor_pct > 0)
    return fmt::format("variance within runs{} (no rounds to measure the noise between runs)",
                       jobs);
  return "variance within runs only (one run a side, no rounds and no floor: the verdict does "
         "not account for the noise between runs)";
}

} // namespace

location_test test_locations(const side_locations& b, const side_locations& c,
                             const between_run_pool& pool, double floor_pct, double level) {
  location_test out;
  noise_estimate& e = out.noise;
  const double floor = std::log1p(std::max(0.0, floor_pct) / 100);
  double tau2 = -1; // the run-to-run variance of a location; < 0: not estimated
  moderated_tau(b, c, pool, e, tau2);
  const auto nb = static_cast<double>(b.locations.size());
  const auto nc = static_cast<double>(c.locations.size());
  // Each side is one job: the floor is the variance of a whole job's level, which its rounds
  // cannot average away (two jobs of the quick suite a minute apart, right after a build, sat
  // 3-7% apart in every config while each job's rounds agreed within 2.5%).
  const double job = floor * floor;
  double var_b = 0, var_c = 0;
  if (tau2 >= 0) {
    // Never below the side's own within-run variance.
    var_b = std::max(tau2, b.within_var) / nb;
    var_c = std::max(tau2, c.within_var) / nc;
    const double runs_part = var_b + var_c;
    e.df = satterthwaite({{runs_part, e.df}, {2 * job, 0}});
    e.tau = std::sqrt(std::max({tau2, b.within_var, c.within_var}));
    e.method = "t on log run medians";
  } else {
    // One run a side, nothing pooled: the within-run estimates.
    var_b = b.within_var / nb;
    var_c = c.within_var / nc;
    e.df = satterthwaite({{2 * job, 0},
                          {var_b, static_cast<double>(b.min_run_samples) - 1},
                          {var_c, static_cast<double>(c.min_run_samples) - 1}});
    e.tau = 0;
    e.method = b.min_run_samples > 1 || c.min_run_samples > 1 ? "Welch t on log samples"
                                                              : "z on log values (floor only)";
  }
  var_b += job;
  var_c += job;
  out.d = c.mean - b.mean;
  out.se = std::sqrt(var_b + var_c);
  if (out.se > 0) {
    out.t = out.d / out.se;
    out.p_value = two_sided_p(out.t, e.df);
  } else {
    out.p_value = out.d == 0 ? 1.0 : 0.0; // two flat sides: any gap is certain
  }
  const double q = student_t_quantile(1 - (1 - level) / 2, e.df);
  out.ci_low = out.d - q * out.se;
  out.ci_high = out.d + q * out.se;
  e.accounts_for = accounts_for(e, b, c, floor_pct);
  return out;
}

} // namespace accelbench::compare
