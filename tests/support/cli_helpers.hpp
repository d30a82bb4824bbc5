#pragma once
// Runs the accelbench executable as a user would, capturing exit code, stdout and stderr.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace test_cli {

struct result {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline result ab(const std::string& args, const std::string& env = "") {
  static int n = 0;
  auto dir = std::filesystem::temp_directory_path();
  auto o = dir / ("ab-cli-out-" + std::to_string(getpid()) + "-" + std::to_string(n));
  auto e = dir / ("ab-cli-err-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  std::string cmd =
      env + " " ACCELBENCH_EXE " " + args + " >" + o.string() + " 2>" + e.string() + " </dev/null";
  int st = std::system(cmd.c_str());
  result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  std::filesystem::remove(o);
  std::filesystem::remove(e);
  return r;
}

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    path = std::filesystem::temp_directory_path() /
           ("ab-cli-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string db() const { return (path / "t.db").string(); }
};

// ---------------------------------------------------------------------------------------------
// A shell command in its own process group, for tests that need what std::system cannot give:
// a working folder, a controlled environment, a time limit, or a kill -9 at a chosen moment.
struct spawn_options {
  std::filesystem::path cwd;                                  // "" = this process's
  std::vector<std::pair<std::string, std::string>> env;       // set in the child
  std::vector<std::string> unset_env;                         // removed in the child
  std::filesystem::path out = "/dev/null", err = "/dev/null"; // where stdout and stderr go
};

// Starts `sh -c script` with stdin from /dev/null; returns its pid (also its process group).
inline pid_t spawn_sh(const std::string& script, const spawn_options& o = {}) {
  pid_t pid = fork();
  if (pid != 0) {
    if (pid > 0)
      setpgid(pid, pid); // here too: a kill right after the start reaches the group
    return pid;
  }
  setpgid(0, 0);
  auto redirect = [](const std::filesystem::path& p, int fd, int flags) {
    int f = open(p.c_str(), flags, 0644);
    if (f < 0 || dup2(f, fd) < 0)
      _exit(126);
    close(f);
  };
  redirect("/dev/null", 0, O_RDONLY);
  redirect(o.out, 1, O_WRONLY | O_CREAT | O_TRUNC);
  redirect(o.err, 2, O_WRONLY | O_CREAT | O_TRUNC);
  for (const auto& [k, v] : o.env)
    setenv(k.c_str(), v.c_str(), 1);
  for (const auto& k : o.unset_env)
    unsetenv(k.c_str());
  if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0)
    _exit(126);
  execl("/bin/sh", "sh", "-c", script.c_str(), (char*)nullptr);
  _exit(127);
}

struct exit_status {
  int rc = -1;            // the exit code, or 128 + signal as a shell reports it
  bool timed_out = false; // killed (with its whole process group) after the time limit
};

inline exit_status decode(int st) {
  exit_status e;
  if (WIFEXITED(st))
    e.rc = WEXITSTATUS(st);
  if (WIFSIGNALED(st))
    e.rc = 128 + WTERMSIG(st);
  return e;
}

// Waits for `pid`; after `limit` kills its process group (SIGKILL) and reports a time-out.
inline exit_status wait_for(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  int st = 0;
  while (true) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid)
      return decode(st);
    if (r < 0)
      return {};
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &st, 0);
  exit_status e = decode(st);
  e.timed_out = true;
  return e;
}

} // namespace test_cli
