#pragma once
// One client connection of `accelbench serve`, below HTTP: a non-blocking socket (or a TLS session
// on it) read and written with deadlines, and the framing of a request body decoded here with
// bounded memory. cpp-httplib reads a request through this (server.cpp adapts it to its Stream):
// on its own it waits for each byte with a fresh read timeout, reads a chunked body without a limit
// and lets a header line grow without one, so one slow or endless client could hold a request
// thread for as long as it liked, or grow the server by the size of what it sent.
//
// A request has three phases: the head (request line and headers: at most max_head_bytes, before
// the head deadline), the body (Content-Length or chunked, at most max_body_bytes decoded, before
// the body deadline) and the response (written before the same deadline, counted from its first
// byte). Between requests the connection may stay idle for idle_timeout.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

using SSL = struct ssl_st;
using SSL_CTX = struct ssl_ctx_st;

namespace accelbench::server {

using std::chrono::milliseconds;

struct connection_limits {
  milliseconds header_timeout{10000}; // request line and headers, from the first byte waited for
  milliseconds body_timeout{60000};   // the whole body, and the whole response
  milliseconds idle_timeout{5000};    // between two requests of one connection
  milliseconds io_timeout{5000};      // no byte moves either way: the peer is gone
  std::size_t max_head_bytes = std::size_t{64} << 10;
  std::size_t max_body_bytes = std::size_t{64} << 20;
};

// A chunked body (RFC 9112, section 7.1) decoded incrementally: chunk-size lines and trailers are
// bounded, the decoded size is checked against the limit before a chunk's data is read, and the
// decoder stops at the end of the body so that what follows belongs to the next request.
class chunked_decoder {
public:
  enum class status { more, done, too_large, malformed };
  explicit chunked_decoder(std::size_t max_body) : m_max(max_body) {}
  // Decodes from in[0, n): appends data to `out`, sets `used` to the bytes consumed.
  status feed(const char* in, std::size_t n, std::size_t& used, std::string& out);
  std::size_t decoded() const { return m_decoded; }

private:
  enum class state { size_line, data, data_end, trailer };
  status on_line();
  std::size_t m_max, m_decoded = 0, m_left = 0, m_trailer_bytes = 0;
  state m_state = state::size_line;
  std::string m_line;
  status m_status = status::more;
};

// Open connections per client address, and in all: a client over its share is refused at once
// (one address must not take every connection), and so is anyone when the server holds its most.
class connection_counter {
public:
  connection_counter(std::size_t per_client, std::size_t total)
      : m_per_client(per_client), m_total(total) {}
  // "" when admitted (release() it later), or why not.
  std::string admit(const std::string& address);
  void release(const std::string& address);
  std::size_t open() const;

private:
  std::size_t m_per_client, m_total, m_open = 0;
  std::map<std::string, std::size_t> m_by_address;
  mutable std::mutex m_mutex;
};

class connection {
public:
  enum class framing { none, length, chunked };
  enum class failure { none, timed_out, head_too_large, body_too_large, bad_chunking, closed };

  // Takes the socket (made non-blocking); `stopping` says the server is shutting down.
  connection(int fd, const connection_limits& limits, std::function<bool()> stopping);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection(); // closes it, without lingering

  // TLS on this socket (SSL_accept before the head deadline); false when the handshake failed.
  bool accept_tls(SSL_CTX* ctx);
  // Waits for the first byte of a request: false when none came in time or the peer closed.
  bool wait_request(bool first);
  void begin_head();
  void begin_body(framing f, std::uint64_t length = 0);

  ssize_t read(char* ptr, std::size_t size);
  ssize_t write(const char* ptr, std::size_t size);
  bool readable() const; // a byte is buffered, or the socket can be read now

  failure last_failure() const { return m_failure; }
  // The bytes taken off the socket (decrypted, under TLS) since this request's head began: what
  // the server read of it, head and body, so far. Bytes dropped by finish()'s linger are not
  // counted; they are read after the answer, for as long as the linger lasts.
  std::uint64_t request_bytes_read() const { return m_request_read; }
  // The body was read to its end (or there was none): the next request can follow.
  bool body_complete() const;
  // Ends the connection after a response: TLS close_notify, then the write side is shut and what
  // the client still sends is read and dropped for a moment (at most `linger`), so that a client
  // still sending a body it was refused reads the answer instead of a reset.
  void finish(bool linger);

  int fd() const { return m_fd; }
  std::string peer_address() const;
  void peer(std::string& ip, int& port) const;
  void local(std::string& ip, int& port) const;

private:
  enum class phase { idle, head, body };
  enum class wait_for { read, write };
  bool wait(wait_for what, std::chrono::steady_clock::time_point deadline);
  ssize_t fill(); // reads into the buffer before the phase's deadline; <= 0: nothing more
  ssize_t raw_read(char* ptr, std::size_t size);
  // One transfer in direction `dir` (tls: SSL_read or SSL_write; plain: recv or send), retried
  // while it would block, until `deadline`.
  template <class Tls, class Plain>
  ssize_t transfer(wait_for dir, const std::chrono::steady_clock::time_point& deadline,
                   const Tls& tls, const Plain& plain);
  ssize_t read_body(char* ptr, std::size_t size);
  ssize_t take(char* ptr, std::size_t size);
  ssize_t fail(failure f);

  int m_fd;
  SSL* m_ssl = nullptr;
  connection_limits m_limits;
  std::function<bool()> m_stopping;
  std::vector<char> m_buf;
  std::size_t m_buf_at = 0, m_buf_end = 0;
  phase m_phase = phase::idle;
  framing m_framing = framing::none;
  std::chrono::steady_clock::time_point m_deadline, m_write_deadline;
  bool m_writing = false;
  std::size_t m_head_bytes = 0;
  std::uint64_t m_request_read = 0;
  std::uint64_t m_body_left = 0;
  bool m_body_done = true;
  chunked_decoder m_chunks{0};
  std::string m_decoded;
  std::size_t m_decoded_at = 0;
  failure m_failure = failure::none;
};

} // namespace accelbench::server
