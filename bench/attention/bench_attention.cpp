// Figures for the fused CPU attention kernels, not a pass/fail test:
//  1. forward and backward TFLOP/s at batch 1, heads 16, seq 2048, head_dim 128, fp32, causal
//     and not, next to fp32 GEMM throughput (OpenBLAS cblas_sgemm and oneDNN dnnl_sgemm,
//     2048^3) measured in the same run;
//  2. peak resident memory of a forward + backward at seq 4096, 8192, 16384 (one child process
//     per length, getrusage ru_maxrss), next to what a materialised score matrix would take;
//  3. speed-up of the fused forward over the double reference at seq 2048 (one head, scaled);
//  4. with --bf16 ROUNDS (alone): bf16 against fp32 at the same shape, side by side in one run,
//     causal and not. Each round times, in turn, fp32 inputs, bf16 on the fp32 path (bf16
//     widened, fp32 FMAs: what every CPU without AVX512-BF16 runs) and bf16 on the native path
//     (vdpbf16ps) where the CPU has it, forward and forward + backward, best of --reps each; the
//     ratios are per round, and their median is printed.
// Usage: accelbench_bench_attention [--reps N] [--skip-memory] [--skip-reference]
//        accelbench_bench_attention --bf16 ROUNDS [--reps N] [--seq S] [--cpu-time]
//        accelbench_bench_attention --memory-child SEQ   (internal)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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
#include "workloads/attention/attention_reference.hpp"

using namespace accelbench::attention;

namespace {

// --cpu-time: time by the process's CPU time instead of the wall clock. On a shared, loaded
// machine a wall-clock timing is mostly the share of the cores this process got; CPU time (with
// OMP_NUM_THREADS=1, so that no thread spins waiting) is the work itself.
bool g_cpu_time = false;

double now_seconds() {
  if (!g_cpu_time)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double seconds_best(const std::function<void()>& fn, int reps) {
  fn(); // warm-up (and workspace allocation)
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    fn();
    best = std::min(best, now_seconds() - t0);
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

// One timing of each pass (best of reps): forward, and forward + backward.
struct pass_times {
  double fwd = 0, fwdbwd = 0;
};

struct bf16_inputs {
  attention_shape s;
  std::vector<float> q, k, v, d_o, o, lse, dq, dk, dv;
  std::vector<bf16> q16, k16, v16, do16, o16, dq16, dk16, dv16;
};

bf16_inputs make_bf16_inputs(int64_t seq) {
  bf16_inputs in;
  in.s.heads = in.s.kv_heads = 16;
  in.s.seq_q = in.s.seq_k = seq;
  in.s.head_dim = 128;
  const int64_t n = in.s.batch * seq * in.s.heads * in.s.head_dim;
  in.q = randn(n, 1), in.k = randn(n, 2), in.v = randn(n, 3), in.d_o = randn(n, 4);
  in.o.resize(size_t(n)), in.dq.resize(size_t(n)), in.dk.resize(size_t(n)), in.dv.resize(size_t(n));
  in.lse.resize(size_t(in.s.heads * seq));
  for (auto* t : {&in.q16, &in.k16, &in.v16, &in.do16, &in.o16, &in.dq16, &in.dk16, &in.dv16})
    t->resize(size_t(n));
  to_bf16(in.q.data(), in.q16.data(), n);
  to_bf16(in.k.data(), in.k16.data(), n);
  to_bf16(in.v.data(), in.v16.data(), n);
  to_bf16(in.d_o.data(), in.do16.data(), n);
  return in;
}

pass_times time_passes(bf16_inputs& in, bool bf16_data, int reps) {
  auto fwd = [&] {
    if (bf16_data)
      flash_forward_bf16(in.s, in.q16.data(), in.k16.data(), in.v16.data(), in.o16.data(),
                         in.lse.data());
    else
      flash_forward(in.s, in.q.data(), in.k.data(), in.v.data(), in.o.data(), in.lse.data());
  };
  auto bwd = [&] {
    if (bf16_data)
      flash_backward_bf16(in.s, in.q16.data(), in.k16.data(), in.v16.data(), in.o16.data(),
                          in.do16.data(), in.lse.data(), in.dq16.data(), in.dk16.data(),
                          in.dv16.data());
    else
      flash_backward(in.s, in.q.data(), in.k.data(), in.v.data(), in.o.data(), in.d_o.data(),
                     in.lse.data(), in.dq.data(), in.dk.data(), in.dv.data());
  };
  pass_times t;
  t.fwd = seconds_best(fwd, reps);
  t.fwdbwd = seconds_best(
      [&] {
        fwd();
        bwd();
      },
      reps);
  return t;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Ratios per round of bf16 (on each path) against fp32 inputs: rate ratio = time ratio inverted.
int bf16_side_by_side(int rounds, int reps, int64_t seq) {
  bf16_inputs in = make_bf16_inputs(seq);
  const std::vector<std::string> paths = available_bf16_paths();
  std::printf("bf16 vs fp32 attention, batch 1, heads 16, seq %lld, head_dim 128: isa %s, bf16 "
              "paths here: %s%s, %d OpenMP threads, %d rounds, best of %d per timing (%s)\n",
              (long long)seq, kernel_isa().c_str(), paths[0].c_str(),
              paths.size() > 1 ? " and fp32" : " only (no AVX512-BF16)", omp_get_max_threads(),
              rounds, reps, g_cpu_time ? "process CPU time" : "wall clock");
  for (bool causal : {false, true}) {
    in.s.causal = causal;
    const double ff = attention_forward_flops(in.s), fb = ff + attention_backward_flops(in.s);
    // [path][0: fwd, 1: fwd+bwd] ratios over the rounds; rates of the last round.
    std::vector<std::vector<double>> ratio[2];
    for (auto& r : ratio)
      r.assign(paths.size(), {});
    std::vector<pass_times> last(paths.size());
    pass_times f32;
    for (int round = 0; round < rounds; ++round) {
      f32 = time_passes(in, false, reps);
      for (size_t p = 0; p < paths.size(); ++p) {
        set_bf16_path(paths[p]);
        last[p] = time_passes(in, true, reps);
        ratio[0][p].push_back(f32.fwd / last[p].fwd);
        ratio[1][p].push_back(f32.fwdbwd / last[p].fwdbwd);
      }
      set_bf16_path("auto");
    }
    std::printf("  causal %d: fp32 forward %.3f TFLOP/s, forward+backward %.3f TFLOP/s (last "
                "round)\n",
                causal, ff / f32.fwd / 1e12, fb / f32.fwdbwd / 1e12);
    for (size_t p = 0; p < paths.size(); ++p) {
      std::printf("    bf16 on %-11s forward %.3f TFLOP/s, forward+backward %.3f TFLOP/s; "
                  "vs fp32, median of %d rounds: forward %.2fx, forward+backward %.2fx "
                  "(per round:",
                  paths[p].c_str(), ff / last[p].fwd / 1e12, fb / last[p].fwdbwd / 1e12, rounds,
                  median(ratio[0][p]), median(ratio[1][p]));
      for (int r = 0; r < rounds; ++r)
        std::printf(" %.2f/%.2f", ratio[0][p][size_t(r)], ratio[1][p][size_t(r)]);
      std::printf(")\n");
    }
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int reps = 5, bf16_rounds = 0;
  int64_t seq = 2048;
  bool memory = true, reference = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--memory-child" && i + 1 < argc)
      return memory_child(std::atoll(argv[++i]));
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--bf16" && i + 1 < argc)
      bf16_rounds = std::atoi(argv[++i]);
    else if (a == "--cpu-time")
      g_cpu_time = true;
    else if (a == "--seq" && i + 1 < argc)
      seq = std::atoll(argv[++i]);
    else if (a == "--skip-memory")
      memory = false;
    else if (a == "--skip-reference")
      reference = false;
    else {
      std::fprintf(stderr,
                   "usage: %s [--reps N] [--skip-memory] [--skip-reference] | --bf16 ROUNDS "
                   "[--reps N] [--seq S] [--cpu-time]\n",
                   argv[0]);
      return 2;
    }
  }
  if (bf16_rounds > 0 || seq <= 0) {
    if (bf16_rounds <= 0 || seq <= 0 || reps <= 0) {
      std::fprintf(stderr, "--bf16 ROUNDS, --seq S and --reps N must be positive\n");
      return 2;
    }
    return bf16_side_by_side(bf16_rounds, reps, seq);
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
