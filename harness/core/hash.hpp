#pragma once
// FNV-1a, the one home of the hash: 64 bits for seeds derived from config keys and for
// fingerprints; 128 bits for digests that must not collide across many inputs (a publish batch's
// Idempotency-Key, the name-based uuids of imported runs). Offset bases and primes from the FNV
// specification. Continue a 64-bit hash over several pieces by passing the previous value as `h`.
#include <cstdint>
#include <string_view>
#include <utility>

namespace accelbench {

// The specification's offset basis (0xcbf29ce484222325).
inline constexpr uint64_t k_fnv1a64_basis = 14695981039346656037ULL;

// The basis accelbench's seeds have always started from: the specification's basis without its
// last digit (a typo once in fnv1a64 itself). Every input seeded from a config key, and so every
// stored input and result, depends on it: seed_from_key keeps it, by name, and must never change.
// Environment fingerprints started from it too (version 1) and now start from the specification's
// basis (version 2); it stays to recognise the old ones (legacy_environment_fingerprint; the
// store's migration 6 rewrites them). Anything new hashes with the specification's basis.
inline constexpr uint64_t k_fnv1a64_legacy_basis = 1469598103934665603ULL;

inline uint64_t fnv1a64(std::string_view s, uint64_t h = k_fnv1a64_basis) {
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ULL;
  return h;
}

// The seed of a run's inputs, from its config key (the same inputs for the same config on every
// system and in every release). Keeps the legacy basis: stored inputs and results depend on it.
inline uint64_t seed_from_key(std::string_view key) { return fnv1a64(key, k_fnv1a64_legacy_basis); }

// The seed of a kernel run's inputs, the one meaning of --seed for every GEMM and attention
// backend (CPU and CUDA): without a run seed (0) the config key's own, seed_from_key, so a config
// has the same inputs everywhere; with one, the run seed mixed with the key, so the same --seed
// reproduces every config's inputs and another --seed changes them (and two configs of one job
// still differ).
inline uint64_t seed_of(uint64_t run_seed, std::string_view key) {
  return run_seed == 0 ? seed_from_key(key) : fnv1a64(key, k_fnv1a64_basis ^ run_seed);
}

// FNV-1a 128, as its high and low 64 bits.
inline std::pair<uint64_t, uint64_t> fnv1a128(std::string_view s) {
  unsigned __int128 h = ((unsigned __int128)0x6c62272e07bb0142ULL << 64) | 0x62b821756295c58dULL;
  const unsigned __int128 prime =
      ((unsigned __int128)0x0000000001000000ULL << 64) | 0x000000000000013BULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= prime;
  }
  return {uint64_t(h >> 64), uint64_t(h)};
}

} // namespace accelbench
