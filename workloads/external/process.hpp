#pragma once
// Runs one external program the way a benchmark needs it: its own process group, and its whole
// process tree contained (process_tree.hpp: a timeout or a cancel sends the stop signal to every
// process of the tree, then SIGKILL; when the program exits, what is left of the tree is killed,
// whatever it did with groups and sessions), bounds on what it may take of the machine
// (resource_limits), stdin from /dev/null, stdout captured (for MLLOG lines), the tail of stderr
// kept for the run's reason, and the results protocol on file descriptor 3 (named in
// ACCELBENCH_RESULTS_FD). The config reaches it through {K} placeholders in its arguments and
// ACCELBENCH_K=V environment variables. POSIX (Linux, macOS); the tree and the memory bound need
// Linux's /proc, elsewhere only the process group is ended.
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accelbench::external {

// The descriptor number the program finds the results pipe on.
inline constexpr int k_results_fd = 3;

// What a run of the program may take of the machine (docs/external.md, "Limits"). Each 0 means no
// bound of accelbench's own.
struct resource_limits {
  // The resident memory of the program's whole tree, summed over its processes from /proc every
  // 100 ms; over it, the tree is killed and the run fails. Default: k_default_memory_fraction of
  // the machine's physical memory.
  std::uint64_t memory_bytes = default_memory_bytes();
  // RLIMIT_NOFILE, soft and hard, set in the child before exec (at most accelbench's own hard
  // limit): descriptors open at once in each process.
  std::uint64_t open_files = 65536;
  // RLIMIT_FSIZE, soft and hard (at most accelbench's own): the largest file a process may write;
  // beyond it the write fails and the process gets SIGXFSZ. Default 64 GiB.
  std::uint64_t file_bytes = std::uint64_t{64} << 30;
  // TMPDIR: a fresh folder of the run's own, made before the spawn and removed with everything in
  // it after the run, so that no temporary file outlives it.
  bool private_tmpdir = true;

  // The share of physical memory the tree may hold by default: the rest is left to the system,
  // accelbench and the page cache, so that the tree is ended with its reason before the kernel's
  // OOM killer picks a process (accelbench, perhaps).
  static constexpr double k_default_memory_fraction = 0.8;
  static std::uint64_t default_memory_bytes();
};

struct launch {
  std::vector<std::string> argv;             // the command as given, with {K} placeholders
  std::map<std::string, std::string> config; // K=V: placeholders and ACCELBENCH_K variables
  std::map<std::string, std::string> env;    // variables set as named (a trainer's SEED)
  std::string cwd;                           // "" = the current directory
  double timeout_s = 0;                      // 0 = none
  double kill_grace_s = 2;                   // stop_signal -> SIGKILL
  std::size_t stderr_tail_bytes = 4096;      // last bytes of stderr kept
  std::size_t max_stdout_bytes = std::size_t{64} << 20;   // first bytes of stdout kept
  std::size_t max_protocol_bytes = std::size_t{64} << 20; // protocol bytes read at most
  const std::atomic<bool>* cancel = nullptr; // set (e.g. by a SIGINT handler) to end the run
  // false: argv runs as given, braces and all (a child accelbench fills its own program's {K})
  bool substitute = true;
  // What a timeout or a cancel sends the group first. SIGINT for a child that is itself an
  // accelbench: it then ends its own program's process group before it exits (`accelbench ab`);
  // SIGTERM would end it at once and leave that group running.
  int stop_signal = SIGTERM;
  resource_limits limits;
};

struct process_outcome {
  std::vector<std::string> argv; // as executed (placeholders substituted)
  int exit_code = -1;            // when it exited; -1 when killed by a signal
  int signal = 0;                // the signal that ended it, or 0
  bool timed_out = false;
  bool cancelled = false;
  bool memory_exceeded = false;        // the tree held more than limits.memory_bytes: it was killed
  double timeout_s = 0;                // the launch's, for the reason
  resource_limits limits;              // the launch's, for the reason
  std::uint64_t peak_memory_bytes = 0; // the most resident memory the tree was seen to hold
  // The outputs stayed open after the tree had ended: a descriptor passed to a process outside it
  // (over a socket); they were read for 1 s more, then left.
  bool outputs_held = false;
  double wall_seconds = 0; // spawn to the leader's exit: hyperfine-style whole-process time
  std::string stdout_text;
  bool stdout_truncated = false;
  std::string stderr_tail;
  std::string protocol_text;
  bool protocol_truncated = false;

  // Exit code 0, no signal, no timeout, no cancel.
  bool succeeded() const;
  // One line saying why it did not succeed ("" when it did): "exit code 2", "killed by signal
  // SIGSEGV", "timed out: its timeout is 5 s (ended after 5.02 s)", "cancelled", "used more than
  // 64 MiB of resident memory ...", a limit named where the signal, the exit code or the end of
  // stderr shows the program ran into it (SIGXFSZ, "Too many open files").
  std::string failure() const;
};

// `argv` with every {K} replaced by config[K]. A K is letters, digits and '_', '.', '-' starting
// with a letter or '_'; other braces are left as they are. Throws input_error naming the argument
// when it names a K the config lacks.
std::vector<std::string> substitute_placeholders(const std::vector<std::string>& argv,
                                                 const std::map<std::string, std::string>& config);

// Whether `key` may name a config key of a program ({K}): a letter or '_', then letters, digits,
// '_', '.', '-'.
bool valid_key(const std::string& key);

// The program's path: as given when it has a '/', else the first executable match on PATH.
// Throws input_error naming it when it is empty or not found on PATH.
std::string resolve_program(const std::string& name);

// The variable a config key reaches the program as: ACCELBENCH_ + K upper-cased, with every
// character other than a letter or digit made '_' ("batch-size" -> ACCELBENCH_BATCH_SIZE).
std::string env_name(const std::string& key);

// Runs the program to its end (or its timeout or cancel). Throws input_error when it cannot be
// started ("cannot run 'x': No such file or directory"); every other failure is in the outcome.
process_outcome run_process(const launch& l);

} // namespace accelbench::external
