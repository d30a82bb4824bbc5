#pragma once
// FNV-1a 64: a stable, portable hash for seeds derived from config keys and for fingerprints.
// Continue a hash over several pieces by passing the previous value as `h`.
#include <cstdint>
#include <string_view>

namespace accelbench {

inline uint64_t fnv1a64(std::string_view s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

} // namespace accelbench
