// Pairs: the verdict by compare's test and rule, the statement and its qualifier, like for
// like, flags, the family summaries' geometric mean and the headline.
#include "reporters/report/report_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/compare/format.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/model_flops.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/score.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "reporters/report/plausibility_ttt.hpp"
#include "reporters/report/report_internal.hpp"

namespace accelbench::report {

namespace detail {

std::string result_unit_of(const side_score& s) {
  if (s.mlperf)
    return "training run";
  if (s.quantity == "tokens_per_s")
    return "1M tokens";
  if (s.quantity == "tflops")
    return "EFLOP";
  return "";
}

std::string pair_label(const run& r, const std::string& family) {
  if (family == "mlperf")
    return benchmark_of(r);
  // Training leads with the model ("llama3-8b dtype=bf16 seq_len=8192"); kernels with the workload.
  auto model = r.cfg.values.find("model");
  std::string vals;
  for (const auto& [k, v] : r.cfg.values)
    if (!(family == "training" && k == "model")) {
      if (!vals.empty())
        vals += ' ';
      vals += k;
      vals += '=';
      vals += v;
    }
  if (family == "training" && model != r.cfg.values.end())
    return model->second + (vals.empty() ? "" : " " + vals);
  return r.cfg.workload + (vals.empty() ? "" : " " + vals);
}

// The pair's verdict by compare's test and rule (one home: harness/compare compare_runs), on the
// units compare tests: each run's values (MLPerf: each converged run's time), with the variance
// between runs pooled over the report's pairs and the rules' floor.
void judge_pair(pair_result& p, const scored_side& b, const scored_side& c, const options& opt,
                const compare::between_run_pool& pool) {
  if (p.ci_degenerate) {
    p.verdict = "not tested";
    p.verdict_reason = compare::untested_wording;
    return;
  }
  compare::sample_options rule = opt.verdict_rule;
  rule.dir = p.baseline.dir;
  rule.ci_level = ci_level(opt);
  rule.pool = &pool;
  if (b.representative)
    if (auto f = opt.floor_by_ruleset.find(b.representative->ruleset);
        f != opt.floor_by_ruleset.end())
      rule.floor_pct = f->second;
  compare::sample_comparison cmp = compare::compare_runs(b.runs, c.runs, rule);
  if (!cmp.tested) { // one figure a side by compare's count (runs' values): as above
    p.verdict = "not tested";
    p.verdict_reason = compare::untested_wording;
    return;
  }
  const bool tested = cmp.n_baseline > 0 && cmp.n_candidate > 0;
  if (tested)
    p.p_value = cmp.p_value;
  if (tested && cmp.detectable_pct > 0)
    p.detectable_pct = cmp.detectable_pct;
  if (!cmp.method.empty())
    p.test_method =
        fmt::format("{}, {} + {} run(s)", cmp.method, cmp.runs_baseline, cmp.runs_candidate);
  p.accounts_for = cmp.accounts_for;
  // Kernels and training: the CI shown is the test's, which accounts for the noise between runs
  // (the exact bootstrap of the pooled samples does not). MLPerf keeps the bootstrap of the
  // official score.
  if (!p.baseline.mlperf && tested && cmp.has_ci && cmp.ratio_ci_low > 0) {
    const bool lower = rule.dir == direction::lower_is_better;
    p.speedup_ci_low = lower ? 1 / cmp.ratio_ci_high : cmp.ratio_ci_low;
    p.speedup_ci_high = lower ? 1 / cmp.ratio_ci_low : cmp.ratio_ci_high;
  }
  if (!opt.trust_loaded) {
    const std::string lb = compare::load_reason(b.used, "the baseline");
    const std::string lc = compare::load_reason(c.used, "the candidate");
    compare::discount_loaded(cmp, lb.empty() ? lc : lc.empty() ? lb : lb + " and " + lc);
  }
  p.verdict = compare::to_string(cmp.result);
  p.verdict_reason = cmp.reason;
}

// MLPerf compares results by their official scores (the olympic mean of the runs, scaled), with
// no statistical test: this says what those scores say, beside the report's own test.
std::string official_verdict(const pair_result& p) {
  const side_score& b = p.baseline;
  const side_score& c = p.candidate;
  if (!b.score_valid || !c.score_valid)
    return fmt::format("no official comparison: the {} score is INVALID",
                       !b.score_valid ? "baseline" : "candidate");
  if (!(b.value > 0) || !(c.value > 0))
    return "no official comparison: a side has no score";
  const double s = p.speedup; // direction-aware: > 1, the candidate is faster
  if (!(s > 0))
    return "no official comparison: the scores are not comparable";
  return fmt::format("by MLPerf's official scores ({:.2f} vs {:.2f} {}): the candidate is "
                     "{:.2f}x {} (MLPerf compares scores as published, with no test)",
                     b.value, c.value, b.unit, s >= 1 ? s : 1 / s, s >= 1 ? "faster" : "slower");
}

bool all_skipped(const group& g) {
  return std::all_of(g.runs.begin(), g.runs.end(),
                     [](const run* r) { return r->status == run_status::skipped; });
}

// What an inconclusive pair's test could see: "; could only see changes above 9.1%".
std::string could_see(const pair_result& p) {
  return p.detectable_pct ? fmt::format("; could only see changes above {:.1f}%", *p.detectable_pct)
                          : "";
}

// The words every output uses for a pair: "faster" or "slower" only where compare's rule calls
// the pair improved or regressed; a CI that contains 1 is "no significant difference".
void describe_pair(pair_result& p, const options& opt) {
  p.qualifier.clear();
  if (p.verdict == "skipped") {
    p.statement = "skipped";
    p.qualifier = p.verdict_reason;
    return;
  }
  if (!(p.speedup > 0)) {
    p.statement = "no speed-up";
    return;
  }
  const std::string ci = fmt::format("{} {:.2f}-{:.2f}", compare::ci_label(opt.verdict_rule.alpha),
                                     p.speedup_ci_low, p.speedup_ci_high);
  const bool contains_one = p.speedup_ci_low <= 1 && 1 <= p.speedup_ci_high;
  const auto& rule = opt.verdict_rule;
  if (p.verdict == "not tested") {
    p.statement = fmt::format("{:.2f}x as published", p.speedup);
    p.qualifier = compare::untested_wording;
  } else if (p.verdict == "improved") {
    p.statement = fmt::format("{:.2f}x faster", p.speedup);
    p.qualifier = ci;
  } else if (p.verdict == "regressed") {
    p.statement = fmt::format("{:.2f}x slower", 1.0 / p.speedup);
    p.qualifier = ci;
  } else if (contains_one) {
    p.statement = "no significant difference";
    p.qualifier = fmt::format("speed-up {:.2f}x, {}", p.speedup, ci);
  } else if (p.verdict == "unchanged") {
    p.statement = fmt::format("no difference beyond {:g}%", rule.threshold_pct);
    p.qualifier = fmt::format("speed-up {:.2f}x, {}", p.speedup, ci);
  } else {
    const size_t nb = p.baseline.mlperf ? p.baseline.run_values.size() : p.baseline.samples;
    const size_t nc = p.candidate.mlperf ? p.candidate.run_values.size() : p.candidate.samples;
    const char* what = p.baseline.mlperf ? "runs" : "samples";
    std::string why;
    if (nb < rule.min_samples || nc < rule.min_samples)
      why = fmt::format("{} vs {} {}, a test needs {} per side", nb, nc, what, rule.min_samples);
    else if (!p.p_value)
      why = "no test";
    else if (*p.p_value >= rule.alpha)
      why = fmt::format("not significant: p = {:.2g} >= {:g}", *p.p_value, rule.alpha);
    else if (p.verdict_reason.find("loaded") != std::string::npos)
      why = "a side ran on a loaded machine";
    else
      why = fmt::format("within the {:g}% minimum effect", rule.threshold_pct);
    p.statement = fmt::format("{:.2f}x, inconclusive", p.speedup);
    p.qualifier = ci + "; " + why;
  }
  if (p.verdict == "inconclusive")
    p.qualifier += could_see(p);
  if (!p.test_method.empty() && p.verdict != "not tested")
    p.qualifier += "; " + p.test_method;
}

void compare_sides(pair_result& p, scored_side& b, scored_side& c, const options& opt,
                   const compare::between_run_pool& pool) {
  const side_score& bs = b.score;
  const side_score& cs = c.score;
  if (bs.unit != cs.unit || bs.dir != cs.dir) {
    p.notes.push_back(
        fmt::format("the sides report different quantities ({} {} vs {} {}): no speed-up",
                    bs.quantity, bs.unit, cs.quantity, cs.unit));
    return;
  }
  if (!(bs.value > 0) || !(cs.value > 0)) {
    p.notes.emplace_back("a side has no positive score: no speed-up");
    return;
  }
  const bool lower = bs.dir == direction::lower_is_better;
  p.speedup = lower ? bs.value / cs.value : cs.value / bs.value;
  if (p.baseline.mlperf) {
    if (b.run_times.size() >= 2 || c.run_times.size() >= 2) {
      stats::rng g(opt.seed ^ 0x9e3779b97f4a7c15ULL);
      std::vector<double> r, rb(b.run_times.size()), rc(c.run_times.size());
      for (int i = 0; i < opt.resamples; ++i) {
        for (auto& x : rb)
          x = b.run_times[g.below(b.run_times.size())];
        for (auto& x : rc)
          x = c.run_times[g.below(c.run_times.size())];
        r.push_back(resampled_score(b, rb) / resampled_score(c, rc));
      }
      std::sort(r.begin(), r.end());
      const double a = (1 - ci_level(opt)) / 2;
      p.speedup_ci_low = stats::quantile_sorted(r, a);
      p.speedup_ci_high = stats::quantile_sorted(r, 1 - a);
    } else {
      p.speedup_ci_low = p.speedup_ci_high = p.speedup;
      p.ci_degenerate = true;
    }
  } else {
    auto [lo, hi] =
        exact_bootstrap_ratio_ci(b.values, c.values, ci_level(opt)); // median(c)/median(b)
    if (lower) {
      p.speedup_ci_low = hi > 0 ? 1.0 / hi : 0;
      p.speedup_ci_high = lo > 0 ? 1.0 / lo : 0;
    } else {
      p.speedup_ci_low = lo;
      p.speedup_ci_high = hi;
    }
    p.ci_degenerate = b.values.size() == 1 && c.values.size() == 1;
  }
  if (p.ci_degenerate)
    p.notes.emplace_back(
        "one sample per side (a published figure): the CI is degenerate (the point itself)");
  if (bs.accelerators != cs.accelerators && bs.per_accelerator > 0 && cs.per_accelerator > 0) {
    p.per_accelerator_speedup =
        lower ? bs.per_accelerator / cs.per_accelerator : cs.per_accelerator / bs.per_accelerator;
  }
  judge_pair(p, b, c, opt, pool);
  if (p.baseline.mlperf)
    p.official_verdict = official_verdict(p);
}

void flag_differences(pair_result& p, const scored_side& b, const scored_side& c) {
  const run* rb = b.representative;
  const run* rc = c.representative;
  if (!rb || !rc)
    return;
  if (rb->ruleset != rc->ruleset)
    p.flags.push_back(fmt::format("ruleset: {} vs {}", rb->ruleset, rc->ruleset));
  const std::string db = dtype_of(*rb), dc = dtype_of(*rc);
  if (db != dc)
    p.flags.push_back(fmt::format("dtype: {} vs {}", db.empty() ? "-" : db, dc.empty() ? "-" : dc));
  if (p.family == "mlperf") {
    auto div = [](const run* r) {
      auto it = r->cfg.values.find("division");
      return it == r->cfg.values.end() ? std::string() : it->second;
    };
    if (div(rb) != div(rc))
      p.flags.push_back(fmt::format("division: {} vs {}", div(rb), div(rc)));
  }
  auto fw = [](const run* r) {
    return r->environment.is_object() && r->environment.contains("framework") &&
                   r->environment["framework"].is_string()
               ? r->environment["framework"].get<std::string>()
               : std::string();
  };
  if (fw(rb) != fw(rc) && !(fw(rb).empty() && fw(rc).empty()))
    p.flags.push_back(fmt::format("framework: {} vs {}", fw(rb).empty() ? "-" : fw(rb),
                                  fw(rc).empty() ? "-" : fw(rc)));
  // Conditions that made a side's numbers unreliable (high CV, a loaded machine, ...).
  for (const std::string& w : run_warnings(*rb))
    p.flags.push_back("baseline conditions: " + w);
  for (const std::string& w : run_warnings(*rc))
    p.flags.push_back("candidate conditions: " + w);
  p.environment_differences = environment_differences(rb->environment, rc->environment);
  // The hardware is what a report compares; compiler, build type and library versions are not.
  for (const auto& d : p.environment_differences)
    if (d.rfind("accelerator.", 0) != 0 && d.rfind("cpu.", 0) != 0)
      p.flags.push_back("environment: " + d);
}

// The software a figure measured, when it says: extra.software_class, else (for figures we did not
// measure ourselves) extra.implementation. Measured runs pair by config key, which names the
// library already.
std::string software_class_of(const run& r) {
  if (!r.extra.is_object())
    return {};
  if (r.extra.contains("software_class") && r.extra["software_class"].is_string())
    return r.extra["software_class"];
  if (r.source != "measured" && r.extra.contains("implementation") &&
      r.extra["implementation"].is_string())
    return r.extra["implementation"];
  return {};
}

// Like for like: the same family, model or shape (the pair key), precision and software class.
// A Hopper-only kernel against a Blackwell one, or bf16 against fp8, is shown but not summarised.
void judge_like_for_like(pair_result& p, const scored_side& b, const scored_side& c) {
  const run* rb = b.representative;
  const run* rc = c.representative;
  if (!rb || !rc)
    return;
  if (const std::string db = dtype_of(*rb), dc = dtype_of(*rc); db != dc)
    p.not_like_for_like.push_back(
        fmt::format("precision: {} vs {}", db.empty() ? "-" : db, dc.empty() ? "-" : dc));
  if (p.family == "mlperf") {
    auto div = [](const run* r) {
      auto it = r->cfg.values.find("division");
      return it == r->cfg.values.end() ? std::string() : it->second;
    };
    if (div(rb) != div(rc))
      p.not_like_for_like.push_back(fmt::format("division: {} vs {}", div(rb), div(rc)));
  }
  const std::string sb = software_class_of(*rb), sc = software_class_of(*rc);
  if (!sb.empty() && !sc.empty() && sb != sc)
    p.not_like_for_like.push_back(
        fmt::format("different kernels or software: '{}' vs '{}'", sb, sc));
  p.like_for_like = p.not_like_for_like.empty();
  std::vector<std::string> assumed = p.baseline.assumed;
  for (const auto& a : p.candidate.assumed)
    if (std::find(assumed.begin(), assumed.end(), a) == assumed.end())
      assumed.push_back(a);
  for (const auto& a : assumed)
    p.flags.push_back("assumed: " + a);
}

// Headline and geometric means take only like-for-like pairs whose figures are plausible and rest
// on no assumption; the rest are shown with the reason.
void decide_summary(pair_result& p) {
  if (!(p.speedup > 0))
    p.excluded_because.emplace_back("no speed-up");
  if (!p.like_for_like) {
    std::string why;
    for (const auto& x : p.not_like_for_like)
      why += (why.empty() ? "" : "; ") + x;
    p.excluded_because.push_back("not like-for-like (" + why + ")");
  }
  for (const side_score* s : {&p.baseline, &p.candidate})
    if (s->plausibility.implausible())
      p.excluded_because.push_back(
          fmt::format("{} is implausible as stated ({:.0f}% of the {} peak)", s->display,
                      s->plausibility.utilisation_pct.value_or(0), s->plausibility.peak_dtype));
  for (const auto& f : p.flags)
    if (f.rfind("assumed: ", 0) == 0)
      p.excluded_because.push_back("the pairing rests on an assumption (" + f.substr(9) + ")");
  p.in_summary = p.excluded_because.empty();
}

summary_mean summary_geomean(const std::vector<const pair_result*>& pairs) {
  std::map<std::pair<std::string, std::string>, std::vector<const pair_result*>> by_baseline;
  summary_mean m;
  for (const pair_result* p : pairs)
    if (p->in_summary && p->speedup > 0)
      by_baseline[{p->key, p->baseline.system}].push_back(p);
  std::vector<double> v, va;
  for (const auto& [k, list] : by_baseline) {
    std::vector<double> x, xa;
    for (const pair_result* p : list) {
      x.push_back(p->speedup);
      xa.push_back(p->per_accelerator_speedup.value_or(p->speedup));
    }
    v.push_back(stats::geomean(x));
    va.push_back(stats::geomean(xa));
    m.pairs += list.size();
  }
  m.entries = by_baseline.size();
  if (!v.empty()) {
    m.speedup = stats::geomean(v);
    m.per_accelerator = stats::geomean(va);
  }
  return m;
}

std::string verdict_text(const pair_result& p) {
  return p.qualifier.empty() ? p.statement : p.statement + " (" + p.qualifier + ")";
}

std::string make_headline(const report_model& r) {
  if (r.pairs.empty())
    return fmt::format("No comparable runs: '{}' and '{}' share no workload and config ({} "
                       "unpaired group(s) listed below).",
                       r.baseline_label, r.candidate_label, r.unpaired.size());
  // Lead with the pair users quote: MLPerf at the largest scale, else training, else kernels;
  // only like-for-like pairs with plausible figures.
  const pair_result* lead = nullptr;
  auto rank = [](const pair_result& x) {
    return std::make_tuple(-family_rank(x.family),
                           std::max(x.baseline.accelerators, x.candidate.accelerators));
  };
  for (const auto& p : r.pairs)
    if (p.in_summary && p.speedup > 0 && (!lead || rank(p) > rank(*lead)))
      lead = &p;
  size_t left_out = 0;
  for (const auto& p : r.pairs)
    left_out += !p.in_summary;
  if (!lead) {
    size_t not_l4l = 0, implausible = 0;
    for (const auto& p : r.pairs) {
      not_l4l += !p.like_for_like;
      implausible +=
          p.baseline.plausibility.implausible() || p.candidate.plausibility.implausible();
    }
    return fmt::format("{} pair(s) compared, none to summarise: {} not like-for-like, {} with a "
                       "figure implausible as "
                       "stated, the rest without a speed-up or resting on an assumption (each pair "
                       "below says why).",
                       r.pairs.size(), not_l4l, implausible);
  }
  std::string s;
  auto b = lead->baseline;
  auto c = lead->candidate;
  // Same system on both sides (e.g. last night vs tonight): name the sides by their selectors.
  if (b.display == c.display) {
    b.display = "'" + r.baseline_label + "'";
    c.display = "'" + r.candidate_label + "'";
  }
  const std::string per_accel =
      lead->per_accelerator_speedup
          ? fmt::format("; {:.2f}x per accelerator", *lead->per_accelerator_speedup)
          : "";
  if (lead->family == "mlperf") {
    s = fmt::format("{} vs {} on MLPerf {}: {}; official MLPerf scores {} vs {} min{}", c.display,
                    b.display, lead->label, verdict_text(*lead), fmt_num(c.value), fmt_num(b.value),
                    per_accel);
  } else if (lead->family == "training") {
    auto model = lead->label.substr(0, lead->label.find(' '));
    s = fmt::format("{} vs {} training {}: {}; {} vs {} {}{}", c.display, b.display, model,
                    verdict_text(*lead), fmt_num(c.value), fmt_num(b.value), c.unit, per_accel);
  } else {
    const family_summary* fs = nullptr;
    for (const auto& f : r.summaries)
      if (f.family == "kernel")
        fs = &f;
    if (fs && fs->pairs > 1)
      s = fmt::format("{} vs {} on {} like-for-like kernel configs: geometric-mean speed-up "
                      "{:.2f}x ({} faster, {} "
                      "slower, {} without a significant difference or inconclusive, {} not tested)",
                      c.display, b.display, fs->pairs, fs->geomean_speedup, fs->faster, fs->slower,
                      fs->no_difference + fs->inconclusive, fs->not_tested);
    else
      s = fmt::format("{} vs {} on {}: {}; {} vs {} {}", c.display, b.display, lead->label,
                      verdict_text(*lead), fmt_num(c.value), fmt_num(b.value), c.unit);
  }
  // The geometric mean of the lead's family only: speed-ups of different families (time to
  // train, tokens/s, kernel TFLOP/s) are not combined.
  for (const auto& f : r.summaries)
    if (f.family == lead->family && f.baselines > 1 && !(lead->family == "kernel" && f.pairs > 1))
      s += fmt::format("; over {} like-for-like {} pairs ({} baselines, each counted once) the "
                       "geometric-mean speed-up is {:.2f}x",
                       f.pairs, f.family, f.baselines, f.geomean_speedup);
  if (left_out)
    s += fmt::format("; {} pair(s) left out of this summary (not like-for-like, implausible as "
                     "stated or assumed)",
                     left_out);
  return s + ".";
}

} // namespace detail

} // namespace accelbench::report
