#pragma once
// What every backend of the collective workload provides: one collective per run() on this
// rank's buffers (timed by harness/measure), the output for the check, and a reset of the inputs.
#include <string>

#include "harness/measure/measure.hpp"

namespace accelbench::collective {

class collective_kernel : public measure::kernel {
public:
  // Output of the last collective on this rank, on the host: recv_count() elements.
  virtual const void* output() = 0;
  // Refills the inputs and clears the outputs, for the checked run after the timed ones.
  virtual void reset() = 0;
  virtual std::string implementation() const = 0;
};

} // namespace accelbench::collective
