#pragma once
// Seconds elapsed on the steady clock: the one reading of a wall-clock interval that the
// measurement loop, the trainers and the external runners share.
#include <chrono>

namespace accelbench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace accelbench
