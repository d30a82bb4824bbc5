#include "harness/app/server/connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <openssl/ssl.h>

namespace accelbench::server {

namespace {

using steady = std::chrono::steady_clock;

// A chunk-size line (the size, extensions) and all trailer lines together; real clients send a
// few bytes of each.
constexpr std::size_t k_max_chunk_line = 1024, k_max_trailers = 8192;
constexpr std::size_t k_buffer = std::size_t{16} << 10;
// How long a refused client's remaining body is read and dropped after the answer, at most.
constexpr milliseconds k_linger{2000};
// Waits are cut into slices so that a stop of the server is seen while a connection is idle.
constexpr milliseconds k_slice{200};

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string address_text(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  return text;
}

} // namespace

chunked_decoder::status chunked_decoder::feed(const char* in, std::size_t n, std::size_t& used,
                                              std::string& out) {
  used = 0;
  while (used < n && m_status == status::more) {
    if (m_state == state::data) {
      const std::size_t k = std::min<std::size_t>(m_left, n - used);
      out.append(in + used, k);
      used += k;
      m_left -= k;
      if (m_left == 0)
        m_state = state::data_end;
      continue;
    }
    const char c = in[used++];
    m_line += c;
    if (c == '\n')
      m_status = on_line();
    else if (m_line.size() > k_max_chunk_line)
      m_status = status::malformed;
  }
  return m_status;
}

chunked_decoder::status chunked_decoder::on_line() {
  const std::string line = std::move(m_line);
  m_line.clear();
  if (line.size() < 2 || line[line.size() - 2] != '\r')
    return status::malformed; // lines end with CRLF
  if (m_state == state::data_end) {
    m_state = state::size_line;
    return line == "\r\n" ? status::more : status::malformed;
  }
  if (m_state == state::trailer) {
    m_trailer_bytes += line.size();
    if (line == "\r\n")
      return status::done;
    return m_trailer_bytes > k_max_trailers ? status::malformed : status::more;
  }
  std::uint64_t size = 0;
  std::size_t i = 0;
  for (; i < line.size() && hex_digit(line[i]) >= 0; ++i) {
    if (i == 15)
      return status::malformed; // more than 15 hex digits: no body is that large
    size = size * 16 + (std::uint64_t)hex_digit(line[i]);
  }
  // Then optional whitespace and extensions (ignored), or the line end.
  if (i == 0 || (line[i] != '\r' && line[i] != ';' && line[i] != ' ' && line[i] != '\t'))
    return status::malformed;
  if (size > m_max - m_decoded)
    return status::too_large; // refused before its data is read
  if (size == 0) {
    m_state = state::trailer;
    return status::more;
  }
  m_decoded += size;
  m_left = size;
  m_state = state::data;
  return status::more;
}

std::string connection_counter::admit(const std::string& address) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_open >= m_total)
    return fmt::format("the server holds its most connections ({})", m_total);
  std::size_t& mine = m_by_address[address];
  if (mine >= m_per_client)
    return fmt::format("{} has {} connections open, the most one client may hold", address, mine);
  ++mine;
  ++m_open;
  return "";
}

void connection_counter::release(const std::string& address) {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_by_address.find(address);
  if (it == m_by_address.end())
    return;
  if (--it->second == 0)
    m_by_address.erase(it);
  --m_open;
}

std::size_t connection_counter::open() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_open;
}

connection::connection(int fd, const connection_limits& limits, std::function<bool()> stopping)
    : m_fd(fd), m_limits(limits), m_stopping(std::move(stopping)), m_buf(k_buffer),
      m_deadline(steady::now() + limits.header_timeout) {
  fcntl(m_fd, F_SETFL, fcntl(m_fd, F_GETFL) | O_NONBLOCK);
}

connection::~connection() {
  if (m_ssl)
    SSL_free(m_ssl);
  close(m_fd);
}

bool connection::wait(wait_for what, steady::time_point deadline) {
  const auto quiet_until = steady::now() + m_limits.io_timeout;
  const bool stoppable = m_phase == phase::idle || m_phase == phase::head;
  for (;;) {
    const auto now = steady::now();
    if (now >= deadline || now >= quiet_until || (stoppable && m_stopping()))
      return false;
    const auto left = std::min(
        {deadline - now, quiet_until - now, std::chrono::duration_cast<steady::duration>(k_slice)});
    pollfd p{m_fd, (short)(what == wait_for::read ? POLLIN : POLLOUT), 0};
    const int ms = (int)std::chrono::ceil<milliseconds>(left).count();
    const int r = poll(&p, 1, std::max(ms, 1));
    if (r > 0)
      return true;
    if (r < 0 && errno != EINTR)
      return false;
  }
}

// TLS may need the other direction first (a renegotiation, a key update): then the wait is for
// that one. A clean TLS close is the end of what a read gets (0); to a write it is a failure.
template <class Tls, class Plain>
ssize_t connection::transfer(wait_for dir, const steady::time_point& deadline, const Tls& tls,
                             const Plain& plain) {
  const bool reading = dir == wait_for::read;
  const int want_same = reading ? SSL_ERROR_WANT_READ : SSL_ERROR_WANT_WRITE;
  const int want_other = reading ? SSL_ERROR_WANT_WRITE : SSL_ERROR_WANT_READ;
  for (;;) {
    wait_for next = dir;
    if (m_ssl) {
      const int r = tls();
      if (r > 0)
        return r;
      const int e = SSL_get_error(m_ssl, r);
      if (reading && e == SSL_ERROR_ZERO_RETURN)
        return 0;
      if (e == want_other)
        next = reading ? wait_for::write : wait_for::read;
      else if (e != want_same)
        return fail(failure::closed);
    } else {
      const ssize_t r = plain();
      if (r >= 0)
        return r;
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return fail(failure::closed);
    }
    if (!wait(next, deadline))
      return fail(failure::timed_out);
  }
}

ssize_t connection::raw_read(char* ptr, std::size_t size) {
  return transfer(
      wait_for::read, m_deadline,
      [&] { return SSL_read(m_ssl, ptr, (int)std::min<std::size_t>(size, 1 << 30)); },
      [&] { return recv(m_fd, ptr, size, 0); });
}

ssize_t connection::fail(failure f) {
  if (m_failure == failure::none)
    m_failure = f;
  return -1;
}

ssize_t connection::fill() {
  m_buf_at = m_buf_end = 0;
  const ssize_t n = raw_read(m_buf.data(), m_buf.size());
  if (n > 0) {
    m_buf_end = (std::size_t)n;
    m_request_read += (std::uint64_t)n;
  }
  return n;
}

ssize_t connection::take(char* ptr, std::size_t size) {
  const std::size_t n = std::min(size, m_buf_end - m_buf_at);
  std::memcpy(ptr, m_buf.data() + m_buf_at, n);
  m_buf_at += n;
  return (ssize_t)n;
}

bool connection::wait_request(bool first) {
  m_phase = phase::idle;
  if (m_buf_at < m_buf_end || (m_ssl && SSL_pending(m_ssl) > 0))
    return true;
  if (first)
    return wait(wait_for::read, m_deadline); // the head deadline runs from the accept
  const bool ok = wait(wait_for::read, steady::now() + m_limits.idle_timeout);
  m_deadline = steady::now() + m_limits.header_timeout;
  return ok;
}

void connection::begin_head() {
  m_phase = phase::head;
  m_writing = false;
  m_head_bytes = 0;
  m_request_read = 0;
  m_framing = framing::none;
  m_body_done = true;
}

void connection::begin_body(framing f, std::uint64_t length) {
  m_phase = phase::body;
  m_framing = f;
  m_deadline = steady::now() + m_limits.body_timeout;
  m_body_left = length;
  m_body_done = f == framing::none || (f == framing::length && length == 0);
  m_chunks = chunked_decoder(m_limits.max_body_bytes);
  m_decoded.clear();
  m_decoded_at = 0;
}

ssize_t connection::read(char* ptr, std::size_t size) {
  if (m_phase == phase::body)
    return read_body(ptr, size);
  if (m_phase != phase::head)
    return 0;
  if (m_head_bytes >= m_limits.max_head_bytes)
    return fail(failure::head_too_large);
  size = std::min(size, m_limits.max_head_bytes - m_head_bytes);
  if (m_buf_at == m_buf_end) {
    const ssize_t r = fill();
    if (r <= 0)
      return r;
  }
  const ssize_t n = take(ptr, size);
  m_head_bytes += (std::size_t)n;
  return n;
}

ssize_t connection::read_body(char* ptr, std::size_t size) {
  if (m_framing == framing::length) {
    if (m_body_left == 0)
      return 0;
    if (m_buf_at == m_buf_end && fill() <= 0)
      return fail(failure::closed); // the body ended early: never a complete request
    const ssize_t n = take(ptr, (std::size_t)std::min<std::uint64_t>(size, m_body_left));
    m_body_left -= (std::uint64_t)n;
    m_body_done = m_body_left == 0;
    return n;
  }
  if (m_framing != framing::chunked)
    return 0;
  for (;;) {
    if (m_decoded_at < m_decoded.size()) {
      const std::size_t n = std::min(size, m_decoded.size() - m_decoded_at);
      std::memcpy(ptr, m_decoded.data() + m_decoded_at, n);
      m_decoded_at += n;
      return (ssize_t)n;
    }
    m_decoded.clear();
    m_decoded_at = 0;
    if (m_body_done)
      return 0;
    if (m_buf_at == m_buf_end && fill() <= 0)
      return fail(failure::closed);
    std::size_t used = 0;
    const auto st = m_chunks.feed(m_buf.data() + m_buf_at, m_buf_end - m_buf_at, used, m_decoded);
    m_buf_at += used;
    if (st == chunked_decoder::status::too_large)
      return fail(failure::body_too_large);
    if (st == chunked_decoder::status::malformed)
      return fail(failure::bad_chunking);
    m_body_done = st == chunked_decoder::status::done;
  }
}

ssize_t connection::write(const char* ptr, std::size_t size) {
  // A response has its own deadline; reading goes on in its phase (an interim "100 Continue" is
  // written before the body is read).
  if (!m_writing) {
    m_writing = true;
    m_write_deadline = steady::now() + m_limits.body_timeout;
  }
  return transfer(
      wait_for::write, m_write_deadline,
      [&] { return SSL_write(m_ssl, ptr, (int)std::min<std::size_t>(size, 1 << 30)); },
      [&] { return send(m_fd, ptr, size, MSG_NOSIGNAL); });
}

bool connection::readable() const {
  if (m_buf_at < m_buf_end || (m_ssl && SSL_pending(m_ssl) > 0))
    return true;
  pollfd p{m_fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

bool connection::body_complete() const { return m_body_done && m_failure == failure::none; }

bool connection::accept_tls(SSL_CTX* ctx) {
  m_ssl = SSL_new(ctx);
  if (!m_ssl || SSL_set_fd(m_ssl, m_fd) != 1)
    return false;
  for (;;) {
    const int r = SSL_accept(m_ssl);
    if (r == 1)
      return true;
    const int e = SSL_get_error(m_ssl, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
      return false;
    if (!wait(e == SSL_ERROR_WANT_READ ? wait_for::read : wait_for::write, m_deadline))
      return false;
  }
}

void connection::finish(bool linger) {
  if (m_ssl && m_failure != failure::closed)
    SSL_shutdown(m_ssl); // close_notify, once: the client need not answer it
  shutdown(m_fd, SHUT_WR);
  if (!linger || m_stopping())
    return;
  const auto until = steady::now() + k_linger;
  char scratch[4096];
  for (auto now = steady::now(); now < until; now = steady::now()) {
    const ssize_t r = recv(m_fd, scratch, sizeof scratch, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      return;
    if (r < 0) {
      pollfd p{m_fd, POLLIN, 0};
      poll(&p, 1, std::max(1, (int)std::chrono::ceil<milliseconds>(until - now).count()));
    }
  }
}

std::string connection::peer_address() const {
  std::string ip;
  int port = 0;
  peer(ip, port);
  return ip;
}

void connection::peer(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  port = 0;
  ip = getpeername(m_fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 ? address_text(a, port) : "";
}

void connection::local(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  port = 0;
  ip = getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 ? address_text(a, port) : "";
}

} // namespace accelbench::server
