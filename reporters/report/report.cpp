// The report model: pairing, scores with CIs, speed-ups, % of peak, cost, energy, scaling.
#include "reporters/report/report.hpp"

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

namespace {

constexpr size_t k_max_distribution_samples = 400; // per side, for the HTML chart

std::string family_of(const std::string& workload) {
  if (workload.rfind("mlperf.", 0) == 0)
    return "mlperf";
  if (workload.rfind("train.", 0) == 0)
    return "training";
  return "kernel";
}

int family_rank(const std::string& f) { return f == "mlperf" ? 0 : f == "training" ? 1 : 2; }

// The benchmark of an MLPerf run (workload mlperf.<benchmark>): cfg.values["benchmark"], else the
// workload name after "mlperf." (as mlperf::run_benchmark reads the runs of that family).
std::string benchmark_of(const run& r) {
  auto it = r.cfg.values.find("benchmark");
  if (it != r.cfg.values.end())
    return it->second;
  return r.cfg.workload.size() > 7 ? r.cfg.workload.substr(7) : r.cfg.workload;
}

std::string pair_key_of(const run& r) {
  if (family_of(r.cfg.workload) == "mlperf")
    return "mlperf/" + benchmark_of(r);
  return r.cfg.key() + " [" + r.ruleset + "]";
}

std::string json_string_at(const json& j, const char* a, const char* b) {
  if (j.is_object() && j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_string())
    return j[a][b].get<std::string>();
  return {};
}

int64_t json_int_at(const json& j, const char* a, const char* b) {
  if (j.is_object() && j.contains(a) && j[a].is_object() && j[a].contains(b) && j[a][b].is_number())
    return j[a][b].get<int64_t>();
  return 0;
}

struct system_facts {
  std::string accelerator_model;
  int64_t accelerators = 1;
  int64_t per_node = 1; // accelerators per node (the "most likely reading" of a per-GPU figure)
};

system_facts facts_of(const run& r, const side& s) {
  system_facts f;
  auto it = s.systems.find(r.system);
  if (it != s.systems.end() && !it->second.accelerator_model.empty()) {
    f.accelerator_model = it->second.accelerator_model;
    f.accelerators = std::max<int64_t>(1, it->second.total_accelerators());
    f.per_node = std::max<int64_t>(1, it->second.accelerators_per_node);
    return f;
  }
  f.accelerator_model = json_string_at(r.environment, "accelerator", "model");
  if (int64_t c = json_int_at(r.environment, "accelerator", "count"); c > 0)
    f.accelerators = c;
  if (auto a = r.cfg.values.find("accelerators"); a != r.cfg.values.end()) {
    try {
      f.accelerators = std::max<int64_t>(1, std::stoll(a->second));
    } catch (...) {
    }
  }
  f.per_node = json_int_at(r.environment, "accelerator", "per_node") > 0
                   ? json_int_at(r.environment, "accelerator", "per_node")
                   : f.accelerators;
  if (f.accelerator_model.empty()) {
    std::string cpu = json_string_at(r.environment, "cpu", "model");
    if (!cpu.empty())
      f.accelerator_model = "CPU: " + cpu;
  }
  return f;
}

std::string format_count(int64_t n) {
  const std::string s = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) { // a comma before every third digit from the right
    if (i > 0 && (s.size() - i) % 3 == 0)
      out += ',';
    out += s[i];
  }
  return out;
}

std::string short_name(const device_spec* d, const std::string& accel_model,
                       const std::string& system) {
  if (d && !d->measured_peak) {
    // The catalogue's first pattern is the marketing name (GB200, B200, H100 PCIe, H100...).
    return d->patterns.front();
  }
  if (!accel_model.empty())
    return accel_model;
  return system;
}

std::string fmt_num(double v) {
  if (!std::isfinite(v))
    return "n/a";
  double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= 1e6 || a < 1e-3)
    return fmt::format("{:.3e}", v);
  if (a >= 1000 || (a < 1e6 && v == std::round(v)))
    return fmt::format("{:.0f}", v);
  if (a >= 100)
    return fmt::format("{:.1f}", v);
  if (a >= 10)
    return fmt::format("{:.2f}", v);
  return fmt::format("{:.4g}", v);
}

std::string lower_copy(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool unit_is_per_accelerator(const std::string& unit) {
  const std::string u = lower_copy(unit);
  return u.find("/gpu") != std::string::npos || u.find("/accelerator") != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// A side's group: the runs of one system for one pair key.
struct group {
  std::string key, workload, family, system;
  std::vector<const run*> runs;
  system_facts facts;
  const ttt_score* mlperf_score = nullptr; // MLPerf groups: the caller's score, when it gave one
};

std::string mlperf_group_key(const std::string& pair_key, const std::string& system) {
  return pair_key + "\n" + system;
}

using group_map = std::map<std::string, std::map<std::string, group>>; // key -> system -> group

group_map group_runs(const side& s) {
  group_map out;
  std::set<std::string> seen; // a run selected twice (overlapping selectors) counts once
  for (const auto& r : s.runs) {
    if (!r.uuid.empty() && !seen.insert(r.uuid).second)
      continue;
    const std::string key = pair_key_of(r);
    group& g = out[key][r.system];
    if (g.runs.empty()) {
      g.key = key;
      g.workload = r.cfg.workload;
      g.family = family_of(r.cfg.workload);
      g.system = r.system;
      g.facts = facts_of(r, s);
    }
    g.runs.push_back(&r);
  }
  for (auto& [key, by_system] : out)
    for (auto& [system, g] : by_system)
      if (auto it = s.mlperf_scores.find(mlperf_group_key(key, system));
          it != s.mlperf_scores.end())
        g.mlperf_score = &it->second;
  return out;
}

// Values of one run in the quantity the family compares (kernels: TFLOP/s when the FLOPs are
// known; training: tokens/s), with the unit and direction.
struct run_series {
  std::string quantity, unit;
  direction dir = direction::higher_is_better;
  std::vector<double> values;
};

run_series series_of(const run& r, const std::string& family) {
  run_series s;
  if (family == "kernel") {
    double flops = r.extra.is_object() ? r.extra.value("flops_per_iteration", 0.0) : 0.0;
    if (r.sample_unit == "TFLOP/s") {
      s = {"tflops", "TFLOP/s", direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        s.values.push_back(x.value);
      return s;
    }
    if (r.sample_unit == "s" && flops > 0) {
      s = {"tflops", "TFLOP/s", direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        if (x.value > 0)
          s.values.push_back(flops / x.value / 1e12);
      return s;
    }
  } else if (family == "training") {
    if (r.sample_unit.rfind("tokens/s", 0) == 0) {
      s = {"tokens_per_s", r.sample_unit, direction::higher_is_better, {}};
      for (const auto& x : r.samples)
        s.values.push_back(x.value);
      return s;
    }
    if (const metric* m = r.find_metric("tokens_per_s"); m && r.sample_unit != "min") {
      s = {"tokens_per_s",
           m->unit.empty() ? "tokens/s" : m->unit,
           direction::higher_is_better,
           {m->value}};
      return s;
    }
  }
  s.quantity = r.sample_unit.empty() ? "value" : r.sample_unit;
  s.unit = r.sample_unit;
  s.dir = r.sample_dir;
  for (const auto& x : r.samples)
    s.values.push_back(x.value);
  return s;
}

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : stats::median(std::move(v)); }

std::string dtype_of(const run& r) {
  auto it = r.cfg.values.find("dtype");
  return it == r.cfg.values.end() ? std::string() : it->second;
}

// ---------------------------------------------------------------------------------------------
struct scored_side {
  side_score score;
  std::vector<double> values;    // sorted pooled values (kernels, training)
  std::vector<double> run_times; // MLPerf: converged run times (minutes)
  compare::run_samples runs;     // the units of compare's test: each run's values (MLPerf: each
                                 // converged run's time, one value per run)
  int drop = 1;                  // MLPerf: runs the olympic mean drops at each end
  int dropped_runs = 0;          // MLPerf: runs that did not converge or failed
  double scale = 1;
  const run* representative = nullptr; // latest run: its environment is compared
  std::vector<const run*> used;        // the runs whose values were used
};

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

// ---------------------------------------------------------------------------------------------
// Physical plausibility: the utilisation of the device's peak a figure implies.

// What the figures' sources say they assumed (extra.assumed: a string or a list of strings).
std::vector<std::string> assumed_of(const std::vector<const run*>& runs) {
  std::vector<std::string> out;
  auto add = [&](const json& x) {
    if (x.is_string() && std::find(out.begin(), out.end(), x.get<std::string>()) == out.end())
      out.push_back(x.get<std::string>());
  };
  for (const run* r : runs) {
    if (!r->extra.is_object() || !r->extra.contains("assumed"))
      continue;
    const json& a = r->extra["assumed"];
    if (a.is_array())
      for (const auto& x : a)
        add(x);
    else
      add(a);
  }
  return out;
}

int64_t positive_config_int(const run& r, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (auto it = r.cfg.values.find(k); it != r.cfg.values.end()) {
      try {
        size_t pos = 0;
        const long long v = std::stoll(it->second, &pos);
        if (pos == it->second.size() && v > 0)
          return v;
      } catch (...) {
      }
    }
  return 0;
}

// Model FLOPs per token of a training figure: the count the run reports (accelbench's own
// train.llama), else the formula over the model's dimensions (the figure's extra.model, or the
// models catalogue entry named by its config).
token_flops token_flops_of(const std::vector<const run*>& runs, const model_catalogue& models) {
  token_flops f;
  std::vector<double> reported;
  for (const run* r : runs)
    if (const metric* m = r->find_metric("model_flops_per_token"); m && m->value > 0)
      reported.push_back(m->value);
  if (!reported.empty()) {
    f.value = median_of(reported);
    f.formula = "reported by the run (accelbench train.llama: 6N + 12 L H Q T, PaLM appendix B)";
    return f;
  }
  const run& r = *runs.front();
  const auto it = r.cfg.values.find("model");
  const std::string model = it == r.cfg.values.end() ? std::string() : it->second;
  const int64_t seq = positive_config_int(r, {"seq_len", "seq"});
  if (r.extra.is_object() && r.extra.contains("model") && r.extra["model"].is_object()) {
    model_dims own;
    const bool readable = read_model_dims(r.extra["model"], model, own).empty();
    return token_flops_of_dims(readable ? &own : nullptr, model, seq);
  }
  return token_flops_of_dims(models.find(model), model, seq);
}

// An implausible figure's most likely reading: a per-GPU training figure that is really per node
// (or per system), a kernel rate quoted with 2:4 sparsity. None when no reading is plausible.
void add_likely_reading(plausibility_check& c, const side_score& s, const std::string& family,
                        const system_facts& facts, bool per_accel_unit) {
  const double limit = 100 * (1 + k_peak_margin);
  const char* unit = s.device_id == "cpu" ? "CPU" : "GPU";
  if (family == "training" && per_accel_unit) {
    std::vector<std::pair<int64_t, std::string>> readings;
    if (facts.per_node > 1)
      readings.emplace_back(facts.per_node, fmt::format("per {}-{} node", facts.per_node, unit));
    if (facts.accelerators > facts.per_node)
      readings.emplace_back(facts.accelerators,
                            fmt::format("per system of {} {}s", facts.accelerators, unit));
    for (const auto& [n, what] : readings) {
      const double u = *c.utilisation_pct / double(n);
      if (u > limit)
        continue;
      c.likely_reading = what;
      c.likely_value = s.per_accelerator / double(n);
      c.likely_unit = s.unit;
      c.likely_utilisation_pct = u;
      return;
    }
  } else if (family == "kernel" && *c.utilisation_pct / 2 <= limit) {
    c.likely_reading = "a rate with 2:4 sparsity (the dense rate is half)";
    c.likely_value = s.value / 2;
    c.likely_unit = "TFLOP/s dense";
    c.likely_utilisation_pct = *c.utilisation_pct / 2;
  }
}

plausibility_check assess_plausibility(const side_score& s, const std::string& family,
                                       const std::string& dtype, const std::vector<const run*>& ok,
                                       const system_facts& facts, const model_catalogue& models,
                                       bool per_accel_unit, bool probed_peak) {
  plausibility_check c;
  if (!(s.value > 0) || ok.empty()) {
    c.reason = "no positive score";
    return c;
  }
  c.peak_tflops = s.peak_tflops;
  c.peak_source = s.peak_source;
  c.peak_dtype = dtype.empty() ? "bf16" : dtype;
  if (family == "kernel" && s.quantity == "tflops") {
    c.implied_tflops = s.value;
    c.basis = "TFLOP/s / peak";
  } else if (family == "training" && s.quantity == "tokens_per_s") {
    const token_flops f = token_flops_of(ok, models);
    if (!(f.value > 0)) {
      c.reason = "model FLOPs per token unknown: " + f.missing;
      return c;
    }
    c.flop_per_token = f.value;
    c.flop_per_token_formula = f.formula;
    c.lower_bound = f.lower_bound;
    c.implied_tflops = s.per_accelerator * f.value / 1e12;
    c.basis = "tokens/s per accelerator x model FLOPs per token / peak";
  } else {
    c.reason = fmt::format("{} is not a FLOP rate",
                           s.quantity.empty() ? std::string("the score") : s.quantity);
    return c;
  }
  if (!(c.peak_tflops > 0)) {
    c.reason = fmt::format("no {} peak for '{}' in the device catalogue", c.peak_dtype,
                           s.accelerator_model);
    return c;
  }
  c.utilisation_pct = 100 * c.implied_tflops / c.peak_tflops;
  c.reason =
      above_peak_reason(c.implied_tflops, c.peak_tflops, c.peak_dtype + ": " + c.peak_source);
  c.status = c.reason.empty() ? "plausible" : "implausible as stated";
  // A CPU's peak is our FMA probe's rate, not a theoretical one: matrix units (AMX) exceed it.
  if (probed_peak && !c.reason.empty()) {
    c.status = "not assessed";
    c.reason = "above the FMA probe's rate, which is not a theoretical peak (matrix units such as "
               "AMX exceed it): " +
               c.reason;
  }
  if (c.implausible())
    add_likely_reading(c, s, family, facts, per_accel_unit);
  return c;
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
  const double a = (1 - opt.ci_level) / 2;
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
  auto [lo, hi] = exact_bootstrap_median_ci(out.values, opt.ci_level);
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
  if (dev && dev->measured_peak && s.quantity == "tflops" && peak > 0 &&
      s.value > peak * (1 + k_peak_margin)) {
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
        mfu.push_back(m->unit == "%" || m->value > 1.5 ? m->value : 100 * m->value);
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
    p.verdict_reason = "one figure per side: nothing to test";
    return;
  }
  compare::sample_options rule = opt.verdict_rule;
  rule.dir = p.baseline.dir;
  rule.ci_level = opt.ci_level;
  rule.pool = pool;
  if (b.representative)
    if (auto f = opt.floor_by_ruleset.find(b.representative->ruleset);
        f != opt.floor_by_ruleset.end())
      rule.floor_pct = f->second;
  compare::sample_comparison cmp = compare::compare_runs(b.runs, c.runs, rule);
  if (cmp.n_baseline > 0 && cmp.n_candidate > 0)
    p.p_value = cmp.p_value;
  if (!cmp.method.empty())
    p.test_method =
        fmt::format("{}, {} + {} run(s)", cmp.method, cmp.runs_baseline, cmp.runs_candidate);
  p.accounts_for = cmp.accounts_for;
  // Kernels and training: the CI shown is the test's, which accounts for the noise between runs
  // (the exact bootstrap of the pooled samples does not). MLPerf keeps the bootstrap of the
  // official score.
  if (!p.baseline.mlperf && cmp.has_ci && cmp.ratio_ci_low > 0) {
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
  const std::string ci = fmt::format("{:.0f}% CI {:.2f}-{:.2f}", 100 * opt.ci_level,
                                     p.speedup_ci_low, p.speedup_ci_high);
  const bool contains_one = p.speedup_ci_low <= 1 && 1 <= p.speedup_ci_high;
  const auto& rule = opt.verdict_rule;
  if (p.verdict == "not tested") {
    p.statement = fmt::format("{:.2f}x as published", p.speedup);
    p.qualifier = "one figure per side: no CI, no test";
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
    else if (!p.p_value || *p.p_value >= rule.alpha)
      why = fmt::format("not significant: p = {:.2g} >= {:g}", p.p_value.value_or(1.0), rule.alpha);
    else if (p.verdict_reason.find("loaded") != std::string::npos)
      why = "a side ran on a loaded machine";
    else
      why = fmt::format("within the {:g}% minimum effect", rule.threshold_pct);
    p.statement = fmt::format("{:.2f}x, inconclusive", p.speedup);
    p.qualifier = ci + "; " + why;
  }
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
      const double a = (1 - opt.ci_level) / 2;
      p.speedup_ci_low = stats::quantile_sorted(r, a);
      p.speedup_ci_high = stats::quantile_sorted(r, 1 - a);
    } else {
      p.speedup_ci_low = p.speedup_ci_high = p.speedup;
      p.ci_degenerate = true;
    }
  } else {
    auto [lo, hi] =
        exact_bootstrap_ratio_ci(b.values, c.values, opt.ci_level); // median(c)/median(b)
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
        "one sample per side (a published figure): the 95% CI is degenerate (the point itself)");
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

// Geometric mean of the speed-ups of the summarised pairs among `pairs`. A baseline used by
// several pairs (one H100 figure against a B200 and a GB200) counts once: its pairs enter as
// the geometric mean of their speed-ups.
struct summary_mean {
  double speedup = 0;
  std::optional<double> per_accelerator;
  size_t pairs = 0, entries = 0;
};

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

} // namespace

// ---------------------------------------------------------------------------------------------
std::vector<mlperf_group> mlperf_groups(const side& s) {
  std::vector<mlperf_group> out;
  for (const auto& [key, by_system] : group_runs(s))
    for (const auto& [system, g] : by_system) {
      if (g.family != "mlperf")
        continue;
      mlperf_group m{mlperf_group_key(key, system), {}};
      for (const run* r : g.runs)
        m.runs.push_back(*r);
      out.push_back(std::move(m));
    }
  return out;
}

bool needs_machine_cpu_peak(const side& baseline, const side& candidate,
                            const device_catalogue& devices) {
  for (const side* s : {&baseline, &candidate})
    for (const auto& r : s->runs) {
      const device_spec* dev = devices.match(facts_of(r, *s).accelerator_model);
      const bool own_peak = r.extra.is_object() && r.extra.contains("peak") &&
                            r.extra["peak"].is_object() && r.extra["peak"].value("tflops", 0.0) > 0;
      if (dev && dev->measured_peak && !own_peak)
        return true;
    }
  return false;
}

// Every run of both selections (a run selected on both sides once).
static std::vector<const run*> all_runs(const side& a, const side& b) {
  std::vector<const run*> out;
  std::set<std::string> seen;
  for (const side* s : {&a, &b})
    for (const auto& r : s->runs)
      if (r.uuid.empty() || seen.insert(r.uuid).second)
        out.push_back(&r);
  return out;
}

namespace {

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
        "Confidence intervals: {:.0f}% percentile bootstrap; medians use the exact bootstrap "
        "distribution of the sample median, MLPerf scores resample runs ({} resamples, seed {}).",
        100 * opt_.ci_level, opt_.resamples, opt_.seed));
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

report_model build_report(const side& baseline, const side& candidate, const options& opt) {
  return report_builder(baseline, candidate, opt).build();
}

// ---------------------------------------------------------------------------------------------
namespace {

json opt_num(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The inputs and result of a time to train's implied utilisation, and the formula as printed.
json ttt_json(const ttt_utilisation& u) {
  return {{"model", u.model},
          {"samples", u.samples},
          {"sequence_length", u.sequence_length},
          {"tokens", u.tokens},
          {"flop_per_token", u.flop_per_token},
          {"model_flops", u.model_flops},
          {"minutes", u.minutes},
          {"runs", u.runs},
          {"accelerators", u.accelerators},
          {"peak_tflops", u.peak_tflops > 0 ? json(u.peak_tflops) : json(nullptr)},
          {"peak_dtype", u.peak_dtype},
          {"peak_why", u.peak_why},
          {"utilisation_pct", u.peak_tflops > 0 ? json(u.utilisation_pct) : json(nullptr)},
          {"bf16_peak_tflops", u.bf16_peak_tflops > 0 ? json(u.bf16_peak_tflops) : json(nullptr)},
          {"bf16_utilisation_pct", opt_num(u.bf16_utilisation_pct)},
          {"formula", u.peak_tflops > 0 ? ttt_formula_text(u) : std::string()}};
}

json plausibility_json(const plausibility_check& c) {
  json likely = nullptr;
  if (!c.likely_reading.empty())
    likely = {{"reading", c.likely_reading},
              {"value", c.likely_value},
              {"unit", c.likely_unit},
              {"utilisation_pct", opt_num(c.likely_utilisation_pct)}};
  json out = {{"status", c.status},
              {"basis", c.basis},
              {"implied_tflops_per_accelerator", c.implied_tflops},
              {"peak_tflops", c.peak_tflops},
              {"peak_dtype", c.peak_dtype},
              {"peak_source", c.peak_source},
              {"utilisation_pct", opt_num(c.utilisation_pct)},
              {"margin_pct", 100 * k_peak_margin},
              {"flop_per_token", c.flop_per_token > 0 ? json(c.flop_per_token) : json(nullptr)},
              {"flop_per_token_formula", c.flop_per_token_formula},
              {"lower_bound", c.lower_bound},
              {"reason", c.reason},
              {"likely_reading", likely}};
  // Only time-to-train figures carry it: every other figure's JSON stays as it was.
  if (c.ttt)
    out["time_to_train"] = ttt_json(*c.ttt);
  return out;
}

json side_json(const side_score& s) {
  json rv = json::array();
  for (const auto& r : s.run_values)
    rv.push_back({{"run", r.uuid}, {"value", r.value}, {"used", r.used}});
  json sp = json::array();
  for (const auto& [x, y] : s.size_points)
    sp.push_back(json::array({x, y}));
  json j = {{"system", s.system},
            {"display", s.display},
            {"accelerator_model", s.accelerator_model},
            {"device", s.device_id.empty() ? json(nullptr) : json(s.device_id)},
            {"accelerators", s.accelerators},
            {"runs", s.runs},
            {"samples", s.samples},
            {"source", s.source},
            {"quantity", s.quantity},
            {"unit", s.unit},
            {"direction", to_string(s.dir)},
            {"value", s.value},
            {"ci", {{"low", s.ci_low}, {"high", s.ci_high}, {"degenerate", s.ci_degenerate}}},
            {"per_accelerator", {{"value", s.per_accelerator}, {"unit", s.per_accelerator_unit}}},
            {"pct_of_peak", opt_num(s.pct_of_peak)},
            {"pct_of_peak_kind", s.pct_of_peak_kind},
            {"peak_tflops", s.peak_tflops},
            {"peak_source", s.peak_source},
            {"cost_usd", opt_num(s.cost_usd)},
            {"cost_source", s.cost_source},
            {"energy_kwh", opt_num(s.energy_kwh)},
            {"energy_source", s.energy_source},
            {"run_values", rv},
            {"uuids", s.uuids},
            {"harness_revisions", s.revisions},
            {"provenance", s.provenance},
            {"sample_values", s.sample_values},
            {"eval_curves", s.eval_curves},
            {"size_points", sp},
            {"arithmetic_intensity", opt_num(s.intensity)},
            {"bandwidth_tb_s", s.bandwidth_tb_s},
            {"plausibility", plausibility_json(s.plausibility)},
            {"assumed", s.assumed}};
  if (s.mlperf)
    j["mlperf"] = {{"score_min", s.value},
                   {"valid", s.score_valid},
                   {"scaling_factor", s.scaling_factor},
                   {"reasons", s.score_reasons}};
  return j;
}

json pair_json(const pair_result& p) {
  return {
      {"id", p.id},
      {"family", p.family},
      {"workload", p.workload},
      {"key", p.key},
      {"label", p.label},
      {"result_unit", p.result_unit},
      {"baseline", side_json(p.baseline)},
      {"candidate", side_json(p.candidate)},
      {"speedup", p.speedup},
      {"speedup_ci",
       {{"low", p.speedup_ci_low}, {"high", p.speedup_ci_high}, {"degenerate", p.ci_degenerate}}},
      {"per_accelerator_speedup", opt_num(p.per_accelerator_speedup)},
      {"verdict", p.verdict},
      {"verdict_reason", p.verdict_reason},
      {"p_value", opt_num(p.p_value)},
      {"test", {{"method", p.test_method}, {"accounts_for", p.accounts_for}}},
      {"official_verdict", p.official_verdict.empty() ? json(nullptr) : json(p.official_verdict)},
      {"statement", p.statement},
      {"qualifier", p.qualifier},
      {"like_for_like", p.like_for_like},
      {"not_like_for_like", p.not_like_for_like},
      {"in_summary", p.in_summary},
      {"excluded_because", p.excluded_because},
      {"flags", p.flags},
      {"environment_differences", p.environment_differences},
      {"notes", p.notes}};
}

json unpaired_json(const unpaired_group& u) {
  return {{"side", u.side},   {"workload", u.workload}, {"key", u.key},      {"system", u.system},
          {"label", u.label}, {"runs", u.runs},         {"reason", u.reason}};
}

json summary_json(const family_summary& f) {
  return {{"family", f.family},
          {"pairs", f.pairs},
          {"baselines", f.baselines},
          {"excluded_pairs", f.excluded},
          {"verdicts",
           {{"faster", f.faster},
            {"slower", f.slower},
            {"no_difference", f.no_difference},
            {"inconclusive", f.inconclusive},
            {"not_tested", f.not_tested}}},
          {"geomean_speedup", f.geomean_speedup},
          {"geomean_per_accelerator_speedup", opt_num(f.geomean_per_accelerator_speedup)},
          {"workloads", f.workloads}};
}

json figure_json(const figure_entry& f) {
  return {{"side", f.side},
          {"system", f.system},
          {"display", f.display},
          {"workload", f.workload},
          {"key", f.key},
          {"label", f.label},
          {"source", f.source},
          {"value", f.value},
          {"unit", f.unit},
          {"dtype", f.dtype},
          {"provenance", f.provenance},
          {"assumed", f.assumed},
          {"plausibility", plausibility_json(f.plausibility)}};
}

json scaling_json(const scaling_series& s) {
  json pts = json::array();
  for (const auto& p : s.points)
    pts.push_back({{"system", p.system},
                   {"accelerators", p.accelerators},
                   {"score_min", p.score_min},
                   {"efficiency", p.efficiency}});
  return {{"benchmark", s.benchmark},
          {"device", s.device_id},
          {"device_name", s.device_name},
          {"points", pts}};
}

// One JSON array of the report's items, each written by its writer.
template <class T, class F> json array_of(const std::vector<T>& items, F&& write) {
  json out = json::array();
  for (const auto& x : items)
    out.push_back(write(x));
  return out;
}

} // namespace

json to_json(const report_model& r) {
  json doc = {{"schema_version", r.schema_version},
              {"generator",
               {{"name", "accelbench"},
                {"version", r.harness_version},
                {"git_revision", r.harness_revision}}},
              {"generated_at", r.generated_at},
              {"baseline", r.baseline_label},
              {"candidate", r.candidate_label},
              {"headline", r.headline},
              {"pairs", array_of(r.pairs, pair_json)},
              {"unpaired", array_of(r.unpaired, unpaired_json)},
              {"summaries", array_of(r.summaries, summary_json)},
              {"scaling", array_of(r.scaling, scaling_json)},
              {"figures", array_of(r.figures, figure_json)},
              {"devices", r.devices},
              {"prices", r.prices},
              {"notes", r.notes}};
  if (!r.dp_scaling.empty()) // report_scaling.cpp
    doc["data_parallel_scaling"] = dp_scaling_json(r.dp_scaling);
  return doc;
}

// Names and labels come from the database: each line is made safe for a terminal (control
// characters, including a newline inside a name, printed as escapes).
static std::string printable_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    out += printable(std::string_view(text).substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out;
}

std::string summary_text(const report_model& r) {
  std::ostringstream os;
  os << printable(r.headline) << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"pair", "workload", "config", "baseline",
                                                 "candidate", "speed-up [95% CI]", "verdict",
                                                 "per accel", "summary", "flags"}};
  for (const auto& p : r.pairs) {
    auto side = [](const side_score& s) {
      return fmt::format("{}: {} {}", s.display, fmt_num(s.value), s.unit);
    };
    rows.push_back(
        {p.id, p.workload, p.label.substr(0, 60), side(p.baseline), side(p.candidate),
         p.speedup > 0 ? fmt::format("{:.2f}x [{:.2f}, {:.2f}]", p.speedup, p.speedup_ci_low,
                                     p.speedup_ci_high)
                       : "-",
         p.statement,
         p.per_accelerator_speedup ? fmt::format("{:.2f}x", *p.per_accelerator_speedup) : "",
         p.in_summary ? "yes" : (p.like_for_like ? "left out" : "not like-for-like"),
         p.flags.empty() ? "" : fmt::format("{}", p.flags.size())});
  }
  // Names come from the database: a newline or an escape sequence inside one is shown escaped.
  for (auto& row : rows)
    for (auto& cell : row)
      cell = printable(cell);
  std::vector<size_t> w(rows[0].size(), 0);
  auto width = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
      n += (c & 0xc0) != 0x80;
    return n;
  };
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      w[i] = std::max(w[i], width(row[i]));
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) {
      line += rows[k][i];
      if (i + 1 < rows[k].size())
        line += std::string(w[i] - width(rows[k][i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    os << line << "\n";
    if (k == 0) {
      std::string rule;
      for (size_t i = 0; i < w.size(); ++i)
        rule += std::string(w[i], '-') + (i + 1 < w.size() ? "  " : "");
      os << rule << "\n";
    }
  }
  for (const auto& f : r.summaries)
    if (f.pairs)
      os << fmt::format("geomean {}: {:.2f}x over {} like-for-like pair(s), {} baseline(s) each "
                        "counted once ({} left out)\n",
                        f.family, f.geomean_speedup, f.pairs, f.baselines, f.excluded);
  for (const auto& f : r.figures)
    if (f.plausibility.implausible())
      os << fmt::format(
          "implausible as stated: {} {} {} {} ({:.0f}% of the {} peak){}\n", f.display, f.label,
          fmt_num(f.value), f.unit, f.plausibility.utilisation_pct.value_or(0),
          f.plausibility.peak_dtype,
          f.plausibility.likely_reading.empty()
              ? std::string()
              : fmt::format("; most likely {}: {} {} ({:.0f}%)", f.plausibility.likely_reading,
                            fmt_num(f.plausibility.likely_value), f.plausibility.likely_unit,
                            f.plausibility.likely_utilisation_pct.value_or(0)));
  if (!r.unpaired.empty())
    os << fmt::format("{} unpaired group(s) (listed in the JSON and HTML)\n", r.unpaired.size());
  return printable_lines(os.str());
}

} // namespace accelbench::report
