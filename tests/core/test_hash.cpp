// harness/core/hash.hpp: FNV-1a 64 and 128 against the FNV specification's values.
#include <catch2/catch.hpp>

#include "harness/core/hash.hpp"

using namespace accelbench;

TEST_CASE("FNV-1a 64: offset basis and a known value", "[core][hash]") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("bc", fnv1a64("a")) == fnv1a64("abc"));  // continued over pieces
}

TEST_CASE("FNV-1a 128: offset basis and a known value", "[core][hash]") {
  CHECK(fnv1a128("") == std::pair<uint64_t, uint64_t>{0x6c62272e07bb0142ULL, 0x62b821756295c58dULL});
  CHECK(fnv1a128("a") == std::pair<uint64_t, uint64_t>{0xd228cb696f1a8cafULL, 0x78912b704e4a8964ULL});
}
