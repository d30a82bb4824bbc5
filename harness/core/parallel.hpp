#pragma once
// parallel_for: [0, n) split into contiguous chunks over the host's cores, for the preparation of
// large inputs (hundreds of millions of elements per GEMM or attention config), not for timing.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace accelbench {

// Calls fn(begin, end) on disjoint chunks covering [0, n), on up to `threads` threads (0: the
// host's cores); chunks below `min_chunk` items are not worth a thread. Returns when all are done.
// fn must not throw (an exception on a worker thread ends the process).
template <class Fn>
void parallel_for(int64_t n, const Fn& fn, int64_t min_chunk = 1 << 16, unsigned threads = 0) {
  if (n <= 0)
    return;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t chunks =
      std::clamp<int64_t>(n / std::max<int64_t>(1, min_chunk), 1, (int64_t)threads);
  if (chunks == 1) {
    fn(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve((size_t)chunks);
  for (int64_t c = 0; c < chunks; ++c)
    pool.emplace_back([&fn, c, chunks, n] { fn(n * c / chunks, n * (c + 1) / chunks); });
  for (auto& t : pool)
    t.join();
}

} // namespace accelbench
