#include "harness/compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "harness/compare/mann_whitney.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

std::string to_string(verdict v) {
  switch (v) {
  case verdict::improved:
    return "improved";
  case verdict::regressed:
    return "regressed";
  case verdict::unchanged:
    return "unchanged";
  case verdict::inconclusive:
    return "inconclusive";
  }
  return "inconclusive";
}

double sample_comparison::speedup() const {
  if (!(ratio > 0) || !std::isfinite(ratio))
    return 0;
  return dir == direction::lower_is_better ? 1 / ratio : ratio;
}

namespace {

std::string printf_string(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

// "+10.3% (95% CI +8.1% .. +12.0%), p = 0.0002"
std::string describe_shift(const sample_comparison& c, double level) {
  if (!c.has_ci)
    return printf_string("median %+.1f%%, ", (c.ratio - 1) * 100) +
           printf_string("p = %.2g", c.p_value);
  return printf_string("median %+.1f%% (", (c.ratio - 1) * 100) +
         printf_string("%.0f%% CI %+.1f%% .. %+.1f%%), ", level * 100, (c.ratio_ci_low - 1) * 100,
                       (c.ratio_ci_high - 1) * 100) +
         printf_string("p = %.2g", c.p_value);
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// The verdict of a pair whose samples and ratio CI are known. A change is called only when the
// data support it three ways: the Mann-Whitney test is significant, the ratio's CI excludes 1 on
// the same side, and the ratio of medians is beyond the minimum effect. "Unchanged" claims the
// opposite — that any change is smaller than the minimum effect — so it needs the whole CI inside
// (1 - t, 1 + t). Everything else is inconclusive. (Requiring the whole CI beyond the threshold
// for a change, as before, asks for 97.5% confidence that the effect exceeds the threshold: with
// 10 samples a side and 3% noise the CI's half-width is about 4%, so a real 10% step was missed
// in about one config in five.)
void judge(sample_comparison& c, const sample_options& opt) {
  const double t = opt.threshold_pct / 100;
  const double hi = 1 + t, lo = 1 - t;
  const bool lower_better = opt.dir == direction::lower_is_better;
  const bool significant = c.p_value < opt.alpha;
  const bool up = significant && c.ratio > hi && c.ratio_ci_low > 1;    // candidate larger
  const bool down = significant && c.ratio < lo && c.ratio_ci_high < 1; // candidate smaller
  const bool within = c.ratio_ci_low > lo && c.ratio_ci_high < hi;
  const std::string shift = describe_shift(c, opt.ci_level);
  const std::string thr = printf_string("%g%%", opt.threshold_pct);
  if (up || down) {
    const bool worse = lower_better ? up : down;
    c.result = worse ? verdict::regressed : verdict::improved;
    c.reason = shift + ": " + (worse ? "worse" : "better") + " beyond the " + thr + " threshold";
  } else if (within) {
    c.result = verdict::unchanged;
    c.reason = shift + ": the whole CI lies within the " + thr + " threshold";
  } else {
    c.result = verdict::inconclusive;
    c.reason =
        shift +
        (significant ? ": significant, but " : printf_string(" >= alpha %g, and ", opt.alpha)) +
        "the CI reaches beyond the " + thr + " threshold: more samples needed";
  }
}

} // namespace

sample_comparison compare_samples(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate, const sample_options& opt) {
  if (opt.resamples < 1 || !(opt.ci_level > 0 && opt.ci_level < 1))
    throw input_error("compare: bootstrap needs resamples >= 1 and a CI level in (0, 1) (got " +
                      std::to_string(opt.resamples) + " resamples, level " +
                      std::to_string(opt.ci_level) + ")");
  sample_comparison c;
  c.dir = opt.dir;
  c.alpha = opt.alpha;
  c.threshold_pct = opt.threshold_pct;
  c.n_baseline = baseline.size();
  c.n_candidate = candidate.size();
  c.result = verdict::inconclusive;

  if (baseline.empty() || candidate.empty()) {
    c.reason = baseline.empty() ? "no baseline samples" : "no candidate samples";
    return c;
  }
  if (!all_finite(baseline) || !all_finite(candidate)) {
    c.reason = "a sample is not a finite number";
    return c;
  }
  c.baseline_median = stats::median(baseline);
  c.candidate_median = stats::median(candidate);
  std::tie(c.baseline_min, c.baseline_max) = [&] {
    auto [lo, hi] = std::minmax_element(baseline.begin(), baseline.end());
    return std::pair{*lo, *hi};
  }();
  std::tie(c.candidate_min, c.candidate_max) = [&] {
    auto [lo, hi] = std::minmax_element(candidate.begin(), candidate.end());
    return std::pair{*lo, *hi};
  }();
  const auto mw = mann_whitney_u(candidate, baseline);
  c.u = mw.u1;
  c.p_value = mw.p_value;
  c.exact_p = mw.exact;
  if (c.baseline_median > 0 && c.candidate_median > 0) {
    c.ratio = c.candidate_median / c.baseline_median;
    // Every verdict needs the CI ("unchanged" as much as a change), so it is always computed.
    // stats::bootstrap_ratio_ci(a, b) is the CI of median(b) / median(a).
    std::tie(c.ratio_ci_low, c.ratio_ci_high) =
        stats::bootstrap_ratio_ci(baseline, candidate, opt.ci_level, opt.resamples, opt.seed);
    c.has_ci = true;
  }

  judge_comparison(c, opt);
  return c;
}

void judge_comparison(sample_comparison& c, const sample_options& opt) {
  c.dir = opt.dir;
  c.alpha = opt.alpha;
  c.threshold_pct = opt.threshold_pct;
  c.result = verdict::inconclusive;
  // Too few samples to judge, whatever the numbers say.
  if (c.n_baseline < opt.min_samples || c.n_candidate < opt.min_samples) {
    c.reason = std::to_string(c.n_baseline) + " baseline and " + std::to_string(c.n_candidate) +
               " candidate samples; at least " + std::to_string(opt.min_samples) +
               " needed on each side";
    return;
  }
  if (!(c.ratio > 0) || !c.has_ci) {
    c.reason = "ratio of medians undefined (a median is not positive)";
    return;
  }
  judge(c, opt);
}

// ---------------------------------------------------------------------------------------------

size_t set_comparison::count(verdict v) const {
  return static_cast<size_t>(std::count_if(
      pairs.begin(), pairs.end(), [v](const pair_result& p) { return p.cmp.result == v; }));
}

namespace {

using group_key = std::pair<std::string, std::string>; // (cfg.key(), ruleset)
using groups = std::map<group_key, std::vector<const run*>>;

groups group_runs(const std::vector<run>& runs) {
  groups g;
  for (const auto& r : runs)
    g[{r.cfg.key(), r.ruleset}].push_back(&r);
  return g;
}

// Later is greater: finished_at, started_at (ISO-8601 UTC sorts as text), id; ties keep the input
// order (stable), the last one winning.
bool earlier(const run* a, const run* b) {
  return std::tie(a->finished_at, a->started_at, a->id) <
         std::tie(b->finished_at, b->started_at, b->id);
}

struct side {
  std::vector<double> samples;
  const run* representative = nullptr; // the latest contributing run (or latest at all)
  size_t contributing = 0;
  std::vector<std::string> notes;
  std::string excluded_reason; // the first run left out, and why
};

// Why a run contributes no samples: failed or skipped, INVALID (e.g. its correctness check
// failed: a broken kernel must not come out "improved"), or no samples at all. Empty: usable.
std::string exclusion_reason(const run& r) {
  const auto with = [](std::string what, const std::string& why) {
    return why.empty() ? what : what + ": " + why;
  };
  if (r.status != run_status::ok)
    return with(to_string(r.status), r.status_reason);
  if (!r.valid) {
    std::string why;
    for (const auto& x : r.invalid_reasons)
      why += (why.empty() ? "" : "; ") + x;
    return with("INVALID", why);
  }
  if (r.samples.empty())
    return "no samples";
  return "";
}

side gather(const std::vector<const run*>& runs_in, pooling policy, const std::string& label) {
  std::vector<const run*> runs = runs_in;
  std::stable_sort(runs.begin(), runs.end(), earlier);
  std::vector<const run*> usable;
  size_t excluded = 0;
  side s;
  for (const run* r : runs) {
    std::string why = exclusion_reason(*r);
    if (why.empty()) {
      usable.push_back(r);
    } else {
      ++excluded;
      if (s.excluded_reason.empty())
        s.excluded_reason = why;
    }
  }
  if (excluded > 0)
    s.notes.push_back(label + ": " + std::to_string(excluded) +
                      " run(s) left out of the comparison (" + s.excluded_reason + ")");
  if (usable.empty()) {
    s.representative = runs.back();
    return s;
  }
  if (policy == pooling::latest)
    usable.erase(usable.begin(), usable.end() - 1);
  s.representative = usable.back();
  s.contributing = usable.size();
  std::set<std::string> fingerprints, warnings;
  for (const run* r : usable) {
    fingerprints.insert(r->fingerprint);
    for (auto& w : run_warnings(*r))
      warnings.insert(std::move(w));
    for (const auto& smp : r->samples)
      s.samples.push_back(smp.value);
  }
  // Conditions that make the numbers less reliable (high CV, a loaded machine...) travel with
  // the comparison.
  for (const auto& w : warnings)
    s.notes.push_back(label + ": " + w);
  // docs/architecture.md: differing environments are flagged, never silently mixed.
  if (fingerprints.size() > 1)
    s.notes.push_back(label + ": pools runs with " + std::to_string(fingerprints.size()) +
                      " different environment fingerprints");
  return s;
}

// Fewer samples than this on a side: the Mann-Whitney test has little power (with 5 a side the
// smallest two-sided p is 0.008, barely below alpha = 0.01), so a pair is flagged.
constexpr size_t k_low_power_samples = 9;

void note_low_power(const side& sd, const std::string& label, std::vector<std::string>& notes) {
  if (sd.contributing > 0 && sd.samples.size() < k_low_power_samples)
    notes.push_back(label + ": " + std::to_string(sd.samples.size()) + " samples, fewer than " +
                    std::to_string(k_low_power_samples) + ": the test has little power");
}

unpaired_run make_unpaired(const group_key& k, const std::vector<const run*>& runs) {
  unpaired_run u;
  u.key = k.first;
  u.ruleset = k.second;
  u.workload = runs.front()->cfg.workload;
  u.name = k.first + " [" + k.second + "]";
  u.runs = runs.size();
  return u;
}

} // namespace

set_comparison compare_sets(const std::vector<run>& baseline, const std::vector<run>& candidate,
                            const set_options& opt) {
  set_comparison out;
  out.baseline_label = opt.baseline_label;
  out.candidate_label = opt.candidate_label;
  out.alpha = opt.alpha;
  const groups gb = group_runs(baseline), gc = group_runs(candidate);

  for (const auto& [k, runs] : gb)
    if (!gc.count(k))
      out.only_baseline.push_back(make_unpaired(k, runs));
  for (const auto& [k, runs] : gc)
    if (!gb.count(k))
      out.only_candidate.push_back(make_unpaired(k, runs));

  // Gather first, then judge: the judging (a bootstrap per pair) dominates the cost and is
  // independent per pair, so it runs on several threads; each pair uses the same seed, so the
  // result does not depend on the thread count.
  struct job {
    pair_result p;
    std::vector<double> base, cand;
    sample_options so;
    bool comparable = true;
    std::string broken_candidate; // non-empty: regressed for this reason, without a ratio
  };
  std::vector<job> jobs;
  for (const auto& [k, cruns] : gc) {
    auto it = gb.find(k);
    if (it == gb.end())
      continue;
    side b = gather(it->second, opt.policy, opt.baseline_label);
    side c = gather(cruns, opt.policy, opt.candidate_label);

    job jb;
    pair_result& p = jb.p;
    p.key = k.first;
    p.ruleset = k.second;
    p.workload = c.representative->cfg.workload;
    p.backend = c.representative->cfg.backend;
    p.name = k.first + " [" + k.second + "]";
    p.unit = c.representative->sample_unit;
    p.baseline_runs = b.contributing;
    p.candidate_runs = c.contributing;
    p.notes = b.notes;
    p.notes.insert(p.notes.end(), c.notes.begin(), c.notes.end());
    note_low_power(b, opt.baseline_label, p.notes);
    note_low_power(c, opt.candidate_label, p.notes);
    // A config that was VALID in the baseline and is INVALID or failed in the candidate has
    // regressed, whatever its speed: it never enters a ratio.
    if (b.contributing > 0 && c.contributing == 0)
      jb.broken_candidate = opt.candidate_label + " " + c.excluded_reason + " where " +
                            opt.baseline_label + " was VALID";

    jb.so.dir = c.representative->sample_dir;
    jb.so.alpha = opt.alpha;
    auto thr = opt.threshold_by_workload.find(p.workload);
    jb.so.threshold_pct = thr != opt.threshold_by_workload.end() ? thr->second : opt.threshold_pct;
    jb.so.min_samples = opt.min_samples;
    jb.so.resamples = opt.resamples;
    jb.so.seed = opt.seed;
    if (b.representative->sample_dir != c.representative->sample_dir ||
        b.representative->sample_unit != c.representative->sample_unit) {
      p.notes.push_back("sample unit or direction differs: " + b.representative->sample_unit +
                        " (" + to_string(b.representative->sample_dir) + ") vs " +
                        c.representative->sample_unit + " (" +
                        to_string(c.representative->sample_dir) + ")");
      jb.comparable = false;
    }
    if (b.representative->fingerprint != c.representative->fingerprint) {
      p.environment_differs = true;
      p.environment_differences =
          environment_differences(b.representative->environment, c.representative->environment);
    }
    jb.base = std::move(b.samples);
    jb.cand = std::move(c.samples);
    jobs.push_back(std::move(jb));
  }

  auto judge = [&jobs](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      job& jb = jobs[i];
      jb.p.cmp = compare_samples(jb.base, jb.cand, jb.so);
      if (!jb.broken_candidate.empty()) {
        jb.p.cmp.result = verdict::regressed;
        jb.p.cmp.reason = jb.broken_candidate;
      } else if (!jb.comparable) {
        jb.p.cmp.result = verdict::inconclusive;
        jb.p.cmp.reason = "samples are not comparable (unit or direction differs)";
      }
    }
  };
  size_t threads = opt.threads > 0 ? opt.threads : std::thread::hardware_concurrency();
  threads = std::clamp<size_t>(threads, 1, std::max<size_t>(1, jobs.size() / 64));
  if (threads <= 1) {
    judge(0, jobs.size());
  } else {
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(threads);
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          judge(jobs.size() * t / threads, jobs.size() * (t + 1) / threads);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& th : pool)
      th.join();
    for (auto& e : errors)
      if (e)
        std::rethrow_exception(e);
  }
  out.pairs.reserve(jobs.size());
  for (auto& jb : jobs)
    out.pairs.push_back(std::move(jb.p));

  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(out.pairs.begin(), out.pairs.end(), by_name);
  std::sort(out.only_baseline.begin(), out.only_baseline.end(), by_name);
  std::sort(out.only_candidate.begin(), out.only_candidate.end(), by_name);

  // Geometric mean of direction-aware speed-ups per workload: ratios multiply, so the geomean is
  // the only mean that treats a 2x speed-up and a 2x slow-down symmetrically (Fleming & Wallace).
  std::map<std::string, std::vector<double>> speedups;
  std::map<std::string, workload_summary> sums;
  for (const auto& p : out.pairs) {
    auto& s = sums[p.workload];
    s.workload = p.workload;
    switch (p.cmp.result) {
    case verdict::improved:
      ++s.improved;
      break;
    case verdict::regressed:
      ++s.regressed;
      break;
    case verdict::unchanged:
      ++s.unchanged;
      break;
    case verdict::inconclusive:
      ++s.inconclusive;
      break;
    }
    const double su = p.cmp.speedup();
    if (su > 0 && std::isfinite(su))
      speedups[p.workload].push_back(su);
  }
  for (auto& [w, s] : sums) {
    auto it = speedups.find(w);
    if (it != speedups.end() && !it->second.empty()) {
      s.pairs = it->second.size();
      s.geomean_speedup = stats::geomean(it->second);
    }
    out.workloads.push_back(s);
  }
  return out;
}

int exit_code_for(const set_comparison& c, bool strict) {
  if (c.count(verdict::regressed) > 0)
    return exit_failed;
  if (strict && c.count(verdict::inconclusive) > 0)
    return exit_inconclusive;
  return exit_ok;
}

} // namespace accelbench::compare
