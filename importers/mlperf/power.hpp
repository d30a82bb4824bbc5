#pragma once
// Energy of MLPerf Training runs from the power logs a submission publishes, computed as MLCommons'
// result summarizer does (mlperf_logging/result_summarizer/result_summarizer.py: _has_power,
// _compute_total_power, _compute_power_node, _compute_power_sw, _index_olympic_average). Layout
// (mlperf_logging/mllog/examples/power/README.md):
//   <system>/<benchmark>/power/result_<i>/node_<k>.txt   power_measurement_start, power_reading
//                                                        (W) ..., power_measurement_stop,
//                                                        conversion_eff
//   <system>/<benchmark>/power/result_<i>/sw_<k>.txt     interconnect_power_est (W), conversion_eff
// Node file: conversion_eff x sum(reading_j x (t_j - t_(j-1))) x time_to_train / (stop - start),
// readings after the start and before the stop (no stop: the last reading), times in ms, / 1000
// for joules. Switch file: conversion_eff x estimate x time_to_train / 1000. A run's energy is the
// sum over its files; a benchmark's is the mean over the runs its time score averages (the olympic
// selection), times the scaling factor.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/mllog.hpp"
#include "harness/core/model.hpp"
#include "importers/mlperf/score.hpp"

namespace accelbench::mlperf {

// Joules of one node log over a run of `time_to_train_ms`; nullopt (with `why`) when the log has
// no power_measurement_start, a non-numeric reading, or a measurement of zero length.
std::optional<double> node_energy_j(const mllog::parsed_log& log, double time_to_train_ms,
                                    std::string* why = nullptr);
// Joules of one switch (interconnect) log: its first interconnect_power_est over the run.
double switch_energy_j(const mllog::parsed_log& log, double time_to_train_ms);

struct run_energy {
  double joules = 0;
  size_t node_files = 0, switch_files = 0;
};

// The energy of result `result_stem` ("result_3") from <benchmark_dir>/power/<result_stem>/.
// nullopt when that folder is absent; also when its logs cannot be used, with a diagnostic.
std::optional<run_energy> read_run_energy(const std::filesystem::path& benchmark_dir,
                                          const std::string& result_stem, double time_to_train_ms,
                                          std::vector<mllog::diagnostic>& diags);

// Adds the metric energy_j and extra.energy to an ingested run when its benchmark folder has a
// power/ folder (diagnostics appended when the run's power logs are missing or unusable).
void attach_energy(run& r, const std::filesystem::path& benchmark_dir,
                   const std::string& result_stem, std::vector<mllog::diagnostic>& diags);

// The benchmark's energy (joules per training run) as the result summarizer scores it: the mean
// of energy_j over the runs `s` averages, times its scaling factor. nullopt when the score is
// invalid or one of those runs has no energy.
std::optional<double> energy_score_j(const std::vector<run>& runs, const score_result& s);

} // namespace accelbench::mlperf
