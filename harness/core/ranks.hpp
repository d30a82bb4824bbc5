#pragma once
// Facts about the ranks of a multi-process run (harness/dist) that need no MPI: how rank 0's plan
// and another rank's differ, and what the per-rank sample times say about rank skew.
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

// The first setting in which `mine` differs from `root` (both JSON documents of the same shape),
// as "PATH: rank 0 has X, rank R has Y"; empty when they are equal. PATH is a JSON pointer
// ("/runs/0/values/bytes").
std::string first_difference(const json& root, const json& mine, int my_rank);

// A rank that was the slowest in at least this share of the samples (and at least
// k_min_samples_for_slow_rank of them), with a median time at least k_slow_rank_min_pct above the
// fastest rank's, is named as consistently slow.
inline constexpr double k_slow_rank_share = 0.75;
inline constexpr size_t k_min_samples_for_slow_rank = 5;
inline constexpr double k_slow_rank_min_pct = 1.0;

// The spread of per-rank times from the samples' extra["rank_s"] (seconds per iteration on each
// rank): world_size, median_s per rank, spread_pct ((slowest − fastest rank median) / fastest),
// slowest_rank, slowest_share (share of samples in which it was the slowest), and
// consistently_slow_rank (the rank, or null). Null when no sample has per-rank times.
json summarize_rank_times(const std::vector<sample>& samples);

} // namespace accelbench
