#pragma once
// The one clock the benches time with.
#include <chrono>

namespace bench {

using clock_type = std::chrono::steady_clock;

// Seconds from `t0` until now.
inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

} // namespace bench
