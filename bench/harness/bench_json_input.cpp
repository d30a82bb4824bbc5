// What the rules of outside JSON cost (harness/core/text_input.hpp parse_json_checked: the
// nesting scan, the NUL scan and the member count that finds a key given twice) beside
// nlohmann's plain parse of the same text, side by side in one process, rounds alternated:
// a results document of many runs (an export re-imported) and a stream of small protocol lines.
//
//   ./bench/harness/accelbench_bench_json_input [--runs N] [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace accelbench;
using clk = std::chrono::steady_clock;

namespace {

run synthetic_run(int samples, const json& env) {
  run r = test_support::gemm_run(test_support::gemm_fp32("1024", "1024", "1024"), "bench");
  r.environment = env;
  r.started_at = r.finished_at = now_iso8601();
  test_support::add_rising_samples(r, samples);
  r.add_metric("tflops", 1.0, "TFLOP/s", direction::higher_is_better);
  return r;
}

// Seconds to parse every text once with `parse`.
template <class F> double time_all(const std::vector<std::string>& texts, F&& parse) {
  const auto t0 = clk::now();
  size_t keep = 0;
  for (const auto& t : texts)
    keep += parse(t).size();
  const double s = std::chrono::duration<double>(clk::now() - t0).count();
  if (keep == 0)
    std::cerr << "(nothing parsed)\n";
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Plain parse, the depth scan then a parse (what parse_json_input did before it refused NUL bytes
// and keys given twice) and parse_json_input, alternated for `rounds` rounds: medians and ratios.
void compare(const std::string& what, const std::vector<std::string>& texts, int rounds) {
  std::vector<double> plain, scanned, checked;
  for (int r = 0; r < rounds; ++r) {
    plain.push_back(time_all(texts, [](const std::string& t) { return json::parse(t); }));
    scanned.push_back(time_all(texts, [](const std::string& t) {
      return json_nesting_depth(t) > k_max_json_depth ? json() : json::parse(t);
    }));
    checked.push_back(
        time_all(texts, [](const std::string& t) { return parse_json_input(t, "bench"); }));
  }
  size_t bytes = 0;
  for (const auto& t : texts)
    bytes += t.size();
  const double p = median(plain), b = median(scanned), c = median(checked);
  std::cout << fmt::format("{:<30} {:5.1f} MB  plain {:6.1f} ms  depth+parse {:6.1f} ms  checked "
                           "{:6.1f} ms  checked/plain {:.2f}  checked/depth+parse {:.2f}\n",
                           what, double(bytes) / 1e6, p * 1e3, b * 1e3, c * 1e3, c / p, c / b);
}

} // namespace

int main(int argc, char** argv) {
  int runs = 2000, rounds = 7;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atoi(argv[i + 1]);
  }
  const json env = capture_environment();
  std::vector<run> rs;
  rs.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i)
    rs.push_back(synthetic_run(50, env));
  const std::vector<std::string> doc = {
      dump_json(results_document(rs, json::array(), json::array()))};
  std::vector<std::string> lines(200000, R"({"sample": {"seconds": 0.000125, "items": 4096}})");
  std::cout << fmt::format("parse_json_input vs json::parse, median of {} alternated rounds\n",
                           rounds);
  compare(fmt::format("results document ({} runs)", runs), doc, rounds);
  compare("protocol lines (200,000)", lines, rounds);
  return 0;
}
