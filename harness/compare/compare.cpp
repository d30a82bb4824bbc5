// Two result sets compared: runs paired by config and ruleset, each side's usable runs gathered,
// the variances pooled over every pair, the pairs judged (verdicts.cpp) on threads, the notes
// said once, and the geomeans (summaries.cpp).
#include "harness/compare/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "harness/compare/compare_parts.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::compare {

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
  run_samples runs;                    // the samples of each contributing run
  const run* representative = nullptr; // the latest contributing run (or latest at all)
  size_t contributing = 0;
  std::vector<std::string> notes;
  std::string excluded_reason;    // the first run left out, and why
  std::vector<const run*> usable; // the contributing runs, earliest first
  std::vector<std::string> jobs;  // the job of each contributing run ("" : none)
  std::vector<int64_t> ab_rounds; // each run's A/B round (empty unless every run has one)
  std::string ab_id;              // the A/B every run belongs to ("" : none, or several)
};

// A run's job id (extra.job_id; harness/app/query's job_of is one layer up).
std::string job_id_of(const run& r) {
  if (r.extra.is_object())
    if (auto it = r.extra.find("job_id"); it != r.extra.end() && it->is_string())
      return it->get<std::string>();
  return "";
}

// The A/B a run was measured in (`accelbench ab`: extra.ab.id and extra.ab.round), or nothing.
std::pair<std::string, int64_t> ab_of(const run& r) {
  if (!r.extra.is_object())
    return {"", 0};
  const auto it = r.extra.find("ab");
  if (it == r.extra.end() || !it->is_object())
    return {"", 0};
  const auto id = it->find("id"), round = it->find("round");
  if (id == it->end() || !id->is_string() || round == it->end() || !round->is_number_integer())
    return {"", 0};
  return {id->get<std::string>(), round->get<int64_t>()};
}

// The job and A/B round of each contributing run: rounds only when every run carries the same A/B.
void label_runs(side& s) {
  std::set<std::string> ab_ids;
  for (const run* r : s.usable) {
    s.jobs.push_back(job_id_of(*r));
    const auto [id, round] = ab_of(*r);
    ab_ids.insert(id);
    s.ab_rounds.push_back(round);
  }
  if (ab_ids.size() == 1 && !ab_ids.begin()->empty())
    s.ab_id = *ab_ids.begin();
  else
    s.ab_rounds.clear();
}

// Why a run contributes no samples: failed or skipped, INVALID (e.g. its correctness check
// failed: a broken kernel must not come out "improved"), or no samples at all. Empty: usable.
std::string exclusion_reason(const run& r) {
  const auto with = [](const std::string& what, const std::string& why) {
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

// A warning's kind: its text without the numbers in it.
std::string without_numbers(const std::string& text) {
  std::string out;
  for (char ch : text)
    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '.')
      out += ch;
  return out;
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
  s.usable = usable;
  label_runs(s);
  std::set<std::string> fingerprints;
  // Rounds repeat a warning with other numbers ("coefficient of variation 13.1%", "... 15.4%"):
  // said once per kind, with how many runs had it.
  std::map<std::string, std::pair<std::string, size_t>> warnings;
  for (const run* r : usable) {
    fingerprints.insert(r->fingerprint);
    for (auto& w : run_warnings(*r)) {
      auto& [first, count] = warnings[without_numbers(w)];
      if (count++ == 0)
        first = std::move(w);
    }
    std::vector<double> v;
    v.reserve(r->samples.size());
    for (const auto& smp : r->samples)
      v.push_back(smp.value);
    s.runs.push_back(std::move(v));
  }
  // Conditions that make the numbers less reliable (high CV, a loaded machine...) travel with
  // the comparison.
  for (const auto& [kind, w] : warnings)
    s.notes.push_back(
        label + ": " + w.first +
        (w.second > 1 ? fmt::format(" (and {} more run(s) alike)", w.second - 1) : std::string()));
  // docs/architecture.md: differing environments are flagged, never silently mixed.
  if (fingerprints.size() > 1)
    s.notes.push_back(label + ": pools runs with " + std::to_string(fingerprints.size()) +
                      " different environment fingerprints");
  return s;
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

std::vector<unpaired_run> unpaired_in(const groups& mine, const groups& other) {
  std::vector<unpaired_run> out;
  for (const auto& [k, runs] : mine)
    if (!other.count(k))
      out.push_back(make_unpaired(k, runs));
  return out;
}

// Everything a pair needs before the judging: its samples, options and the reasons that
// override the statistics (a broken candidate, incomparable units).
struct pair_job {
  pair_result p;
  run_samples base, cand;
  side_locations loc_base, loc_cand; // for the comparison's pooled variances
  paired_rounds paired;              // an A/B's per-round differences (empty: not paired)
  sample_options so;
  bool skipped = false; // every run of both sides was skipped
  bool comparable = true;
  std::string broken_candidate; // non-empty: regressed for this reason, without a ratio
  std::string loaded;           // non-empty: a side ran on a loaded machine (load_reason)
};

sample_options options_for(const std::string& workload, const std::string& ruleset, direction dir,
                           const set_options& opt) {
  sample_options so;
  so.dir = dir;
  so.alpha = opt.alpha;
  auto thr = opt.threshold_by_workload.find(workload);
  so.threshold_pct = thr != opt.threshold_by_workload.end() ? thr->second : opt.threshold_pct;
  auto floor = opt.floor_by_ruleset.find(ruleset);
  so.floor_pct = floor != opt.floor_by_ruleset.end() ? floor->second : opt.floor_pct;
  so.min_samples = opt.min_samples;
  return so;
}

bool all_skipped(const std::vector<const run*>& runs) {
  return std::all_of(runs.begin(), runs.end(),
                     [](const run* r) { return r->status == run_status::skipped; });
}

// The candidate's metrics over its contributing runs, and when and where it ran.
void describe_candidate(const side& c, pair_result& p) {
  std::map<std::string, std::vector<const metric*>> by_name;
  for (const run* r : c.usable) {
    for (const auto& m : r->metrics)
      if (std::isfinite(m.value))
        by_name[m.name].push_back(&m);
    p.candidate_wall_s += seconds_between(r->started_at, r->finished_at);
    if (!r->started_at.empty() &&
        (p.candidate_started_at.empty() || r->started_at < p.candidate_started_at))
      p.candidate_started_at = r->started_at;
  }
  for (const auto& [name, ms] : by_name) {
    std::vector<double> v;
    for (const metric* m : ms)
      v.push_back(m->value);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    p.candidate_metrics.push_back(
        {name, ms.back()->unit, ms.back()->dir, stats::median(v), *lo, *hi, v.size()});
  }
  if (c.representative && c.representative->environment.is_object())
    p.candidate_host = c.representative->environment.value("hostname", "");
}

pair_job make_job(const group_key& k, const std::vector<const run*>& bruns,
                  const std::vector<const run*>& cruns, const set_options& opt) {
  side b = gather(bruns, opt.policy, opt.baseline_label);
  side c = gather(cruns, opt.policy, opt.candidate_label);
  pair_job jb;
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
  describe_candidate(c, p);
  jb.skipped =
      b.contributing == 0 && c.contributing == 0 && all_skipped(bruns) && all_skipped(cruns);
  // A config that was VALID in the baseline and is INVALID or failed in the candidate has
  // regressed, whatever its speed: it never enters a ratio.
  if (b.contributing > 0 && c.contributing == 0)
    jb.broken_candidate = opt.candidate_label + " " + c.excluded_reason + " where " +
                          opt.baseline_label + " was VALID";
  jb.so = options_for(p.workload, p.ruleset, c.representative->sample_dir, opt);
  const run& br = *b.representative;
  const run& cr = *c.representative;
  if (br.sample_dir != cr.sample_dir || br.sample_unit != cr.sample_unit) {
    p.notes.push_back("sample unit or direction differs: " + br.sample_unit + " (" +
                      to_string(br.sample_dir) + ") vs " + cr.sample_unit + " (" +
                      to_string(cr.sample_dir) + ")");
    jb.comparable = false;
  }
  if (br.fingerprint != cr.fingerprint) {
    p.environment_differs = true;
    p.environment_differences = environment_differences(br.environment, cr.environment);
  }
  if (!opt.trust_loaded) {
    const std::string lb = load_reason(b.usable, opt.baseline_label);
    const std::string lc = load_reason(c.usable, opt.candidate_label);
    jb.loaded = lb.empty() ? lc : lc.empty() ? lb : lb + " and " + lc;
  }
  jb.base = std::move(b.runs);
  jb.cand = std::move(c.runs);
  jb.loc_base = locate(jb.base, b.jobs);
  jb.loc_cand = locate(jb.cand, c.jobs);
  jb.so.baseline_jobs = std::move(b.jobs);
  jb.so.candidate_jobs = std::move(c.jobs);
  // Both sides of one A/B: paired by round.
  if (!b.ab_id.empty() && b.ab_id == c.ab_id) {
    jb.so.baseline_rounds = std::move(b.ab_rounds);
    jb.so.candidate_rounds = std::move(c.ab_rounds);
    jb.paired = pair_by_round(jb.base, jb.so.baseline_rounds, jb.cand, jb.so.candidate_rounds);
  }
  if (auto h = opt.history.find(p.name); h != opt.history.end())
    jb.so.history = h->second;
  return jb;
}

// The comparison's pools of variance, one part per pair: between rounds, of job levels (the sides'
// own jobs and the history), and of an A/B's paired differences.
struct comparison_pools {
  between_run_pool rounds;
  variance_pool jobs, paired, within;
};

comparison_pools pool_pairs(const std::vector<pair_job>& jobs) {
  comparison_pools p;
  for (const auto& jb : jobs) {
    const side_locations &b = jb.loc_base, &c = jb.loc_cand;
    if (!jb.paired.d.empty()) {
      const double mean = stats::mean(jb.paired.d);
      double ss = 0;
      for (double x : jb.paired.d)
        ss += (x - mean) * (x - mean);
      p.paired.add(ss, static_cast<double>(jb.paired.d.size()) - 1);
      continue;
    }
    for (const side_locations* s : {&b, &c})
      if (s->locations.size() == 1 && s->min_run_samples > 1)
        p.within.add(s->within_var * static_cast<double>(s->min_run_samples - 1),
                     static_cast<double>(s->min_run_samples - 1));
    p.rounds.add(b.ss + c.ss, static_cast<double>(b.df() + c.df()));
    p.rounds.sides += (b.df() > 0) + (c.df() > 0);
    p.jobs.add(b.ss_jobs + c.ss_jobs + jb.so.history.ss,
               static_cast<double>(b.df_jobs() + c.df_jobs()) + jb.so.history.df);
  }
  p.rounds.finish();
  p.jobs.finish();
  p.paired.finish();
  p.within.finish();
  return p;
}

std::string weight_text(double d0) {
  return std::isfinite(d0) ? fmt::format("{:.0f} df", d0)
                           : std::string("all of them: the configs agree");
}

// Said once for the comparison: how the verdicts account for noise.
std::vector<std::string> comparison_notes(const std::vector<pair_job>& jobs,
                                          const comparison_pools& pools) {
  std::vector<std::string> notes;
  size_t judged = 0, paired = 0, learned = 0;
  std::set<double> floors;
  for (const auto& jb : jobs) {
    if (jb.base.empty() || jb.cand.empty())
      continue;
    ++judged;
    paired += !jb.paired.d.empty();
    learned +=
        jb.paired.d.empty() && jb.loc_base.df_jobs() + jb.loc_cand.df_jobs() + jb.so.history.df > 0;
    floors.insert(jb.so.floor_pct);
  }
  if (judged == 0)
    return notes;
  if (paired > 0)
    notes.push_back(fmt::format(
        "{} of {} pair(s) are paired round by round (an A/B of one job, sides in a randomized "
        "order): paired t-tests on the per-round log ratios, whose spread pooled over the pairs "
        "is {:.1f}% (each pair's moderated toward it with a weight of {})",
        paired, judged, 100 * std::expm1(std::sqrt(pools.paired.variance())),
        weight_text(pools.paired.d0)));
  if (paired == judged)
    return notes;
  std::string floor_text;
  for (double f : floors)
    floor_text += fmt::format("{}{:g}%", floor_text.empty() ? "" : ", ", f);
  const std::string jobs_text =
      learned > 0
          ? fmt::format(
                "between jobs learned from earlier jobs in the store or several jobs a side "
                "for {} of {} pair(s) ({:g} df, spread {:.1f}%), with the ruleset's floor "
                "({}) as a prior worth {:g} jobs",
                learned, judged - paired, pools.jobs.df,
                100 * std::expm1(std::sqrt(pools.jobs.variance())), floor_text, k_floor_prior_jobs)
          : fmt::format("between jobs {} a side (ruleset comparison.between_run_noise_pct: what a "
                        "job's own rounds cannot see; no earlier jobs in the store to learn it "
                        "from)",
                        floor_text);
  if (pools.rounds.df > 0)
    notes.push_back(fmt::format(
        "verdicts account for the variance between runs: t-tests on the runs' log medians, the "
        "between-run spread pooled over {} side(s) of {} pair(s) is {:.1f}% ({:g} degrees of "
        "freedom, each pair's moderated toward it with a weight of {}); and {}",
        pools.rounds.sides, judged - paired, 100 * std::expm1(std::sqrt(pools.rounds.variance())),
        pools.rounds.df, weight_text(pools.rounds.d0), jobs_text));
  else
    notes.push_back(fmt::format("verdicts account for the variance within runs and {}: no config "
                                "has two runs on a side to measure the noise between runs (run "
                                "with --rounds 3, or use accelbench ab)",
                                jobs_text));
  return notes;
}

void judge_range(std::vector<pair_job>& jobs, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    pair_job& jb = jobs[i];
    jb.p.cmp = compare_runs(jb.base, jb.cand, jb.so);
    discount_loaded(jb.p.cmp, jb.loaded);
    if (jb.skipped) {
      jb.p.cmp.result = verdict::skipped;
      jb.p.cmp.reason = "skipped on both sides";
    } else if (!jb.broken_candidate.empty()) {
      jb.p.cmp.result = verdict::regressed;
      jb.p.cmp.reason = jb.broken_candidate;
    } else if (!jb.comparable) {
      jb.p.cmp.result = verdict::inconclusive;
      jb.p.cmp.reason = "samples are not comparable (unit or direction differs)";
    }
  }
}

void judge_jobs(std::vector<pair_job>& jobs, size_t wanted_threads) {
  size_t threads = wanted_threads > 0 ? wanted_threads : std::thread::hardware_concurrency();
  threads = std::clamp<size_t>(threads, 1, std::max<size_t>(1, jobs.size() / 64));
  if (threads <= 1) {
    judge_range(jobs, 0, jobs.size());
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        judge_range(jobs, jobs.size() * t / threads, jobs.size() * (t + 1) / threads);
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

} // namespace

set_comparison compare_sets(const std::vector<run>& baseline, const std::vector<run>& candidate,
                            const set_options& opt) {
  set_comparison out;
  out.baseline_label = opt.baseline_label;
  out.candidate_label = opt.candidate_label;
  out.alpha = opt.alpha;
  const groups gb = group_runs(baseline), gc = group_runs(candidate);
  out.only_baseline = unpaired_in(gb, gc);
  out.only_candidate = unpaired_in(gc, gb);

  // Gather first, then pool the between-run variance over every pair, then judge: the judging is
  // independent per pair, so it runs on several threads; the result does not depend on their
  // number.
  std::vector<pair_job> jobs;
  for (const auto& [k, cruns] : gc)
    if (auto it = gb.find(k); it != gb.end())
      jobs.push_back(make_job(k, it->second, cruns, opt));
  comparison_pools pools = pool_pairs(jobs);
  for (auto& jb : jobs) {
    jb.so.pool = &pools.rounds;
    jb.so.job_pool = &pools.jobs;
    jb.so.paired_pool = &pools.paired;
    jb.so.within_pool = &pools.within;
  }
  judge_jobs(jobs, opt.threads);
  out.notes = comparison_notes(jobs, pools);
  out.pairs.reserve(jobs.size());
  for (auto& jb : jobs)
    out.pairs.push_back(std::move(jb.p));

  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(out.pairs.begin(), out.pairs.end(), by_name);
  std::sort(out.only_baseline.begin(), out.only_baseline.end(), by_name);
  std::sort(out.only_candidate.begin(), out.only_candidate.end(), by_name);
  summarize(out);
  return out;
}

double seconds_between(const std::string& from, const std::string& to) {
  auto parse = [](const std::string& t, double& out) {
    std::tm tm{};
    double sec = 0;
    if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &sec) != 6)
      return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    out = static_cast<double>(timegm(&tm)) + sec;
    return true;
  };
  double a = 0, b = 0;
  if (!parse(from, a) || !parse(to, b) || !(b >= a))
    return 0;
  return b - a;
}

int exit_code_for(const set_comparison& c, bool strict) {
  if (c.count(verdict::regressed) > 0)
    return exit_failed;
  if (strict && c.count(verdict::inconclusive) > 0)
    return exit_inconclusive;
  return exit_ok;
}

} // namespace accelbench::compare
