// harness/core/hash.hpp: FNV-1a 64 and 128 against the FNV specification's values.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/hash.hpp"

using namespace accelbench;

TEST_CASE("FNV-1a 64: the specification's values, and continuation", "[core][hash]") {
  // FNV test vectors (Fowler, Noll, Vo; draft-eastlake-fnv, FNV-1a 64).
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  CHECK(fnv1a64("bc", fnv1a64("a")) == fnv1a64("abc")); // continued over pieces
}

TEST_CASE("seeds from config keys keep the basis they always had", "[core][hash]") {
  // The legacy basis (the specification's without its last digit) is pinned: every input seeded
  // from a config key, and so every stored correctness result, depends on it.
  CHECK(k_fnv1a64_legacy_basis == 1469598103934665603ULL);
  CHECK(seed_from_key("") == 1469598103934665603ULL);
  CHECK(seed_from_key("a") == ((1469598103934665603ULL ^ 'a') * 1099511628211ULL));
  CHECK(seed_from_key("gemm|cpu|M=64") == fnv1a64("gemm|cpu|M=64", k_fnv1a64_legacy_basis));
  CHECK(seed_from_key("a") != fnv1a64("a"));
}

TEST_CASE(
    "environment fingerprints: version 2 from the specification's basis, version 1 recognised",
    "[core][hash]") {
  // An environment without comparable fields hashes "name=null;" for each of the six fixed ones;
  // continued over pieces, that is the hash of their concatenation.
  const std::string fields = "cpu.model=null;cpu.logical_cores=null;compiler=null;build_type=null;"
                             "accelerator.model=null;accelerator.count=null;";
  const json none = json::object();
  CHECK(environment_fingerprint(none) == fmt::format("{:016x}", fnv1a64(fields)));
  CHECK(legacy_environment_fingerprint(none) ==
        fmt::format("{:016x}", fnv1a64(fields, k_fnv1a64_legacy_basis)));
  const json env = {{"cpu", {{"model", "box"}}}, {"compiler", "gcc 12"}};
  const std::string v1 = legacy_environment_fingerprint(env), v2 = environment_fingerprint(env);
  CHECK(v1 != v2);
  CHECK(current_fingerprint(env, v1) == v2); // an old run of this machine
  CHECK(current_fingerprint(env, v2) == v2);
  CHECK(current_fingerprint(env, "0123456789abcdef") == "0123456789abcdef"); // not ours: kept
  CHECK(current_fingerprint(none, v1) == v1); // another environment's
}

TEST_CASE("FNV-1a 128: offset basis and a known value", "[core][hash]") {
  CHECK(fnv1a128("") ==
        std::pair<uint64_t, uint64_t>{0x6c62272e07bb0142ULL, 0x62b821756295c58dULL});
  CHECK(fnv1a128("a") ==
        std::pair<uint64_t, uint64_t>{0xd228cb696f1a8cafULL, 0x78912b704e4a8964ULL});
}
