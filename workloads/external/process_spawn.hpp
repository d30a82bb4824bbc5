#pragma once
// Starting an external program for run_process (process.hpp), private to accelbench::external:
// the descriptors and pipes, the run's own temporary folder, the running program (its process
// group and tree), and spawn, which prepares everything before fork and starts the program with
// its limits (process_spawn.cpp).
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <utility>
#include <vector>

#include "workloads/external/process.hpp"
#include "workloads/external/process_tree.hpp"

namespace accelbench::external {

using clock_type = std::chrono::steady_clock;

// An owned file descriptor, closed when it goes.
struct unique_fd {
  int fd = -1;
  unique_fd() = default;
  explicit unique_fd(int f) : fd(f) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  unique_fd(unique_fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  unique_fd& operator=(unique_fd&& o) noexcept {
    reset();
    fd = std::exchange(o.fd, -1);
    return *this;
  }
  ~unique_fd() { reset(); }
  void reset() {
    if (fd >= 0) {
      ::close(fd);
    }
    fd = -1;
  }
};

std::string errno_text(int e);

struct pipe_pair {
  unique_fd read;
  unique_fd write;
};

// A pipe, both ends moved above the standard descriptors with close-on-exec.
pipe_pair make_pipe();

// The running program: its pid (= its process group), the pidfd that says when it exits, its
// whole process tree, and what was sent to it.
struct running {
  pid_t pid = -1;
  unique_fd pidfd;
  process_tree tree;
  clock_type::time_point start;
  clock_type::time_point term_sent;
  clock_type::time_point next_check;
  bool term = false;
  bool killed = false;

  // The stop signal to every process of the tree, and to the leader's process group as well (a
  // process that became a child of it after the scan).
  void terminate(int sig) {
    if (!term) {
      tree.signal_all(sig);
      ::kill(-pid, sig);
      term = true;
      term_sent = clock_type::now();
    }
  }
  void kill_tree() {
    tree.kill_all();
    killed = true;
  }
  // True once the leader has exited (it stays a zombie, so its group id cannot be reused).
  bool exited() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  }
};

// The run's own temporary folder (TMPDIR): made before the spawn, removed with everything in it
// when the run is over (after its tree is dead, so nothing writes there any more).
class private_tmpdir {
public:
  explicit private_tmpdir(bool wanted);
  private_tmpdir(const private_tmpdir&) = delete;
  private_tmpdir& operator=(const private_tmpdir&) = delete;
  ~private_tmpdir();
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// Starts argv (argv[0] resolved on PATH) as the leader of its own process group, its outputs on
// the write ends of out, err and results (closed here once the child has them); throws
// input_error when the program cannot start.
void spawn(const launch& l, std::vector<std::string>& argv, const std::string& tmpdir,
           pipe_pair& out, pipe_pair& err, pipe_pair& results, running& r);

} // namespace accelbench::external
