#include "importers/mlperf/time_to_train.hpp"

#include <fmt/format.h>

namespace accelbench::mlperf {

std::pair<const mllog::event*, const mllog::event*> timed_span(const mllog::parsed_log& log) {
  // The Python's loop: each key overwrites its end until both are set, so a run_stop logged
  // before every run_start pairs with the run_start after it.
  const mllog::event* start = nullptr;
  const mllog::event* stop = nullptr;
  for (const mllog::event& e : log.events) {
    if (e.key == "run_start")
      start = &e;
    if (e.key == "run_stop")
      stop = &e;
    if (start && stop)
      break;
  }
  return {start, stop};
}

std::string implausible_duration(double minutes) {
  if (minutes <= 0)
    return fmt::format("run_stop is {:.4g} min after run_start: a time to train must be more "
                       "than 0",
                       minutes);
  if (minutes >= k_max_train_minutes)
    return fmt::format("run_stop is {:.4g} min after run_start: a time to train must be less "
                       "than a year ({:g} min)",
                       minutes, k_max_train_minutes);
  return {};
}

double span_minutes(const mllog::event& start, const mllog::event& stop) {
  return static_cast<double>(stop.time_ms - start.time_ms) / 60000.0;
}

} // namespace accelbench::mlperf
