#include "workloads/external/process.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

#include "harness/core/elapsed.hpp"
#include "harness/core/error.hpp"
#include "workloads/external/protocol.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace accelbench::external {
namespace {

using clock_type = std::chrono::steady_clock;

bool key_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
}

// The length of a {K} placeholder starting at arg[at] ('{'), or 0 when there is none there.
std::size_t placeholder_at(const std::string& arg, std::size_t at) {
  std::size_t i = at + 1;
  if (i >= arg.size() || !key_start(arg[i])) {
    return 0;
  }
  while (i < arg.size() && key_char(arg[i])) {
    ++i;
  }
  return i < arg.size() && arg[i] == '}' ? i + 1 - at : 0;
}

std::string substitute_one(const std::string& arg,
                           const std::map<std::string, std::string>& config) {
  std::string out;
  for (std::size_t i = 0; i < arg.size();) {
    std::size_t n = arg[i] == '{' ? placeholder_at(arg, i) : 0;
    if (n == 0) {
      out += arg[i++];
      continue;
    }
    std::string key = arg.substr(i + 1, n - 2);
    auto it = config.find(key);
    if (it == config.end()) {
      std::string msg = "argument '" + arg + "' names {";
      msg += key;
      msg += "}, which the config does not set (give it with --set ";
      msg += key;
      msg += "=V)";
      throw input_error(msg);
    }
    out += it->second;
    i += n;
  }
  return out;
}

std::string signal_name(int sig) {
  static constexpr std::pair<int, const char*> k_names[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"},
      {SIGINT, "SIGINT"},   {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGPIPE, "SIGPIPE"}, {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGTRAP, "SIGTRAP"}};
  for (const auto& [n, name] : k_names) {
    if (n == sig) {
      return name;
    }
  }
  return std::to_string(sig);
}

} // namespace

std::vector<std::string> substitute_placeholders(const std::vector<std::string>& argv,
                                                 const std::map<std::string, std::string>& config) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& a : argv) {
    out.push_back(substitute_one(a, config));
  }
  return out;
}

bool valid_key(const std::string& key) {
  if (key.empty() || !key_start(key[0])) {
    return false;
  }
  return std::all_of(key.begin(), key.end(), key_char);
}

std::string env_name(const std::string& key) {
  std::string out = "ACCELBENCH_";
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::toupper(u)) : '_';
  }
  return out;
}

bool process_outcome::succeeded() const {
  return exit_code == 0 && signal == 0 && !timed_out && !cancelled;
}

std::string process_outcome::failure() const {
  if (cancelled) {
    return "cancelled";
  }
  if (timed_out) {
    return "timed out after " + std::to_string(wall_seconds) + " s";
  }
  if (signal != 0) {
    return "killed by signal " + signal_name(signal);
  }
  return exit_code == 0 ? "" : "exit code " + std::to_string(exit_code);
}

namespace {

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

std::string errno_text(int e) { return std::strerror(e); }

// `fd` moved to a number >= 10 with close-on-exec, so that the child's dup2 onto 0..3 never
// overwrites another of its pipe ends, and no other child inherits it.
unique_fd high_fd(int fd) {
  int h = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  int saved = errno;
  ::close(fd);
  if (h < 0) {
    throw error("cannot duplicate a pipe descriptor: " + errno_text(saved));
  }
  return unique_fd(h);
}

struct pipe_pair {
  unique_fd read;
  unique_fd write;
};

pipe_pair make_pipe() {
  int p[2] = {-1, -1};
  if (::pipe(p) != 0) {
    throw error("cannot make a pipe for an external program: " + errno_text(errno));
  }
  unique_fd r = high_fd(p[0]);
  return {std::move(r), high_fd(p[1])};
}

} // namespace

// Resolved before fork, because execvp is not safe between fork and exec.
std::string resolve_program(const std::string& name) {
  if (name.empty()) {
    throw input_error("no program to run (the command after -- is empty)");
  }
  if (name.find('/') != std::string::npos) {
    return name;
  }
  const char* env_path = std::getenv("PATH");
  std::string_view dirs = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    std::size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) {
      break;
    }
    dirs.remove_prefix(colon + 1);
  }
  throw input_error("cannot run '" + name + "': not found on PATH");
}

namespace {

// The environment the program gets: ours, with ACCELBENCH_K=V for each config key, the
// launch's own variables and the results descriptor's name replacing any of the same name.
std::vector<std::string> child_environment(const launch& l) {
  std::map<std::string, std::string> add = l.env;
  for (const auto& [k, v] : l.config) {
    add[env_name(k)] = v;
  }
  add[std::string(k_results_fd_env)] = std::to_string(k_results_fd);
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (add.count(std::string(kv.substr(0, kv.find('=')))) == 0) {
      out.emplace_back(kv);
    }
  }
  for (const auto& [k, v] : add) {
    out.push_back(k);
    out.back() += '=';
    out.back() += v;
  }
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (std::string& s : v) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// Everything the child needs, prepared before fork: between fork and exec it makes only
// async-signal-safe calls (no allocation, no locks).
struct child_plan {
  const char* path = nullptr;
  char** argv = nullptr;
  char** envp = nullptr;
  const char* cwd = nullptr;
  int in = -1, out = -1, err = -1, results = -1, status = -1;
};

void close_from(int first, int last) {
  if (first > last) {
    return;
  }
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(last), 0) ==
      0) {
    return;
  }
#endif
  for (int fd = first; fd <= last; ++fd) {
    ::close(fd);
  }
}

[[noreturn]] void exec_child(const child_plan& p, int max_fd) {
  ::setpgid(0, 0);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL; // NOLINT(cppcoreguidelines-pro-type-union-access)
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) {
    ::sigaction(sig, &dfl, nullptr);
  }
  if (::dup2(p.in, 0) < 0 || ::dup2(p.out, 1) < 0 || ::dup2(p.err, 2) < 0 ||
      ::dup2(p.results, k_results_fd) < 0 || (p.cwd != nullptr && ::chdir(p.cwd) != 0)) {
    int e = errno;
    (void)!::write(p.status, &e, sizeof e);
    ::_exit(127);
  }
  close_from(k_results_fd + 1, p.status - 1); // every other descriptor: nothing leaks
  close_from(p.status + 1, max_fd);
  ::execve(p.path, p.argv, p.envp);
  int e = errno;
  (void)!::write(p.status, &e, sizeof e);
  ::_exit(127);
}

} // namespace

namespace {

// One captured output: the head of it (stdout, protocol) or its tail (stderr).
struct capture {
  unique_fd fd;
  std::string* text = nullptr;
  std::size_t limit = 0;
  bool keep_tail = false;
  bool* truncated = nullptr;

  // Reads what is there; false at end of file.
  bool pump() {
    char buf[65536];
    ssize_t n = ::read(fd.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      return true;
    }
    if (n <= 0) {
      fd.reset();
      return false;
    }
    std::string_view got(buf, static_cast<std::size_t>(n));
    if (keep_tail) {
      text->append(got);
      if (text->size() > 2 * limit) {
        text->erase(0, text->size() - limit);
      }
    } else {
      std::size_t room = limit - std::min(limit, text->size());
      text->append(got.substr(0, room));
      if (got.size() > room && truncated != nullptr) {
        *truncated = true;
      }
    }
    return true;
  }
};

// The running program: its pid (= its process group), the pidfd that says when it exits, and
// the signals sent to its group.
struct running {
  pid_t pid = -1;
  unique_fd pidfd;
  clock_type::time_point start;
  clock_type::time_point term_sent;
  bool term = false;
  bool killed = false;

  void terminate(int sig) {
    if (!term) {
      ::kill(-pid, sig);
      term = true;
      term_sent = clock_type::now();
    }
  }
  void kill_group() {
    ::kill(-pid, SIGKILL);
    killed = true;
  }
  // True once the leader has exited (it stays a zombie, so its group id cannot be reused).
  bool exited() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  }
};

running spawn(const launch& l, std::vector<std::string>& argv, pipe_pair& out, pipe_pair& err,
              pipe_pair& results) {
  std::string path = resolve_program(argv.at(0));
  std::vector<std::string> env = child_environment(l);
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_env = c_strings(env);
  unique_fd devnull = high_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  pipe_pair status = make_pipe();
  child_plan p{path.c_str(),   c_argv.data(), c_env.data(), l.cwd.empty() ? nullptr : l.cwd.c_str(),
               devnull.fd,     out.write.fd,  err.write.fd, results.write.fd,
               status.write.fd};
  long open_max = ::sysconf(_SC_OPEN_MAX);
  int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;
  running r;
  r.start = clock_type::now();
  r.pid = ::fork();
  if (r.pid < 0) {
    throw error("cannot start '" + path + "': fork failed: " + errno_text(errno));
  }
  if (r.pid == 0) {
    exec_child(p, max_fd);
  }
  ::setpgid(r.pid, r.pid); // also in the child: whichever runs first, the group exists
  status.write.reset();
  out.write.reset();
  err.write.reset();
  results.write.reset();
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(status.read.fd, &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    ::waitpid(r.pid, nullptr, 0);
    throw input_error("cannot run '" + argv.at(0) + "': " + errno_text(child_errno));
  }
#ifdef SYS_pidfd_open
  r.pidfd = unique_fd(static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0)));
#endif
  return r;
}

} // namespace

namespace {

// Sends SIGTERM at the timeout or the cancel, and SIGKILL after the grace period.
void enforce_limits(const launch& l, running& r, process_outcome& o) {
  if (l.cancel != nullptr && l.cancel->load() && !o.timed_out) {
    o.cancelled = true;
    r.terminate(l.stop_signal);
  }
  if (l.timeout_s > 0 && seconds_since(r.start) >= l.timeout_s && !o.cancelled) {
    o.timed_out = true;
    r.terminate(l.stop_signal);
  }
  if (r.term && !r.killed &&
      std::chrono::duration<double>(clock_type::now() - r.term_sent).count() >= l.kill_grace_s) {
    r.kill_group();
  }
}

// Reads the outputs until the leader exits; then ends what is left of its group and reads what
// the pipes still hold (for at most the grace period, in case a process left the group).
void watch(const launch& l, running& r, std::vector<capture>& caps, process_outcome& o) {
  bool leader_gone = false;
  clock_type::time_point drain_until{};
  while (true) {
    std::vector<pollfd> fds;
    fds.reserve(caps.size() + 1);
    for (capture& c : caps) {
      fds.push_back({c.fd.fd, POLLIN, 0}); // a closed capture (-1) is ignored by poll
    }
    fds.push_back({leader_gone ? -1 : r.pidfd.fd, POLLIN, 0});
    bool any_open = false;
    for (const capture& c : caps) {
      any_open = any_open || c.fd.fd >= 0;
    }
    if (leader_gone && (!any_open || clock_type::now() >= drain_until)) {
      return;
    }
    int wait_ms = r.pidfd.fd >= 0 ? 50 : 2;
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno != EINTR) {
      throw error("poll failed while running an external program: " + errno_text(errno));
    }
    for (std::size_t i = 0; i < caps.size(); ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        caps[i].pump();
      }
    }
    if (!leader_gone && r.exited()) {
      o.wall_seconds = seconds_since(r.start);
      r.kill_group(); // the program's leftovers: nothing outlives the run
      leader_gone = true;
      drain_until = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                            std::chrono::duration<double>(l.kill_grace_s + 1));
      continue;
    }
    if (!leader_gone) {
      enforce_limits(l, r, o);
    }
  }
}

void read_status(pid_t pid, process_outcome& o) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    o.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    o.signal = WTERMSIG(status);
  }
}

} // namespace

process_outcome run_process(const launch& l) {
  process_outcome o;
  o.argv = l.substitute ? substitute_placeholders(l.argv, l.config) : l.argv;
  if (o.argv.empty()) {
    throw input_error("no program to run (the command after -- is empty)");
  }
  pipe_pair out = make_pipe();
  pipe_pair err = make_pipe();
  pipe_pair results = make_pipe();
  std::vector<std::string> argv = o.argv;
  running r = spawn(l, argv, out, err, results);
  std::vector<capture> caps;
  caps.push_back(
      {std::move(out.read), &o.stdout_text, l.max_stdout_bytes, false, &o.stdout_truncated});
  caps.push_back({std::move(err.read), &o.stderr_tail, l.stderr_tail_bytes, true, nullptr});
  caps.push_back({std::move(results.read), &o.protocol_text, l.max_protocol_bytes, false,
                  &o.protocol_truncated});
  try {
    watch(l, r, caps, o);
  } catch (...) {
    r.kill_group(); // an error of ours must not leave the program running
    ::waitpid(r.pid, nullptr, 0);
    throw;
  }
  read_status(r.pid, o);
  if (o.stderr_tail.size() > l.stderr_tail_bytes) {
    o.stderr_tail.erase(0, o.stderr_tail.size() - l.stderr_tail_bytes);
  }
  return o;
}

} // namespace accelbench::external
