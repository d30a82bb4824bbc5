#pragma once
// Runs made up in memory, for the tests and benches that store, compare or parse them: one home
// for the shape of a gemm run on the cpu backend and for filling a run's samples.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/model.hpp"

namespace test_support {

using config_values = std::map<std::string, std::string>;

// gemm's M x N x K in fp32.
inline config_values gemm_fp32(const std::string& m, const std::string& n, const std::string& k) {
  return {{"M", m}, {"N", n}, {"K", k}, {"dtype", "fp32"}};
}

// gemm's M x 1024 x 1024 in fp32 through oneDNN, untransposed: the config the harness measures.
inline config_values gemm_onednn(const std::string& m) {
  config_values v = gemm_fp32(m, "1024", "1024");
  v.insert({{"library", "onednn"}, {"trans_a", "0"}, {"trans_b", "0"}});
  return v;
}

// A run of gemm on the cpu backend under ruleset kernel-v1 on `system`, with a fresh uuid and no
// samples yet.
inline accelbench::run gemm_run(config_values values, const std::string& system) {
  accelbench::run r;
  r.uuid = accelbench::new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = std::move(values);
  r.system = system;
  r.ruleset = "kernel-v1";
  return r;
}

// One sample per value, indexed in order, of one iteration each.
inline void add_samples(accelbench::run& r, const std::vector<double>& values) {
  r.samples.reserve(r.samples.size() + values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    accelbench::sample s;
    s.index = static_cast<int64_t>(i);
    s.value = values[i];
    r.samples.push_back(s);
  }
}

// `n` samples of 100 iterations rising 1% a step from 1 ms: a plausible run's worth of timings.
inline void add_rising_samples(accelbench::run& r, int n) {
  r.samples.reserve(r.samples.size() + static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    r.samples.push_back({i, 1e-3 * (1 + 0.01 * i), 100, nlohmann::json::object()});
}

} // namespace test_support
