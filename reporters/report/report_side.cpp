// One side of a pair: its device, usable runs, pooled values and bootstrap CI, MLPerf score,
// peak and % of peak, roofline, cost and energy.
#include "reporters/report/report_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

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

constexpr size_t k_max_distribution_samples = 400; // per side, for the HTML chart

// The MLPerf score of a resample of a side's converged run times, by the rule the side's score
// follows (harness/core/score.hpp): the runs that did not converge stay dropped at the slow end.
double resampled_score(const scored_side& s, const std::vector<double>& times) {
  std::vector<double> t = times;
  std::vector<bool> converged(t.size(), true);
  t.resize(t.size() + size_t(s.dropped_runs), 0.0);
  converged.resize(t.size(), false);
  return olympic_mean(t, converged, s.drop).mean * s.scale;
}

const run* latest_of(const std::vector<const run*>& runs) {
  const run* best = nullptr;
  for (const run* r : runs) {
    if (!best) {
      best = r;
      continue;
    }
    auto k = [](const run* x) { return std::tie(x->finished_at, x->started_at, x->id); };
    if (k(best) < k(r))
      best = r;
  }
  return best;
}

void add_provenance(side_score& s, const std::vector<const run*>& runs) {
  std::set<std::string> sources, revisions;
  for (const run* r : runs) {
    s.uuids.push_back(r->uuid);
    sources.insert(r->source);
    if (!r->harness_revision.empty())
      revisions.insert(r->harness_revision);
    if (r->extra.is_object() && r->extra.contains("provenance") &&
        r->extra["provenance"].is_object()) {
      json p = r->extra["provenance"];
      p["run"] = r->uuid;
      s.provenance.push_back(std::move(p));
    } else if (r->source != "measured") {
      json p = {{"run", r->uuid}, {"source", r->source}};
      if (r->extra.is_object()) {
        for (const char* k : {"org", "round", "result_file"})
          if (r->extra.contains(k))
            p[k] = r->extra[k];
      }
      s.provenance.push_back(std::move(p));
    }
  }
  s.source = sources.size() == 1 ? *sources.begin() : "mixed";
  s.revisions.assign(revisions.begin(), revisions.end());
}

void add_eval_curves(side_score& s, const std::vector<const run*>& runs) {
  for (const run* r : runs) {
    if (!r->extra.is_object() || !r->extra.contains("eval_curve") ||
        !r->extra["eval_curve"].is_array())
      continue;
    json pts = json::array();
    std::string xl, yl;
    for (const auto& p : r->extra["eval_curve"]) {
      if (!p.is_object())
        continue;
      double x = 0, y = 0;
      bool hx = false, hy = false;
      for (const char* k : {"time_s", "time_min", "samples_count", "samples", "step", "epoch_num"})
        if (p.contains(k) && p[k].is_number()) {
          x = p[k].get<double>();
          xl = k;
          hx = true;
          break;
        }
      for (const char* k : {"eval_loss", "loss", "value"})
        if (p.contains(k) && p[k].is_number()) {
          y = p[k].get<double>();
          yl = k;
          hy = true;
          break;
        }
      if (hx && hy)
        pts.push_back(json::array({x, y}));
    }
    if (!pts.empty())
      s.eval_curves.push_back({{"run", r->uuid}, {"x", xl}, {"y", yl}, {"points", pts}});
  }
}

// An MLPerf group's score is data the caller computed (importers/mlperf, through
// mlperf_groups()): the report shows it and resamples its runs, and never scores by itself.
void take_mlperf_score(const group& g, scored_side& out) {
  side_score& s = out.score;
  const ttt_score* sc = g.mlperf_score;
  if (!sc) {
    s.score_valid = false;
    s.score_reasons.emplace_back(
        "no MLPerf score was given for these runs (this build has no MLPerf module)");
    for (const run* r : g.runs)
      s.run_values.push_back({r->uuid, r->samples.empty() ? 0.0 : r->samples.front().value, false});
    return;
  }
  s.value = sc->score_min;
  s.score_valid = sc->valid;
  s.scaling_factor = sc->scaling_factor;
  s.score_reasons = sc->reasons;
  // used: averaged by the olympic mean; the bootstrap resamples every converged run (the
  // olympic rule then trims each resample as it trims the submission).
  std::set<std::string> used(sc->runs_used.begin(), sc->runs_used.end());
  std::set<std::string> dropped(sc->runs_dropped.begin(), sc->runs_dropped.end());
  out.drop = sc->max_dropped;
  out.dropped_runs = int(dropped.size());
  for (const run* r : g.runs) {
    double v = r->samples.empty() ? 0.0 : r->samples.front().value;
    s.run_values.push_back({r->uuid, v, used.count(r->uuid) > 0});
    if (!dropped.count(r->uuid) && r->status == run_status::ok && !r->samples.empty()) {
      out.run_times.push_back(v);
      out.runs.push_back({v});
    }
  }
  out.scale = sc->scaling_factor;
  // Energy as the result summarizer computes it from the submission's power/ logs.
  if (sc->energy_j) {
    s.energy_kwh = *sc->energy_j / 3.6e6;
    s.energy_source =
        "MLPerf power logs: olympic mean of the energy of the runs the score averages, x scaling "
        "factor (as the result summarizer)";
  }
}

// The roofline's two figures of a kernel side: its arithmetic intensity (FLOP per byte of least
// traffic, recorded by the run as bytes_per_iteration) and the device's memory roof.
void roofline_of(side_score& s, const std::vector<const run*>& ok, const device_spec* dev) {
  for (const run* r : ok) {
    if (!r->extra.is_object())
      continue;
    const double flops = r->extra.value("flops_per_iteration", 0.0);
    const double bytes = r->extra.value("bytes_per_iteration", 0.0);
    if (flops > 0 && bytes > 0) {
      s.intensity = flops / bytes;
      break;
    }
  }
  if (dev && dev->hbm_tb_s > 0)
    s.bandwidth_tb_s = dev->hbm_tb_s;
}

// The side's name, hardware and provenance; the matching catalogue device (nullptr when none).
const device_spec* identify_side(side_score& s, const group& g, const device_catalogue& devices) {
  s.system = g.system;
  s.accelerator_model = g.facts.accelerator_model;
  s.accelerators = g.family == "kernel" ? 1 : g.facts.accelerators; // a kernel runs on one device
  const device_spec* dev = devices.match(s.accelerator_model);
  if (dev) {
    s.device_id = dev->id;
    s.device_name = dev->name;
  }
  s.display = fmt::format("{} ({})", short_name(dev, s.accelerator_model, s.system),
                          format_count(g.facts.accelerators));
  s.runs = g.runs.size();
  add_provenance(s, g.runs);
  add_eval_curves(s, g.runs);
  s.assumed = assumed_of(g.runs);
  return dev;
}

// As in compare: failed, skipped and INVALID runs (a broken kernel that came out fast) give no
// samples. MLPerf runs are judged by the official scoring rule instead.
std::vector<const run*> usable_runs(const group& g, std::vector<std::string>& notes) {
  std::vector<const run*> ok;
  for (const run* r : g.runs) {
    if (r->status == run_status::ok && (r->valid || g.family == "mlperf"))
      ok.push_back(r);
    else if (g.family != "mlperf" && r->status != run_status::ok)
      notes.push_back(fmt::format("{}: run {} is {} ({}): no samples used", g.system, r->uuid,
                                  to_string(r->status), r->status_reason));
    else if (g.family != "mlperf")
      notes.push_back(fmt::format("{}: run {} is INVALID ({}): no samples used", g.system, r->uuid,
                                  r->invalid_reasons.empty() ? std::string("no reason given")
                                                             : r->invalid_reasons.front()));
  }
  return ok;
}

// Bootstrap over the runs of the olympic mean: the spread of the score if the submitter had drawn
// other seeds. With 3 runs the interval is wide, as it should be.
void mlperf_bootstrap_ci(scored_side& out, const options& opt) {
  side_score& s = out.score;
  if (out.run_times.empty())
    return;
  if (out.run_times.size() == 1) {
    s.ci_low = s.ci_high = s.value;
    s.ci_degenerate = true;
    return;
  }
  stats::rng g2(opt.seed);
  std::vector<double> boot, rs(out.run_times.size());
  for (int b = 0; b < opt.resamples; ++b) {
    for (auto& x : rs)
      x = out.run_times[g2.below(out.run_times.size())];
    boot.push_back(resampled_score(out, rs));
  }
  std::sort(boot.begin(), boot.end());
  const double a = (1 - ci_level(opt)) / 2;
  s.ci_low = stats::quantile_sorted(boot, a);
  s.ci_high = stats::quantile_sorted(boot, 1 - a);
}

// An MLPerf side: time to train by the official score, per accelerator as accelerator-minutes;
// its plausibility is the model-FLOP utilisation the runs the score averages imply.
void score_mlperf_side(const group& g, const options& opt, const device_spec* dev,
                       const model_catalogue& models, scored_side& out) {
  side_score& s = out.score;
  s.mlperf = true;
  s.quantity = "time_to_train_min";
  s.unit = "min";
  s.dir = direction::lower_is_better;
  take_mlperf_score(g, out);
  s.samples = s.run_values.size();
  for (const auto& rv : s.run_values)
    s.sample_values.push_back(rv.value);
  mlperf_bootstrap_ci(out, opt);
  s.per_accelerator = s.value * double(s.accelerators);
  s.per_accelerator_unit = "accelerator-min";
  s.plausibility = assess_ttt_plausibility(s, ttt_score_runs(g.runs, g.mlperf_score), dev, models);
  if (s.plausibility.utilisation_pct) {
    s.pct_of_peak = s.plausibility.utilisation_pct;
    s.pct_of_peak_kind = "mfu";
    s.peak_tflops = s.plausibility.peak_tflops;
    s.peak_source = s.plausibility.peak_dtype + " dense: " + s.plausibility.peak_source;
  }
}

// Kernels and training: pool the samples of the group's ok runs (those in the first run's unit).
// Returns whether the figure is already per accelerator.
bool pool_samples(const group& g, const std::vector<const run*>& ok, scored_side& out,
                  std::vector<std::string>& notes) {
  side_score& s = out.score;
  std::string unit, quantity;
  direction dir = direction::higher_is_better;
  bool first = true, per_accel_unit = false;
  for (const run* r : ok) {
    run_series rs = series_of(*r, g.family);
    if (first) {
      unit = rs.unit;
      quantity = rs.quantity;
      dir = rs.dir;
      first = false;
    } else if (rs.unit != unit || rs.dir != dir) {
      notes.push_back(fmt::format("{}: run {} reports {} ({}), not {}: left out", g.system, r->uuid,
                                  rs.quantity, rs.unit, unit));
      continue;
    }
    if (r->extra.is_object() && r->extra.value("per_accelerator", false))
      per_accel_unit = true;
    s.run_values.push_back({r->uuid, median_of(rs.values), true});
    out.values.insert(out.values.end(), rs.values.begin(), rs.values.end());
    if (!rs.values.empty())
      out.runs.push_back(rs.values);
  }
  s.quantity = quantity;
  s.unit = unit;
  s.dir = dir;
  return per_accel_unit || unit_is_per_accelerator(unit);
}

// The median of the pooled samples, its exact bootstrap interval and the chart's samples.
void summarize_samples(scored_side& out, const options& opt) {
  side_score& s = out.score;
  std::sort(out.values.begin(), out.values.end());
  s.samples = out.values.size();
  if (out.values.empty())
    return;
  s.value = stats::median(out.values);
  auto [lo, hi] = exact_bootstrap_median_ci(out.values, ci_level(opt));
  s.ci_low = lo;
  s.ci_high = hi;
  s.ci_degenerate = out.values.size() == 1;
  // An evenly spaced subset keeps the distribution chart small for big runs.
  size_t step = std::max<size_t>(1, out.values.size() / k_max_distribution_samples);
  for (size_t i = 0; i < out.values.size(); i += step)
    s.sample_values.push_back(out.values[i]);
}

void set_per_accelerator(side_score& s, bool per_accel_unit) {
  if (per_accel_unit) {
    s.per_accelerator = s.value;
    s.per_accelerator_unit = s.unit;
  } else if (s.dir == direction::higher_is_better) {
    s.per_accelerator = s.value / double(s.accelerators);
    s.per_accelerator_unit = s.unit + " per accelerator";
  } else {
    s.per_accelerator = s.value * double(s.accelerators);
    s.per_accelerator_unit = "accelerator x " + s.unit;
  }
}

// The peak a side is measured against, for the config's dtype: a CPU's own FMA probe (recorded by
// a run, or cached), otherwise the catalogue's datasheet figure.
void find_peak(side_score& s, const device_spec* dev, const std::vector<const run*>& ok,
               const options& opt, const std::string& dtype) {
  double peak = 0;
  std::string peak_src;
  if (dev && dev->measured_peak) {
    std::string unknown; // a run's own word that its peak gives no % of peak (a loaded probe)
    for (const run* r : ok) {
      if (std::string why = pct_of_peak_unknown(*r); !why.empty()) {
        unknown = why;
        continue;
      }
      if (r->extra.is_object() && r->extra.contains("peak") && r->extra["peak"].is_object() &&
          r->extra["peak"].value("tflops", 0.0) > 0) {
        peak = r->extra["peak"]["tflops"].get<double>();
        peak_src = "measured by accelbench (run.extra.peak, " +
                   r->extra["peak"].value("source", std::string("FMA probe")) + ")";
        break;
      }
    }
    if (const cpu_peak here =
            opt.machine_cpu_peak && peak == 0 ? *opt.machine_cpu_peak : cpu_peak{};
        here.quiet()) {
      peak = peak_tflops_for(here, dtype.empty() ? "fp32" : dtype);
      peak_src = "measured by accelbench on this machine (cached_cpu_peak)";
    }
    if (peak == 0 && !unknown.empty())
      peak_src = "none: " + unknown;
  } else if (dev) {
    peak = dev->peak_for(dtype.empty() ? "bf16" : dtype);
    peak_src = dev->source.value("doc", dev->name);
  }
  // A CPU peak is our own FMA probe: when the side beat it, the probe read low (a loaded machine)
  // or the kernel uses matrix units it does not measure; a % of peak above 100 would be a number
  // that cannot be true.
  if (dev && dev->measured_peak && s.quantity == "tflops" && peak > 0 && s.value > peak) {
    peak_src = fmt::format("none: the CPU peak on record ({:.3g} TFLOP/s) is below the achieved "
                           "{:.3g} TFLOP/s: the FMA probe ran on a loaded machine (accelbench "
                           "env --reprobe) or the kernel uses matrix units it does not measure",
                           peak, s.value);
    peak = 0;
  }
  s.peak_tflops = peak;
  s.peak_source = peak_src;
}

// % of peak: kernels against the peak for the config's dtype; training as MFU (reported by the
// run, or model TFLOP/s per accelerator over the peak).
void add_pct_of_peak(side_score& s, const group& g, const std::vector<const run*>& ok) {
  const double peak = s.peak_tflops;
  if (g.family == "kernel" && s.quantity == "tflops" && peak > 0 && s.value > 0) {
    s.pct_of_peak = 100.0 * s.value / peak;
    s.pct_of_peak_kind = "tflops";
  } else if (g.family == "training") {
    std::vector<double> mfu, model_tf;
    for (const run* r : ok) {
      if (const metric* m = r->find_metric("mfu"))
        // Above 100%: stored before kernel_metrics' above-peak rule; a peak that was wrong.
        if (const double pct = m->unit == "%" || m->value > 1.5 ? m->value : 100 * m->value;
            pct <= 100)
          mfu.push_back(pct);
      if (const metric* m = r->find_metric("model_tflops_per_accelerator"))
        model_tf.push_back(m->value);
    }
    if (!mfu.empty()) {
      s.pct_of_peak = median_of(mfu);
      s.pct_of_peak_kind = "mfu";
      s.peak_source = "reported by the run (metric mfu)";
    } else if (!model_tf.empty() && peak > 0) {
      s.pct_of_peak = 100.0 * median_of(model_tf) / peak;
      s.pct_of_peak_kind = "mfu";
    }
  }
}

// A kernel's TFLOP/s against its size (FLOP per iteration), one point per run.
void add_size_points(side_score& s, const group& g, const std::vector<const run*>& ok) {
  for (const run* r : ok) {
    double flops = r->extra.is_object() ? r->extra.value("flops_per_iteration", 0.0) : 0.0;
    if (flops > 0) {
      run_series rs = series_of(*r, g.family);
      if (!rs.values.empty())
        s.size_points.emplace_back(flops, median_of(rs.values));
    }
  }
}

scored_side score_group(const group& g, const options& opt, const device_catalogue& devices,
                        const model_catalogue& models, std::vector<std::string>& notes) {
  scored_side out;
  side_score& s = out.score;
  const device_spec* dev = identify_side(s, g, devices);
  std::vector<const run*> ok = usable_runs(g, notes);
  out.representative = latest_of(ok.empty() ? g.runs : ok);
  out.used = ok;
  if (g.family == "mlperf") {
    score_mlperf_side(g, opt, dev, models, out);
    return out;
  }
  const bool per_accel_unit = pool_samples(g, ok, out, notes);
  summarize_samples(out, opt);
  set_per_accelerator(s, per_accel_unit);
  const std::string dtype = out.representative ? dtype_of(*out.representative) : "";
  find_peak(s, dev, ok, opt, dtype);
  add_pct_of_peak(s, g, ok);
  if (g.family == "kernel" && s.quantity == "tflops") {
    roofline_of(s, ok, dev);
    add_size_points(s, g, ok);
  }
  s.plausibility = assess_plausibility(s, g.family, dtype, ok, g.facts, models, per_accel_unit,
                                       dev && dev->measured_peak);
  return out;
}

// Cost and energy per result. Time per result: MLPerf a training run (score minutes); training
// throughput 1M tokens; kernels one EFLOP (10^18 FLOP).
void cost_and_energy(side_score& s, const std::string& family, const options& opt,
                     const device_catalogue& devices, const std::vector<const run*>& runs) {
  double hours = -1; // accelerator-hours per result, per accelerator
  if (s.mlperf) {
    if (s.value > 0)
      hours = s.value / 60.0;
  } else if (s.quantity == "tokens_per_s" && s.per_accelerator > 0) {
    hours = 1e6 / s.per_accelerator / 3600.0; // hours for one accelerator to process 1M tokens
  } else if (s.quantity == "tflops" && s.value > 0) {
    hours = 1e6 / s.value / 3600.0; // 1e18 FLOP at value x 1e12 FLOP/s
  }
  if (hours < 0)
    return;
  // Training throughput per accelerator: one accelerator's hours; the rest: all accelerators.
  const double accel_hours = s.quantity == "tokens_per_s" ? hours : hours * double(s.accelerators);
  if (const price_entry* p = s.device_id.empty() ? nullptr : opt.prices.find(s.device_id)) {
    s.cost_usd = p->usd_per_hour * accel_hours;
    s.cost_source =
        fmt::format("{} USD/accelerator-hour ({})", fmt_num(p->usd_per_hour), p->source);
  }
  // Measured power wins over TDP (run.extra.power_w or a power_w metric, watts per accelerator).
  std::vector<double> power;
  for (const run* r : runs) {
    if (const metric* m = r->find_metric("power_w"))
      power.push_back(m->value);
    else if (r->extra.is_object() && r->extra.contains("power_w") &&
             r->extra["power_w"].is_number())
      power.push_back(r->extra["power_w"].get<double>());
  }
  if (s.energy_kwh) {
    // Already measured for the whole result (MLPerf power logs).
  } else if (!power.empty()) {
    s.energy_kwh = median_of(power) * accel_hours / 1000.0;
    s.energy_source = "measured power";
  } else if (const device_spec* d = devices.find(s.device_id); d && d->tdp_w > 0) {
    s.energy_kwh = d->tdp_w * accel_hours / 1000.0;
    s.energy_source = fmt::format("TDP {} W x time x accelerators", fmt_num(d->tdp_w));
  }
  (void)family;
}

} // namespace detail

bool needs_machine_cpu_peak(const side& baseline, const side& candidate,
                            const device_catalogue& devices) {
  for (const side* s : {&baseline, &candidate})
    for (const auto& r : s->runs) {
      const device_spec* dev = devices.match(detail::facts_of(r, *s).accelerator_model);
      const bool own_peak = r.extra.is_object() && r.extra.contains("peak") &&
                            r.extra["peak"].is_object() && r.extra["peak"].value("tflops", 0.0) > 0;
      if (dev && dev->measured_peak && !own_peak)
        return true;
    }
  return false;
}

} // namespace accelbench::report
