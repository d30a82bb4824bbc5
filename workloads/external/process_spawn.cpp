// Starting an external program (process_spawn.hpp): descriptors and pipes, the program found on
// PATH, its environment and resource limits prepared before fork, the child's few async-signal-safe
// steps up to exec, and the run's own temporary folder.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "harness/core/error.hpp"
#include "workloads/external/process_spawn.hpp"
#include "workloads/external/protocol.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace accelbench::external {

std::string errno_text(int e) { return std::strerror(e); }

namespace {

namespace fs = std::filesystem;

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
} // namespace

pipe_pair make_pipe() {
  int p[2] = {-1, -1};
  if (::pipe(p) != 0) {
    throw error("cannot make a pipe for an external program: " + errno_text(errno));
  }
  unique_fd r = high_fd(p[0]);
  return {std::move(r), high_fd(p[1])};
}

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
} // namespace

private_tmpdir::private_tmpdir(bool wanted) {
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

private_tmpdir::~private_tmpdir() {
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

namespace {

// The reason the child could not start the program.
std::string start_failure(const std::string& program, const child_failure& f) {
  if (f.step == child_step::limits) {
    return "cannot set the resource limits of '" + program + "': " + errno_text(f.error);
  }
  return "cannot run '" + program + "': " + errno_text(f.error);
}
} // namespace

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

} // namespace accelbench::external
