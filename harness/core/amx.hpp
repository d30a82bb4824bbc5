#pragma once
// Intel AMX (Advanced Matrix Extensions) for the CPU peak table (peak.hpp): whether this process
// may use the tiles, and a probe of the tile units' rate. The build stays generic: the probe is
// compiled with per-function target attributes and runs only where all three of these allow it:
//   - CPUID says the CPU has the tiles and their dot products (leaf 7: AMX-TILE, -BF16, -INT8, and
//     AMX-FP16 in sub-leaf 1);
//   - the OS enabled the tile state (XCR0 bits 17 XTILECFG and 18 XTILEDATA, read by XGETBV);
//   - Linux granted this process the tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA)): the
//     tile registers are 8 KiB of state a process must ask for before its first tile instruction,
//     which otherwise faults (SIGILL).
#include <cstdint>
#include <string>

namespace accelbench {

// What the CPU, the OS and the kernel said, as bits: the decision below is a pure function of them.
struct amx_bits {
  bool tile = false, bf16 = false, int8 = false; // CPUID.(EAX=7,ECX=0):EDX bits 24, 22, 25
  bool fp16 = false;                             // CPUID.(EAX=7,ECX=1):EAX bit 21
  bool osxsave = false;                          // CPUID.1:ECX bit 27 (XGETBV may be used)
  uint64_t xcr0 = 0;                             // XGETBV(0), when osxsave
  int permission_errno =
      -1; // arch_prctl's errno: 0 granted; -1 not asked (an earlier check failed)
};

// Which AMX units this process may use; `why_not` when none.
struct amx_support {
  bool bf16 = false, int8 = false;
  bool fp16 = false; // AMX-FP16: listed; this compiler (GCC 12) cannot emit TDPFP16PS, so unprobed
  std::string why_not;
  bool usable() const { return bf16 || int8; }
};

// XCR0's tile state bits: both must be set for the OS to save and restore the tiles.
inline constexpr uint64_t k_xcr0_xtilecfg = uint64_t(1) << 17;
inline constexpr uint64_t k_xcr0_xtiledata = uint64_t(1) << 18;

// The decision, from given bits (tests give theirs): CPUID first, then XCR0, then the permission.
amx_support amx_from_bits(const amx_bits& b);

// This machine's bits: CPUID and XGETBV, and the permission request (made only when CPUID and XCR0
// allow the tiles, and only once per process; on other systems than x86-64 Linux, no AMX).
amx_bits read_amx_bits();

// amx_from_bits(read_amx_bits()), once per process.
const amx_support& detect_amx();

// The probes, as peak.cpp's FMA probes: `reps` blocks of six independent tile dot products into
// six accumulator tiles; returns the operations done (TDPBF16PS: 16 x 16 x 32 x 2 = 16,384 FLOP,
// TDPBUSD: 16 x 16 x 64 x 2 = 32,768 int8 ops). The tile configuration is loaded once per thread.
// Only where detect_amx() allows the unit: elsewhere the instruction faults.
double probe_amx_bf16(int64_t reps, float seed);
double probe_amx_int8(int64_t reps, float seed);
// Releases the calling thread's tiles (the thread that calibrated a probe and goes on).
void release_amx_tiles();

} // namespace accelbench
