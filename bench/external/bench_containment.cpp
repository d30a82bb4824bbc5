// What containing a program's whole process tree costs and how close the timeout holds, measured
// with workloads/external's runner:
//   timeout        a program run with timeout_s T and kill_grace_s G that ends at SIGTERM, one
//                  that ignores it, and one that also moves into accelbench's own process group:
//                  the setting, the run's end as the caller sees it (run_process's wall time) and
//                  the leader's exit (outcome.wall_seconds); the ignoring ones end near T + G
//   sweep          `true` run N times: after its exit, what is left of it is ended either the old
//                  way (SIGKILL to its process group) or by the tree sweep (process_tree::kill_all:
//                  scan /proc, stop, rescan, SIGKILL, reap), interleaved; the time of that step
//                  alone, and the whole run_process of `true` beside it, with and without the
//                  run's own TMPDIR (a folder made and removed per run)
//   check          one periodic check of a running program's tree (reap exited orphans, sum the
//                  resident memory), done every 100 ms while a program runs
// Prints medians; the timeout figures are from one run each per round.
//
//   ./bench/external/accelbench_bench_containment [--rounds R] [--runs N] [--timeout T] [--grace G]
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "bench/support/seconds.hpp"
#include "harness/core/stats.hpp"
#include "workloads/external/process.hpp"
#include "workloads/external/process_tree.hpp"

using namespace accelbench;
using bench::clock_type;
using bench::seconds_since;

namespace {

struct options {
  int rounds = 3;
  int runs = 200;
  double timeout_s = 1;
  double grace_s = 0.5;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      o.rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs"))
      o.runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--timeout"))
      o.timeout_s = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--grace"))
      o.grace_s = std::atof(argv[i + 1]);
  }
  return o;
}

struct timeout_figure {
  std::vector<double> ended, leader;
};

void timeout_round(const options& o, const char* mode, timeout_figure& f) {
  external::launch l;
  l.argv = {ACCELBENCH_STUBBORN, mode};
  l.timeout_s = o.timeout_s;
  l.kill_grace_s = o.grace_s;
  const auto t0 = clock_type::now();
  const auto out = external::run_process(l);
  f.ended.push_back(seconds_since(t0));
  f.leader.push_back(out.wall_seconds);
  if (!out.timed_out) {
    fmt::print(stderr, "{}: not timed out ({})\n", mode, out.failure());
    std::exit(1);
  }
}

// `true` started in a tree of its own and waited for; then what is left of it ended the old way
// or by the sweep. Returns the seconds of that step alone.
double end_step(bool sweep) {
  external::process_tree tree;
  const pid_t pid = tree.start([] {
    ::setpgid(0, 0);
    const char* argv[] = {"true", nullptr};
    ::execvp("true", const_cast<char* const*>(argv));
    ::_exit(127);
  });
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  ::setpgid(pid, pid);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
  const auto t0 = clock_type::now();
  if (sweep)
    tree.kill_all();
  else
    ::kill(-pid, SIGKILL);
  const double s = seconds_since(t0);
  ::waitpid(pid, nullptr, 0);
  return s;
}

double whole_run_s(bool private_tmpdir) {
  external::launch l;
  l.argv = {"true"};
  l.limits.private_tmpdir = private_tmpdir;
  const auto t0 = clock_type::now();
  const auto out = external::run_process(l);
  if (!out.succeeded()) {
    fmt::print(stderr, "true failed: {}\n", out.failure());
    std::exit(1);
  }
  return seconds_since(t0);
}

// One periodic check of a running program's tree: what the runner does every 100 ms.
double check_s(int checks) {
  external::process_tree tree;
  const pid_t pid = tree.start([] {
    const char* argv[] = {"sleep", "30", nullptr};
    ::execvp("sleep", const_cast<char* const*>(argv));
    ::_exit(127);
  });
  ::usleep(50000); // sleep has exec'd
  std::uint64_t bytes = 0;
  const auto t0 = clock_type::now();
  for (int i = 0; i < checks; ++i) {
    tree.reap_exited_orphans();
    bytes += tree.resident_bytes();
  }
  const double s = seconds_since(t0) / checks;
  tree.kill_all();
  ::waitpid(pid, nullptr, 0);
  if (bytes == 0) {
    fmt::print(stderr, "no resident memory read from /proc\n");
    std::exit(1);
  }
  return s;
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  const char* modes[] = {"cooperative", "ignore-term", "escape-group"};
  timeout_figure t[3];
  std::vector<double> group, sweep, whole, whole_no_tmp, check;
  for (int r = 0; r < o.rounds; ++r) {
    for (int m = 0; m < 3; ++m)
      timeout_round(o, modes[m], t[m]);
    for (int i = 0; i < o.runs; ++i) {
      group.push_back(end_step(false));
      sweep.push_back(end_step(true));
      whole.push_back(whole_run_s(true));
      whole_no_tmp.push_back(whole_run_s(false));
    }
    check.push_back(check_s(o.runs));
  }
  fmt::print("timeout_s {} s, kill_grace_s {} s, {} rounds (medians)\n", o.timeout_s, o.grace_s,
             o.rounds);
  fmt::print("  {:<14} {:>10} {:>14} {:>14}\n", "program", "expected", "run ended", "leader exit");
  for (int m = 0; m < 3; ++m) {
    const double expected = o.timeout_s + (m == 0 ? 0 : o.grace_s);
    fmt::print("  {:<14} {:>8.3f} s {:>12.3f} s {:>12.3f} s\n", modes[m], expected,
               stats::median(t[m].ended), stats::median(t[m].leader));
  }
  const double g = stats::median(group), s = stats::median(sweep);
  fmt::print("ending what is left after `true` exits, {} runs x {} rounds interleaved (medians)\n",
             o.runs, o.rounds);
  fmt::print("  group kill (before)     {:8.1f} us\n", g * 1e6);
  fmt::print("  tree sweep (now)        {:8.1f} us   (+{:.1f} us a run)\n", s * 1e6, (s - g) * 1e6);
  fmt::print("  whole run_process(true) {:8.1f} us   (the sweep is {:.1f}% of it)\n",
             stats::median(whole) * 1e6, 100 * (s - g) / stats::median(whole));
  fmt::print(
      "  the same, no TMPDIR     {:8.1f} us   (its own TMPDIR, made and removed: {:.1f} us)\n",
      stats::median(whole_no_tmp) * 1e6,
      (stats::median(whole) - stats::median(whole_no_tmp)) * 1e6);
  const double c = stats::median(check);
  fmt::print("  one periodic check      {:8.1f} us   (every 100 ms: {:.3f}% of one core)\n",
             c * 1e6, 100 * c / 0.1);
  return 0;
}
