#pragma once
// A real `accelbench serve` on 127.0.0.1 for the server tests: started on a free port (port 0;
// the port is read from its first log line), stopped with SIGTERM or killed with SIGKILL, and
// paused with SIGSTOP where a fault must meet a known state (pause_at). Source
// databases of synthetic nightly runs are written through the store, and the server's database is
// read through the store too (a second connection; SQLite's WAL lets it read while the server
// writes).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <random>
#include <regex>

#include <fmt/format.h>
#include <httplib.h>

#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"

namespace server_test {

namespace fs = std::filesystem;
using namespace accelbench;
using namespace std::chrono_literals;

inline const std::string k_exe = ACCELBENCH_EXE;

inline std::string sh_word(const std::string& s) { return "'" + s + "'"; }

struct live_server {
  pid_t pid = -1;
  int port = 0;
  fs::path db, log;
  std::string args;

  live_server(fs::path db_path, fs::path log_path, std::string extra = "")
      : db(std::move(db_path)), log(std::move(log_path)), args(std::move(extra)) {}
  live_server(const live_server&) = delete;
  live_server& operator=(const live_server&) = delete;
  ~live_server() {
    if (pid > 0)
      kill9();
  }

  // Starts it (on `port`, or a free one) and waits until it listens; false after 60 s.
  bool start(int on_port = 0) {
    test_cli::spawn_options o;
    o.err = log;
    pid = test_cli::spawn_sh(fmt::format("exec {} serve --db {} --listen 127.0.0.1:{} {}", k_exe,
                                         sh_word(db.string()), on_port, args),
                             o);
    const std::regex serving(R"(serving https?://127\.0\.0\.1:(\d+)/)");
    for (int i = 0; i < 6000; ++i) {
      std::smatch m;
      const std::string text = test_cli::slurp(log);
      if (std::regex_search(text, m, serving)) {
        port = std::stoi(m[1]);
        return true;
      }
      int st = 0;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return false;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  // SIGTERM: a clean stop; returns the exit code.
  int stop() {
    kill(pid, SIGTERM);
    auto e = test_cli::wait_for(pid, 30s);
    pid = -1;
    return e.timed_out ? -1 : e.rc;
  }
  void kill9() {
    kill(-pid, SIGKILL); // a stopped server too (pause)
    int st = 0;
    waitpid(pid, &st, 0);
    pid = -1;
  }
  // SIGSTOP, and waits until it is stopped (waitpid reports it): from then on the server reads,
  // answers and stores nothing until resume(). False when it had ended (it is reaped then).
  bool pause() {
    if (pid <= 0)
      return false;
    kill(pid, SIGSTOP);
    int st = 0;
    pid_t r;
    do
      r = waitpid(pid, &st, WUNTRACED);
    while (r < 0 && errno == EINTR);
    if (r == pid && WIFSTOPPED(st))
      return true;
    pid = -1;
    return false;
  }
  void resume() {
    if (pid > 0)
      kill(pid, SIGCONT);
  }
  std::string url(const std::string& path = "") const {
    return fmt::format("http://127.0.0.1:{}{}", port, path);
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    c.set_connection_timeout(10, 0);
    return c;
  }
};

// The server's database for one test case: a SQLite file in `dir` (test_server), or a fresh schema
// on the program's own PostgreSQL server (test_server_pg: tests/support/pg_server). Each test
// program defines both functions; server_db_unavailable() says why none can be had ("" when one
// can), and SERVER_DB skips the case visibly then.
fs::path server_db(const fs::path& dir);
std::string server_db_unavailable();
inline bool server_db_is_file(const fs::path& db) { return !store::is_postgres_uri(db.string()); }

#define SERVER_DB(var, dir)                                                                        \
  if (const std::string why_no_db_ = server_test::server_db_unavailable(); !why_no_db_.empty())    \
    ACCELBENCH_SKIP(why_no_db_);                                                                   \
  const fs::path var = server_test::server_db(dir)

// A token from `accelbench token create` (stdout is the token alone).
inline std::string make_token(const fs::path& db, const std::string& role,
                              const std::string& name = "test") {
  auto r = test_cli::ab(
      fmt::format("token create --db {} --role {} --name {}", sh_word(db.string()), role, name));
  if (r.rc != 0)
    throw std::runtime_error("token create failed: " + r.err);
  std::string t = r.out;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
    t.pop_back();
  return t;
}

// A nightly GEMM run: `samples` values around `center` seconds (3% noise), fresh uuid.
inline run nightly_run(const std::string& system, int m, const std::string& tag, int night,
                       double center, std::mt19937_64& g, int samples = 10) {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", std::to_string(m)}, {"N", "256"},     {"K", "256"},    {"dtype", "fp32"},
                  {"library", "onednn"},    {"trans_a", "0"}, {"trans_b", "0"}};
  r.system = system;
  r.ruleset = "kernel-v1";
  r.sample_unit = "s";
  r.sample_dir = direction::lower_is_better;
  const int day = night % 28 + 1, month = (night / 28) % 12 + 1, year = 2025 + night / 336;
  r.started_at = fmt::format("{:04d}-{:02d}-{:02d}T01:{:02d}:00.000Z", year, month, day, m % 60);
  r.finished_at = fmt::format("{:04d}-{:02d}-{:02d}T01:{:02d}:30.000Z", year, month, day, m % 60);
  r.tags = {tag};
  r.environment = {{"accelerator", {{"model", "test accelerator"}, {"count", 1}}}};
  std::normal_distribution<double> noise(0, 0.03);
  for (int i = 0; i < samples; ++i)
    r.samples.push_back({i, center * (1 + noise(g)), 1, json::object()});
  r.add_metric("time_s", center, "s", direction::lower_is_better);
  return r;
}

// Nights 0..nights-1 of configs M=1..configs on `system`, tagged nightly-NN: M=2 at `stepped`
// seconds from night `step_from` on, every other run at 1 ms (the runs drawn in that order).
inline std::vector<run> nightly_step(const std::string& system, int nights, int configs,
                                     int step_from, double stepped, std::mt19937_64& g) {
  std::vector<run> runs;
  for (int night = 0; night < nights; ++night)
    for (int m = 1; m <= configs; ++m)
      runs.push_back(nightly_run(system, m, fmt::format("nightly-{:02d}", night), night,
                                 (m == 2 && night >= step_from ? stepped : 1e-3), g));
  return runs;
}

// A database of `n` runs of `system` (configs M=1..n, one night).
inline std::vector<std::string> fill_source(const fs::path& db_path, const std::string& system,
                                            int n, uint64_t seed,
                                            const std::string& tag = "nightly-2026-12-01") {
  auto db = store::store::open(db_path);
  std::mt19937_64 g(seed);
  std::vector<run> runs;
  std::vector<std::string> uuids;
  for (int i = 0; i < n; ++i) {
    runs.push_back(nightly_run(system, i + 1, tag, 0, 1e-3, g));
    uuids.push_back(runs.back().uuid);
  }
  db.insert_runs(runs);
  return uuids;
}

inline int64_t count_runs(const fs::path& db) {
  return store::store::open(db, store::access::read_only).count_runs();
}

// Lets the server run a millisecond at a time, stopped (live_server::pause) in between, until
// `count`, read while it is stopped, reaches `at_least`; returns that count with the server left
// stopped, or -1 when it ended or 120 s passed (a hang guard). A fault that follows (kill -9, the
// database stopped) meets exactly what was counted, however fast this machine publishes: the
// stop, not a sleep, orders the count before the fault. On PostgreSQL one COMMIT that the server
// sent just before its stop may still complete: one batch more per request in flight. The
// millisecond is only the pace of the steps.
inline int64_t pause_at(live_server& s, const std::function<int64_t()>& count, int64_t at_least) {
  const auto give_up = std::chrono::steady_clock::now() + 120s;
  while (s.pause()) {
    const int64_t n = count();
    if (n >= at_least)
      return n;
    s.resume();
    if (std::chrono::steady_clock::now() > give_up)
      break;
    std::this_thread::sleep_for(1ms);
  }
  return -1;
}

// A raw connection to the server, for what an HTTP client library would not send: a request
// written byte by byte, a body that never ends, framing headers that contradict each other.
// `from` binds the client's end to another loopback address (127.0.0.0/8 is all this machine).
struct raw_socket {
  int fd = -1;
  raw_socket(int port, const std::string& from = "") {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (!from.empty()) {
      sockaddr_in src{};
      src.sin_family = AF_INET;
      inet_pton(AF_INET, from.c_str(), &src.sin_addr);
      if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0)
        throw std::runtime_error("cannot bind a client socket to " + from);
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
      throw std::runtime_error("cannot connect to the server");
  }
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;
  ~raw_socket() {
    if (fd >= 0)
      close(fd);
  }
  // false when the server closed its end (or stopped reading for `limit`).
  bool send_all(const std::string& data, std::chrono::milliseconds limit = 10s) {
    size_t at = 0;
    const auto until = std::chrono::steady_clock::now() + limit;
    while (at < data.size()) {
      const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        at += (size_t)n;
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return false;
      if (std::chrono::steady_clock::now() > until || readable(0ms))
        return false;
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 50);
    }
    return true;
  }
  bool readable(std::chrono::milliseconds wait) const {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, (int)wait.count()) > 0;
  }
  // What the server sends until it closes its end, or until `limit`.
  std::string read_all(std::chrono::milliseconds limit = 10s) {
    std::string out;
    const auto until = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    while (std::chrono::steady_clock::now() < until) {
      if (!readable(50ms))
        continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0)
        break;
      out.append(buf, (size_t)n);
    }
    return out;
  }
};

// The status of a raw HTTP response ("HTTP/1.1 401 ..." -> 401), 0 when there is none.
inline int status_of(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 && response.size() >= 12
             ? std::atoi(response.substr(9, 3).c_str())
             : 0;
}

// The peak resident memory of a process (VmHWM), in MiB.
inline double peak_rss_mib(pid_t pid) {
  const std::string status = test_cli::slurp(fmt::format("/proc/{}/status", pid));
  const size_t at = status.find("VmHWM:");
  return at == std::string::npos ? -1 : std::atof(status.c_str() + at + 6) / 1024.0;
}

inline json body_json(const httplib::Result& r) {
  if (!r)
    return json();
  json j = parse_json_lenient(r->body);
  return j.is_discarded() ? json() : j;
}

} // namespace server_test
