#include "harness/core/amx.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace accelbench {

namespace {

// Linux's arch_prctl codes (asm/prctl.h, since 5.16) and the tile data's XSAVE feature number.
constexpr int k_arch_req_xcomp_perm = 0x1023;
constexpr int k_xfeature_xtiledata = 18;

std::string xcr0_missing(uint64_t xcr0) {
  std::string m;
  if (!(xcr0 & k_xcr0_xtilecfg))
    m += "17 (XTILECFG)";
  if (!(xcr0 & k_xcr0_xtiledata))
    m += std::string(m.empty() ? "" : " and ") + "18 (XTILEDATA)";
  return m;
}

#if defined(__x86_64__)
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

int request_tile_permission() {
#if defined(__linux__)
  if (syscall(SYS_arch_prctl, k_arch_req_xcomp_perm, k_xfeature_xtiledata) == 0)
    return 0;
  return errno;
#else
  return ENOSYS;
#endif
}

// LDTILECFG's 64-byte operand, palette 1: eight tiles of 16 rows x 64 bytes.
struct alignas(64) tile_config {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// LDTILECFG once per thread: the configuration is per thread state, and loading it zeroes tiles.
thread_local bool t_tiles_configured = false;

__attribute__((target("amx-tile"))) void configure_tiles() {
  if (t_tiles_configured)
    return;
  tile_config c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = 16;
    c.colsb[t] = 64;
  }
  _tile_loadconfig(&c);
  t_tiles_configured = true;
}

// Six accumulators (tmm0-5) against the one pair of sources (tmm6, tmm7): TDPBF16PS's documented
// throughput is one per 16 cycles per core and its latency several times that, so fewer
// independent accumulators would time the dependency chain, not the unit.
constexpr int k_amx_acc = 6;

template <class Element> float sink_of(const Element* c) {
  float s = 0;
  for (int i = 0; i < 16 * 16; ++i)
    s += float(c[i]);
  return s;
}
#endif

} // namespace

amx_support amx_from_bits(const amx_bits& b) {
  amx_support s;
  if (!b.tile || !(b.bf16 || b.int8)) {
    s.why_not = "the CPU has no AMX (CPUID leaf 7: AMX-TILE, AMX-BF16 and AMX-INT8 not listed)";
    return s;
  }
  if (!b.osxsave) {
    s.why_not = "the OS has not enabled XSAVE (CPUID.1:ECX.OSXSAVE clear), so not the tile state";
    return s;
  }
  if (const std::string m = xcr0_missing(b.xcr0); !m.empty()) {
    s.why_not = fmt::format("the OS has not enabled the tile state (XCR0 = {:#x}: bit {} clear)",
                            b.xcr0, m);
    return s;
  }
  if (b.permission_errno != 0) {
    s.why_not =
        b.permission_errno < 0
            ? std::string("the tile data permission was not asked for")
            : fmt::format("Linux refused the tile data permission (arch_prctl(ARCH_REQ_XCOMP_PERM, "
                          "XTILEDATA): {}; a kernel before 5.16 has no such request)",
                          std::strerror(b.permission_errno));
    return s;
  }
  s.bf16 = b.bf16;
  s.int8 = b.int8;
  s.fp16 = b.fp16;
  return s;
}

amx_bits read_amx_bits() {
  amx_bits b;
#if defined(__x86_64__)
  unsigned a = 0, bx = 0, c = 0, d = 0;
  if (__get_cpuid_count(1, 0, &a, &bx, &c, &d))
    b.osxsave = (c >> 27) & 1;
  if (__get_cpuid_count(7, 0, &a, &bx, &c, &d)) {
    b.tile = (d >> 24) & 1;
    b.bf16 = (d >> 22) & 1;
    b.int8 = (d >> 25) & 1;
    const unsigned max_sub = a;
    if (max_sub >= 1 && __get_cpuid_count(7, 1, &a, &bx, &c, &d))
      b.fp16 = (a >> 21) & 1;
  }
  if (b.osxsave)
    b.xcr0 = read_xcr0();
  if (b.tile && (b.bf16 || b.int8) && b.osxsave &&
      (b.xcr0 & (k_xcr0_xtilecfg | k_xcr0_xtiledata)) == (k_xcr0_xtilecfg | k_xcr0_xtiledata))
    b.permission_errno = request_tile_permission();
#endif
  return b;
}

const amx_support& detect_amx() {
  static const amx_support s = amx_from_bits(read_amx_bits());
  return s;
}

#if defined(__x86_64__)
// The probes' tiles: 6 and 7 the operands, 0 the seeded accumulator that is stored back, 1-5
// accumulators from zero, so six dot products in flight per repetition.
__attribute__((target("amx-tile"))) void load_probe_tiles(const void* a, const void* b,
                                                          const void* c) {
  _tile_loadd(6, a, 64);
  _tile_loadd(7, b, 64);
  _tile_loadd(0, c, 64);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
}

__attribute__((target("amx-tile,amx-bf16"))) double probe_amx_bf16(int64_t reps, float seed) {
  configure_tiles();
  alignas(64) uint16_t a[16 * 32], b[16 * 32];
  alignas(64) float c[16 * 16];
  for (int i = 0; i < 16 * 32; ++i) {
    a[i] = 0x3f80; // bf16 1.0
    b[i] = 0x3380; // bf16 ~6e-8: the accumulators stay far from overflow and denormals
  }
  for (float& x : c)
    x = seed;
  load_probe_tiles(a, b, c);
  for (int64_t r = 0; r < reps; ++r) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  _tile_stored(0, c, 64);
  volatile float sink = sink_of(c);
  (void)sink;
  return double(reps) * k_amx_acc * 16 * 16 * 32 * 2;
}

__attribute__((target("amx-tile,amx-int8"))) double probe_amx_int8(int64_t reps, float seed) {
  configure_tiles();
  alignas(64) uint8_t a[16 * 64];
  alignas(64) int8_t b[16 * 64];
  alignas(64) int32_t c[16 * 16];
  for (int i = 0; i < 16 * 64; ++i) {
    a[i] = 1;
    b[i] = 1;
  }
  for (int32_t& x : c)
    x = int32_t(seed);
  load_probe_tiles(a, b, c);
  for (int64_t r = 0; r < reps; ++r) {
    _tile_dpbusd(0, 6, 7);
    _tile_dpbusd(1, 6, 7);
    _tile_dpbusd(2, 6, 7);
    _tile_dpbusd(3, 6, 7);
    _tile_dpbusd(4, 6, 7);
    _tile_dpbusd(5, 6, 7);
  }
  _tile_stored(0, c, 64);
  volatile float sink = sink_of(c);
  (void)sink;
  return double(reps) * k_amx_acc * 16 * 16 * 64 * 2;
}

__attribute__((target("amx-tile"))) void release_amx_tiles() {
  if (!t_tiles_configured)
    return;
  _tile_release();
  t_tiles_configured = false;
}
#else
double probe_amx_bf16(int64_t, float) { return 0; }
double probe_amx_int8(int64_t, float) { return 0; }
void release_amx_tiles() {}
#endif

} // namespace accelbench
