#include "workloads/external/process.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <string_view>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/core/error.hpp"
#include "workloads/external/process_tree.hpp"
#include "workloads/external/protocol.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace accelbench::external {
namespace {

namespace fs = std::filesystem;
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
      {SIGPIPE, "SIGPIPE"}, {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGTRAP, "SIGTRAP"},
      {SIGXFSZ, "SIGXFSZ"}, {SIGXCPU, "SIGXCPU"}, {SIGSTOP, "SIGSTOP"}};
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

std::uint64_t resource_limits::default_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) {
    return 0; // unknown: no bound rather than a made-up one
  }
  return static_cast<std::uint64_t>(static_cast<double>(pages) * static_cast<double>(page) *
                                    k_default_memory_fraction);
}

bool process_outcome::succeeded() const {
  return exit_code == 0 && signal == 0 && !timed_out && !cancelled && !memory_exceeded;
}

namespace {

// "64 MiB", "19284.8 MiB".
std::string mib_text(std::uint64_t bytes) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  if (bytes % mib == 0) {
    return std::to_string(bytes / mib) + " MiB";
  }
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(mib));
}

bool stderr_says(const process_outcome& o, int err) {
  return o.stderr_tail.find(std::strerror(err)) != std::string::npos;
}

// The limit an exit code or the end of stderr shows the program ran into, as " (...)", or "".
// A limit hit by a process other than the leader shows only that way: the leader sees a child
// killed by SIGXFSZ (a shell exits 128 + SIGXFSZ) or a call that failed with EFBIG or EMFILE.
std::string limit_hint(const process_outcome& o) {
  if (o.limits.file_bytes != 0 && (o.exit_code == 128 + SIGXFSZ || stderr_says(o, EFBIG))) {
    return " (a process of it wrote past its file-size limit of " + mib_text(o.limits.file_bytes) +
           ")";
  }
  if (stderr_says(o, EMFILE) && o.limits.open_files != 0) {
    return fmt::format(" (its stderr says '{}': its open-files limit is {})", std::strerror(EMFILE),
                       o.limits.open_files);
  }
  return "";
}

} // namespace

std::string process_outcome::failure() const {
  if (cancelled) {
    return "cancelled";
  }
  if (timed_out) {
    return fmt::format("timed out: its timeout is {:g} s (ended after {:.2f} s)", timeout_s,
                       wall_seconds);
  }
  if (memory_exceeded) {
    return "used more than " + mib_text(limits.memory_bytes) +
           " of resident memory, its limit (summed over its processes; they were killed)";
  }
  if (signal == SIGXFSZ && limits.file_bytes != 0) {
    return "killed by signal SIGXFSZ: it wrote past its file-size limit of " +
           mib_text(limits.file_bytes);
  }
  if (signal != 0) {
    return "killed by signal " + signal_name(signal);
  }
  return exit_code == 0 ? "" : "exit code " + std::to_string(exit_code) + limit_hint(*this);
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
// launch's own variables, the results descriptor's name and TMPDIR (its own folder, when it has
// one) replacing any of the same name.
std::vector<std::string> child_environment(const launch& l, const std::string& tmpdir) {
  std::map<std::string, std::string> add = l.env;
  for (const auto& [k, v] : l.config) {
    add[env_name(k)] = v;
  }
  add[std::string(k_results_fd_env)] = std::to_string(k_results_fd);
  if (!tmpdir.empty()) {
    add["TMPDIR"] = tmpdir;
  }
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

// A resource limit to set in the child (soft and hard alike), or none.
struct child_rlimit {
  bool set = false;
  rlimit value{};
};

// `want` bytes or descriptors (0: none of ours), at most our own hard limit: the program's
// limit is then always one setrlimit can give, and a nested accelbench's program inherits it.
child_rlimit rlimit_for(int resource, std::uint64_t want) {
  child_rlimit r;
  rlimit ours{};
  if (want == 0 || ::getrlimit(resource, &ours) != 0) {
    return r;
  }
  rlim_t v = static_cast<rlim_t>(want);
  if (ours.rlim_max != RLIM_INFINITY && v > ours.rlim_max) {
    v = ours.rlim_max;
  }
  r.set = true;
  r.value.rlim_cur = v;
  r.value.rlim_max = v;
  return r;
}

// Everything the child needs, prepared before fork: between fork and exec it makes only
// async-signal-safe calls (no allocation, no locks).
struct child_plan {
  const char* path = nullptr;
  char** argv = nullptr;
  char** envp = nullptr;
  const char* cwd = nullptr;
  int in = -1, out = -1, err = -1, results = -1, status = -1;
  child_rlimit open_files, file_size;
};

// What the child reports on the status pipe when it cannot start the program.
enum class child_step : int { setup, limits, exec };
struct child_failure {
  child_step step = child_step::exec;
  int error = 0;
};

[[noreturn]] void child_fails(const child_plan& p, child_step step) {
  child_failure f{step, errno};
  (void)!::write(p.status, &f, sizeof f);
  ::_exit(127);
}

bool set_limits(const child_plan& p) {
  return (!p.open_files.set || ::setrlimit(RLIMIT_NOFILE, &p.open_files.value) == 0) &&
         (!p.file_size.set || ::setrlimit(RLIMIT_FSIZE, &p.file_size.value) == 0);
}

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
    child_fails(p, child_step::setup);
  }
  close_from(k_results_fd + 1, p.status - 1); // every other descriptor: nothing leaks
  close_from(p.status + 1, max_fd);
  if (!set_limits(p)) {
    child_fails(p, child_step::limits);
  }
  ::execve(p.path, p.argv, p.envp);
  child_fails(p, child_step::exec);
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

// Makes `dir` and every folder below it (never through a symbolic link) writable and searchable
// by us, so that a program that took the permissions away cannot keep its files.
void make_removable(const fs::path& dir) {
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() != fs::file_type::directory) {
    return;
  }
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    make_removable(it->path());
  }
}

// The run's own temporary folder (TMPDIR): made before the spawn, removed with everything in it
// when the run is over (after its tree is dead, so nothing writes there any more).
class private_tmpdir {
public:
  explicit private_tmpdir(bool wanted) {
    if (!wanted) {
      return;
    }
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) {
      base = "/tmp";
    }
    std::string name = (base / "accelbench-run-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw error("cannot make a temporary folder for the program in " + base.string() + ": " +
                  errno_text(errno));
    }
    path_ = name;
  }
  private_tmpdir(const private_tmpdir&) = delete;
  private_tmpdir& operator=(const private_tmpdir&) = delete;
  ~private_tmpdir() {
    if (path_.empty()) {
      return;
    }
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec) {
      make_removable(path_);
      fs::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// The reason the child could not start the program.
std::string start_failure(const std::string& program, const child_failure& f) {
  if (f.step == child_step::limits) {
    return "cannot set the resource limits of '" + program + "': " + errno_text(f.error);
  }
  return "cannot run '" + program + "': " + errno_text(f.error);
}

void spawn(const launch& l, std::vector<std::string>& argv, const std::string& tmpdir,
           pipe_pair& out, pipe_pair& err, pipe_pair& results, running& r) {
  std::string path = resolve_program(argv.at(0));
  std::vector<std::string> env = child_environment(l, tmpdir);
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_env = c_strings(env);
  unique_fd devnull = high_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  pipe_pair status = make_pipe();
  child_plan p{path.c_str(),
               c_argv.data(),
               c_env.data(),
               l.cwd.empty() ? nullptr : l.cwd.c_str(),
               devnull.fd,
               out.write.fd,
               err.write.fd,
               results.write.fd,
               status.write.fd,
               rlimit_for(RLIMIT_NOFILE, l.limits.open_files),
               rlimit_for(RLIMIT_FSIZE, l.limits.file_bytes)};
  long open_max = ::sysconf(_SC_OPEN_MAX);
  int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;
  r.start = clock_type::now();
  r.next_check = r.start;
  r.pid = r.tree.start([&p, max_fd] { exec_child(p, max_fd); });
  if (r.pid < 0) {
    throw error("cannot start '" + path + "': fork failed: " + errno_text(errno));
  }
  ::setpgid(r.pid, r.pid); // also in the child: whichever runs first, the group exists
  status.write.reset();
  out.write.reset();
  err.write.reset();
  results.write.reset();
  child_failure failed;
  ssize_t n;
  do {
    n = ::read(status.read.fd, &failed, sizeof failed);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failed)) {
    ::waitpid(r.pid, nullptr, 0);
    throw input_error(start_failure(argv.at(0), failed));
  }
#ifdef SYS_pidfd_open
  r.pidfd = unique_fd(static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0)));
#endif
}

} // namespace

namespace {

// How often the tree's memory is summed and its exited orphans reaped while the program runs.
constexpr auto k_check_every = std::chrono::milliseconds(100);
// How long the outputs are read once the tree is dead: they close with it, unless a process
// outside the tree holds a descriptor of them (passed over a socket).
constexpr double k_drain_bound_s = 1;

// Every k_check_every: the exited orphans reaped, and the tree killed at once (no grace: it may
// be taking the machine down) when it holds more resident memory than its limit.
void check_tree(const launch& l, running& r, process_outcome& o) {
  if (clock_type::now() < r.next_check) {
    return;
  }
  r.next_check = clock_type::now() + k_check_every;
  r.tree.reap_exited_orphans();
  std::uint64_t resident = r.tree.resident_bytes();
  o.peak_memory_bytes = std::max(o.peak_memory_bytes, resident);
  if (l.limits.memory_bytes != 0 && resident > l.limits.memory_bytes && !o.memory_exceeded) {
    o.memory_exceeded = true;
    r.kill_tree();
  }
}

// Sends the stop signal at the timeout or the cancel, SIGKILL after the grace period, and checks
// the tree's memory.
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
    r.kill_tree();
  }
  if (!r.killed) {
    check_tree(l, r, o);
  }
}

bool any_open(const std::vector<capture>& caps) {
  return std::any_of(caps.begin(), caps.end(), [](const capture& c) { return c.fd.fd >= 0; });
}

// Reads the outputs until the leader exits; then kills what is left of its tree and reads what
// the pipes still hold (they close with the tree; k_drain_bound_s bounds a descriptor held
// outside it).
void watch(const launch& l, running& r, std::vector<capture>& caps, process_outcome& o) {
  bool leader_gone = false;
  clock_type::time_point drain_until{};
  while (true) {
    if (leader_gone && (!any_open(caps) || clock_type::now() >= drain_until)) {
      o.outputs_held = any_open(caps);
      return;
    }
    std::vector<pollfd> fds;
    fds.reserve(caps.size() + 1);
    for (capture& c : caps) {
      fds.push_back({c.fd.fd, POLLIN, 0}); // a closed capture (-1) is ignored by poll
    }
    fds.push_back({leader_gone ? -1 : r.pidfd.fd, POLLIN, 0});
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
      r.kill_tree(); // the program's leftovers, wherever they went: nothing outlives the run
      leader_gone = true;
      drain_until = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                            std::chrono::duration<double>(k_drain_bound_s));
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
  o.timeout_s = l.timeout_s;
  o.limits = l.limits;
  std::vector<std::string> argv = o.argv;
  private_tmpdir tmp(l.limits.private_tmpdir);
  pipe_pair out = make_pipe();
  pipe_pair err = make_pipe();
  pipe_pair results = make_pipe();
  running r;
  spawn(l, argv, tmp.path(), out, err, results, r);
  std::vector<capture> caps;
  caps.push_back(
      {std::move(out.read), &o.stdout_text, l.max_stdout_bytes, false, &o.stdout_truncated});
  caps.push_back({std::move(err.read), &o.stderr_tail, l.stderr_tail_bytes, true, nullptr});
  caps.push_back({std::move(results.read), &o.protocol_text, l.max_protocol_bytes, false,
                  &o.protocol_truncated});
  try {
    watch(l, r, caps, o);
  } catch (...) {
    r.kill_tree(); // an error of ours must not leave the program running
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
