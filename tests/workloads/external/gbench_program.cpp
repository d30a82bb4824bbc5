// A Google Benchmark executable for `accelbench run gbench`'s tests: two sizes of a sum.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

static void BM_sum(benchmark::State& st) {
  std::vector<int> v(static_cast<size_t>(st.range(0)), 1);
  for (auto _ : st)
    benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_sum)->Arg(64)->Arg(1024);

BENCHMARK_MAIN();
