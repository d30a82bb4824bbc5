#include "workloads/plugin/plugin_worker.hpp"

#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::plugin {

namespace {

using clk = std::chrono::steady_clock;

// A run's JSON is kilobytes; a worker that sends more is not sending a run.
constexpr size_t k_max_message = size_t{64} << 20;

// ---------------------------------------------------------------------------------------------
// The worker (the child).

// First of the exit handlers (registered last): a plugin that calls exit() ends the worker here,
// its output flushed and its code kept, before any exit handler of accelbench's own state (a
// static destructor, a temporary file's removal) can run in a process that does not own it.
void on_plugin_exit(int status, void*) {
  std::fflush(nullptr);
  _exit(status);
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(EXIT_FAILURE); // the parent is gone or killed us: nobody reads a partial run
    done += size_t(n);
  }
}

// The worker's process: its own group (killed as a whole), dead with accelbench, the default
// dispositions of the signals accelbench handles (Ctrl-C is accelbench's to handle, not the
// plugin's: the worker is outside the terminal's foreground group), and of the fatal signals: a
// plugin's crash reaches accelbench as the signal it is, whatever handler accelbench's process
// holds (a sanitizer's turned SIGSEGV into "exit code 1", a library's crash reporter may too).
void become_worker(pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) // accelbench died before the line above
    _exit(EXIT_FAILURE);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::on_exit(on_plugin_exit, nullptr);
}

[[noreturn]] void worker_main(int fd, pid_t parent, run r,
                              const std::function<void(run&)>& measure) {
  become_worker(parent);
  try {
    measure(r);
  } catch (const std::bad_alloc&) {
    r.mark_failed("out of memory");
  } catch (const std::exception& e) {
    r.mark_failed(e.what());
  }
  write_all(fd, dump_json(to_json(r)));
  ::close(fd);
  std::fflush(nullptr); // the plugin's own prints, as exit() would have written them
  _exit(EXIT_SUCCESS);
}

// ---------------------------------------------------------------------------------------------
// Waiting for it (the parent).

enum class stop { none, timed_out, cancelled, too_long };

// When the parent stops waiting: the deadline (none when timeout_s is 0) or a cancel.
class watch {
public:
  explicit watch(const worker_limits& lim)
      : m_bounded(lim.timeout_s > 0), m_cancel(lim.cancel),
        m_deadline(clk::now() + std::chrono::duration_cast<clk::duration>(
                                    std::chrono::duration<double>(bounded_s(lim.timeout_s)))) {}
  stop check() const {
    if (m_cancel && m_cancel->load())
      return stop::cancelled;
    return m_bounded && clk::now() >= m_deadline ? stop::timed_out : stop::none;
  }
  // How long one wait may block: short enough that a Ctrl-C is seen within 0.1 s.
  int poll_ms() const {
    if (!m_bounded)
      return 100;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - clk::now()).count();
    return (int)std::clamp<long long>(left + 1, 0, 100);
  }

private:
  // A year at most: a larger timeout is none in practice and would overflow the clock.
  static double bounded_s(double s) { return std::min(std::max(s, 0.0), 365.0 * 86400); }
  bool m_bounded;
  const std::atomic<bool>* m_cancel;
  clk::time_point m_deadline;
};

// Whether the worker has exited, leaving it unreaped: a zombie keeps its pid and its group's id
// from reuse until the group is killed.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno != EINTR; // no such child: nothing to wait for
  return info.si_pid == pid;
}

enum class got { more, end, too_long };

// One read of the worker's message (poll said it would not block).
got read_some(int fd, std::string& msg) {
  char buf[1 << 16];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR)
    return got::more;
  if (n <= 0)
    return got::end;
  msg.append(buf, size_t(n));
  return msg.size() > k_max_message ? got::too_long : got::more;
}

// What is left in the pipe once the worker has exited: it wrote all of its message before.
stop drain(int fd, std::string& msg) {
  for (pollfd p{fd, POLLIN, 0}; ::poll(&p, 1, 0) > 0;)
    switch (read_some(fd, msg)) {
    case got::more:
      continue;
    case got::end:
      return stop::none;
    case got::too_long:
      return stop::too_long;
    }
  return stop::none;
}

// The worker's message, read until its end (the pipe closed, or the worker exited: a process the
// plugin started may hold the pipe open after it), or why the parent stopped first.
stop read_message(pid_t pid, int fd, const watch& w, std::string& msg) {
  for (;;) {
    if (const stop s = w.check(); s != stop::none)
      return s;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, w.poll_ms()) > 0) {
      const got g = read_some(fd, msg);
      if (g == got::end)
        return stop::none;
      if (g == got::too_long)
        return stop::too_long;
    } else if (has_exited(pid)) {
      return drain(fd, msg);
    }
  }
}

// Waits until the worker has exited, or why the parent stopped first: a plugin may close the pipe
// and go on running, so the end of the message is not the end of the worker.
stop wait_exited(pid_t pid, const watch& w) {
  for (;;) {
    if (has_exited(pid))
      return stop::none;
    if (const stop s = w.check(); s != stop::none)
      return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

struct worker_end {
  std::string message; // what the worker sent
  int status = 0;      // waitpid's
  stop stopped = stop::none;
};

// The worker to its end: its message, its exit; then its whole process group is killed (what a
// plugin left running there, or the worker itself when the parent stopped waiting) and reaped.
worker_end finish(pid_t pid, int fd, const worker_limits& lim) {
  const watch w(lim);
  worker_end e;
  e.stopped = read_message(pid, fd, w, e.message);
  if (e.stopped == stop::none)
    e.stopped = wait_exited(pid, w);
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &e.status, 0) < 0 && errno == EINTR) {
  }
  ::close(fd);
  return e;
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig))
    return std::string("SIG") + abbrev;
  return fmt::format("signal {}", sig);
}

// This process's threads now (/proc/self/status): a runtime that keeps threads of its own across
// a fork (CUDA, a thread pool) cannot be used in the worker, which has only the forking one.
int threads_now() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Threads:", 0) == 0)
      return std::atoi(line.c_str() + 8);
  return 0;
}

std::string timeout_reason(const worker_limits& lim, int threads_at_fork) {
  std::string why = fmt::format("the plugin's worker ran past plugin.timeout_s = {} s and was "
                                "killed (SIGKILL to its process group)",
                                lim.timeout_s);
  if (threads_at_fork > 1)
    why += fmt::format("; accelbench had {} threads when it forked the worker: a runtime that "
                       "started them before (CUDA, a thread pool) may hang when the plugin uses "
                       "it there",
                       threads_at_fork);
  return why;
}

// Why the worker's end fails the run ("" when it exited 0 having sent something to read).
std::string end_problem(const worker_end& e, const worker_limits& lim, int threads_at_fork) {
  switch (e.stopped) {
  case stop::cancelled:
    return "interrupted (Ctrl-C): the plugin's worker was killed";
  case stop::timed_out:
    return timeout_reason(lim, threads_at_fork);
  case stop::too_long:
    return fmt::format("the plugin's worker sent more than {} MiB (no run is that long) and was "
                       "killed",
                       k_max_message >> 20);
  case stop::none:
    break;
  }
  if (WIFSIGNALED(e.status))
    return fmt::format("the plugin's worker was killed by {}", signal_name(WTERMSIG(e.status)));
  const int code = WIFEXITED(e.status) ? WEXITSTATUS(e.status) : -1;
  if (code != 0 || e.message.empty())
    return fmt::format("the plugin's worker exited with code {} before sending its run (the "
                       "plugin ended the process)",
                       code);
  return "";
}

// GNU OpenMP cannot be used in a child forked after its threads started: the child waits for them
// forever. accelbench runs OpenMP code in process (the CPU attention reference, train.llama on the
// CPU) and a plugin may use OpenMP, so the runtime's threads are ended before each fork (OpenMP
// 5.0's hard pause); the runtime starts new ones when it is next used, here or in the worker.
// LLVM's runtime (what clang links: the sanitizer build) restarts itself in a forked child, and
// its hard pause breaks it (libomp 14 aborts at the next parallel region): it is left alone.
void release_openmp_threads() {
#if defined(__GNUC__) && !defined(__clang__)
  omp_pause_resource_all(omp_pause_hard);
#endif
}

// Writes what is buffered for stdout and stderr now: the worker would otherwise inherit it and
// write it a second time when a plugin's exit() flushes the worker's copy.
void flush_output() {
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);
}

// Non-finite doubles are written as null in JSON (nlohmann); a sample's or metric's value comes
// back as NaN, so that the rules that judge non-finite figures see one, not a malformed run.
void restore_non_finite(json& j) {
  for (const char* list : {"samples", "metrics"}) {
    auto it = j.find(list);
    if (it == j.end() || !it->is_array())
      continue;
    for (auto& item : *it)
      if (item.is_object() && item.contains("value") && item["value"].is_null())
        item["value"] = std::numeric_limits<double>::quiet_NaN();
  }
}

} // namespace

std::string take_worker_run(run& out, const std::string& text) {
  run got;
  try {
    json j = parse_json_input(text, "the plugin worker's run");
    if (!j.is_object())
      return "not a JSON object";
    restore_non_finite(j);
    got = run_from_json(j);
  } catch (const input_error& e) {
    return e.what();
  }
  if (got.uuid != out.uuid)
    return fmt::format("a run with uuid {}, not {}", printable(got.uuid), out.uuid);
  out.samples = std::move(got.samples);
  out.sample_unit = std::move(got.sample_unit);
  out.sample_dir = got.sample_dir;
  out.metrics = std::move(got.metrics);
  out.status = got.status;
  out.status_reason = std::move(got.status_reason);
  out.valid = got.valid;
  out.invalid_reasons = std::move(got.invalid_reasons);
  out.extra = std::move(got.extra);
  out.effective_settings = std::move(got.effective_settings);
  return "";
}

void run_in_worker(run& out, const std::function<void(run&)>& measure, const worker_limits& lim) {
  flush_output();
  release_openmp_threads();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return out.mark_failed(
        fmt::format("cannot start the plugin's worker: pipe: {}", std::strerror(errno)));
  const int threads_at_fork = threads_now();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    worker_main(fds[1], parent, out, measure);
  }
  const int fork_errno = errno;
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return out.mark_failed(
        fmt::format("cannot start the plugin's worker: fork: {}", std::strerror(fork_errno)));
  }
  ::setpgid(pid, pid); // here too: a kill right after the fork reaches the group
  const worker_end e = finish(pid, fds[0], lim);
  if (const std::string why = end_problem(e, lim, threads_at_fork); !why.empty())
    return out.mark_failed(why);
  if (const std::string why = take_worker_run(out, e.message); !why.empty())
    out.mark_failed("the plugin's worker sent a malformed run: " + why);
}

} // namespace accelbench::plugin
