#include "harness/app/server/server.hpp"
// `accelbench serve`: its options, the server and its parts made, listening, and a clean stop on
// SIGINT/SIGTERM. The parts: server_state.hpp.

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "harness/app/query/database.hpp"
#include "harness/app/server/server_state.hpp"

namespace accelbench::server {

namespace {

int g_stop_pipe[2] = {-1, -1};
extern "C" void on_stop_signal(int) {
  const char c = 1;
  [[maybe_unused]] auto n = write(g_stop_pipe[1], &c, 1);
}
} // namespace

std::pair<std::string, int> parse_listen(const std::string& listen) {
  std::string host;
  std::string port_text;
  if (listen.rfind('[', 0) == 0) {
    const size_t close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
      throw input_error(fmt::format("--listen '{}' is not [ADDR]:PORT", printable(listen)));
    host = listen.substr(1, close - 1);
    port_text = listen.substr(close + 2);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw input_error(
          fmt::format("--listen '{}' is not ADDR:PORT (e.g. 127.0.0.1:8080)", printable(listen)));
    host = listen.substr(0, colon);
    port_text = listen.substr(colon + 1);
  }
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535)
    throw input_error(
        fmt::format("--listen '{}': the port must be an integer in [0, 65535]", printable(listen)));
  return {host, port};
}

int cmd_serve(const serve_options& o) {
  const auto [host, port] = parse_listen(o.listen);
  if (o.threads < 1 || o.threads > 1024)
    throw usage_error(fmt::format("--threads must be in [1, 1024], got {}", o.threads));
  const std::string path = query::resolve_db_path(o.db);
  // Opened (created, migrated) once before listening: a bad database is exit 2 here, not a 503
  // later.
  server_state st(o, path);
  { auto first = st.pool.acquire(); }
  auto svr = make_server(st);
  add_policies(*svr, st);
  add_routes(*svr, st);

  // SIGINT/SIGTERM end the server cleanly. Libraries start threads before main (OpenBLAS), so the
  // signal may arrive on any thread: its handler only writes to a pipe, read by a watcher thread.
  if (pipe(g_stop_pipe) != 0)
    throw error("cannot create the shutdown pipe");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const int bound =
      port == 0 ? svr->bind_to_any_port(host) : (svr->bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    throw input_error(fmt::format(
        "cannot listen on {}: the address is in use or not this machine's", printable(o.listen)));
  const bool tls = !o.cert.empty();
  log_line(fmt::format("serving {}://{}:{}/ from {} (reads: {}; writes: a write token{})",
                       tls ? "https" : "http",
                       host.find(':') != std::string::npos ? "[" + host + "]" : host, bound,
                       printable(path), o.public_read ? "public" : "a read token",
                       o.cors_origin.empty() ? "" : "; CORS: " + o.cors_origin));
  std::thread watcher([&svr] {
    char c = 0;
    while (read(g_stop_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    svr->stop();
  });
  const bool ok = svr->listen_after_bind();
  on_stop_signal(0); // wakes the watcher when listen ended on its own
  watcher.join();
  log_line("server stopped");
  return ok ? exit_ok : exit_internal;
}

} // namespace accelbench::server
