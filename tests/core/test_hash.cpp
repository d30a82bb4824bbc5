// harness/core/hash.hpp: FNV-1a 64 and 128 against the FNV specification's values.
#include <catch2/catch.hpp>

#include "harness/core/hash.hpp"

using namespace accelbench;

TEST_CASE("FNV-1a 64: the offset basis accelbench has always used, and continuation",
          "[core][hash]") {
  // Not the specification's basis (14695981039346656037): its last digit is missing. Kept, since
  // stored fingerprints and every input seeded from a config key depend on it; pinned here so
  // that it does not change by accident.
  CHECK(fnv1a64("") == 1469598103934665603ULL);
  CHECK(fnv1a64("a") == ((1469598103934665603ULL ^ 'a') * 1099511628211ULL));
  CHECK(fnv1a64("bc", fnv1a64("a")) == fnv1a64("abc")); // continued over pieces
}

TEST_CASE("FNV-1a 128: offset basis and a known value", "[core][hash]") {
  CHECK(fnv1a128("") ==
        std::pair<uint64_t, uint64_t>{0x6c62272e07bb0142ULL, 0x62b821756295c58dULL});
  CHECK(fnv1a128("a") ==
        std::pair<uint64_t, uint64_t>{0xd228cb696f1a8cafULL, 0x78912b704e4a8964ULL});
}
