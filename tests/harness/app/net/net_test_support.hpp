#pragma once
// Shared set-up of the net tests: fast retry settings, a captured log, a token in a variable of
// the tests' own (never the user's ACCELBENCH_TOKEN), runs to publish.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "harness/app/net/http.hpp"
#include "harness/core/model.hpp"

namespace accelbench::testing {

inline constexpr const char* k_token_env = "ACCELBENCH_TEST_NET_TOKEN";
inline constexpr const char* k_token = "tok-S3CRET-7f3a9c1e-do-not-print";

// Loopback must never go through a proxy configured on the test machine.
inline void no_proxy_for_loopback() {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
}

struct captured_log {
  std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
  net::log_sink sink() const {
    auto l = lines;
    return [l](const std::string& line) { l->push_back(line); };
  }
  size_t count_containing(const std::string& what) const {
    size_t n = 0;
    for (const auto& l : *lines)
      n += l.find(what) != std::string::npos;
    return n;
  }
};

inline net::http_options fast_options(const captured_log& log) {
  no_proxy_for_loopback();
  ::setenv(k_token_env, k_token, 1);
  net::http_options o;
  o.token_env = k_token_env;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.total_timeout = std::chrono::milliseconds(5000);
  o.max_attempts = 4;
  o.backoff_initial = std::chrono::milliseconds(10);
  o.backoff_max = std::chrono::milliseconds(40);
  o.retry_after_max = std::chrono::milliseconds(5000);
  o.log = log.sink();
  return o;
}

inline run make_run(const std::string& system, int m) {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", std::to_string(m)}, {"N", "64"}, {"K", "64"}, {"dtype", "fp32"}};
  r.system = system;
  r.ruleset = "kernel-v1";
  r.started_at = now_iso8601();
  for (int i = 0; i < 3; ++i)
    r.samples.push_back({i, 1e-3 * (1 + i), 10, json::object()});
  r.add_metric("time", 2e-3, "s", direction::lower_is_better);
  return r;
}

} // namespace accelbench::testing
