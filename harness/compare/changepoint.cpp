#include "harness/compare/changepoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

namespace {

struct moments {
  double mean = 0, var = 0; // sample variance (n - 1)
  size_t n = 0;
};

moments segment_moments(const std::vector<double>& v, size_t s, size_t e) {
  moments m;
  m.n = e - s;
  if (m.n == 0)
    return m;
  double sum = 0;
  for (size_t i = s; i < e; ++i)
    sum += v[i];
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2)
    return m;
  double acc = 0;
  for (size_t i = s; i < e; ++i)
    acc += (v[i] - m.mean) * (v[i] - m.mean);
  m.var = acc / static_cast<double>(m.n - 1);
  return m;
}

double welch_p(const moments& a, const moments& b) {
  if (a.n < 2 || b.n < 2)
    return 1;
  const double sa = a.var / static_cast<double>(a.n), sb = b.var / static_cast<double>(b.n);
  const double se2 = sa + sb;
  if (se2 <= 0)
    return a.mean == b.mean ? 1.0 : 0.0; // two flat segments: any gap is certain
  const double t = (a.mean - b.mean) / std::sqrt(se2);
  // Welch-Satterthwaite degrees of freedom.
  const double df =
      se2 * se2 / (sa * sa / static_cast<double>(a.n - 1) + sb * sb / static_cast<double>(b.n - 1));
  return student_t_two_sided_p(t, df);
}

// q-hat(tau) for every split tau of [s, e) with min_seg points on each side (alpha = 1):
//   E = 2/(m n) sum|x - y| - 2/(m (m-1)) sum_{i<k}|x_i - x_k| - 2/(n (n-1)) sum_{j<k}|y_j - y_k|
//   q = m n / (m + n) * E
// Moving tau one step moves one point from the right part to the left part, so the three sums
// are updated in O(e - s) and the whole scan costs O((e - s)^2).
// Returns (best tau, best q); tau == 0 when the segment is too short.
std::pair<size_t, double> best_split(const std::vector<double>& v, size_t s, size_t e,
                                     size_t min_seg, std::vector<double>* all_q = nullptr) {
  const size_t len = e - s;
  if (len < 2 * min_seg)
    return {0, 0};
  double cross = 0, left = 0, right = 0; // sums over X-Y pairs, X pairs, Y pairs
  for (size_t j = s; j < e; ++j)
    for (size_t k = j + 1; k < e; ++k)
      right += std::fabs(v[j] - v[k]);
  size_t best_tau = 0;
  double best_q = -std::numeric_limits<double>::infinity();
  for (size_t tau = s; tau < e - min_seg; ++tau) {
    // Move point p = tau from the right part to the left part; afterwards the split is tau + 1.
    const double p = v[tau];
    double to_left = 0, to_right = 0;
    for (size_t i = s; i < tau; ++i)
      to_left += std::fabs(v[i] - p);
    for (size_t j = tau + 1; j < e; ++j)
      to_right += std::fabs(v[j] - p);
    left += to_left;
    right -= to_right;
    cross += to_right - to_left;
    const size_t split = tau + 1;
    const double m = static_cast<double>(split - s), n = static_cast<double>(e - split);
    if (split - s < min_seg)
      continue;
    const double energy =
        2 * cross / (m * n) - 2 * left / (m * (m - 1)) - 2 * right / (n * (n - 1));
    const double q = m * n / (m + n) * energy;
    if (all_q)
      (*all_q)[split] = q;
    if (q > best_q) {
      best_q = q;
      best_tau = split;
    }
  }
  return {best_tau, best_q};
}

void split_pass(const std::vector<double>& v, size_t s, size_t e, size_t min_seg, double max_p,
                std::map<size_t, double>& found) {
  const auto [tau, q] = best_split(v, s, e, min_seg);
  if (tau == 0)
    return;
  const double p = welch_p(segment_moments(v, s, tau), segment_moments(v, tau, e));
  if (!(p < max_p))
    return;
  found.emplace(tau, q);
  split_pass(v, s, tau, min_seg, max_p, found);
  split_pass(v, tau, e, min_seg, max_p, found);
}

} // namespace

double student_t_two_sided_p(double t, double df) {
  if (!std::isfinite(t))
    return 0;
  if (df <= 0)
    return 1;
  // P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  return std::clamp(stats::regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t)), 0.0, 1.0);
}

double welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  return welch_p(segment_moments(a, 0, a.size()), segment_moments(b, 0, b.size()));
}

std::vector<double> energy_statistics(const std::vector<double>& series, size_t min_segment) {
  std::vector<double> q(series.size() + 1, 0.0);
  if (min_segment < 2)
    min_segment = 2;
  best_split(series, 0, series.size(), min_segment, &q);
  q.resize(series.size());
  return q;
}

std::vector<change_point> detect_change_points(const std::vector<double>& v,
                                               const changepoint_options& opt) {
  if (opt.min_segment < 2)
    throw input_error("change-point detection: min_segment must be at least 2 (got " +
                      std::to_string(opt.min_segment) + ")");
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw input_error("change-point detection: point " + std::to_string(i) +
                        " is not a finite number");
  const size_t n = v.size(), min_seg = opt.min_segment;

  // Split pass. Hunter splits at a 10x looser significance and lets the merge pass decide; on
  // planted steps (tests/harness/compare) that found no more true steps and ~1.5x more spurious
  // extra change points, so both passes use max_pvalue.
  std::map<size_t, double> found; // index -> q-hat
  const double split_p = opt.max_pvalue;
  if (opt.window == 0 || opt.window >= n) {
    split_pass(v, 0, n, min_seg, split_p, found);
  } else {
    const size_t step = std::max<size_t>(1, opt.window / 2);
    for (size_t st = 0;; st += step) {
      const size_t en = std::min(n, st + opt.window);
      split_pass(v, st, en, min_seg, split_p, found);
      if (en == n)
        break;
    }
  }

  // Merge pass: re-test each change point against the segments up to its neighbours; drop the
  // weakest failing one and re-test, until every remaining one passes.
  std::vector<size_t> cps;
  cps.reserve(found.size());
  for (const auto& [i, q] : found)
    cps.push_back(i);
  std::vector<change_point> out;
  while (true) {
    out.clear();
    size_t weakest = SIZE_MAX;
    double weakest_p = -1;
    for (size_t i = 0; i < cps.size(); ++i) {
      const size_t s = i == 0 ? 0 : cps[i - 1];
      const size_t e = i + 1 == cps.size() ? n : cps[i + 1];
      const auto before = segment_moments(v, s, cps[i]), after = segment_moments(v, cps[i], e);
      change_point cp;
      cp.index = cps[i];
      cp.mean_before = before.mean;
      cp.mean_after = after.mean;
      cp.magnitude =
          before.mean != 0 ? after.mean / before.mean : std::numeric_limits<double>::infinity();
      const bool short_side = before.n < min_seg || after.n < min_seg;
      cp.p_value = short_side ? 1.0 : welch_p(before, after);
      cp.energy = found[cps[i]];
      cp.regression = opt.dir == direction::lower_is_better ? cp.magnitude > 1 : cp.magnitude < 1;
      const bool fails = !(cp.p_value < opt.max_pvalue) ||
                         std::fabs(cp.magnitude - 1) * 100 < opt.min_magnitude_pct;
      if (fails && cp.p_value > weakest_p) {
        weakest_p = cp.p_value;
        weakest = i;
      }
      out.push_back(cp);
    }
    if (weakest == SIZE_MAX)
      break;
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
  return out;
}

std::string sparkline(const std::vector<double>& series_in, size_t width) {
  static const char* const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
  std::vector<double> series = series_in;
  if (width > 0 && series.size() > width) {
    // Average consecutive points into `width` buckets of near-equal size.
    std::vector<double> b(width);
    for (size_t k = 0; k < width; ++k) {
      const size_t s = k * series_in.size() / width, e = (k + 1) * series_in.size() / width;
      double sum = 0;
      for (size_t i = s; i < e; ++i)
        sum += series_in[i];
      b[k] = sum / static_cast<double>(e - s);
    }
    series = std::move(b);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : series)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  std::string out;
  for (double x : series) {
    if (!std::isfinite(x)) {
      out += ' ';
    } else if (hi - lo <= 0) {
      out += blocks[3];
    } else {
      const long idx = std::lround((x - lo) / (hi - lo) * 7);
      out += blocks[std::clamp(idx, 0L, 7L)];
    }
  }
  return out;
}

} // namespace accelbench::compare
