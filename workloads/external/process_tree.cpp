#include "workloads/external/process_tree.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace accelbench::external {
namespace {

// The leaders of the runs going on in this process: children of ours that are not orphans.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& leaders() {
  static std::set<pid_t> s;
  return s;
}

void become_subreaper() {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
  static const bool once = [] {
    (void)::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    return true;
  }();
  (void)once;
#endif
}

// A whole file of /proc ("" when it cannot be read: the process is gone).
std::string read_proc_file(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return out;
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string proc_path(pid_t pid, std::string_view rest) {
  std::string p = "/proc/" + std::to_string(pid);
  p += rest;
  return p;
}

// The first `most` numbers of a list separated by anything else ("12 345 "): /proc's stat, statm
// and children files. Unsigned, for sizes beyond 32 bits (a CUDA program's virtual size).
std::vector<std::uint64_t> numbers_in(std::string_view text, std::size_t most) {
  std::vector<std::uint64_t> out;
  out.reserve(std::min(most, text.size() / 2 + 1));
  std::uint64_t v = 0;
  bool in_number = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
      in_number = true;
      continue;
    }
    if (in_number) {
      out.push_back(v);
      if (out.size() == most) {
        return out;
      }
    }
    v = 0;
    in_number = false;
  }
  if (in_number && out.size() < most) {
    out.push_back(v);
  }
  return out;
}

std::vector<pid_t> pids_in(std::string_view text) {
  std::vector<std::uint64_t> numbers = numbers_in(text, text.size());
  std::vector<pid_t> out;
  out.reserve(numbers.size());
  for (std::uint64_t v : numbers) {
    out.push_back(static_cast<pid_t>(v));
  }
  return out;
}

// The numeric entries of a /proc folder (processes, or a process's threads).
std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && v > 0) {
      out.push_back(static_cast<pid_t>(v));
    }
  }
  ::closedir(d);
  return out;
}

// What /proc/PID/stat says after the command name (which may hold spaces and parentheses).
struct proc_stat {
  char state = '?';
  pid_t ppid = 0;
  pid_t group = 0;
  pid_t session = 0;
};

std::optional<proc_stat> read_stat(pid_t pid) {
  std::string text = read_proc_file(proc_path(pid, "/stat"));
  std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) {
    return std::nullopt;
  }
  proc_stat s;
  s.state = text[close + 2];
  std::vector<std::uint64_t> f = numbers_in(std::string_view(text).substr(close + 3), 3);
  if (f.size() < 3) {
    return std::nullopt;
  }
  s.ppid = static_cast<pid_t>(f[0]);
  s.group = static_cast<pid_t>(f[1]);
  s.session = static_cast<pid_t>(f[2]);
  return s;
}

// Whether the kernel lists each thread's children (CONFIG_PROC_CHILDREN): else the children of a
// process are found by one scan of every process's parent.
bool has_children_files() {
  static const bool yes =
      ::access(proc_path(::getpid(), "/task/" + std::to_string(::getpid()) + "/children").c_str(),
               R_OK) == 0;
  return yes;
}

// The children of processes, as the kernel says now.
class child_index {
public:
  std::vector<pid_t> of(pid_t pid) {
    if (has_children_files()) {
      return from_children_files(pid);
    }
    if (!scanned_) {
      scan_parents();
    }
    std::vector<pid_t> out;
    auto [from, to] = by_parent_.equal_range(pid);
    for (auto it = from; it != to; ++it) {
      out.push_back(it->second);
    }
    return out;
  }

private:
  // A child may belong to any thread of its parent: every thread's list is read.
  static std::vector<pid_t> from_children_files(pid_t pid) {
    std::vector<pid_t> out;
    std::string task = proc_path(pid, "/task");
    for (pid_t tid : numeric_entries(task)) {
      std::vector<pid_t> kids =
          pids_in(read_proc_file(task + "/" + std::to_string(tid) + "/children"));
      out.insert(out.end(), kids.begin(), kids.end());
    }
    return out;
  }
  void scan_parents() {
    scanned_ = true;
    for (pid_t p : numeric_entries("/proc")) {
      if (std::optional<proc_stat> s = read_stat(p)) {
        by_parent_.emplace(s->ppid, p);
      }
    }
  }
  bool scanned_ = false;
  std::multimap<pid_t, pid_t> by_parent_;
};

// Sends `sig` to m.pid only while it is still m.parent's child: the pidfd, opened before the
// check, holds the process the check saw, so a pid reused since the scan is never signalled.
bool send_checked(const tree_member& m, int sig) {
  int fd = -1;
#ifdef SYS_pidfd_open
  fd = static_cast<int>(::syscall(SYS_pidfd_open, m.pid, 0));
  if (fd < 0 && errno == ESRCH) {
    return false;
  }
#endif
  std::optional<proc_stat> now = read_stat(m.pid);
  bool same = now && now->ppid == m.parent;
  int rc = -1;
  if (same) {
#ifdef SYS_pidfd_send_signal
    rc = fd >= 0 ? static_cast<int>(::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0))
                 : ::kill(m.pid, sig);
#else
    rc = ::kill(m.pid, sig);
#endif
  }
  if (fd >= 0) {
    ::close(fd);
  }
  return rc == 0;
}

// A member in a session that a process of the tree made (setsid) has only processes of the tree
// beside it: its whole process group gets the signal at once, forks in flight included.
void signal_own_group(const tree_member& m, int sig) {
  static const pid_t our_session = ::getsid(0);
  if (m.session != our_session && m.group > 1) {
    ::kill(-m.group, sig);
  }
}

bool is_zombie(const tree_member& m) { return m.state == 'Z'; }

} // namespace

process_tree::~process_tree() {
  if (leader_ > 0) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    leaders().erase(leader_);
  }
}

pid_t process_tree::start(const std::function<void()>& in_child) {
  become_subreaper();
  std::lock_guard<std::mutex> lock(registry_mutex());
  child_index index;
  std::vector<pid_t> before = index.of(::getpid());
  children_before_.insert(before.begin(), before.end());
  pid_t pid = ::fork();
  if (pid == 0) {
    in_child();
    ::_exit(127);
  }
  if (pid > 0) {
    leader_ = pid;
    leaders().insert(pid);
  }
  return pid;
}

// Children of ours that neither were there before the spawn nor lead another run: the orphans of
// this tree.
std::vector<pid_t> process_tree::orphans() const {
  std::vector<pid_t> out;
  child_index index;
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (pid_t p : index.of(::getpid())) {
    if (p != leader_ && children_before_.count(p) == 0 && leaders().count(p) == 0) {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<tree_member> process_tree::members() const {
  std::vector<tree_member> out;
  if (leader_ <= 0) {
    return out;
  }
  std::vector<std::pair<pid_t, pid_t>> todo; // (pid, the parent it was found under)
  todo.emplace_back(leader_, ::getpid());
  for (pid_t o : orphans()) {
    todo.emplace_back(o, ::getpid());
  }
  child_index index;
  std::set<pid_t> seen;
  while (!todo.empty()) {
    auto [pid, parent] = todo.back();
    todo.pop_back();
    std::optional<proc_stat> s = read_stat(pid);
    if (!s || s->ppid != parent || !seen.insert(pid).second) {
      continue; // gone, or moved since its parent's list was read: the next scan finds it
    }
    out.push_back({pid, parent, s->state, s->session, s->group});
    for (pid_t child : index.of(pid)) {
      todo.emplace_back(child, pid);
    }
  }
  return out;
}

void process_tree::signal_all(int sig) const {
  for (const tree_member& m : members()) {
    if (!is_zombie(m)) {
      send_checked(m, sig);
    }
  }
}

void process_tree::kill_all() {
  if (leader_ <= 0) {
    return;
  }
  std::set<pid_t> stopped;
  constexpr int k_max_rounds = 10000; // a bound for safety only: each round stops what it finds
  for (int round = 0; round < k_max_rounds; ++round) {
    bool fresh = false;
    for (const tree_member& m : members()) {
      if (is_zombie(m) || stopped.count(m.pid) != 0) {
        continue;
      }
      fresh = true;
      signal_own_group(m, SIGSTOP);
      if (send_checked(m, SIGSTOP)) {
        stopped.insert(m.pid);
      }
    }
    if (!fresh) {
      break;
    }
  }
  // Stopped, a process cannot exit by itself, and its dead children stay zombies its pid keeps:
  // none of these pids can have been reused.
  for (pid_t p : stopped) {
    ::kill(p, SIGKILL);
  }
  ::kill(-leader_, SIGKILL); // the leader's process group, as before the tree was known
  // The kernel's lists of children are exact only while nothing in them forks or moves: a
  // process the sweep missed (a fork chain's newest link) is found here, while the tree dies,
  // and killed too, until only the leader (the caller's to reap) is left.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    reap_exited_orphans();
    bool only_leader = true;
    for (const tree_member& m : members()) {
      if (m.pid == leader_) {
        continue;
      }
      only_leader = false;
      if (!is_zombie(m)) {
        signal_own_group(m, SIGKILL);
        send_checked(m, SIGKILL);
      }
    }
    if (only_leader) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::uint64_t process_tree::resident_bytes() const {
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t pages = 0;
  for (const tree_member& m : members()) {
    std::vector<std::uint64_t> f = numbers_in(read_proc_file(proc_path(m.pid, "/statm")), 2);
    if (f.size() == 2) {
      pages += f[1];
    }
  }
  return pages * page;
}

void process_tree::reap_exited_orphans() const {
  for (pid_t p : orphans()) {
    std::optional<proc_stat> s = read_stat(p);
    if (s && s->state == 'Z') {
      ::waitpid(p, nullptr, WNOHANG);
    }
  }
}

} // namespace accelbench::external
