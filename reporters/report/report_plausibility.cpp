// Physical plausibility of a figure: the utilisation of the device's peak it implies (kernels,
// training throughput; time to train is plausibility_ttt.cpp), and its most likely reading.
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
  std::vector<double> reported;
  for (const run* r : runs)
    if (const metric* m = r->find_metric("model_flops_per_token"); m && m->value > 0)
      reported.push_back(m->value);
  if (!reported.empty())
    return {median_of(reported),
            "reported by the run (accelbench train.llama: 6N + 12 L H Q T, PaLM appendix B)", false,
            ""};
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

} // namespace detail

} // namespace accelbench::report
