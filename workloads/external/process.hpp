#pragma once
// Runs one external program the way a benchmark needs it: its own process group (a timeout or a
// cancel ends the whole group, SIGTERM then SIGKILL), stdin from /dev/null, stdout captured (for
// MLLOG lines), the tail of stderr kept for the run's reason, and the results protocol on file
// descriptor 3 (named in ACCELBENCH_RESULTS_FD). The config reaches it through {K} placeholders
// in its arguments and ACCELBENCH_K=V environment variables. POSIX only (Linux, macOS).
#include <atomic>
#include <csignal>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace accelbench::external {

// The descriptor number the program finds the results pipe on.
inline constexpr int k_results_fd = 3;

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
};

struct process_outcome {
  std::vector<std::string> argv; // as executed (placeholders substituted)
  int exit_code = -1;            // when it exited; -1 when killed by a signal
  int signal = 0;                // the signal that ended it, or 0
  bool timed_out = false;
  bool cancelled = false;
  double wall_seconds = 0; // spawn to the leader's exit: hyperfine-style whole-process time
  std::string stdout_text;
  bool stdout_truncated = false;
  std::string stderr_tail;
  std::string protocol_text;
  bool protocol_truncated = false;

  // Exit code 0, no signal, no timeout, no cancel.
  bool succeeded() const;
  // One line saying why it did not succeed ("" when it did): "exit code 2", "killed by signal
  // SIGSEGV", "timed out after 5 s", "cancelled".
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
