// The plugin interface's overhead per sample: the example SAXPY plugin (examples/plugin), loaded
// and called through workloads/plugin as `accelbench run --plugin` does, against the identical
// kernel code (saxpy_kernel.c) linked into this program, both measured by harness/measure's
// run_kernel under the same settings, interleaved round by round in this one process. Prints the
// median time per iteration of each and the ratio plugin / built in (the aim: within 1%).
//
//   ./bench/plugin/accelbench_bench_plugin [--rounds R] [--plugin PATH]
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "examples/plugin/saxpy_kernel.h"
#include "harness/core/stats.hpp"
#include "harness/measure/measure.hpp"
#include "workloads/plugin/plugin_kernel.hpp"
#include "workloads/plugin/plugin_loader.hpp"

using namespace accelbench;

namespace {

// The kernel linked in: what a built-in SAXPY would run, on buffers allocated as the plugin
// allocates its own (malloc, malloc, calloc: the same alignments) and filled with values of the
// same range.
class direct_saxpy : public measure::kernel {
public:
  explicit direct_saxpy(int64_t n)
      : m_n(n), m_x(alloc(n, false)), m_y(alloc(n, false)), m_z(alloc(n, true)) {
    for (int64_t i = 0; i < n; ++i) {
      m_x.get()[i] = float(i % 1000) / 1000 - 0.5f;
      m_y.get()[i] = float((i * 7) % 1000) / 1000 - 0.5f;
    }
  }
  void run() override { example_saxpy(m_n, 2.5f, m_x.get(), m_y.get(), m_z.get()); }

private:
  using buffer = std::unique_ptr<float[], void (*)(void*)>;
  static buffer alloc(int64_t n, bool zero) {
    const size_t bytes = size_t(n) * sizeof(float);
    auto* p =
        static_cast<float*>(zero ? std::calloc(size_t(n), sizeof(float)) : std::malloc(bytes));
    if (!p)
      throw std::bad_alloc();
    return {p, std::free};
  }
  int64_t m_n;
  buffer m_x, m_y, m_z;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double median_time(const measure::result& r) {
  std::vector<double> v;
  for (const auto& s : r.samples)
    v.push_back(s.value);
  return median(v);
}

struct side_by_side {
  double plugin_s = 0, direct_s = 0; // medians over the rounds
  double ratio = 0;                  // median over the rounds of plugin / built in
  double aa_ratio = 0; // the same for a second built-in instance: the noise floor (A/A)
};

// Rounds of the three kernels in rotating order; each kernel's median sample time per round.
std::vector<std::vector<double>> rounds_of(std::vector<measure::kernel*> ks, int rounds) {
  measurement_settings m;
  m.repetitions = 9;
  m.min_time_s = 0.02;
  std::vector<std::vector<double>> t(ks.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < ks.size(); ++j) {
      const size_t i = (j + size_t(r)) % ks.size();
      t[i].push_back(median_time(measure::run_kernel("k", *ks[i], m)));
    }
  return t;
}

side_by_side compare_at(const plugin::loaded_plugin& p, int64_t n, int rounds) {
  const std::string nv = std::to_string(n);
  const char* names[] = {"a", "n"};
  const char* values[] = {"2.5", nv.c_str()};
  const accelbench_plugin_config cfg{2, names, values};
  char err[256] = {};
  void* state = p.api->setup(&cfg, 1, err, sizeof err);
  if (!state)
    throw std::runtime_error(std::string("plugin setup: ") + err);
  plugin::run_status_text status;
  plugin::plugin_kernel loaded(*p.api, state, status);
  direct_saxpy direct(n), direct_again(n);
  const auto t = rounds_of({&loaded, &direct, &direct_again}, rounds);
  p.api->teardown(state);
  if (!status.error.empty())
    throw std::runtime_error("plugin run: " + status.error);
  std::vector<double> ratios, aa;
  for (size_t r = 0; r < t[0].size(); ++r) {
    ratios.push_back(t[0][r] / t[1][r]);
    aa.push_back(t[2][r] / t[1][r]);
  }
  return {median(t[0]), median(t[1]), median(ratios), median(aa)};
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  std::string path = ACCELBENCH_EXAMPLE_PLUGIN;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--plugin"))
      path = argv[i + 1];
  }
  const plugin::loaded_plugin p = plugin::load_plugin(path);
  std::cout << fmt::format("plugin {} ({}), {} rounds of 9 samples each, hot cache; ratios: "
                           "medians of per-round ratios\n",
                           p.api->name, p.path, rounds);
  std::cout << fmt::format("{:>10}  {:>14}  {:>15}  {:>8}  {:>8}\n", "n", "plugin s/iter",
                           "built-in s/iter", "ratio", "A/A");
  for (int64_t n : {256, 4096, 65536, 1048576}) {
    const side_by_side s = compare_at(p, n, rounds);
    std::cout << fmt::format("{:>10}  {:>14.4e}  {:>15.4e}  {:>8.4f}  {:>8.4f}\n", n, s.plugin_s,
                             s.direct_s, s.ratio, s.aa_ratio);
  }
  return 0;
}
