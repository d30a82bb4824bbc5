// Figures for accelbench::compare, not a pass/fail test:
//  1. compare_sets on two result sets of N configs x S samples (default 10,000 x 10; aim <= 1 s),
//     with the between-run t-test on every pair, and the time of each output format on the
//     result;
//  2. detect_change_points over P nightly points for K series (default 365 x 1,000), with the
//     whole series as one window and with 60-point windows.
// Usage: accelbench_bench_compare [--configs N] [--samples S] [--points P] [--series K]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "bench/support/seconds.hpp"
#include "harness/compare/changepoint.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/stats.hpp"
#include "reporters/compare/formats.hpp"

using namespace accelbench;
using bench::clock_type;
using bench::seconds_since;

namespace {

std::vector<run> make_set(size_t configs, size_t samples, uint64_t seed, bool candidate) {
  stats::rng g(seed);
  std::vector<run> out(configs);
  for (size_t i = 0; i < configs; ++i) {
    run& r = out[i];
    r.cfg.workload = i % 3 == 0 ? "attention" : "gemm";
    r.cfg.backend = "cpu";
    r.cfg.values = {{"M", std::to_string(64 + i)}, {"N", "1024"}, {"K", "1024"}, {"dtype", "fp32"}};
    r.ruleset = "kernel-v1";
    r.fingerprint = "0123456789abcdef";
    // 1 in 100 configs regresses by 10% in the candidate; 3% noise everywhere.
    const double centre =
        1e-3 * (1 + static_cast<double>(i % 7)) * (candidate && i % 100 == 0 ? 1.1 : 1.0);
    for (size_t k = 0; k < samples; ++k) {
      sample s;
      s.index = static_cast<int64_t>(k);
      s.value = centre * (1 + 0.03 * g.normal());
      r.samples.push_back(s);
    }
  }
  return out;
}

} // namespace

namespace {

int run_bench(int argc, char** argv) {
  size_t configs = 10000, samples = 10, points = 365, series = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (a == "--configs")
      configs = static_cast<size_t>(v);
    else if (a == "--samples")
      samples = static_cast<size_t>(v);
    else if (a == "--points")
      points = static_cast<size_t>(v);
    else if (a == "--series")
      series = static_cast<size_t>(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }

  // 1. Result-set comparison.
  const auto base = make_set(configs, samples, 1, false),
             cand = make_set(configs, samples, 2, true);
  compare::set_options opt;
  auto t0 = clock_type::now();
  const auto result = compare::compare_sets(base, cand, opt);
  const double t_compare = seconds_since(t0);
  std::printf("compare_sets: %zu configs x %zu samples: %.3f s "
              "(%zu regressed, %zu inconclusive, %zu improved, %zu unchanged)\n",
              configs, samples, t_compare, result.count(compare::verdict::regressed),
              result.count(compare::verdict::inconclusive),
              result.count(compare::verdict::improved), result.count(compare::verdict::unchanged));
  struct fmt_case {
    const char* name;
    std::string (*fn)(const compare::set_comparison&);
  };
  const fmt_case formats[] = {
      {"markdown", [](const compare::set_comparison& c) { return compare::format_markdown(c); }},
      {"junit", [](const compare::set_comparison& c) { return compare::format_junit(c); }},
      {"json", [](const compare::set_comparison& c) { return compare::format_json(c); }},
      {"bmf", [](const compare::set_comparison& c) { return compare::format_bmf(c); }},
      {"terminal", [](const compare::set_comparison& c) { return compare::format_terminal(c); }},
  };
  for (const auto& f : formats) {
    t0 = clock_type::now();
    const size_t bytes = f.fn(result).size();
    std::printf("  format %-8s: %.3f s (%zu bytes)\n", f.name, seconds_since(t0), bytes);
  }

  // 2. Change-point detection: each series has a 10% step at a random night.
  stats::rng g(3);
  std::vector<std::vector<double>> all(series, std::vector<double>(points));
  for (auto& s : all) {
    const size_t step = points / 4 + g.below(points / 2);
    for (size_t i = 0; i < points; ++i)
      s[i] = (i >= step ? 1.1 : 1.0) * (1 + 0.03 * g.normal());
  }
  for (size_t window : {size_t(0), size_t(60)}) {
    compare::changepoint_options o;
    o.window = window;
    size_t found = 0;
    t0 = clock_type::now();
    for (const auto& s : all)
      found += compare::detect_change_points(s, o).size();
    std::printf("detect_change_points: %zu series x %zu points, window %zu: %.3f s "
                "(%zu change points)\n",
                series, points, window, seconds_since(t0), found);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accelbench_bench_compare: %s\n", e.what());
    return 1;
  }
}
