// Model FLOPs per token from a model's dimensions, and the implied model-FLOP utilisation of a
// published time-to-train result: the plausibility check of MLPerf figures.
#include "reporters/report/plausibility_ttt.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/core/peak.hpp"

namespace accelbench::report {

token_flops token_flops_of_dims(const model_dims* dims, const std::string& model, int64_t seq) {
  token_flops f;
  if (!dims || !dims->countable()) {
    f.missing =
        model.empty()
            ? "the figure names no model"
            : fmt::format(
                  "no dimensions for model '{}' (extra.model, or workloads/training/models.json)",
                  model);
    return f;
  }
  const int64_t layers = dims->n_layers, heads = dims->n_heads, head_dim = dims->head_dim();
  // The blocks plus the untied LM head and its norm, as the training workload counts them.
  const double n = dims->non_embedding_params();
  f.value = dims->training_flops_per_token(seq);
  f.lower_bound = seq <= 0;
  f.formula =
      seq > 0
          ? fmt::format(
                "6N + 12 L H Q T (PaLM appendix B; full T x T attention): N = {:.4g} parameters, "
                "L = {}, H = {}, Q = {}, T = {}",
                n, layers, heads, head_dim, seq)
          : fmt::format(
                "6N, N = {:.4g} parameters: the sequence length is not stated, so attention FLOPs "
                "are left out and the utilisation is a lower bound",
                n);
  if (!dims->source.empty())
    f.formula += "; dimensions: " + dims->source;
  return f;
}

std::vector<const run*> ttt_score_runs(const std::vector<const run*>& runs,
                                       const ttt_score* score) {
  std::vector<const run*> out;
  if (score) {
    const std::set<std::string> used(score->runs_used.begin(), score->runs_used.end());
    for (const run* r : runs)
      if (used.count(r->uuid))
        out.push_back(r);
    return out;
  }
  for (const run* r : runs)
    if (r->status == run_status::ok && !r->samples.empty() &&
        !(r->extra.is_object() && r->extra.value("converged", true) == false))
      out.push_back(r);
  return out;
}

namespace {

// What the runs trained, summed: samples and minutes; the model and sequence length they share.
struct trained_sums {
  double samples = 0, minutes = 0;
  int64_t sequence_length = 0;
  std::string model;
  std::string missing; // why the sums cannot be used
};

trained_sums sum_trained(const std::vector<const run*>& runs) {
  trained_sums t;
  for (const run* r : runs) {
    const json tr = r->extra.is_object() ? r->extra.value("trained", json()) : json();
    const double samples = tr.is_object() ? tr.value("samples", 0.0) : 0.0;
    const int64_t seq = tr.is_object() ? tr.value("sequence_length", int64_t{0}) : 0;
    const std::string model = tr.is_object() ? tr.value("model", std::string()) : std::string();
    const double minutes = r->samples.empty() ? 0.0 : r->samples.front().value;
    if (model.empty())
      t.missing = "the benchmark names no model whose every weight it trains (importers/mlperf "
                  "benchmarks.json 'model')";
    else if (!(samples > 0))
      t.missing = "the log states no samples trained (run_stop samples_count)";
    else if (seq <= 0)
      t.missing = "the log states no sequence length (max_sequence_length), so the tokens "
                  "trained are unknown";
    else if (!(minutes > 0) || !std::isfinite(minutes))
      t.missing = "a run has no positive time to train";
    else if ((!t.model.empty() && model != t.model) ||
             (t.sequence_length > 0 && seq != t.sequence_length))
      t.missing = "the runs differ in model or sequence length";
    if (!t.missing.empty())
      return t;
    t.model = model;
    t.sequence_length = seq;
    t.samples += samples;
    t.minutes += minutes;
  }
  if (runs.empty())
    t.missing = "no run is averaged by the score";
  return t;
}

// The precision the runs state (config dtype): an MLPerf log states none.
std::string stated_dtype(const std::vector<const run*>& runs) {
  if (runs.empty())
    return {};
  const auto it = runs.front()->cfg.values.find("dtype");
  return it == runs.front()->cfg.values.end() ? std::string() : it->second;
}

// The peak a time to train is divided by, and why (see the header).
void choose_peak(ttt_utilisation& u, const device_spec& dev, const std::string& stated_dtype) {
  const std::string fallback = "the log states no precision: ";
  if (!stated_dtype.empty() && dev.peak_for(stated_dtype) > 0) {
    u.peak_dtype = stated_dtype;
    u.peak_why = "the precision the runs state";
  } else if (dev.peak_for("fp8") > 0) {
    u.peak_dtype = "fp8";
    u.peak_why = fallback +
                 "MLPerf's closed division leaves the numerics to the submitter, and the LLM "
                 "submissions of these rounds (NVIDIA NeMo with Transformer Engine) train their "
                 "matmuls in FP8, so FP8's dense peak bounds what the result can reach (only "
                 "FP4 matmuls could pass it: the flag then names that reading); MFU against "
                 "dense bf16, the literature's convention, is given beside";
  } else {
    u.peak_dtype = "bf16";
    u.peak_why = fallback + "the device has no FP8 peak in the catalogue, so dense bf16";
  }
  u.peak_tflops = dev.peak_for(u.peak_dtype);
  u.bf16_peak_tflops = dev.peak_for("bf16");
}

// Flags a figure outside the plausible band: above the peak by the kernels' rule, or far below.
void judge(plausibility_check& c, const ttt_utilisation& u, const device_spec& dev) {
  c.reason =
      above_peak_reason(c.implied_tflops, c.peak_tflops, c.peak_dtype + " dense: " + c.peak_source);
  if (!c.reason.empty() && u.peak_dtype == "fp8") {
    // The one reading that makes it possible: matmuls in FP4, which the log does not state.
    if (const double fp4 = dev.peak_for("fp4");
        fp4 > 0 && c.implied_tflops <= fp4 * (1 + k_peak_margin)) {
      c.likely_reading = "matmuls in FP4 (the log states no precision)";
      c.likely_value = c.implied_tflops;
      c.likely_unit = "TFLOP/s per accelerator";
      c.likely_utilisation_pct = 100 * c.implied_tflops / fp4;
    }
  }
  if (c.reason.empty() && u.utilisation_pct < k_min_ttt_utilisation_pct)
    c.reason = fmt::format("{:.3g}% of the {} dense peak: below {:.0f}%, far under what a tuned "
                           "submission reaches, so more likely a misread input (samples counted "
                           "in batches, a wrong sequence length or accelerator count) than the "
                           "hardware",
                           u.utilisation_pct, u.peak_dtype, k_min_ttt_utilisation_pct);
  c.status = c.reason.empty() ? "plausible" : "implausible as stated";
}

} // namespace

plausibility_check assess_ttt_plausibility(const side_score& s, const std::vector<const run*>& runs,
                                           const device_spec* dev, const model_catalogue& models) {
  plausibility_check c;
  const trained_sums t = sum_trained(runs);
  if (!t.missing.empty()) {
    c.reason = "time to train: model FLOPs unknown: " + t.missing;
    return c;
  }
  const token_flops f = token_flops_of_dims(models.find(t.model), t.model, t.sequence_length);
  if (!(f.value > 0)) {
    c.reason = "time to train: model FLOPs unknown: " + f.missing;
    return c;
  }
  ttt_utilisation u;
  u.model = t.model;
  u.samples = t.samples;
  u.sequence_length = t.sequence_length;
  u.tokens = t.samples * double(t.sequence_length);
  u.flop_per_token = f.value;
  u.flop_per_token_formula = f.formula;
  u.model_flops = u.tokens * f.value;
  u.minutes = t.minutes;
  u.runs = runs.size();
  u.accelerators = s.accelerators;
  c.flop_per_token = f.value;
  c.flop_per_token_formula = f.formula;
  c.implied_tflops = u.model_flops / (u.minutes * 60.0 * double(u.accelerators)) / 1e12;
  c.basis = "samples x sequence length x model FLOPs per token / (minutes x 60 x accelerators) "
            "/ peak, over the runs the score averages";
  if (!dev || dev->measured_peak) {
    c.reason =
        fmt::format("no datasheet peak for '{}' in the device catalogue", s.accelerator_model);
    c.ttt = u;
    return c;
  }
  choose_peak(u, *dev, stated_dtype(runs));
  c.peak_tflops = u.peak_tflops;
  c.peak_dtype = u.peak_dtype;
  c.peak_source = dev->source.value("doc", dev->name);
  u.utilisation_pct = 100 * c.implied_tflops / u.peak_tflops;
  c.utilisation_pct = u.utilisation_pct;
  if (u.bf16_peak_tflops > 0)
    u.bf16_utilisation_pct = 100 * c.implied_tflops / u.bf16_peak_tflops;
  judge(c, u, *dev);
  c.ttt = u;
  return c;
}

std::string ttt_formula_text(const ttt_utilisation& u) {
  std::string s = fmt::format(
      "MFU = samples x T x F / (t x A x peak) = {:.6g} x {} x {:.5g} FLOP / ({:.5g} min x 60 s x "
      "{} x {:.5g} TFLOP/s {} dense) = {:.1f}%",
      u.samples, u.sequence_length, u.flop_per_token, u.minutes, u.accelerators, u.peak_tflops,
      u.peak_dtype, u.utilisation_pct);
  if (u.bf16_utilisation_pct && u.peak_dtype != "bf16")
    s += fmt::format(" ({:.1f}% of the {:.5g} TFLOP/s bf16 dense peak)", *u.bf16_utilisation_pct,
                     u.bf16_peak_tflops);
  s += fmt::format(
      "; over the {} run(s) the score averages: samples trained until run_stop and their own "
      "minutes, summed (before the scaling factor, which normalises convergence, not work; "
      "evaluation passes inside the timed span are not counted); F = {} ({}); peak: {}",
      u.runs, u.flop_per_token_formula, u.model, u.peak_why);
  return s;
}

} // namespace accelbench::report
