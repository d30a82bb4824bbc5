// The plugin interface's overhead per sample: the example SAXPY plugin (examples/plugin), loaded
// and called through workloads/plugin, against the identical kernel code (saxpy_kernel.c) linked
// into this program, all measured by harness/measure's run_kernel under the same settings,
// interleaved round by round in this one process. Four sides:
//   worker     the plugin measured in a worker process, as `accelbench run --plugin` does
//              (plugin_worker: forked, its state set up there, its samples sent back as JSON)
//   plugin     the same plugin measured in this process (the path before the worker)
//   built-in   the kernel linked in; and a second built-in instance for the A/B noise floor (A/A)
// Prints the median time per iteration of each, the ratios worker / plugin (the worker's
// per-sample overhead: the aim is within the A/A noise) and plugin / built in (the interface's),
// and what one worker costs per run outside its samples (fork, the run's JSON, the wait).
//
//   ./bench/plugin/accelbench_bench_plugin [--rounds R] [--plugin PATH]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "examples/plugin/saxpy_kernel.h"
#include "harness/core/stats.hpp"
#include "harness/measure/measure.hpp"
#include "workloads/plugin/plugin_kernel.hpp"
#include "workloads/plugin/plugin_loader.hpp"
#include "workloads/plugin/plugin_worker.hpp"

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

double median_time(const std::vector<sample>& samples) {
  std::vector<double> v;
  v.reserve(samples.size());
  for (const auto& s : samples)
    v.push_back(s.value);
  return median(v);
}

measurement_settings bench_settings() {
  measurement_settings m;
  m.repetitions = 9;
  m.min_time_s = 0.02;
  return m;
}

// One measurement of a side: its median seconds per iteration.
using side = std::function<double()>;

side in_process(measure::kernel& k) {
  return [&k] { return median_time(measure::run_kernel("k", k, bench_settings()).samples); };
}

// The plugin's state for `n` elements (a = 2.5, seed 1); throws when its setup fails.
struct plugin_state {
  plugin_state(const plugin::loaded_plugin& p, int64_t n) : api(*p.api), nv(std::to_string(n)) {
    const char* names[] = {"a", "n"};
    const char* values[] = {"2.5", nv.c_str()};
    const accelbench_plugin_config cfg{2, names, values};
    char err[256] = {};
    state = api.setup(&cfg, 1, err, sizeof err);
    if (!state)
      throw std::runtime_error(std::string("plugin setup: ") + err);
  }
  ~plugin_state() { api.teardown(state); }
  plugin_state(const plugin_state&) = delete;
  plugin_state& operator=(const plugin_state&) = delete;
  const accelbench_plugin_v1& api;
  std::string nv;
  void* state = nullptr;
};

// The plugin in a worker, as accelbench runs it: set up, measured and torn down there.
side in_worker(const plugin::loaded_plugin& p, int64_t n) {
  return [&p, n] {
    run r;
    r.uuid = new_uuid();
    plugin::run_in_worker(r,
                          [&p, n](run& w) {
                            plugin_state s(p, n);
                            plugin::plugin_kernel k(*p.api, s.state);
                            w.samples = measure::run_kernel("k", k, bench_settings()).samples;
                          },
                          {});
    if (r.status != run_status::ok)
      throw std::runtime_error("worker: " + r.status_reason);
    return median_time(r.samples);
  };
}

struct side_by_side {
  double worker_s = 0, plugin_s = 0, direct_s = 0; // medians over the rounds
  double worker_ratio = 0; // median over the rounds of worker / plugin in process
  double ratio = 0;        // median over the rounds of plugin / built in
  double aa_ratio = 0;     // the same for a second built-in instance: the noise floor (A/A)
};

// Rounds of the sides in rotating order; each side's median sample time per round.
std::vector<std::vector<double>> rounds_of(const std::vector<side>& sides, int rounds) {
  std::vector<std::vector<double>> t(sides.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < sides.size(); ++j) {
      const size_t i = (j + size_t(r)) % sides.size();
      t[i].push_back(sides[i]());
    }
  return t;
}

// Median over the rounds of a / b.
double ratio_of(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  r.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    r.push_back(a[i] / b[i]);
  return median(r);
}

side_by_side compare_at(const plugin::loaded_plugin& p, int64_t n, int rounds) {
  plugin_state s(p, n);
  plugin::plugin_kernel loaded(*p.api, s.state);
  direct_saxpy direct(n), direct_again(n);
  const auto t = rounds_of(
      {in_worker(p, n), in_process(loaded), in_process(direct), in_process(direct_again)}, rounds);
  return {median(t[0]),         median(t[1]),         median(t[2]),
          ratio_of(t[0], t[1]), ratio_of(t[1], t[2]), ratio_of(t[3], t[2])};
}

// What one worker costs outside its samples: fork, the run's JSON and the wait, for a measurement
// that does nothing (median of `count`, milliseconds).
double worker_cost_ms(int count) {
  std::vector<double> ms;
  ms.reserve(size_t(count));
  for (int i = 0; i < count; ++i) {
    run r;
    r.uuid = new_uuid();
    const auto t0 = std::chrono::steady_clock::now();
    plugin::run_in_worker(r, [](run&) {}, {});
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
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
  std::cout << fmt::format("{:>10}  {:>11}  {:>11}  {:>11}  {:>13}  {:>15}  {:>7}\n", "n",
                           "worker s/it", "plugin s/it", "built-in", "worker/plugin",
                           "plugin/built-in", "A/A");
  for (int64_t n : {256, 4096, 65536, 1048576}) {
    const side_by_side s = compare_at(p, n, rounds);
    std::cout << fmt::format(
        "{:>10}  {:>11.4e}  {:>11.4e}  {:>11.4e}  {:>13.4f}  {:>15.4f}  {:>7.4f}\n", n, s.worker_s,
        s.plugin_s, s.direct_s, s.worker_ratio, s.ratio, s.aa_ratio);
  }
  std::cout << fmt::format("one worker outside its samples (fork, JSON, wait): {:.2f} ms per run "
                           "(median of 50)\n",
                           worker_cost_ms(50));
  return 0;
}
