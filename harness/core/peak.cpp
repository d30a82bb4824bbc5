#include "harness/core/peak.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "harness/core/amx.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

namespace fs = std::filesystem;

std::string peak_unit::name() const { return dtype + " (" + unit + ")"; }

double peak_unit::documented_tflops() const {
  if (!(flop_per_cycle_core > 0) || cores <= 0 || !(clock_ghz > 0))
    return 0;
  return flop_per_cycle_core * cores * clock_ghz / 1e3;
}

bool peak_unit::trustworthy() const {
  if (!std::isfinite(tflops) || tflops <= 0)
    return false;
  const double doc = documented_tflops();
  return !(doc > 0) || tflops <= doc * (1 + k_peak_margin);
}

json peak_unit::to_json() const {
  json j = {{"dtype", dtype}, {"unit", unit}, {"tflops", tflops}};
  if (clock_ghz > 0)
    j["clock_ghz"] = clock_ghz;
  if (cores > 0)
    j["cores"] = cores;
  if (flop_per_cycle_core > 0)
    j["flop_per_cycle_core"] = flop_per_cycle_core;
  if (const double doc = documented_tflops(); doc > 0)
    j["documented_tflops"] = doc;
  if (!note.empty())
    j["note"] = note;
  return j;
}

json cpu_peak::to_json() const {
  json j = {{"fp32_tflops", fp32_tflops}, {"bf16_tflops", bf16_tflops},
            {"threads", threads},         {"isa", isa},
            {"cpu_model", cpu_model},     {"measured_at", measured_at}};
  // Unknown for an entry written before the load was recorded: absent, not a made-up 0.
  if (other_load >= 0) {
    j["other_processes_cpu_share"] = other_load;
    j["quiet"] = quiet();
  }
  // The table and the AMX verdict: absent in entries written before them, which still read.
  if (!units.empty()) {
    j["units"] = json::array();
    for (const peak_unit& u : units)
      j["units"].push_back(u.to_json());
  }
  if (!amx.empty())
    j["amx"] = amx;
  if (!note.empty())
    j["note"] = note;
  return j;
}

const peak_unit* find_unit(const cpu_peak& p, const std::string& dtype, const std::string& unit) {
  for (const peak_unit& u : p.units)
    if (u.dtype == dtype && u.unit == unit)
      return &u;
  return nullptr;
}

const peak_unit* best_unit(const cpu_peak& p, const std::string& dtype) {
  const peak_unit* best = nullptr;
  for (const peak_unit& u : p.units)
    if (u.dtype == dtype && u.trustworthy() && (!best || u.tflops > best->tflops))
      best = &u;
  return best;
}

documented_rate documented_flop_per_cycle(const std::string& vendor, int family,
                                          const std::string& dtype, const std::string& unit) {
  // AMX: one TDPBF16PS / TDPFP16PS (16 x 16 x 32 x 2 = 16,384 FLOP) or TDPBUSD (twice the ops in
  // int8) per 16 cycles per core, Intel's documented throughput for the tile unit.
  if (unit == "amx")
    return {dtype == "int8" ? 2048.0 : 1024.0, ""};
  // AMD family 19h (Zen 3, Zen 4): two 256-bit FMA pipes (Zen 4 runs a 512-bit FMA as two
  // halves): 2 x 8 lanes x 2 FLOP; VDPBF16PS on the same two pipes, 2 x 8 lanes x 2 products x 2.
  if (vendor == "AuthenticAMD" && family == 0x19) {
    if (unit == "avx512 fma" || unit == "avx2 fma")
      return {32.0, ""};
    if (unit == "avx512_bf16")
      return {64.0, ""};
  }
  return {0, fmt::format("no documented figure: the {} pipes per core are not in CPUID and this "
                         "CPU ({} family {:#x}) is not in accelbench's table",
                         unit, vendor.empty() ? "unknown vendor" : vendor, family)};
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

// Accumulators apart by 1 from `seed`, so no two chains are the same value.
__attribute__((target("avx512f"))) void seed_accumulators(__m512 (&acc)[k_acc], float seed) {
  for (int i = 0; i < k_acc; ++i)
    acc[i] = _mm512_set1_ps(seed + (float)i);
}

// The accumulators' sum stored to a volatile, so the compiler must compute every chain.
__attribute__((target("avx512f"))) void sink_accumulators(const __m512 (&acc)[k_acc]) {
  __m512 s = acc[0];
  for (int i = 1; i < k_acc; ++i)
    s = _mm512_add_ps(s, acc[i]);
  volatile float sink = lane_sum(s);
  (void)sink;
}

__attribute__((target("avx512f"))) double probe_avx512_fp32(int64_t reps, float seed) {
  __m512 acc[k_acc];
  seed_accumulators(acc, seed);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < reps; ++r)
    for (auto& x : acc)
      x = _mm512_fmadd_ps(x, a, b);
  sink_accumulators(acc);
  return (double)reps * k_acc * 16 * 2;
}

__attribute__((target("avx512f,avx512bf16"))) double probe_avx512_bf16(int64_t reps, float seed) {
  __m512 acc[k_acc];
  seed_accumulators(acc, seed);
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); // bf16 1.0
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3380); // bf16 ~6e-8
  for (int64_t r = 0; r < reps; ++r)
    for (auto& x : acc)
      x = _mm512_dpbf16_ps(x, a, b);
  sink_accumulators(acc);
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

#if defined(__x86_64__)
// The core clock now, in GHz: a chain of dependent adds retires one add per cycle on every x86
// core, so cycles = adds. The best of three ~1 ms chains (an interrupt only makes one slower).
double measure_clock_ghz() {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    int64_t n = 100000;
    uint64_t x = 0;
    const auto t0 = clk::now();
    __asm__ volatile("1:\n\t.rept 16\n\tadd $1, %[x]\n\t.endr\n\tsub $1, %[n]\n\tjnz 1b"
                     : [x] "+r"(x), [n] "+r"(n)
                     :
                     : "cc");
    const double dt = std::chrono::duration<double>(clk::now() - t0).count();
    if (dt > 0)
      best = std::max(best, 16.0 * 100000 / dt / 1e9);
  }
  return best;
}
#else
double measure_clock_ghz() { return 0; }
#endif

struct probe_result {
  double tflops = 0;    // the best round, all threads
  double clock_ghz = 0; // thread 0's clock right after its part of that round
};

// Runs `probe` on `threads` threads at once for about `seconds`; returns the best aggregate
// TFLOP/s of three rounds (the peak is a capability, so the best round is the honest estimate).
probe_result run_probe(double (*probe)(int64_t, float), int threads, double seconds) {
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
  probe_result best;
  for (int round = 0; round < 3; ++round) {
    std::vector<double> flops(threads, 0), secs(threads, 0);
    double clock = 0;
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
        // While the other threads still run: the clock under the unit's load.
        if (t == 0)
          clock = measure_clock_ghz();
      });
    for (auto& th : pool)
      th.join();
    double total = 0;
    for (int t = 0; t < threads; ++t)
      total += flops[t] / secs[t];
    if (total / 1e12 > best.tflops)
      best = {total / 1e12, clock};
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

// CPUID's vendor and family (extended family added, as the manuals define it), for the table of
// documented rates.
struct cpu_identity {
  std::string vendor;
  int family = 0;
};

cpu_identity read_cpu_identity() {
  cpu_identity id;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char v[13] = {};
    std::memcpy(v, &b, 4);
    std::memcpy(v + 4, &d, 4);
    std::memcpy(v + 8, &c, 4);
    id.vendor = v;
  }
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    const int base = int((a >> 8) & 0xf);
    id.family = base == 0xf ? base + int((a >> 20) & 0xff) : base;
  }
#endif
  return id;
}

// Physical cores (distinct package and core ids): the documented figure is per core, and two SMT
// threads share one core's units. The logical count when the topology cannot be read.
int physical_cores(int logical) {
  std::set<std::string> seen;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() < 4 || n.rfind("cpu", 0) != 0 || !std::isdigit((unsigned char)n[3]))
      continue;
    std::ifstream pkg(e.path() / "topology/physical_package_id"),
        core(e.path() / "topology/core_id");
    std::string p, c;
    if (std::getline(pkg, p) && std::getline(core, c))
      seen.insert(p.append(":").append(c));
  }
  return seen.empty() ? logical : std::min<int>(logical, (int)seen.size());
}

// One row of the table: the probe's rate on every thread, the clock, and the documented figure.
peak_unit probe_unit(const std::string& dtype, const std::string& unit,
                     double (*probe)(int64_t, float), int threads, const cpu_identity& id) {
  peak_unit u;
  u.dtype = dtype;
  u.unit = unit;
  const probe_result r = run_probe(probe, threads, 0.6);
  u.tflops = r.tflops;
  u.clock_ghz = r.clock_ghz;
  u.cores = physical_cores(threads);
  const documented_rate doc = documented_flop_per_cycle(id.vendor, id.family, dtype, unit);
  u.flop_per_cycle_core = doc.flop_per_cycle_core;
  u.note = doc.why_not;
  if (doc.flop_per_cycle_core > 0 && !(r.clock_ghz > 0))
    u.note = "no documented figure: the clock could not be measured on this CPU";
  return u;
}

// The AMX rows, where detect_amx() allows the tiles; p.amx says which or why not.
void probe_amx_units(cpu_peak& p, const cpu_identity& id) {
  const amx_support& s = detect_amx();
  if (!s.usable()) {
    p.amx = "not available: " + s.why_not;
    return;
  }
  p.amx = fmt::format("available ({}{}{})", s.bf16 ? "bf16" : "", s.bf16 && s.int8 ? ", " : "",
                      s.int8 ? "int8" : "");
  if (s.bf16)
    p.units.push_back(probe_unit("bf16", "amx", probe_amx_bf16, p.threads, id));
  if (s.int8)
    p.units.push_back(probe_unit("int8", "amx", probe_amx_int8, p.threads, id));
  release_amx_tiles(); // the calibrating thread's
  if (s.fp16) {
    peak_unit u;
    u.dtype = "fp16";
    u.unit = "amx";
    u.note = "not probed: this build's compiler (GCC 12) cannot emit TDPFP16PS";
    p.units.push_back(u);
  }
}

// The fp32 and bf16 rates old readers of the cache read: the best trustworthy row of each.
void set_best_rates(cpu_peak& p) {
  if (const peak_unit* u = best_unit(p, "fp32"))
    p.fp32_tflops = u->tflops;
  if (const peak_unit* u = best_unit(p, "bf16"))
    p.bf16_tflops = u->tflops;
}

// The table of every unit this CPU has, into `p` (threads and identity set): fp32 on the widest
// FMA unit, bf16 on AVX-512 BF16, and the AMX rows.
void probe_rates(cpu_peak& p) {
  const auto f = detect_cpu_features();
  const cpu_identity id = read_cpu_identity();
#if defined(__x86_64__)
  if (f.avx512f) {
    p.isa = "avx512";
    p.units.push_back(probe_unit("fp32", "avx512 fma", probe_avx512_fp32, p.threads, id));
    if (f.avx512bf16)
      p.units.push_back(probe_unit("bf16", "avx512_bf16", probe_avx512_bf16, p.threads, id));
  } else if (f.avx2 && f.fma) {
    p.isa = "avx2";
    p.units.push_back(probe_unit("fp32", "avx2 fma", probe_avx2_fp32, p.threads, id));
  }
  probe_amx_units(p, id);
#else
  (void)f;
  p.amx = "not available: not an x86-64 CPU";
#endif
  if (p.units.empty() || p.units.front().dtype != "fp32") {
    p.isa = "scalar";
    p.units.insert(p.units.begin(), probe_unit("fp32", "scalar", probe_scalar_fp32, p.threads, id));
  }
  set_best_rates(p);
}

bool usable_rate(double v) { return std::isfinite(v) && v > 0; }

// The table of a cache entry; a row that is not an object with a dtype, a unit and a rate is left
// out (the file is outside input).
std::vector<peak_unit> units_of(const json& rows) {
  std::vector<peak_unit> out;
  if (!rows.is_array())
    return out;
  out.reserve(rows.size());
  for (const json& r : rows) {
    if (!r.is_object() || !r.contains("dtype") || !r["dtype"].is_string() || !r.contains("unit") ||
        !r["unit"].is_string() || !r.contains("tflops") || !r["tflops"].is_number())
      continue;
    peak_unit u;
    u.dtype = r["dtype"];
    u.unit = r["unit"];
    u.tflops = r["tflops"];
    u.clock_ghz = r.value("clock_ghz", 0.0);
    u.cores = r.value("cores", 0);
    u.flop_per_cycle_core = r.value("flop_per_cycle_core", 0.0);
    u.note = r.value("note", "");
    out.push_back(u);
  }
  return out;
}

// The table of an entry written before it existed: its fp32 rate on the ISA it names, its bf16
// rate on AVX-512 BF16 (the only bf16 unit those versions probed).
std::vector<peak_unit> legacy_units(const cpu_peak& p) {
  std::vector<peak_unit> out;
  peak_unit fp32;
  fp32.dtype = "fp32";
  fp32.unit = p.isa == "avx512" || p.isa == "avx2" ? p.isa + " fma" : "scalar";
  fp32.tflops = p.fp32_tflops;
  fp32.note = "from a cache entry written before the table (no clock, no documented figure)";
  out.push_back(fp32);
  if (p.bf16_tflops > 0) {
    peak_unit bf16 = fp32;
    bf16.dtype = "bf16";
    bf16.unit = "avx512_bf16";
    bf16.tflops = p.bf16_tflops;
    out.push_back(bf16);
  }
  return out;
}

// The units `c` says this CPU has that the entry lacks ("bf16 (amx)"), for the note.
std::string missing_units(const cpu_peak& entry, const peak_cache& c) {
  std::string out;
  for (const std::string& name : c.units) {
    bool found = false;
    for (const peak_unit& u : entry.units)
      found = found || u.name() == name;
    if (!found)
      out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

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
    p.amx = j.value("amx", "");
    p.units = j.contains("units") ? units_of(j["units"]) : legacy_units(p);
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

// The units this CPU's probe measures beyond the FMA ones: an entry without them is probed again.
std::vector<std::string> expected_units() {
  std::vector<std::string> out;
  const amx_support& s = detect_amx();
  if (s.bf16)
    out.emplace_back("bf16 (amx)");
  if (s.int8)
    out.emplace_back("int8 (amx)");
  return out;
}

peak_cache machine_cache() {
  const json env = capture_environment();
  return {cache_file(), env["cpu"]["model"].get<std::string>(),
          env["cpu"]["logical_cores"].get<int>(), [](int t) { return measure_cpu_peak(t); },
          expected_units()};
}

std::mutex g_peak_mutex;
std::optional<cpu_peak> g_peak; // this process's peak: the highest it has seen
bool g_reprobed_after_beaten = false;
std::optional<peak_cache> g_given_cache; // use_peak_cache's, in place of machine_cache()

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
  const bool b_higher = b.fp32_tflops > a.fp32_tflops;
  cpu_peak out = b_higher ? b : a;
  const cpu_peak& other = b_higher ? a : b;
  out.bf16_tflops = std::max(a.bf16_tflops, b.bf16_tflops);
  // Per unit the higher row (the whole row: its clock and documented figure go with its rate).
  for (const peak_unit& u : other.units) {
    auto it = std::find_if(out.units.begin(), out.units.end(),
                           [&u](const peak_unit& o) { return o.name() == u.name(); });
    if (it == out.units.end())
      out.units.push_back(u);
    else if (u.tflops > it->tflops)
      *it = u;
  }
  // The later word on AMX (b: the newer probe, as resolve_cpu_peak passes them): a kernel update
  // can grant the tiles that an older probe found refused.
  out.amx = b.amx.empty() ? a.amx : b.amx;
  if (out.note.empty())
    out.note = other.note;
  return out;
}

cpu_peak resolve_cpu_peak(const peak_cache& c, probe_when when,
                          const std::optional<cpu_peak>& known) {
  std::optional<cpu_peak> cached = read_entry(c);
  // Only quiet probes are kept: an entry without a recorded load may be the one loaded probe that
  // would otherwise judge every later run.
  if (cached && !cached->quiet())
    cached.reset();
  // An entry without a unit this CPU has (an older accelbench's, which never probed AMX) reads,
  // and is probed again so that the unit is in the table.
  const std::string missing = cached ? missing_units(*cached, c) : "";
  cpu_peak out;
  if (cached && when == probe_when::if_unknown && missing.empty()) {
    out = *cached;
  } else {
    cpu_peak probe = c.probe(c.threads);
    if (probe.quiet() && usable_rate(probe.fp32_tflops))
      write_entry(c.file, cached ? highest_of(*cached, probe) : probe);
    out = cached ? highest_of(*cached, probe) : probe;
    if (!missing.empty())
      out.note = fmt::format("the cached peak had no {} (written by an older accelbench): "
                             "probed again",
                             missing);
  }
  return known ? highest_of(*known, out) : out;
}

void use_peak_cache(std::optional<peak_cache> c) {
  std::lock_guard lock(g_peak_mutex);
  g_given_cache = std::move(c);
  g_peak.reset();
  g_reprobed_after_beaten = false;
}

cpu_peak cached_cpu_peak(bool remeasure) {
  std::lock_guard lock(g_peak_mutex);
  if (g_peak && !remeasure)
    return *g_peak;
  g_peak = resolve_cpu_peak(g_given_cache ? *g_given_cache : machine_cache(),
                            remeasure ? probe_when::again : probe_when::if_unknown, g_peak);
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
  if (const peak_unit* u = best_unit(p, dtype))
    return u->tflops;
  if (!p.units.empty())
    return p.fp32_tflops;
  // A peak without a table (one built from the two rates alone).
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
