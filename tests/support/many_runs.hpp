#pragma once
// A results document of many small gemm runs, for the tests that import thousands of runs and
// then delete, gc or export them.
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace test_cli {

// `n` gemm runs started on 2020-01-01 (uuids 0..n-1, config M = i + 1), each with two samples, a
// metric and the tag "bulk", written as DIR/many.json; returns the path.
inline std::string many_runs_file(const std::string& dir, int n) {
  using nlohmann::json;
  json runs = json::array();
  for (int i = 0; i < n; ++i)
    runs.push_back(
        {{"uuid", fmt::format("00000000-0000-4000-8000-{:012d}", i)},
         {"workload", "gemm"},
         {"backend", "cpu"},
         {"config", {{"M", i + 1}}},
         {"system", "box"},
         {"ruleset", "kernel-v1"},
         {"status", "ok"},
         {"validity", "VALID"},
         {"started_at", "2020-01-01T00:00:00.000Z"},
         {"finished_at", "2020-01-01T00:00:01.000Z"},
         {"samples",
          {{{"index", 0}, {"value", 1e-3}, {"iterations", 1}},
           {{"index", 1}, {"value", 1.1e-3}, {"iterations", 1}}}},
         {"metrics",
          {{{"name", "tflops"}, {"value", 1.0}, {"unit", "TFLOP/s"}, {"direction", "higher"}}}},
         {"tags", {"bulk"}}});
  json doc = {{"schema_version", 1},
              {"generator", {{"name", "accelbench"}, {"version", "0"}}},
              {"runs", std::move(runs)}};
  const std::string path = dir + "/many.json";
  std::ofstream(path) << doc.dump();
  return path;
}

} // namespace test_cli
