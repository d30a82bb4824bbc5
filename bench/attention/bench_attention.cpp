// Figures for the fused CPU attention kernels, not a pass/fail test:
//  1. forward and backward TFLOP/s at batch 1, heads 16, seq 2048, head_dim 128, fp32, causal
//     and not, next to fp32 GEMM throughput (OpenBLAS cblas_sgemm and oneDNN dnnl_sgemm,
//     2048^3) measured in the same run;
//  2. peak resident memory of a forward + backward at seq 4096, 8192, 16384 (one child process
//     per length, getrusage ru_maxrss), next to what a materialised score matrix would take;
//  3. speed-up of the fused forward over the double reference at seq 2048 (one head, scaled).
// Usage: accelbench_bench_attention [--reps N] [--skip-memory] [--skip-reference]
//        accelbench_bench_attention --memory-child SEQ   (internal)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include "kernels/attention/cpu/flash_attention.hpp"

using namespace accelbench::attention;

namespace {

double seconds_best(const std::function<void()>& fn, int reps) {
  fn(); // warm-up (and workspace allocation)
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

std::vector<float> randn(int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v)
    x = d(g);
  return v;
}

int memory_child(int64_t seq) {
  attention_shape s;
  s.heads = s.kv_heads = 16;
  s.seq_q = s.seq_k = seq;
  s.head_dim = 128;
  s.causal = true;
  const int64_t n = s.batch * seq * s.heads * s.head_dim;
  auto q = randn(n, 1), k = randn(n, 2), v = randn(n, 3), d_o = randn(n, 4);
  std::vector<float> o(static_cast<size_t>(n)), lse(static_cast<size_t>(s.heads * seq)),
      dq(static_cast<size_t>(n)), dk(static_cast<size_t>(n)), dv(static_cast<size_t>(n));
  auto t0 = std::chrono::steady_clock::now();
  flash_forward(s, q.data(), k.data(), v.data(), o.data(), lse.data());
  flash_backward(s, q.data(), k.data(), v.data(), o.data(), d_o.data(), lse.data(), dq.data(),
                 dk.data(), dv.data());
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double tensors_mib = 9.0 * double(n) * 4 / 1048576.0; // q k v o dO dq dk dv (+lse)
  const double scores_mib = double(s.heads) * seq * seq * 4 / 1048576.0;
  std::printf("  seq %6lld: peak RSS %8.1f MiB (tensors %7.1f MiB, kernel workspace %7.1f MiB; a "
              "materialised fp32 score matrix would be %9.1f MiB); fwd+bwd %.2f s\n",
              (long long)seq, ru.ru_maxrss / 1024.0, tensors_mib,
              double(backward_workspace_bytes(s)) / 1048576.0, scores_mib, t);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool memory = true, reference = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--memory-child" && i + 1 < argc)
      return memory_child(std::atoll(argv[++i]));
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--skip-memory")
      memory = false;
    else if (a == "--skip-reference")
      reference = false;
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--skip-memory] [--skip-reference]\n", argv[0]);
      return 2;
    }
  }
  std::printf("attention kernels: isa %s, %d OpenMP threads, best of %d\n", kernel_isa().c_str(),
              omp_get_max_threads(), reps);

  // GEMM reference rate, fp32 2048^3.
  const int g = 2048;
  auto a = randn(int64_t(g) * g, 7), b = randn(int64_t(g) * g, 8);
  std::vector<float> c(static_cast<size_t>(g) * g);
  const double gf = 2.0 * g * g * double(g);
  auto gemm_rates = [&](double& blas, double& dnnl) {
    blas = gf /
           seconds_best(
               [&] {
                 cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g, g, g, 1.f, a.data(), g,
                             b.data(), g, 0.f, c.data(), g);
               },
               reps) /
           1e12;
    dnnl =
        gf /
        seconds_best(
            [&] { dnnl_sgemm('N', 'N', g, g, g, 1.f, a.data(), g, b.data(), g, 0.f, c.data(), g); },
            reps) /
        1e12;
  };
  double blas0, dnnl0;
  gemm_rates(blas0, dnnl0);

  attention_shape s;
  s.heads = s.kv_heads = 16;
  s.seq_q = s.seq_k = 2048;
  s.head_dim = 128;
  const int64_t n = s.batch * s.seq_q * s.heads * s.head_dim;
  auto q = randn(n, 1), k = randn(n, 2), v = randn(n, 3), d_o = randn(n, 4);
  std::vector<float> o(static_cast<size_t>(n)), lse(static_cast<size_t>(s.heads * s.seq_q)),
      dq(static_cast<size_t>(n)), dk(static_cast<size_t>(n)), dv(static_cast<size_t>(n));
  struct row {
    bool causal;
    double fwd, bwd;
  };
  std::vector<row> rows;
  for (bool causal : {false, true}) {
    s.causal = causal;
    const double f = attention_forward_flops(s);
    const double tf = seconds_best(
        [&] { flash_forward(s, q.data(), k.data(), v.data(), o.data(), lse.data()); }, reps);
    const double tb = seconds_best(
        [&] {
          flash_backward(s, q.data(), k.data(), v.data(), o.data(), d_o.data(), lse.data(),
                         dq.data(), dk.data(), dv.data());
        },
        reps);
    rows.push_back({causal, f / tf / 1e12, attention_backward_flops(s) / tb / 1e12});
  }
  double blas1, dnnl1;
  gemm_rates(blas1, dnnl1);
  const double gemm = std::max({blas0, blas1, dnnl0, dnnl1});
  std::printf("fp32 GEMM 2048^3: OpenBLAS %.3f / %.3f TFLOP/s, oneDNN %.3f / %.3f TFLOP/s "
              "(before / after); reference rate = best %.3f TFLOP/s\n",
              blas0, blas1, dnnl0, dnnl1, gemm);
  std::printf("fp32 attention, batch 1, heads 16, seq 2048, head_dim 128 (accelbench FLOP "
              "count: exact unmasked pairs):\n");
  for (const row& r : rows)
    std::printf("  causal %d: forward %.3f TFLOP/s (%.0f%% of GEMM), backward %.3f TFLOP/s "
                "(%.0f%% of GEMM)\n",
                r.causal, r.fwd, 100 * r.fwd / gemm, r.bwd, 100 * r.bwd / gemm);

  if (reference) {
    attention_shape one = s;
    one.heads = one.kv_heads = 1;
    one.causal = false;
    s.causal = false;
    const int64_t n1 = one.seq_q * one.head_dim;
    std::vector<double> ro(static_cast<size_t>(n1)), rl(static_cast<size_t>(one.seq_q));
    auto t0 = std::chrono::steady_clock::now();
    reference_forward(one, q.data(), k.data(), v.data(), ro.data(), rl.data());
    const double tr = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double tf = seconds_best(
        [&] { flash_forward(s, q.data(), k.data(), v.data(), o.data(), lse.data()); }, reps);
    std::printf("reference forward (double, 1 thread), one head at seq 2048: %.2f s; x16 heads = "
                "%.1f s vs fused %.4f s: speed-up %.0fx\n",
                tr, 16 * tr, tf, 16 * tr / tf);
  }

  if (memory) {
    std::printf("peak memory, forward + backward, fp32, heads 16, head_dim 128, causal (one "
                "process per length):\n");
    std::fflush(stdout);
    for (int64_t seq : {4096, 8192, 16384}) {
      // A child per length: ru_maxrss is a high-water mark, so lengths must not share a process.
      char self[4096];
      const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
      if (len <= 0)
        break;
      self[len] = 0;
      const std::string run = std::string(self) + " --memory-child " + std::to_string(seq);
      if (std::system(run.c_str()) != 0)
        std::printf("  seq %lld: child failed\n", (long long)seq);
    }
  }
  return 0;
}
