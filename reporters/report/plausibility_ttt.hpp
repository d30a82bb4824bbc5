#pragma once
// Model FLOPs per token from a Llama model's dimensions, and the implied model-FLOP utilisation
// of a published time-to-train result (MLPerf): the plausibility of figures that are minutes,
// not FLOP rates. Internal to the report (report.cpp) and its tests.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/score.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report {

struct token_flops {
  double value = 0;
  std::string formula;
  bool lower_bound = false;
  std::string missing; // why unknown
};

// Model FLOPs per token of training the Llama model with dimensions `dims` (harness/core's model
// catalogue, or a figure's extra.model read by read_model_dims) at sequence length `seq` (<= 0:
// unknown, attention left out, a lower bound), by model_dims::training_flops_per_token. `model`
// names it in the reason when `dims` is null or not countable.
token_flops token_flops_of_dims(const model_dims* dims, const std::string& model, int64_t seq);

// Below this share of the peak a published time to train is flagged as implausible as stated: a
// tuned submission at scale reaches tens of percent, so a figure this low more likely rests on a
// misread input (samples counted in batches, a wrong sequence length or accelerator count) than
// on the hardware. Kernels have no such floor (a small GEMM is legitimately far below the peak).
inline constexpr double k_min_ttt_utilisation_pct = 1.0;

// The runs a time-to-train score averages (its runs_used); without a score, every run that ran
// to its end and converged.
std::vector<const run*> ttt_score_runs(const std::vector<const run*>& runs, const ttt_score* score);

// The implied utilisation of a time-to-train figure over `runs` (those its score averages):
//   MFU = samples x T x F / (t x A x peak)
// samples trained until run_stop, T the sequence length, F the model FLOPs per token, t the
// runs' own minutes (before the score's scaling factor: it normalises convergence luck, not the
// work done), A the accelerators. The peak: the dtype the runs state, else the device's dense FP8
// peak (MLPerf logs state no precision; closed division leaves it to the submitter, and the LLM
// submissions of these rounds train their matmuls in FP8), else dense bf16. Flagged by the kernel
// figures' above-peak rule (harness/core/peak.hpp above_peak_reason) and, below
// k_min_ttt_utilisation_pct, as too low to be read as stated.
plausibility_check assess_ttt_plausibility(const side_score& s, const std::vector<const run*>& runs,
                                           const device_spec* dev, const model_catalogue& models);

// The formula with its numbers, as the page prints it.
std::string ttt_formula_text(const ttt_utilisation& u);

} // namespace accelbench::report
