// What accelbench run external adds to each sample, measured with workloads/external's runner
// (run_process + judge, what the command runs per run of the program) on spin_program.c, a program
// that spins W microseconds per sample:
//   protocol        one run reporting N samples: (the runner's wall time - the samples' own
//                   seconds) / N, i.e. start, pipes, protocol parsing and reaping, per sample
//   whole process   N runs, no protocol, as hyperfine times: (wall - W) per run, i.e. what
//                   fork/exec/exit add to every sample timed that way
// Both interleaved round by round in this one process; prints medians over rounds and the
// per-sample overhead of each (the aim for the protocol: under 1 ms per sample).
//
//   ./bench/external/accelbench_bench_external [--rounds R] [--samples N] [--work-us W]
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "workloads/external/outcome.hpp"
#include "workloads/external/process.hpp"

using namespace accelbench;

namespace {

struct options {
  int rounds = 7;
  int samples = 50;
  double work_us = 1000;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      o.rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--samples"))
      o.samples = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--work-us"))
      o.work_us = std::atof(argv[i + 1]);
  }
  return o;
}

external::launch spin(int samples, double work_us) {
  external::launch l;
  l.argv = {ACCELBENCH_SPIN, std::to_string(samples), fmt::format("{}", work_us)};
  return l;
}

// One run reporting N samples: the runner's time beyond the samples' own, per sample.
double protocol_overhead_s(const options& o) {
  const auto outcome = external::run_process(spin(o.samples, o.work_us));
  const auto j = external::judge(outcome, true);
  if (j.status != external::run_status::valid || (int)j.seconds.size() != o.samples) {
    std::cerr << "protocol run failed: " << j.reason << "\n";
    std::exit(1);
  }
  double own = 0;
  for (double s : j.seconds)
    own += s;
  return (outcome.wall_seconds - own) / o.samples;
}

// N whole-process runs with no protocol: each run's wall time beyond its W of work.
double whole_process_overhead_s(const options& o) {
  std::vector<double> extra;
  for (int i = 0; i < o.samples; ++i) {
    external::launch l = spin(1, o.work_us);
    l.argv.emplace_back("quiet");
    const auto outcome = external::run_process(l);
    const auto j = external::judge(outcome);
    if (j.status != external::run_status::valid || !j.whole_process) {
      std::cerr << "whole-process run failed: " << j.reason << "\n";
      std::exit(1);
    }
    extra.push_back(outcome.wall_seconds - o.work_us * 1e-6);
  }
  return stats::median(extra);
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  std::vector<double> proto, whole;
  for (int r = 0; r < o.rounds; ++r) {
    proto.push_back(protocol_overhead_s(o));
    whole.push_back(whole_process_overhead_s(o));
  }
  const double p = stats::median(proto), w = stats::median(whole);
  fmt::print("external runner, {} samples of {} us, {} rounds interleaved (medians over rounds)\n",
             o.samples, o.work_us, o.rounds);
  fmt::print("  protocol (one run, N samples)   overhead per sample {:8.1f} us\n", p * 1e6);
  fmt::print("  whole process (hyperfine)       overhead per sample {:8.1f} us\n", w * 1e6);
  fmt::print("  whole process / protocol        {:.1f}x\n", w / p);
  fmt::print("  aim: protocol under 1 ms per sample: {}\n", p < 1e-3 ? "met" : "missed");
  return 0;
}
