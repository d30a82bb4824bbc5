#include "workloads/external/process.hpp"

#include <poll.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/core/error.hpp"
#include "workloads/external/process_spawn.hpp"

namespace accelbench::external {
namespace {

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
