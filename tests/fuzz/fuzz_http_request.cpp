// The bytes a client sends `accelbench serve` (harness/app/server): each input is one connection's
// whole request stream (request line, headers, a Content-Length or chunked body with its
// extensions and trailers, pipelined requests), sent to a real server running in this process on
// 127.0.0.1, which reads it through its connection layer (connection.hpp: head and body limits,
// the chunked decoder), cpp-httplib's request parser and its own framing rules. "@token@" in the
// input becomes a write token of the server's database, so that a body can get past the token
// check to be read. Properties of the answer (server.hpp): every response has a status line, no
// 500 (a bug) and no 5xx but 501 and 503, every error is a JSON body {"error": ..., "status": N},
// and a response the server began is written whole. The chunked decoder is also fed the input
// directly, whole and in pieces of every size: the pieces do not change what it decodes, where
// it stops or its verdict, and it never decodes more than its limit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "harness/app/server/api.hpp"
#include "harness/app/server/connection.hpp"
#include "harness/app/server/server.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;
using decoded = server::chunked_decoder::status;

namespace {

constexpr std::string_view k_token_placeholder = "@token@";
// The server's body limit here: small, so that a few bytes of chunk size can pass it.
constexpr std::size_t k_max_body = std::size_t{1} << 20;
// How long the server may take to answer and close once the request stream has ended. Nothing in
// it waits then (it reads the end of the stream at once); this only bounds a hang.
constexpr int k_answer_timeout_s = 20;

// ---- the chunked decoder on its own ----

struct decode_result {
  decoded status = decoded::more;
  std::size_t used = 0;
  std::string out;
};

// decoded() counts the chunks announced (a chunk's size is checked against the limit before its
// data is read): the bytes written so far and the rest of the chunk being read, all of them once
// the body is done.
void check_decoded_count(const server::chunked_decoder& d, const decode_result& r) {
  if (d.decoded() < r.out.size() || (r.status == decoded::done && d.decoded() != r.out.size()))
    fuzz::finding("chunked decoder", "decoded() is " + std::to_string(d.decoded()) + " after " +
                                         std::to_string(r.out.size()) + " bytes written");
}

// Feeds `in` in pieces whose sizes (1 to 64 bytes) come from a generator seeded by the input,
// until the decoder stops; `used` counts the bytes it took.
decode_result decode_in_pieces(std::string_view in, std::size_t max) {
  uint64_t state = 0x2545f4914f6cdd1dULL ^ in.size();
  for (char c : in.substr(0, 16))
    state = state * 131 + static_cast<unsigned char>(c);
  server::chunked_decoder d(max);
  decode_result r;
  while (!in.empty() && r.status == decoded::more) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const std::size_t n = std::min<std::size_t>(in.size(), 1 + state % 64);
    std::size_t used = 0;
    r.status = d.feed(in.data(), n, used, r.out);
    r.used += used;
    in.remove_prefix(used);
    if (r.status == decoded::more && used != n)
      fuzz::finding("chunked decoder", "asked for more after taking " + std::to_string(used) +
                                           " of " + std::to_string(n) + " bytes");
  }
  check_decoded_count(d, r);
  return r;
}

void check_chunked_decoder(std::string_view in) {
  constexpr std::size_t max = 4096;
  server::chunked_decoder d(max);
  decode_result whole;
  whole.status = d.feed(in.data(), in.size(), whole.used, whole.out);
  if (whole.used > in.size() || (whole.status == decoded::more && whole.used != in.size()))
    fuzz::finding("chunked decoder", "took " + std::to_string(whole.used) + " of " +
                                         std::to_string(in.size()) + " bytes");
  if (d.decoded() > max)
    fuzz::finding("chunked decoder", "decoded " + std::to_string(d.decoded()) + " bytes, limit " +
                                         std::to_string(max));
  check_decoded_count(d, whole);
  const decode_result pieces = decode_in_pieces(in, max);
  if (pieces.status != whole.status || pieces.used != whole.used || pieces.out != whole.out)
    fuzz::finding("chunked decoder", "fed in pieces it decodes otherwise");
}

// ---- the server ----

// A port no socket holds now (the kernel's pick for port 0); the server binds it next.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("fuzz_http_request: a free port");
    std::abort();
  }
  close(fd);
  return ntohs(addr.sin_port);
}

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    return fd;
  if (fd >= 0)
    close(fd);
  return -1;
}

// The threads of this process now, as the kernel counts them (a thread that has exited is gone).
int thread_count() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Threads:", 0) == 0)
      return std::atoi(line.c_str() + 8);
  return 0;
}

// Waits, at most 10 s, until no more than `most` threads are left. The server serves each
// connection on a thread of its own, which ends after the connection: libFuzzer's leak check after
// an input must not meet that thread in the middle of its exit, when LeakSanitizer reports the
// 32-byte list of its thread_local destructors that glibc frees a moment later.
void wait_threads_at_most(int most) {
  for (int i = 0; i < 100000 && thread_count() > most; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// `accelbench serve` on a database of its own in the scratch folder, public reads, CORS, quiet,
// started once on a thread of this process (it runs until the process ends), and a write token of
// it.
struct live_server {
  int port = free_port();
  std::string token;
  int idle_threads = 0; // this process's threads while the server waits for a connection

  live_server() {
    const int before = thread_count();
    const std::string db = (fuzz::scratch_dir() / "server.db").string();
    fuzz::must_succeed("creating the server's token", [&] {
      auto s = store::store::open(db, store::access::read_write);
      token = server::create_token(s, "fuzz", server::role::write).token;
    });
    server::serve_options o;
    o.db = db;
    o.listen = "127.0.0.1:" + std::to_string(port);
    o.public_read = true;
    o.cors_origin = "https://dashboard.example"; // the OPTIONS route and the CORS headers too
    o.quiet = true;
    o.threads = 2;
    o.max_body_bytes = k_max_body;
    std::thread([o] {
      fuzz::must_succeed("accelbench serve", [&] { server::cmd_serve(o); });
    }).detach();
    wait_listening();
    wait_threads_at_most(before + 2); // the server's and its stop watcher's
    idle_threads = thread_count();
  }

  void wait_listening() const {
    for (int i = 0; i < 6000; ++i) {
      const int fd = connect_to(port);
      if (fd >= 0) {
        close(fd);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::fprintf(stderr, "fuzz_http_request: the server did not listen on port %d\n", port);
    std::abort();
  }
};

live_server& server_once() {
  static live_server s;
  return s;
}

std::string with_token(std::string_view input, const std::string& token) {
  std::string out;
  out.reserve(input.size());
  for (std::size_t at = 0;;) {
    const std::size_t p = input.find(k_token_placeholder, at);
    out.append(input.substr(at, p == std::string_view::npos ? p : p - at));
    if (p == std::string_view::npos)
      return out;
    out += token;
    at = p + k_token_placeholder.size();
  }
}

struct answer {
  std::string bytes;
  bool clean_end = false; // the server closed the connection (not reset, not timed out)
};

// One connection: the request stream written (from a thread: the server may answer before it
// has read it all), the write side shut, and everything the server sends read until it closes.
answer send_request(int port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) {
    std::perror("fuzz_http_request: connecting to the server");
    std::abort();
  }
  const timeval tv{k_answer_timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::thread writer([fd, &request] {
    for (std::size_t at = 0; at < request.size();) {
      const ssize_t n = send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
      if (n <= 0)
        break; // the server closed: it answered, or refused the connection
      at += static_cast<std::size_t>(n);
    }
    shutdown(fd, SHUT_WR);
  });
  answer a;
  char buf[16384];
  ssize_t n = 0;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
    a.bytes.append(buf, static_cast<std::size_t>(n));
  const int err = errno;
  writer.join();
  close(fd);
  a.clean_end = n == 0;
  if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK))
    fuzz::finding("the server hung", "no answer and no close " +
                                         std::to_string(k_answer_timeout_s) +
                                         " s after the request ended");
  return a;
}

// ---- the answer ----

struct response {
  int status = 0;
  std::string content_type, content_length;
  bool chunked = false;
  std::size_t body_at = 0; // offset of the first byte after the head
};

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The status line and the headers read here, of the response at `at` (its head complete).
response read_head(const std::string& a, std::size_t at, std::size_t head_end) {
  response r;
  if (a.compare(at, 9, "HTTP/1.1 ") != 0 || head_end - at < 12 || a[at + 12] != ' ' ||
      !std::isdigit(static_cast<unsigned char>(a[at + 9])) ||
      !std::isdigit(static_cast<unsigned char>(a[at + 10])) ||
      !std::isdigit(static_cast<unsigned char>(a[at + 11])))
    fuzz::finding("a response without a status line", printable(a.substr(at, 80)));
  r.status = std::stoi(a.substr(at + 9, 3));
  for (std::size_t line = a.find("\r\n", at) + 2; line < head_end;) {
    const std::size_t end = a.find("\r\n", line);
    const std::size_t colon = a.find(':', line);
    if (colon < end) {
      const std::string name = lower(a.substr(line, colon - line));
      std::string value = a.substr(colon + 1, end - colon - 1);
      value.erase(0, value.find_first_not_of(' '));
      if (name == "content-type")
        r.content_type = value;
      else if (name == "content-length")
        r.content_length = value;
      else if (name == "transfer-encoding")
        r.chunked = lower(value) == "chunked";
    }
    line = end + 2;
  }
  r.body_at = head_end + 4;
  return r;
}

// The statuses server.hpp promises: errors are 4xx, or 501 (a coding it does not take) and 503
// (the database does not answer); a 500 is a bug.
void check_status(const response& r, const std::string& a) {
  if (r.status < 100 || r.status > 599 || (r.status >= 500 && r.status != 501 && r.status != 503))
    fuzz::finding("the server answered " + std::to_string(r.status), printable(a.substr(0, 400)));
  if (r.status >= 400 && !server::is_json_media_type(r.content_type))
    fuzz::finding("error " + std::to_string(r.status) + " is not JSON",
                  "Content-Type '" + printable(r.content_type) + "'");
}

void check_error_body(const response& r, std::string_view body) {
  if (r.status < 400)
    return;
  const json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_string() ||
      j.value("status", 0) != r.status)
    fuzz::finding("error " + std::to_string(r.status) + " without its JSON body",
                  printable(body.substr(0, 200)));
}

// The end of the body of `r` (the offset of the next response), or npos when the answer ends
// inside it. No body: 1xx, 204, 304, and a response to HEAD (whose head is followed at once by
// the next response or by the end).
std::size_t body_end(const std::string& a, const response& r) {
  const bool bodiless = r.status < 200 || r.status == 204 || r.status == 304 ||
                        r.body_at == a.size() || a.compare(r.body_at, 7, "HTTP/1.") == 0;
  if (bodiless)
    return r.body_at;
  if (r.chunked) {
    server::chunked_decoder d(std::size_t{1} << 40);
    std::size_t used = 0;
    std::string body;
    const auto st = d.feed(a.data() + r.body_at, a.size() - r.body_at, used, body);
    return st == decoded::done ? r.body_at + used : std::string::npos;
  }
  if (r.content_length.empty())
    return a.size(); // delimited by the close
  std::size_t n = 0;
  const char* const last = r.content_length.data() + r.content_length.size();
  if (std::from_chars(r.content_length.data(), last, n).ptr != last)
    fuzz::finding("a response's Content-Length is not a number", printable(r.content_length));
  return a.size() - r.body_at < n ? std::string::npos : r.body_at + n;
}

void check_answer(const answer& ans) {
  const std::string& a = ans.bytes;
  for (std::size_t at = 0; at < a.size();) {
    const std::size_t head_end = a.find("\r\n\r\n", at);
    if (head_end == std::string::npos) {
      if (ans.clean_end)
        fuzz::finding("a response cut in its head", printable(a.substr(at, 200)));
      return;
    }
    const response r = read_head(a, at, head_end);
    check_status(r, a.substr(at, head_end - at));
    const std::size_t end = body_end(a, r);
    if (end == std::string::npos) {
      if (ans.clean_end)
        fuzz::finding("a response cut in its body", printable(a.substr(at, 200)));
      return;
    }
    if (!r.chunked && end > r.body_at)
      check_error_body(r, std::string_view(a).substr(r.body_at, end - r.body_at));
    at = end;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_text(data, size);
  check_chunked_decoder(input);
  live_server& s = server_once();
  check_answer(send_request(s.port, with_token(input, s.token)));
  wait_threads_at_most(s.idle_threads);
  return 0;
}
