// The external program runner, on real small programs written by the test: protocol on its
// descriptor, whole-process time without it, exit codes, crashes, timeouts that end the whole
// process group, cancel, placeholders and environment variables, and no descriptor leaks.
// No timing assertion other than a lower bound the kernel guarantees (sleep).
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "harness/core/error.hpp"
#include "tests/support/skip.hpp"
#include "workloads/external/process.hpp"
#include "workloads/external/protocol.hpp"

using namespace accelbench;
using namespace accelbench::external;
namespace fs = std::filesystem;

namespace {

// A folder of its own for one test case, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("accelbench-external-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    fs::create_directories(path);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Writes an executable bash script and returns its path.
  std::string script(const std::string& name, const std::string& body) const {
    fs::path p = path / name;
    std::ofstream(p) << "#!/usr/bin/env bash\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
};

launch of(std::vector<std::string> argv) {
  launch l;
  l.argv = std::move(argv);
  l.timeout_s = 60; // generous: only the timeout test relies on one firing
  return l;
}

// True once `pid` is gone (or a zombie nobody has reaped yet), waiting up to 10 s for init.
bool gone(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      return true;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    std::size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

pid_t read_pid(const fs::path& file) {
  pid_t pid = 0;
  std::ifstream(file) >> pid;
  return pid;
}

} // namespace

TEST_CASE("a program speaking the protocol reports on its descriptor, apart from stdout") {
  temp_dir d;
  std::string prog = d.script("proto.sh", R"(echo "hello on stdout"
echo '{"protocol": 1}' >&"$ACCELBENCH_RESULTS_FD"
for i in 1 2 3; do echo "{\"sample\": {\"seconds\": 0.$i, \"items\": 8}}" >&3; done
echo '{"check": {"passed": true, "reason": "ok"}}' >&3)");
  process_outcome o = run_process(of({prog}));
  REQUIRE(o.succeeded());
  CHECK(o.failure().empty());
  CHECK(o.stdout_text == "hello on stdout\n");
  protocol_result r = parse_protocol(o.protocol_text);
  REQUIRE(r.ok());
  CHECK(r.version == 1);
  REQUIRE(r.samples.size() == 3);
  CHECK(r.samples[2].seconds == 0.3);
  CHECK(r.samples[2].items == 8);
  CHECK(r.verdict->passed);
}

TEST_CASE("a program without the protocol is timed as a whole process", "[timing]") {
  temp_dir d;
  process_outcome o = run_process(of({d.script("sleep.sh", "sleep 0.2")}));
  CHECK(o.succeeded());
  CHECK(parse_protocol(o.protocol_text).silent());
  CHECK(o.wall_seconds >= 0.2); // sleep sleeps at least that long, whatever the load
}

TEST_CASE("a program that writes nothing at all succeeds silently", "[timing]") {
  process_outcome o = run_process(of({"true"}));
  CHECK(o.succeeded());
  CHECK(o.stdout_text.empty());
  CHECK(o.stderr_tail.empty());
  CHECK(parse_protocol(o.protocol_text).silent());
  CHECK(o.wall_seconds > 0);
}

TEST_CASE("a non-zero exit is reported with the tail of stderr") {
  temp_dir d;
  process_outcome o = run_process(of({d.script("fail.sh", "echo 'out of memory' >&2; exit 3")}));
  CHECK_FALSE(o.succeeded());
  CHECK(o.exit_code == 3);
  CHECK(o.signal == 0);
  CHECK(o.failure() == "exit code 3");
  CHECK(o.stderr_tail == "out of memory\n");
}

TEST_CASE("a crash is reported with its signal") {
  temp_dir d;
  process_outcome o = run_process(of({d.script("crash.sh", "kill -SEGV $$")}));
  CHECK_FALSE(o.succeeded());
  CHECK(o.signal == SIGSEGV);
  CHECK(o.exit_code == -1);
  CHECK(o.failure() == "killed by signal SIGSEGV");
}

// The timeouts below leave bash 5 s to start and write the pidfile (or set its trap) before they
// fire: a few milliseconds normally, far more than a loaded machine or a sanitizer build needs.
// The timeout is the behaviour under test, so it cannot wait for an event of the program's.
TEST_CASE("a timeout ends the whole process group, the program's children too", "[timing]") {
  temp_dir d;
  fs::path pidfile = d.path / "child.pid";
  launch l = of({d.script("hang.sh", "sleep 300 & echo $! > \"$1\"; wait"), pidfile.string()});
  l.timeout_s = 5;
  process_outcome o = run_process(l);
  CHECK(o.timed_out);
  CHECK_FALSE(o.succeeded());
  CHECK(o.failure().rfind("timed out: its timeout is 5 s (ended after ", 0) == 0);
  CHECK(o.wall_seconds >= 5);
  pid_t child = read_pid(pidfile);
  REQUIRE(child > 0);
  CHECK(gone(child));
}

TEST_CASE("a group that ignores SIGTERM is killed after the grace period", "[timing]") {
  temp_dir d;
  fs::path pidfile = d.path / "child.pid";
  launch l = of({d.script("stubborn.sh", "trap '' TERM; sleep 300 & echo $! > \"$1\"; wait"),
                 pidfile.string()});
  l.timeout_s = 5;
  l.kill_grace_s = 0.5;
  process_outcome o = run_process(l);
  CHECK(o.timed_out);
  CHECK(o.signal == SIGKILL);
  pid_t child = read_pid(pidfile);
  REQUIRE(child > 0);
  CHECK(gone(child));
}

TEST_CASE("the cancel flag ends the run", "[timing]") {
  temp_dir d;
  fs::path pidfile = d.path / "child.pid";
  std::atomic<bool> cancel{false}, returned{false};
  launch l = of({d.script("hang.sh", "sleep 300 & echo $! > \"$1\"; wait"), pidfile.string()});
  l.cancel = &cancel;
  // Cancels once the pid is in the file (the redirection creates the file before echo writes
  // it); stops waiting if run_process returned without it (a failure reported below).
  std::thread ctrl_c([&] {
    while (read_pid(pidfile) <= 0 && !returned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cancel = true;
  });
  process_outcome o = run_process(l);
  returned = true;
  ctrl_c.join();
  REQUIRE(read_pid(pidfile) > 0);
  CHECK(o.cancelled);
  CHECK_FALSE(o.timed_out);
  CHECK(o.failure() == "cancelled");
  CHECK(gone(read_pid(pidfile)));
}

TEST_CASE("a leftover background process is ended when the program exits", "[timing]") {
  temp_dir d;
  fs::path pidfile = d.path / "child.pid";
  process_outcome o =
      run_process(of({d.script("daemon.sh", "sleep 300 >/dev/null 2>&1 3>&- & echo $! > \"$1\""),
                      pidfile.string()}));
  CHECK(o.succeeded());
  CHECK(gone(read_pid(pidfile)));
}

TEST_CASE("a malformed protocol line is refused with its line number") {
  temp_dir d;
  process_outcome o = run_process(of({d.script(
      "bad.sh",
      "echo '{\"sample\": {\"seconds\": 1}}' >&3; echo '{\"sample\": {\"seconds\": -2}}' >&3")}));
  CHECK(o.succeeded());
  CHECK(parse_protocol(o.protocol_text).error ==
        "protocol line 2: sample seconds -2 is not a finite number > 0");
}

TEST_CASE("placeholders and ACCELBENCH_ variables reach the program") {
  temp_dir d;
  launch l = of({d.script("args.sh", R"(echo "args: $*"
echo "env: $ACCELBENCH_N $ACCELBENCH_BATCH_SIZE $ACCELBENCH_RESULTS_FD"
pwd)"),
                 "--n={n}", "{batch-size}", "{not a key}", "{}"});
  l.config = {{"n", "1024"}, {"batch-size", "8"}};
  l.cwd = d.path.string();
  process_outcome o = run_process(l);
  REQUIRE(o.succeeded());
  CHECK(o.argv.at(1) == "--n=1024");
  CHECK(o.stdout_text ==
        "args: --n=1024 8 {not a key} {}\nenv: 1024 8 3\n" + fs::canonical(d.path).string() + "\n");
}

TEST_CASE("a placeholder the config lacks, or a program that is not there, is refused") {
  CHECK_THROWS_WITH(substitute_placeholders({"x", "{size}"}, {}),
                    "argument '{size}' names {size}, which the config does not set (give it "
                    "with --set size=V)");
  CHECK_THROWS_AS(run_process(of({"accelbench-no-such-program"})), input_error);
  CHECK_THROWS_WITH(run_process(of({"/nonexistent/prog"})),
                    "cannot run '/nonexistent/prog': No such file or directory");
  CHECK_THROWS_AS(run_process(of({})), input_error);
  CHECK(env_name("batch-size.x") == "ACCELBENCH_BATCH_SIZE_X");
}

TEST_CASE("the program inherits no descriptor of ours beyond 0 to 3") {
  int leaked = ::open("/dev/null", O_RDONLY); // deliberately without O_CLOEXEC
  REQUIRE(leaked >= 0);
  int fd = ::dup2(leaked, 50);
  REQUIRE(fd == 50);
  temp_dir d;
  process_outcome o = run_process(of({d.script(
      "fds.sh",
      "for f in 3 50; do if [ -e /dev/fd/$f ]; then echo open; else echo closed; fi; done")}));
  ::close(50);
  ::close(leaked);
  CHECK(o.stdout_text == "open\nclosed\n");
}

TEST_CASE("stderr keeps its last bytes") {
  temp_dir d;
  launch l = of({d.script("noisy.sh", "for i in $(seq 1 2000); do echo \"line $i\" >&2; done")});
  l.stderr_tail_bytes = 100;
  process_outcome o = run_process(l);
  CHECK(o.stderr_tail.size() == 100);
  CHECK(o.stderr_tail.substr(o.stderr_tail.size() - 10) == "line 2000\n");
}

TEST_CASE("runs leave no descriptor open in accelbench, failed starts included") {
  if (!fs::exists("/proc/self/fd")) {
    ACCELBENCH_SKIP("no /proc/self/fd to count descriptors in");
  }
  auto count = [] {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{});
  };
  auto before = count();
  temp_dir d;
  (void)run_process(of({d.script("p.sh", "echo x; echo '{\"sample\": {\"seconds\": 1}}' >&3")}));
  CHECK_THROWS(run_process(of({"/nonexistent/prog"})));
  CHECK_THROWS(run_process(of({"accelbench-no-such-program"})));
  CHECK(count() == before);
}
