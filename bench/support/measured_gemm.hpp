#pragma once
// The run the store, harness and server benches write: one home for its shape, so their figures
// stay comparable.
#include <string>

#include "harness/core/model.hpp"
#include "tests/support/synthetic_run.hpp"

namespace bench {

// A gemm run (M x 1024 x 1024 through oneDNN) on `system` measured now in `env`: `samples` rising
// samples and its tflops and time metrics.
inline accelbench::run measured_gemm(const std::string& m, const std::string& system, int samples,
                                     const accelbench::json& env) {
  using accelbench::direction;
  accelbench::run r = test_support::gemm_run(test_support::gemm_onednn(m), system);
  r.environment = env;
  r.started_at = r.finished_at = accelbench::now_iso8601();
  test_support::add_rising_samples(r, samples);
  r.add_metric("tflops", 1.0, "TFLOP/s", direction::higher_is_better);
  r.add_metric("time", 1e-3, "s", direction::lower_is_better);
  return r;
}

} // namespace bench
