// What the harness adds per sample across ranks: the agreement before a sample (two
// logical or-reductions: failure, max_time_s), the barrier, and the gather of every rank's time.
// At world size 1 each is a no-op; run it alone and under `mpirun -np 2` and compare.
#include <chrono>
#include <cstdio>

#include "harness/dist/dist.hpp"

using namespace accelbench;

int main(int argc, char** argv) {
  dist::init(&argc, &argv);
  constexpr int k_samples = 20000;
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    dist::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    double sink = 0;
    for (int i = 0; i < k_samples; ++i) {
      const bool failed = dist::any(false);
      const bool time_up = dist::any(false);
      dist::barrier();
      auto all = dist::gather_all(1e-3);
      sink += all[0] + failed + time_up;
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        k_samples;
    best = std::min(best, dist::max_all(us));
    if (sink < 0)
      std::puts("");
  }
  if (dist::is_root())
    std::printf("world_size %d: per-sample harness overhead (2 agreements + barrier + gather) %.3f "
                "us (best of 5 x %d)\n",
                dist::size(), best, k_samples);
  dist::finalize();
  return 0;
}
