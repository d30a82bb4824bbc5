#pragma once
// accelbench under mpirun as a user runs it: two ranks, as root with --oversubscribe,
// as CI runs on two cores. Shared by the MPI tests of the collective and train.llama workloads;
// each test target defines ACCELBENCH_EXE, ACCELBENCH_MPIEXEC and ACCELBENCH_TEST_HAVE_MPI.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/skip.hpp"

namespace accelbench::test_mpi {

inline const std::string k_exe = ACCELBENCH_EXE;
inline const std::string k_mpirun = ACCELBENCH_MPIEXEC;

#define REQUIRE_MPIRUN()                                                                           \
  do {                                                                                             \
    if (!ACCELBENCH_TEST_HAVE_MPI)                                                                 \
      ACCELBENCH_SKIP("this build has no MPI");                                                    \
    if (accelbench::test_mpi::k_mpirun.empty())                                                    \
      ACCELBENCH_SKIP("no mpirun found at configure time (apt-get install openmpi-bin)");          \
  } while (0)

// In the sanitizer build, Open MPI's leaks at MPI_Init/MPI_Finalize are suppressed by name
// (tests/sanitizers/lsan.supp, leak:libmpi.so); the slow unwinder keeps that name in the stacks of
// allocations made by components that MPI_Finalize unloads. Ignored without AddressSanitizer.
inline const std::string k_asan =
    std::string(std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "") +
    ":fast_unwind_on_malloc=0";
inline const std::string k_no_launcher =
    "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK -u SLURM_PROCID ASAN_OPTIONS=" + k_asan;

inline test_cli::spawn_options options(const test_cli::temp_dir& d) {
  test_cli::spawn_options o;
  o.cwd = d.path;
  o.out = d.path / "out.txt";
  o.err = d.path / "err.txt";
  // CI runs as root; two ranks on two cores need --oversubscribe.
  o.env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
           {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
           {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
           {"ASAN_OPTIONS", k_asan}};
  return o;
}

inline std::string mpirun(int n, const std::string& command) {
  return k_mpirun + " --oversubscribe -np " + std::to_string(n) + " " + command;
}

// Two ranks where rank 1 alone runs under `ulimit -v KIB` (an address space that holds MPI but
// not what the command then allocates): the way the tests make one rank unable to allocate.
inline std::string mpirun_rank1_limited(const std::string& command, long kib) {
  return k_mpirun + " --oversubscribe -np 1 " + command + " : -np 1 sh -c 'ulimit -v " +
         std::to_string(kib) + "; exec " + command + "'";
}

// AddressSanitizer reserves terabytes of address space, so `ulimit -v` cannot be used under it.
#if defined(__SANITIZE_ADDRESS__)
#define ACCELBENCH_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACCELBENCH_TEST_ASAN 1
#endif
#endif
#ifdef ACCELBENCH_TEST_ASAN
#define SKIP_UNDER_ASAN()                                                                          \
  ACCELBENCH_SKIP("AddressSanitizer reserves terabytes of address space: ulimit -v cannot be "     \
                  "used")
#else
#define SKIP_UNDER_ASAN()                                                                          \
  do {                                                                                             \
  } while (0)
#endif

// limit_s is a hang guard, not a bound on the work: 480 s, far above what a job of these tests
// takes on two busy cores under the sanitizers (84 collective runs, say), and below the 600 s
// CTest TIMEOUT of the MPI test programs, so that a hung job is reported with its stderr.
inline test_cli::exit_status run_sh(const std::string& script, const test_cli::spawn_options& o,
                                    int limit_s = 480) {
  return test_cli::wait_for(test_cli::spawn_sh(script, o), std::chrono::seconds(limit_s));
}

// The one run of a --json run's output.
inline nlohmann::json only_run(const test_cli::spawn_options& o) {
  const nlohmann::json doc = nlohmann::json::parse(test_cli::slurp(o.out));
  REQUIRE(doc["runs"].size() == 1);
  return doc["runs"][0];
}

// A train.llama run's loss at each step.
inline std::vector<double> losses(const nlohmann::json& r) {
  std::vector<double> v;
  for (const auto& s : r["samples"])
    v.push_back(s["extra"]["loss"].get<double>());
  return v;
}

// How a job ended after one of its ranks was killed.
struct killed_job {
  test_cli::exit_status status;
  double seconds_after_kill = 0;
  std::string err;
};

// Seconds Open MPI's daemon waits between the SIGTERM and the SIGKILL it sends the ranks of a job
// it ends (MCA odls_base_sigkill_timeout, 1 s by default): rank 0's SIGTERM handler, which says
// "the launcher ended the job" (harness/dist), must run in between, and on a loaded or sanitized
// machine a second is not certain to be enough. The daemon waits all of it, whether the ranks
// have ended or not: a job it ends takes about twice this long to end (Open MPI 4.1.4: 19 s
// after the kill at 10, 1 s at 1), so only the jobs of kill_rank_1_during get it, not every job
// whose ranks exit non-zero.
inline constexpr int k_sigkill_timeout_s = 10;

// Starts `command` on 2 ranks in d, waits until rank 0 has said `started` on stderr (and a moment
// more, into the work), kills rank 1 with SIGKILL and waits for the job to end. The order that
// matters comes from the event: rank 0 installs its SIGTERM handler before it prints `started`.
// The 800 ms only move the kill further into the work; the outcome is the same without them. The
// waits are hang guards: 300 s for the start, 180 s for the end (which takes the daemon about
// 2 x k_sigkill_timeout_s).
inline killed_job kill_rank_1_during(const std::string& command, const std::string& started,
                                     const test_cli::temp_dir& d,
                                     const test_cli::spawn_options& o) {
  namespace fs = std::filesystem;
  test_cli::spawn_options with_grace = o;
  with_grace.env.emplace_back("OMPI_MCA_odls_base_sigkill_timeout",
                              std::to_string(k_sigkill_timeout_s));
  const pid_t job = test_cli::spawn_sh(
      mpirun(2, "sh -c 'echo $$ > pid.$OMPI_COMM_WORLD_RANK; exec " + command + "'"), with_grace);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  auto started_up = [&] {
    return fs::exists(d.path / "pid.1") &&
           test_cli::slurp(o.err).find(started) != std::string::npos;
  };
  while (!started_up() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool seen = started_up();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  pid_t rank1 = 0;
  std::ifstream(d.path / "pid.1") >> rank1;
  INFO("stderr so far: " << test_cli::slurp(o.err));
  CHECK(seen);
  if (rank1 <= 0) // nothing to kill: end the job rather than leave it running
    test_cli::wait_for(job, std::chrono::seconds(0));
  REQUIRE(rank1 > 0);
  const auto killed_at = std::chrono::steady_clock::now();
  REQUIRE(kill(rank1, SIGKILL) == 0);
  killed_job k;
  k.status = test_cli::wait_for(job, std::chrono::seconds(180));
  k.seconds_after_kill =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  k.err = test_cli::slurp(o.err);
  return k;
}

} // namespace accelbench::test_mpi
