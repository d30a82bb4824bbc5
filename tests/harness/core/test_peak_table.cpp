// The CPU peak table (harness/core/peak.hpp): a row per dtype and unit, the dtype's peak its
// highest trustworthy unit, the documented figures, the cache entries written before the table;
// and AMX (harness/core/amx.hpp): whether a process may use the tiles, from given CPUID, XCR0 and
// permission bits, and the probe itself where the machine has AMX (skipped elsewhere).
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "harness/core/amx.hpp"
#include "harness/core/peak.hpp"
#include "tests/support/skip.hpp"

using namespace accelbench;
namespace fs = std::filesystem;

namespace {

// Sapphire Rapids' bits with the tile state enabled and the permission granted.
amx_bits amx_machine() {
  amx_bits b;
  b.tile = b.bf16 = b.int8 = true;
  b.osxsave = true;
  b.xcr0 = 0xe7 | k_xcr0_xtilecfg | k_xcr0_xtiledata;
  b.permission_errno = 0;
  return b;
}

peak_unit row(const std::string& dtype, const std::string& unit, double tflops) {
  peak_unit u;
  u.dtype = dtype;
  u.unit = unit;
  u.tflops = tflops;
  return u;
}

// The colleague's Xeon: fp32 0.401 on AVX-512, bf16 0.207 on AVX-512 BF16 and 1.5 on AMX.
cpu_peak xeon_table() {
  cpu_peak p;
  p.threads = 2;
  p.other_load = 0;
  p.units = {row("fp32", "avx512 fma", 0.401), row("bf16", "avx512_bf16", 0.207),
             row("bf16", "amx", 1.5), row("int8", "amx", 3.0)};
  p.fp32_tflops = 0.401;
  p.bf16_tflops = 1.5;
  return p;
}

} // namespace

TEST_CASE("AMX is usable only where CPUID, XCR0 and the Linux permission all allow it", "[amx]") {
  const amx_support yes = amx_from_bits(amx_machine());
  CHECK(yes.usable());
  CHECK(yes.bf16);
  CHECK(yes.int8);
  CHECK_FALSE(yes.fp16);
  CHECK(yes.why_not.empty());

  amx_bits amd; // this EPYC: no AMX in CPUID, XSAVE enabled without the tile bits
  amd.osxsave = true;
  amd.xcr0 = 0xe7;
  const amx_support no_cpu = amx_from_bits(amd);
  CHECK_FALSE(no_cpu.usable());
  CHECK_THAT(no_cpu.why_not, Catch::Contains("CPUID"));

  amx_bits no_os = amx_machine();
  no_os.xcr0 = 0xe7 | k_xcr0_xtilecfg; // the OS saves the configuration but not the tile data
  no_os.permission_errno = -1;
  CHECK_FALSE(amx_from_bits(no_os).usable());
  CHECK_THAT(amx_from_bits(no_os).why_not, Catch::Contains("XCR0") && Catch::Contains("18"));

  amx_bits no_xsave = amx_machine();
  no_xsave.osxsave = false;
  CHECK_THAT(amx_from_bits(no_xsave).why_not, Catch::Contains("OSXSAVE"));

  amx_bits refused = amx_machine();
  refused.permission_errno = EINVAL; // a kernel before 5.16
  CHECK_FALSE(amx_from_bits(refused).usable());
  CHECK_THAT(amx_from_bits(refused).why_not, Catch::Contains("ARCH_REQ_XCOMP_PERM"));

  amx_bits with_fp16 = amx_machine();
  with_fp16.fp16 = true; // Granite Rapids lists AMX-FP16
  CHECK(amx_from_bits(with_fp16).fp16);
  amx_bits int8_only = amx_machine();
  int8_only.bf16 = false;
  CHECK(amx_from_bits(int8_only).usable());
  CHECK_FALSE(amx_from_bits(int8_only).bf16);
}

TEST_CASE("a dtype's peak is its highest trustworthy unit: AMX for bf16 where the table has it",
          "[peak]") {
  const cpu_peak xeon = xeon_table();
  CHECK(peak_tflops_for(xeon, "bf16") == 1.5);
  REQUIRE(best_unit(xeon, "bf16"));
  CHECK(best_unit(xeon, "bf16")->name() == "bf16 (amx)");
  CHECK(peak_tflops_for(xeon, "fp32") == 0.401);
  CHECK(peak_tflops_for(xeon, "int8") == 3.0);
  CHECK(peak_tflops_for(xeon, "fp16") == 0.401); // no fp16 unit: the fp32 one, as before

  // Without AMX in the table, bf16 is AVX-512 BF16's.
  cpu_peak no_amx = xeon;
  no_amx.units.erase(no_amx.units.begin() + 2, no_amx.units.end());
  CHECK(peak_tflops_for(no_amx, "bf16") == 0.207);

  // A row above its documented figure by more than the margin is a probe that counts FLOPs it did
  // not do: not trusted, so it is nobody's roof.
  cpu_peak bad = xeon;
  bad.units[2].flop_per_cycle_core = 1024;
  bad.units[2].cores = 1;
  bad.units[2].clock_ghz = 1.0; // documented 1.024 TFLOP/s, measured 1.5
  CHECK(bad.units[2].documented_tflops() == Approx(1.024));
  CHECK_FALSE(bad.units[2].trustworthy());
  CHECK(peak_tflops_for(bad, "bf16") == 0.207);
  bad.units[2].clock_ghz = 1.5; // documented 1.536: the 1.5 measured is within it
  CHECK(bad.units[2].trustworthy());
  CHECK(peak_tflops_for(bad, "bf16") == 1.5);
  // An unprobed row (AMX-FP16 with a compiler that cannot emit it) is not a peak.
  CHECK_FALSE(row("fp16", "amx", 0).trustworthy());

  // A peak with no table (built from the two rates): the rates, as before the table.
  cpu_peak plain;
  plain.fp32_tflops = 0.4;
  plain.bf16_tflops = 0.8;
  CHECK(peak_tflops_for(plain, "bf16") == 0.8);
  CHECK(peak_tflops_for(plain, "fp32") == 0.4);
}

TEST_CASE("documented peaks: the instruction's FLOPs per cycle and core where accelbench knows it",
          "[peak]") {
  CHECK(documented_flop_per_cycle("GenuineIntel", 6, "bf16", "amx").flop_per_cycle_core == 1024);
  CHECK(documented_flop_per_cycle("GenuineIntel", 6, "int8", "amx").flop_per_cycle_core == 2048);
  CHECK(documented_flop_per_cycle("AuthenticAMD", 0x19, "fp32", "avx512 fma").flop_per_cycle_core ==
        32);
  CHECK(
      documented_flop_per_cycle("AuthenticAMD", 0x19, "bf16", "avx512_bf16").flop_per_cycle_core ==
      64);
  const documented_rate unknown =
      documented_flop_per_cycle("GenuineIntel", 6, "bf16", "avx512_bf16");
  CHECK(unknown.flop_per_cycle_core == 0);
  CHECK_THAT(unknown.why_not, Catch::Contains("not in accelbench's table"));
  // 1,024 FLOP/cycle/core x 2 cores x 3 GHz.
  peak_unit amx = row("bf16", "amx", 5.0);
  amx.flop_per_cycle_core = 1024;
  amx.cores = 2;
  amx.clock_ghz = 3.0;
  CHECK(amx.documented_tflops() == Approx(6.144));
  amx.clock_ghz = 0; // not measured: no documented figure, rather than one at a made-up clock
  CHECK(amx.documented_tflops() == 0);
}

namespace {

struct cache_dir {
  fs::path dir = fs::temp_directory_path() / ("ab-peak-table-" + std::to_string(getpid()));
  int probes = 0;
  cache_dir() { fs::create_directories(dir); }
  ~cache_dir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  cache_dir(const cache_dir&) = delete;
  cache_dir& operator=(const cache_dir&) = delete;
  fs::path file() const { return dir / "peak.json"; }
  // The cache of a CPU whose probe finds the Xeon's table; `units`: what the CPU has.
  peak_cache cache(std::vector<std::string> units) {
    return {file(), "Example CPU", 2,
            [this](int) {
              ++probes;
              cpu_peak p = xeon_table();
              p.cpu_model = "Example CPU";
              p.amx = "available (bf16, int8)";
              return p;
            },
            std::move(units)};
  }
};

// A cache entry as accelbench wrote it before the table: two rates, no units.
const char* k_old_entry = R"({"fp32_tflops": 0.401, "bf16_tflops": 0.207, "threads": 2,
  "isa": "avx512", "cpu_model": "Example CPU", "measured_at": "2026-12-01T00:00:00.000Z",
  "other_processes_cpu_share": 0.01, "quiet": true})";

} // namespace

TEST_CASE("the peak cache: an entry written before the table still reads, and is probed again "
          "where the CPU has a unit it lacks",
          "[peak]") {
  cache_dir c;
  std::ofstream(c.file()) << k_old_entry;
  // A CPU without AMX: the old entry is its table (fp32 on AVX-512 FMA, bf16 on AVX-512 BF16).
  const cpu_peak old = resolve_cpu_peak(c.cache({}), probe_when::if_unknown);
  CHECK(c.probes == 0);
  CHECK(peak_tflops_for(old, "fp32") == 0.401);
  CHECK(peak_tflops_for(old, "bf16") == 0.207);
  REQUIRE(find_unit(old, "bf16", "avx512_bf16"));
  REQUIRE(find_unit(old, "fp32", "avx512 fma"));
  CHECK(old.note.empty());

  // A CPU with AMX: the entry has no AMX row, so it is probed again, with a note, and the table
  // written back has the row; the old rates still count (the higher of each is kept).
  const cpu_peak now = resolve_cpu_peak(c.cache({"bf16 (amx)"}), probe_when::if_unknown);
  CHECK(c.probes == 1);
  CHECK(peak_tflops_for(now, "bf16") == 1.5);
  CHECK_THAT(now.note, Catch::Contains("bf16 (amx)") && Catch::Contains("probed again"));
  const cpu_peak again = resolve_cpu_peak(c.cache({"bf16 (amx)"}), probe_when::if_unknown);
  CHECK(c.probes == 1); // the new entry has the row: read, not probed
  CHECK(peak_tflops_for(again, "bf16") == 1.5);
  CHECK(peak_tflops_for(again, "int8") == 3.0);
  CHECK(again.amx == "available (bf16, int8)");
  CHECK(again.note.empty());
}

TEST_CASE("the higher of two peaks keeps each unit's higher row and the newer word on AMX",
          "[peak]") {
  cpu_peak older = xeon_table();
  older.amx = "not available: Linux refused the tile data permission";
  older.units.erase(older.units.begin() + 2, older.units.end()); // no AMX rows then
  older.units[0].tflops = 0.45;                                  // a quieter fp32 probe
  const cpu_peak newer = xeon_table();
  const cpu_peak both = highest_of(older, newer);
  CHECK(peak_tflops_for(both, "fp32") == 0.45);
  CHECK(peak_tflops_for(both, "bf16") == 1.5);
  CHECK(peak_tflops_for(both, "int8") == 3.0);
  CHECK(both.amx == older.amx); // the newer records none: the older word stays
  cpu_peak granted = newer;
  granted.amx = "available (bf16, int8)";
  CHECK(highest_of(older, granted).amx == "available (bf16, int8)");
}

TEST_CASE("the AMX probe measures the tile units where this machine has them", "[amx][timing]") {
  const amx_support& s = detect_amx();
  if (!s.usable())
    ACCELBENCH_SKIP("this machine has no usable AMX: " << s.why_not);
  const cpu_peak p = measure_cpu_peak(1);
  CHECK_THAT(p.amx, Catch::StartsWith("available"));
  const peak_unit* amx = find_unit(p, s.bf16 ? "bf16" : "int8", "amx");
  REQUIRE(amx);
  CHECK(amx->tflops > 0);
  CHECK(amx->flop_per_cycle_core > 0);
  if (s.bf16 && amx->trustworthy())
    CHECK(peak_tflops_for(p, "bf16") >= amx->tflops);
}
