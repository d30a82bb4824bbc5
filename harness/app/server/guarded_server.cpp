// The server of `accelbench serve` (cpp-httplib's, HTTP or HTTPS) with its connections served
// here: a connection over the limits turned away, the others read through `connection`.
#include <sys/socket.h>

#include <type_traits>

#include <fmt/format.h>

#include "harness/app/server/server_state.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::server {

namespace {

// A connection as cpp-httplib's Stream.
class stream final : public httplib::Stream {
public:
  explicit stream(connection& c) : m_c(c) {}
  bool is_readable() const override { return m_c.readable(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override { return m_c.read(ptr, size); }
  ssize_t write(const char* ptr, size_t size) override { return m_c.write(ptr, size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { m_c.peer(ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { m_c.local(ip, port); }
  socket_t socket() const override { return m_c.fd(); }

private:
  connection& m_c;
};
// The answer to a connection the server does not take (over a client's share, or over the total):
// written at once if the socket takes it, never waited for. Over TLS nothing can be said before a
// handshake, so the connection is only closed.
void turn_away(connection& c, const std::string& why, bool tls, bool quiet) {
  if (!quiet)
    log_line(fmt::format("connection from {} refused: {}", printable(c.peer_address()), why));
  if (tls)
    return;
  const std::string body =
      dump_json(
          json{{"error", "too many connections: " + why + "; retry later"}, {"status", 503}}) +
      "\n";
  const std::string msg = fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
      "{}\r\nRetry-After: 1\r\nServer-Timing: app;dur=0.000\r\nConnection: close\r\n\r\n{}",
      body.size(), body);
  [[maybe_unused]] auto n = send(c.fd(), msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  c.finish(false);
}

// cpp-httplib's server, with its connections served here: its own loop reads each request through
// a SocketStream that waits for every byte anew; this one reads through a connection with
// deadlines and limits, counts connections per client, and gives the thread back as soon as a
// client is too slow or too large.
template <class Base> class guarded_server final : public Base {
public:
  template <class... Args>
  explicit guarded_server(server_state& st, Args&&... args)
      : Base(std::forward<Args>(args)...), m_st(st) {}

private:
  static constexpr bool k_tls = !std::is_same_v<Base, httplib::Server>;

  bool process_and_close_socket(socket_t sock) override {
    connection c(sock, m_st.limits, [this] { return this->svr_sock_ == INVALID_SOCKET; });
    const std::string address = c.peer_address();
    const std::string why =
        t_over_capacity
            ? fmt::format("the server holds its most connections ({})", m_st.opt.max_connections)
            : m_st.counter.admit(address);
    if (!why.empty()) {
      turn_away(c, why, k_tls, m_st.opt.quiet);
      return false;
    }
    struct admitted {
      connection_counter& counter;
      const std::string& address;
      ~admitted() { counter.release(address); }
    } guard{m_st.counter, address};
    if constexpr (k_tls)
      if (!c.accept_tls(this->ssl_context()))
        return false;
    return serve(c);
  }

  bool serve(connection& c) {
    bool ok = false;
    for (size_t left = k_keep_alive_requests; left > 0; --left) {
      if (!c.wait_request(left == k_keep_alive_requests))
        break;
      c.begin_head();
      stream strm(c);
      t_request = request_state{};
      t_request.conn = &c;
      bool closed = false;
      ok = this->process_request(strm, left == 1, closed,
                                 [this](httplib::Request& req) { read_framing(m_st, req); });
      if (!ok || closed || !c.body_complete()) {
        const auto f = c.last_failure();
        c.finish(!c.body_complete() && f != connection::failure::timed_out &&
                 f != connection::failure::closed);
        t_request = request_state{};
        return ok;
      }
    }
    t_request = request_state{};
    c.finish(false);
    return ok;
  }

  server_state& m_st;
};
} // namespace

std::unique_ptr<httplib::Server> make_server(server_state& st) {
  const serve_options& o = st.opt;
  if (o.cert.empty() != o.key.empty())
    throw usage_error("HTTPS needs both --cert and --key");
  if (o.cert.empty())
    return std::make_unique<guarded_server<httplib::Server>>(st);
  for (const auto& f : {o.cert, o.key})
    read_input_file(f, f == o.cert ? "certificate" : "private key"); // exists, readable, bounded
  auto s = std::make_unique<guarded_server<httplib::SSLServer>>(st, o.cert.c_str(), o.key.c_str());
  if (!s->is_valid())
    throw input_error(fmt::format(
        "cannot use certificate '{}' with key '{}' (OpenSSL refused them: PEM files of a "
        "matching pair?)",
        printable(o.cert), printable(o.key)));
  return s;
}

} // namespace accelbench::server
