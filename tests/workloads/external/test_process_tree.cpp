// The external runner against hostile programs (hostile_program.c): each tries to escape the
// timeout, the cancel or the end of the run (another process group, another session, a daemon's
// double fork, SIGTERM ignored, a fork chain), to hold the outputs open, or to take more of the
// machine than its limits (memory, open files, file size, temporary files). Every test asserts
// that no process of the program is left (found by a marker unique to the test in the argv of
// every process in /proc) and the run's reason. Time bounds are hang guards only, far above what
// a loaded or sanitized machine needs.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/support/skip.hpp"
#include "workloads/external/process.hpp"

using namespace accelbench::external;
namespace fs = std::filesystem;

namespace {

// A string no other process has in its argv: this test process's pid and a count.
std::string new_marker() {
  static int n = 0;
  return "accelbench-hostile-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

launch hostile(const std::string& marker, const std::string& mode, const std::string& arg = "") {
  launch l;
  l.argv = {HOSTILE_PROGRAM, marker, mode};
  if (!arg.empty()) {
    l.argv.push_back(arg);
  }
  l.timeout_s = 30; // a hang guard: the tests that need a timeout set a short one
  l.kill_grace_s = 0.5;
  return l;
}

bool is_zombie(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// The live processes whose argv names `marker` (zombies have no argv and are not counted).
int survivors(const std::string& marker) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos ||
        pid == std::to_string(::getpid())) {
      continue;
    }
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos && !is_zombie(pid)) {
      ++n;
    }
  }
  return n;
}

// Kills what a failed test left behind, so that one failure does not leave processes running.
struct cleanup {
  std::string marker;
  ~cleanup() {
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      std::ifstream in(e.path() / "cmdline", std::ios::binary);
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find(marker) != std::string::npos) {
        ::kill(std::stoi(pid), SIGKILL);
      }
    }
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

void require_linux_proc() {
#ifndef __linux__
  ACCELBENCH_SKIP("the process tree is found through Linux's /proc");
#endif
}

} // namespace

TEST_CASE("a program that moves into accelbench's process group and ignores SIGTERM still ends "
          "at its timeout",
          "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  launch l = hostile(marker, "escape-group");
  l.timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  process_outcome o = run_process(l);
  CHECK(seconds_since(t0) < 30); // it sleeps 60 s when nothing ends it
  CHECK(o.timed_out);
  CHECK(o.signal == SIGKILL);
  CHECK(starts_with(o.failure(), "timed out: its timeout is 1 s (ended after "));
  CHECK(survivors(marker) == 0);
}

TEST_CASE("a program that moves into accelbench's process group is ended by the cancel",
          "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  std::atomic<bool> cancel{false}, returned{false};
  launch l = hostile(marker, "escape-group");
  l.cancel = &cancel;
  std::thread ctrl_c([&] {
    // Once the program runs (its marker in /proc), as a user who presses Ctrl-C would.
    while (survivors(marker) == 0 && !returned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  process_outcome o = run_process(l);
  returned = true;
  ctrl_c.join();
  CHECK(seconds_since(t0) < 25);
  CHECK(o.cancelled);
  CHECK(o.failure() == "cancelled");
  CHECK(survivors(marker) == 0);
}

TEST_CASE("children in a session or process group of their own, and a daemon's double fork, end "
          "with the run",
          "[timing]") {
  require_linux_proc();
  for (const std::string mode : {"setsid-child", "setpgid-child", "double-fork", "fork-chain"}) {
    INFO(mode);
    const std::string marker = new_marker();
    cleanup c{marker};
    const auto t0 = std::chrono::steady_clock::now();
    process_outcome o = run_process(hostile(marker, mode));
    CHECK(seconds_since(t0) < 30); // what is left sleeps 60 s when nothing ends it
    CHECK(o.succeeded());
    CHECK_FALSE(o.outputs_held);
    CHECK(survivors(marker) == 0);
  }
}

TEST_CASE("a tree that ignores SIGTERM in another session is killed after the grace period",
          "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  launch l = hostile(marker, "ignore-term");
  l.timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  process_outcome o = run_process(l);
  CHECK(seconds_since(t0) < 30);
  CHECK(o.timed_out);
  CHECK(o.signal == SIGKILL);
  CHECK(survivors(marker) == 0);
}

TEST_CASE("a child that holds the outputs open after the program exits is ended with it, and the "
          "outputs close",
          "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  const auto t0 = std::chrono::steady_clock::now();
  process_outcome o = run_process(hostile(marker, "hold-pipes"));
  CHECK(seconds_since(t0) < 30);
  CHECK(o.succeeded());
  // The outputs closed because the child died, not because the bound on reading them ran out.
  CHECK_FALSE(o.outputs_held);
  CHECK(survivors(marker) == 0);
}

TEST_CASE("floods on stdout and stderr are cut to their limits and end with the run", "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  launch l = hostile(marker, "flood");
  l.max_stdout_bytes = 1 << 20;
  l.stderr_tail_bytes = 1000;
  process_outcome o = run_process(l);
  CHECK(o.succeeded());
  CHECK(o.stdout_truncated);
  CHECK(o.stdout_text.size() == std::size_t{1} << 20);
  CHECK(o.stderr_tail == std::string(1000, 'e'));
  CHECK(survivors(marker) == 0);
}

TEST_CASE("a tree over its memory limit is killed and the run says so", "[timing]") {
  require_linux_proc();
  const std::string marker = new_marker();
  cleanup c{marker};
  // 4 processes of 17 MiB each: none alone is over 48 MiB, together they are.
  launch l = hostile(marker, "hog", "64");
  l.limits.memory_bytes = std::uint64_t{48} << 20;
  l.timeout_s = 20; // without the memory limit the hog would sleep until then
  const auto t0 = std::chrono::steady_clock::now();
  process_outcome o = run_process(l);
  CHECK(seconds_since(t0) < 15);
  CHECK(o.memory_exceeded);
  CHECK_FALSE(o.timed_out);
  CHECK(o.failure() == "used more than 48 MiB of resident memory, its limit (summed over its "
                       "processes; they were killed)");
  CHECK(o.peak_memory_bytes > l.limits.memory_bytes);
  CHECK(survivors(marker) == 0);
}

TEST_CASE("a program within its memory limit runs as before") {
  require_linux_proc();
  const std::string marker = new_marker();
  launch l = hostile(marker, "open-files", "1");
  l.limits.memory_bytes = std::uint64_t{256} << 20;
  process_outcome o = run_process(l);
  CHECK(o.succeeded());
  CHECK(o.peak_memory_bytes < l.limits.memory_bytes);
}

TEST_CASE("a program that opens more files than its limit is refused them, and the reason names "
          "the limit") {
  const std::string marker = new_marker();
  launch l = hostile(marker, "open-files", "100");
  l.limits.open_files = 32;
  process_outcome o = run_process(l);
  CHECK(o.exit_code == 1);
  CHECK(o.failure() ==
        "exit code 1 (its stderr says 'Too many open files': its open-files limit is 32)");
  CHECK(survivors(marker) == 0);
  l.limits.open_files = 256;
  CHECK(run_process(l).succeeded());
}

TEST_CASE("a program that writes a file beyond its limit gets SIGXFSZ, and the reason names the "
          "limit") {
  const std::string marker = new_marker();
  launch l = hostile(marker, "write-file", std::to_string(4 << 20));
  l.limits.file_bytes = std::uint64_t{1} << 20;
  process_outcome o = run_process(l);
  CHECK(o.signal == SIGXFSZ);
  CHECK(o.failure() == "killed by signal SIGXFSZ: it wrote past its file-size limit of 1 MiB");
  CHECK(survivors(marker) == 0);
  l.limits.file_bytes = std::uint64_t{8} << 20;
  CHECK(run_process(l).succeeded());
}

TEST_CASE("a program's temporary folder is its own and goes with everything in it") {
  const std::string marker = new_marker();
  process_outcome o = run_process(hostile(marker, "leave-tmp"));
  REQUIRE(o.succeeded());
  REQUIRE(o.stdout_text.size() > 1);
  const fs::path tmp = o.stdout_text.substr(0, o.stdout_text.size() - 1);
  CHECK(starts_with(tmp.filename().string(), "accelbench-run-"));
  CHECK_FALSE(fs::exists(tmp)); // a folder without permissions inside it included
  CHECK(survivors(marker) == 0);
}

TEST_CASE("a run whose program cannot start leaves no temporary folder") {
  // A TMPDIR of this test's own: other tests running programs at the same time use theirs.
  const fs::path mine = fs::temp_directory_path() / ("accelbench-tmp-" + new_marker());
  fs::create_directories(mine);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", mine.c_str(), 1);
  launch l;
  l.argv = {"/nonexistent/prog"};
  CHECK_THROWS_WITH(run_process(l), "cannot run '/nonexistent/prog': No such file or directory");
  l.argv = {"true"};
  CHECK(run_process(l).succeeded());
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  CHECK(fs::is_empty(mine));
  fs::remove_all(mine);
}
