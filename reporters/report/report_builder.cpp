// The report builder: pairs the two sides' groups, scores each group once, and adds the family
// summaries, scaling series, figures, devices and notes (the concepts it calls have a file each).
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

namespace {

// Every run of both selections (a run selected on both sides once).
std::vector<const run*> all_runs(const side& a, const side& b) {
  std::vector<const run*> out;
  std::set<std::string> seen;
  for (const side* s : {&a, &b})
    for (const auto& r : s->runs)
      if (r.uuid.empty() || seen.insert(r.uuid).second)
        out.push_back(&r);
  return out;
}

using scored_group = std::pair<scored_side, std::vector<std::string>>; // score, notes

// Builds one report: pairs the two sides' groups by key and system, scores each group once (for
// its pairs, the figures table and the scaling series alike), then adds the family summaries,
// scaling series, figures, devices and notes.
class report_builder {
public:
  report_builder(const side& baseline, const side& candidate, const options& opt)
      : baseline_(baseline), candidate_(candidate), opt_(opt), devices_(opt.devices),
        models_(opt.models), gb_(group_runs(baseline)), gc_(group_runs(candidate)) {}

  report_model build() {
    describe_report();
    pool_between_runs();
    for (const auto& key : all_keys())
      pair_key(key);
    finish_pairs();
    summarize_families();
    add_scaling();
    note_mlperf_energy();
    add_figures();
    note_implausible();
    add_devices();
    add_closing_notes();
    rep_.dp_scaling = build_dp_scaling(all_runs(baseline_, candidate_)); // report_scaling.cpp
    rep_.headline = make_headline(rep_);
    return std::move(rep_);
  }

private:
  using systems = std::map<std::string, group>; // system -> group
  using scaling_points = std::map<std::pair<std::string, std::string>,
                                  std::map<std::string, scaling_point>>; // (benchmark, device)

  void describe_report() {
    rep_.generated_at = opt_.generated_at.empty() ? now_iso8601() : opt_.generated_at;
    rep_.harness_version =
        opt_.harness_version.empty() ? build_info::version() : opt_.harness_version;
    rep_.harness_revision =
        opt_.harness_revision.empty() ? build_info::git_revision() : opt_.harness_revision;
    rep_.baseline_label = baseline_.label;
    rep_.candidate_label = candidate_.label;
    rep_.ci_level = ci_level(opt_);
  }

  const scored_group& score_of(const group& g) {
    auto it = scored_.find(&g);
    if (it == scored_.end()) {
      std::vector<std::string> n;
      scored_side sc = score_group(g, opt_, devices_, models_, n);
      it = scored_.emplace(&g, std::make_pair(std::move(sc), std::move(n))).first;
    }
    return it->second;
  }

  // compare's pooled between-run variance: every group of a key present on both sides.
  void pool_between_runs() {
    for (const auto& [key, systems_b] : gb_) {
      auto ic = gc_.find(key);
      if (ic == gc_.end())
        continue;
      for (const systems* sides : {&systems_b, &ic->second})
        for (const auto& [sys, g] : *sides)
          pool_.add(compare::locate(score_of(g).first.runs));
    }
    pool_.finish(); // the empirical-Bayes weight of the pooled variance
  }

  std::set<std::string> all_keys() const {
    std::set<std::string> keys;
    for (const auto& [k, v] : gb_)
      keys.insert(k);
    for (const auto& [k, v] : gc_)
      keys.insert(k);
    return keys;
  }

  void add_unpaired(const group& g, const std::string& sd, const std::string& why) {
    unpaired_group u;
    u.side = sd;
    u.workload = g.workload;
    u.key = g.key;
    u.system = g.system;
    u.runs = g.runs.size();
    u.label = pair_label(*g.runs.front(), g.family);
    u.reason = why;
    rep_.unpaired.push_back(std::move(u));
  }

  void pair_key(const std::string& key) {
    auto ib = gb_.find(key);
    auto ic = gc_.find(key);
    if (ib == gb_.end() || ic == gc_.end()) {
      const bool base = ib != gb_.end();
      one_sided(base ? ib->second : ic->second, base);
      return;
    }
    for (const auto& [g1, g2] : match_systems(ib->second, ic->second))
      add_pair(key, *g1, *g2);
  }

  // A key on one side only: its groups are unpaired (MLPerf ones still count for scaling).
  void one_sided(const systems& groups, bool base) {
    for (const auto& [sys, g] : groups) {
      add_unpaired(g, base ? "baseline" : "candidate",
                   fmt::format("no {} run with this {}", base ? "candidate" : "baseline",
                               g.family == "mlperf" ? "benchmark" : "config and ruleset"));
      if (g.family == "mlperf")
        mlperf_groups_.emplace_back(&g, score_of(g).first.score);
    }
  }

  // Several systems on a side: one baseline system pairs with every candidate system (and the
  // reverse); otherwise systems pair by equal accelerator count, the rest are unpaired.
  std::vector<std::pair<const group*, const group*>> match_systems(const systems& b,
                                                                   const systems& c) {
    std::vector<std::pair<const group*, const group*>> matches;
    if (b.size() == 1 || c.size() == 1) {
      for (const auto& [sb, g1] : b)
        for (const auto& [sc, g2] : c)
          matches.emplace_back(&g1, &g2);
      return matches;
    }
    std::set<std::string> pb, pc;
    for (const auto& [sb, g1] : b)
      for (const auto& [sc, g2] : c)
        if (!pb.count(sb) && !pc.count(sc) && g1.facts.accelerators == g2.facts.accelerators) {
          matches.emplace_back(&g1, &g2);
          pb.insert(sb);
          pc.insert(sc);
        }
    const char* why = "several systems on both sides and none with the same accelerator count";
    for (const auto& [sb, g1] : b)
      if (!pb.count(sb))
        add_unpaired(g1, "baseline", why);
    for (const auto& [sc, g2] : c)
      if (!pc.count(sc))
        add_unpaired(g2, "candidate", why);
    return matches;
  }

  void add_pair(const std::string& key, const group& g1, const group& g2) {
    pair_result p;
    p.family = g1.family;
    p.workload = g1.workload;
    p.key = key;
    p.label = pair_label(*g1.runs.front(), p.family);
    scored_side b = score_of(g1).first;
    scored_side c = score_of(g2).first;
    for (const group* g : {&g1, &g2})
      for (const auto& n : score_of(*g).second)
        p.notes.push_back(n);
    if (p.family == "mlperf")
      note_mlperf_pair(p, g1, g2, b, c);
    cost_and_energy(b.score, p.family, opt_, devices_, g1.runs);
    cost_and_energy(c.score, p.family, opt_, devices_, g2.runs);
    p.result_unit = result_unit_of(b.score);
    p.baseline = b.score;
    p.candidate = c.score;
    if (all_skipped(g1) && all_skipped(g2)) {
      // Nothing ran on either side: "skipped", as compare says, not an inconclusive pair.
      p.verdict = "skipped";
      p.verdict_reason = "skipped on both sides: " + g1.runs.front()->status_reason;
    } else {
      compare_sides(p, b, c, opt_, pool_);
    }
    flag_differences(p, b, c);
    judge_like_for_like(p, b, c);
    describe_pair(p, opt_);
    decide_summary(p);
    note_pair_devices(p);
    rep_.pairs.push_back(std::move(p));
  }

  void note_mlperf_pair(pair_result& p, const group& g1, const group& g2, const scored_side& b,
                        const scored_side& c) {
    mlperf_groups_.emplace_back(&g1, b.score);
    mlperf_groups_.emplace_back(&g2, c.score);
    for (const auto* s : {&b.score, &c.score})
      if (!s->score_valid)
        p.notes.push_back(
            fmt::format("{}: the MLPerf score is INVALID ({})", s->system,
                        s->score_reasons.empty() ? "no reason given" : s->score_reasons.front()));
  }

  // The pair's devices are listed in the report; a device without a catalogue entry or price is
  // named in the pair's notes.
  void note_pair_devices(pair_result& p) {
    for (const auto* s : {&p.baseline, &p.candidate}) {
      if (!s->device_id.empty())
        used_devices_.insert(s->device_id);
      else
        p.notes.push_back(fmt::format(
            "{}: accelerator '{}' is not in the device catalogue (no peak, TDP or price)",
            s->system, s->accelerator_model));
      if (!s->device_id.empty() && !s->cost_usd && s->device_id != "cpu")
        p.notes.push_back(fmt::format("{}: no price for {} (pass --price {}=USD)", s->system,
                                      s->device_id, s->device_id));
    }
  }

  void finish_pairs() {
    // Deduplicate pair notes (a side's failed-run notes appear once per pair it is in).
    for (auto& p : rep_.pairs) {
      std::vector<std::string> seen;
      for (auto& n : p.notes)
        if (std::find(seen.begin(), seen.end(), n) == seen.end())
          seen.push_back(n);
      p.notes = seen;
    }
    std::stable_sort(rep_.pairs.begin(), rep_.pairs.end(),
                     [](const pair_result& a, const pair_result& b) {
                       return std::make_tuple(family_rank(a.family), a.workload, a.key,
                                              a.baseline.system, a.candidate.system) <
                              std::make_tuple(family_rank(b.family), b.workload, b.key,
                                              b.baseline.system, b.candidate.system);
                     });
    // Two sides on the same hardware (measured vs measured): tell them apart by system name, or,
    // on one system (a before/after on one machine), by the selectors that chose them.
    for (size_t i = 0; i < rep_.pairs.size(); ++i) {
      auto& p = rep_.pairs[i];
      p.id = fmt::format("p{}", i + 1);
      if (p.baseline.display != p.candidate.display)
        continue;
      const bool one_system = p.baseline.system == p.candidate.system;
      p.baseline.display = one_system ? "'" + rep_.baseline_label + "'" : p.baseline.system;
      p.candidate.display = one_system ? "'" + rep_.candidate_label + "'" : p.candidate.system;
    }
    std::sort(rep_.unpaired.begin(), rep_.unpaired.end(),
              [](const unpaired_group& a, const unpaired_group& b) {
                return std::tie(a.side, a.key, a.system) < std::tie(b.side, b.key, b.system);
              });
  }

  // Geometric mean per family, over like-for-like, plausible pairs (a shared baseline once).
  void summarize_families() {
    std::map<std::string, family_summary> fams;
    for (const auto& p : rep_.pairs)
      count_verdict(fams[p.family], p);
    for (auto& [name, f] : fams) {
      std::vector<const pair_result*> ps;
      for (const auto& p : rep_.pairs)
        if (p.family == name)
          ps.push_back(&p);
      const summary_mean m = summary_geomean(ps);
      f.pairs = m.pairs;
      f.baselines = m.entries;
      f.geomean_speedup = m.speedup;
      f.geomean_per_accelerator_speedup = m.per_accelerator;
      rep_.summaries.push_back(f);
    }
    std::sort(rep_.summaries.begin(), rep_.summaries.end(),
              [](const family_summary& a, const family_summary& b) {
                return family_rank(a.family) < family_rank(b.family);
              });
  }

  static void count_verdict(family_summary& f, const pair_result& p) {
    f.family = p.family;
    if (std::find(f.workloads.begin(), f.workloads.end(), p.workload) == f.workloads.end())
      f.workloads.push_back(p.workload);
    if (!p.in_summary) {
      ++f.excluded;
      return;
    }
    const std::string& v = p.verdict;
    ++(v == "improved"       ? f.faster
       : v == "regressed"    ? f.slower
       : v == "unchanged"    ? f.no_difference
       : v == "inconclusive" ? f.inconclusive
                             : f.not_tested);
  }

  // Scaling: one device family at several accelerator counts on one benchmark.
  void add_scaling() {
    scaling_points by;
    std::map<std::string, std::string> dev_names;
    for (const auto& [g, s] : mlperf_groups_) {
      if (s.device_id.empty() || !(s.value > 0) || !s.score_valid)
        continue;
      scaling_point pt;
      pt.system = s.system;
      pt.accelerators = g->facts.accelerators;
      pt.score_min = s.value;
      pt.side = "";
      by[{benchmark_of(*g->runs.front()), s.device_id}][s.system] = pt;
      dev_names[s.device_id] = s.device_name;
    }
    for (auto& [k, pts] : by)
      if (accelerator_counts(pts).size() >= 2)
        rep_.scaling.push_back(scaling_series_of(k, pts, dev_names[k.second]));
    if (rep_.scaling.empty() && !by.empty())
      note_scaling_gaps(by, dev_names);
  }

  static std::set<int64_t> accelerator_counts(const std::map<std::string, scaling_point>& pts) {
    std::set<int64_t> counts;
    for (const auto& [sys, pt] : pts)
      counts.insert(pt.accelerators);
    return counts;
  }

  // Efficiency against the smallest system: accelerator-minutes of the reference over the point's.
  static scaling_series scaling_series_of(const std::pair<std::string, std::string>& k,
                                          const std::map<std::string, scaling_point>& pts,
                                          const std::string& device_name) {
    scaling_series ser;
    ser.benchmark = k.first;
    ser.device_id = k.second;
    ser.device_name = device_name;
    for (const auto& [sys, pt] : pts)
      ser.points.push_back(pt);
    std::sort(ser.points.begin(), ser.points.end(),
              [](const scaling_point& a, const scaling_point& b) {
                return std::tie(a.accelerators, a.system) < std::tie(b.accelerators, b.system);
              });
    const auto& ref = ser.points.front();
    for (auto& pt : ser.points)
      pt.efficiency =
          (ref.score_min * double(ref.accelerators)) / (pt.score_min * double(pt.accelerators));
    return ser;
  }

  void note_scaling_gaps(const scaling_points& by, std::map<std::string, std::string>& dev_names) {
    std::string have;
    for (const auto& [k, pts] : by)
      have += fmt::format("{}{} on {} at {}", have.empty() ? "" : "; ", k.first,
                          dev_names[k.second], fmt::join(accelerator_counts(pts), ", "));
    rep_.notes.push_back("Scaling efficiency needs one MLPerf benchmark at two or more accelerator "
                         "counts of one device; "
                         "these selections have " +
                         have + " accelerators.");
  }

  void note_mlperf_energy() {
    if (mlperf_groups_.empty())
      return;
    bool measured = false;
    for (const auto& [g, sc] : mlperf_groups_)
      measured = measured || sc.energy_source.rfind("MLPerf power logs", 0) == 0;
    if (!measured)
      rep_.notes.emplace_back(
          "MLPerf energy: none of these submissions publishes power logs (power/ "
          "folders), so energy per "
          "training run is estimated from TDP x time x accelerators.");
  }

  // Every figure of both selections, paired or not, with its plausibility.
  void add_figures() {
    for (const auto* gm : {&gb_, &gc_})
      for (const auto& [key, groups] : *gm)
        for (const auto& [sys, g] : groups)
          rep_.figures.push_back(figure_of(g, gm == &gb_ ? "baseline" : "candidate"));
  }

  figure_entry figure_of(const group& g, const std::string& sd) {
    const side_score& sc = score_of(g).first.score;
    figure_entry f;
    f.side = sd;
    f.system = g.system;
    f.display = sc.display;
    f.workload = g.workload;
    f.key = g.key;
    f.label = pair_label(*g.runs.front(), g.family);
    f.source = sc.source;
    f.value = sc.value;
    f.unit = sc.unit;
    f.dtype = dtype_of(*g.runs.front());
    f.provenance = sc.provenance;
    f.assumed = sc.assumed;
    f.plausibility = sc.plausibility;
    if (!sc.device_id.empty())
      used_devices_.insert(sc.device_id);
    return f;
  }

  void note_implausible() {
    size_t implausible = 0;
    for (const auto& f : rep_.figures)
      implausible += f.plausibility.implausible();
    if (implausible)
      rep_.notes.push_back(fmt::format(
          "{} figure(s) imply more than the device's datasheet peak (+{:.0f}% for clocks): they "
          "are kept as their sources state them, marked implausible as stated with the most "
          "likely reading, and left out of the headline and the geometric means.",
          implausible, 100 * k_peak_margin));
  }

  // The catalogue entry and price of every device the report names.
  void add_devices() {
    for (const auto& id : used_devices_)
      if (const device_spec* d = devices_.find(id)) {
        json pk = json::object();
        for (const auto& [k, v] : d->peak_tflops)
          pk[k] = v;
        rep_.devices.push_back({{"id", d->id},
                                {"name", d->name},
                                {"peak_tflops", pk},
                                {"hbm_tb_s", d->hbm_tb_s},
                                {"tdp_w", d->tdp_w},
                                {"measured_peak", d->measured_peak},
                                {"source", d->source}});
        if (const price_entry* p = opt_.prices.find(id))
          rep_.prices.push_back({{"device", id},
                                 {"usd_per_accelerator_hour", p->usd_per_hour},
                                 {"source", p->source}});
      }
  }

  void add_closing_notes() {
    bool any_degenerate = false;
    for (const auto& p : rep_.pairs)
      any_degenerate = any_degenerate || p.ci_degenerate;
    if (any_degenerate)
      rep_.notes.emplace_back("Published figures carry one sample (the figure itself): their "
                              "confidence intervals are degenerate and say nothing about "
                              "run-to-run spread.");
    if (rep_.pairs.empty())
      rep_.notes.emplace_back(
          "No pairs: nothing in the two selections shares a workload and config "
          "key (see the unpaired list).");
    rep_.notes.push_back(fmt::format(
        "Confidence intervals: {}, the level of compare's test (1 - alpha {:g}). A measured "
        "pair's speed-up CI is the test's own; each side's score has a percentile bootstrap CI "
        "(medians: the exact bootstrap distribution of the sample median), and MLPerf scores and "
        "speed-ups resample runs ({} resamples, seed {}).",
        compare::ci_label(opt_.verdict_rule.alpha), opt_.verdict_rule.alpha, opt_.resamples,
        opt_.seed));
  }

  const side& baseline_;
  const side& candidate_;
  const options& opt_;
  const device_catalogue& devices_;
  const model_catalogue& models_;
  const group_map gb_, gc_;
  std::map<const group*, scored_group> scored_; // each group scored once
  compare::between_run_pool pool_;              // the variance between runs over every paired group
  std::set<std::string> used_devices_;
  std::vector<std::pair<const group*, side_score>> mlperf_groups_; // for scaling
  report_model rep_;
};

} // namespace

} // namespace detail

double ci_level(const options& opt) { return 1 - opt.verdict_rule.alpha; }

report_model build_report(const side& baseline, const side& candidate, const options& opt) {
  return detail::report_builder(baseline, candidate, opt).build();
}

} // namespace accelbench::report
