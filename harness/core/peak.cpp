#include "harness/core/peak.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

namespace fs = std::filesystem;

json cpu_peak::to_json() const {
  json j = {{"fp32_tflops", fp32_tflops}, {"bf16_tflops", bf16_tflops},
            {"threads", threads},         {"isa", isa},
            {"cpu_model", cpu_model},     {"measured_at", measured_at}};
  // Unknown for an entry written before the load was recorded: absent, not a made-up 0.
  if (other_load >= 0) {
    j["other_processes_cpu_share"] = other_load;
    j["quiet"] = quiet();
  }
  return j;
}

namespace {

using clk = std::chrono::steady_clock;
constexpr int k_acc = 16; // independent accumulators: covers FMA latency x pipes on current cores

// Each probe runs `reps` blocks of k_acc independent FMAs and returns FLOPs done.
#if defined(__x86_64__)
// The sum of a vector's lanes through memory: _mm512_reduce_add_ps makes GCC 12 report a false
// -Wuninitialized inside its own header (the _mm512_undefined operand of the extract; GCC bug
// 105593), and the probe only needs the value kept alive.
__attribute__((target("avx512f"))) float lane_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (float x : lanes)
    s += x;
  return s;
}

__attribute__((target("avx512f"))) double probe_avx512_fp32(int64_t reps, float seed) {
  __m512 acc[k_acc];
  for (int i = 0; i < k_acc; ++i)
    acc[i] = _mm512_set1_ps(seed + (float)i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < reps; ++r)
    for (auto& x : acc)
      x = _mm512_fmadd_ps(x, a, b);
  __m512 s = acc[0];
  for (int i = 1; i < k_acc; ++i)
    s = _mm512_add_ps(s, acc[i]);
  volatile float sink = lane_sum(s);
  (void)sink;
  return (double)reps * k_acc * 16 * 2;
}

__attribute__((target("avx512f,avx512bf16"))) double probe_avx512_bf16(int64_t reps, float seed) {
  __m512 acc[k_acc];
  for (int i = 0; i < k_acc; ++i)
    acc[i] = _mm512_set1_ps(seed + (float)i);
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); // bf16 1.0
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3380); // bf16 ~6e-8
  for (int64_t r = 0; r < reps; ++r)
    for (auto& x : acc)
      x = _mm512_dpbf16_ps(x, a, b);
  __m512 s = acc[0];
  for (int i = 1; i < k_acc; ++i)
    s = _mm512_add_ps(s, acc[i]);
  volatile float sink = lane_sum(s);
  (void)sink;
  // vdpbf16ps: 16 lanes x 2 products x (multiply + add) = 64 FLOP per instruction.
  return (double)reps * k_acc * 64;
}

__attribute__((target("avx2,fma"))) double probe_avx2_fp32(int64_t reps, float seed) {
  __m256 acc[k_acc];
  for (int i = 0; i < k_acc; ++i)
    acc[i] = _mm256_set1_ps(seed + (float)i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < reps; ++r)
    for (auto& x : acc)
      x = _mm256_fmadd_ps(x, a, b);
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < k_acc; ++i)
    s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  volatile float sink = out[0];
  (void)sink;
  return (double)reps * k_acc * 8 * 2;
}
#endif

double probe_scalar_fp32(int64_t reps, float seed) {
  float acc[k_acc];
  for (int i = 0; i < k_acc; ++i)
    acc[i] = seed + (float)i;
  for (int64_t r = 0; r < reps; ++r)
    for (float& x : acc)
      x = x * 0.999999f + 1e-7f;
  volatile float sink = acc[0];
  (void)sink;
  return (double)reps * k_acc * 2;
}

// Runs `probe` on `threads` threads at once for about `seconds`; returns the best aggregate
// TFLOP/s of three rounds (the peak is a capability, so the best round is the honest estimate).
double run_probe(double (*probe)(int64_t, float), int threads, double seconds) {
  // Calibrate the block size on one thread.
  int64_t reps = 1 << 14;
  for (;;) {
    auto t0 = clk::now();
    probe(reps, 1.0f);
    double dt = std::chrono::duration<double>(clk::now() - t0).count();
    if (dt > 0.01)
      break;
    reps *= 2;
  }
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<double> flops(threads, 0), secs(threads, 0);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    std::atomic<int> ready{0};
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        ready++;
        while (ready.load() < threads) {
        }
        auto t0 = clk::now();
        double f = 0;
        double el = 0;
        do {
          f += probe(reps, 1.0f + (float)t);
          el = std::chrono::duration<double>(clk::now() - t0).count();
        } while (el < seconds / 3);
        flops[t] = f;
        secs[t] = el;
      });
    for (auto& th : pool)
      th.join();
    double total = 0;
    for (int t = 0; t < threads; ++t)
      total += flops[t] / secs[t];
    best = std::max(best, total / 1e12);
  }
  return best;
}

fs::path cache_file() {
  if (const char* d = std::getenv("ACCELBENCH_CACHE_DIR"); d && *d)
    return fs::path(d) / "peak.json";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "accelbench" / "peak.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "accelbench" / "peak.json";
  return fs::temp_directory_path() / "accelbench-peak.json";
}

// The probe of the best instruction set this CPU has, into `p` (threads and identity set).
void probe_rates(cpu_peak& p) {
  const auto f = detect_cpu_features();
#if defined(__x86_64__)
  if (f.avx512f) {
    p.isa = "avx512";
    p.fp32_tflops = run_probe(probe_avx512_fp32, p.threads, 0.6);
    if (f.avx512bf16)
      p.bf16_tflops = run_probe(probe_avx512_bf16, p.threads, 0.6);
    return;
  }
  if (f.avx2 && f.fma) {
    p.isa = "avx2";
    p.fp32_tflops = run_probe(probe_avx2_fp32, p.threads, 0.6);
    return;
  }
#else
  (void)f;
#endif
  p.isa = "scalar";
  p.fp32_tflops = run_probe(probe_scalar_fp32, p.threads, 0.6);
}

bool usable_rate(double v) { return std::isfinite(v) && v > 0; }

// The cache's entry for this CPU, or nullopt (none, another CPU or core count, unreadable: a
// corrupt cache is probed again and rewritten).
std::optional<cpu_peak> read_entry(const peak_cache& c) {
  std::error_code ec;
  if (!fs::is_regular_file(c.file, ec))
    return std::nullopt;
  try {
    // Bounded like any outside file: the cache is in the user's home and may be anything.
    json j = parse_json_lenient(read_input_file(c.file, "peak cache"));
    if (!j.is_object() || j.value("cpu_model", "") != c.cpu_model ||
        j.value("threads", 0) != c.threads || !usable_rate(j.value("fp32_tflops", 0.0)))
      return std::nullopt;
    cpu_peak p;
    p.fp32_tflops = j["fp32_tflops"];
    p.bf16_tflops = std::max(0.0, j.value("bf16_tflops", 0.0));
    p.threads = c.threads;
    p.isa = j.value("isa", "");
    p.cpu_model = c.cpu_model;
    p.measured_at = j.value("measured_at", "");
    p.other_load = j.value("other_processes_cpu_share", -1.0);
    return p;
  } catch (...) {
    return std::nullopt;
  }
}

// Through a temporary file and a rename: a reader sees the old entry or the new one, never half.
void write_entry(const fs::path& file, const cpu_peak& p) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  fs::path tmp = file;
  tmp += fmt::format(".tmp{}", (long)getpid());
  if (std::ofstream out(tmp); out) {
    out << dump_json(p.to_json(), 2) << "\n";
    out.close();
    fs::rename(tmp, file, ec);
  }
  if (ec)
    fs::remove(tmp, ec);
}

peak_cache machine_cache() {
  const json env = capture_environment();
  return {cache_file(), env["cpu"]["model"].get<std::string>(),
          env["cpu"]["logical_cores"].get<int>(), [](int t) { return measure_cpu_peak(t); }};
}

std::mutex g_peak_mutex;
std::optional<cpu_peak> g_peak; // this process's peak: the highest it has seen
bool g_reprobed_after_beaten = false;

} // namespace

bool cpu_peak::quiet() const { return other_load >= 0 && other_load <= k_probe_max_other_load; }

cpu_peak measure_cpu_peak(int threads, const std::function<machine_state()>& read_state) {
  cpu_peak p;
  p.threads = threads > 0 ? threads : (int)std::max(1u, std::thread::hardware_concurrency());
  p.cpu_model = capture_environment()["cpu"]["model"].get<std::string>();
  p.measured_at = now_iso8601();
  const machine_state before = read_state();
  probe_rates(p);
  p.other_load = other_load(before, read_state());
  return p;
}

cpu_peak highest_of(const cpu_peak& a, const cpu_peak& b) {
  cpu_peak out = b.fp32_tflops > a.fp32_tflops ? b : a;
  out.bf16_tflops = std::max(a.bf16_tflops, b.bf16_tflops);
  return out;
}

cpu_peak resolve_cpu_peak(const peak_cache& c, probe_when when,
                          const std::optional<cpu_peak>& known) {
  std::optional<cpu_peak> cached = read_entry(c);
  // Only quiet probes are kept: an entry without a recorded load may be the one loaded probe that
  // would otherwise judge every later run.
  if (cached && !cached->quiet())
    cached.reset();
  cpu_peak out;
  if (cached && when == probe_when::if_unknown) {
    out = *cached;
  } else {
    cpu_peak probe = c.probe(c.threads);
    if (probe.quiet() && usable_rate(probe.fp32_tflops))
      write_entry(c.file, cached ? highest_of(*cached, probe) : probe);
    out = cached ? highest_of(*cached, probe) : probe;
  }
  return known ? highest_of(*known, out) : out;
}

cpu_peak cached_cpu_peak(bool remeasure) {
  std::lock_guard lock(g_peak_mutex);
  if (g_peak && !remeasure)
    return *g_peak;
  g_peak = resolve_cpu_peak(machine_cache(), remeasure ? probe_when::again : probe_when::if_unknown,
                            g_peak);
  return *g_peak;
}

cpu_peak cpu_peak_after_beaten() {
  {
    std::lock_guard lock(g_peak_mutex);
    if (g_reprobed_after_beaten && g_peak)
      return *g_peak;
    g_reprobed_after_beaten = true;
  }
  return cached_cpu_peak(true);
}

double peak_tflops_for(const cpu_peak& p, const std::string& dtype) {
  if (dtype == "bf16" && p.bf16_tflops > 0)
    return p.bf16_tflops;
  return p.fp32_tflops;
}

std::string above_peak_reason(double tflops, double peak_tflops, const std::string& peak_what) {
  if (!(peak_tflops > 0) || !std::isfinite(peak_tflops) || std::isnan(tflops))
    return {};
  if (tflops <= peak_tflops * (1 + k_peak_margin))
    return {};
  return fmt::format(
      "{:.4g} TFLOP/s is {:.0f}% of the {:.4g} TFLOP/s peak ({}): more than {:.0f}% above the "
      "peak, which no clock variation explains",
      tflops, 100 * tflops / peak_tflops, peak_tflops, peak_what, 100 * k_peak_margin);
}

} // namespace accelbench
