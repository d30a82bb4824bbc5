// HTTP responses the client parses (harness/app/net): a loopback server answers every request with
// the input, byte for byte (status line, headers, body), to `import URL` (GET, redirects, our
// export format in the body) and `publish` (POST, the server's verdict). Retry-After is parsed on
// its own too. Property: every answer ends in the runs, or an exit-2 error (http_error,
// input_error) — never another exception, a crash or a hang past the timeouts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "harness/app/net/http.hpp"
#include "harness/app/net/publish.hpp"
#include "harness/core/results_document.hpp"
#include "tests/fuzz/fuzz_common.hpp"

#ifndef ACCELBENCH_SOURCE_DIR
#error "ACCELBENCH_SOURCE_DIR must name the source tree (for the run that is published)"
#endif

using namespace accelbench;

namespace {

// A one-connection-at-a-time HTTP server on 127.0.0.1 that reads a request and answers with
// whatever response() holds, then closes the connection.
class canned_server {
public:
  canned_server() {
    m_fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (m_fd < 0 || bind(m_fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(m_fd, 16) != 0 || getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("fuzz_http_response: loopback server");
      std::abort();
    }
    m_port = ntohs(addr.sin_port);
    std::thread([this] { serve(); }).detach();
  }
  int port() const { return m_port; }
  void set_response(std::string r) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_response = std::move(r);
  }

private:
  void serve() {
    for (;;) {
      int c = accept(m_fd, nullptr, nullptr);
      if (c < 0)
        continue;
      timeval tv{2, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      read_request(c);
      std::string r;
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        r = m_response;
      }
      for (size_t off = 0; off < r.size();) {
        ssize_t n = send(c, r.data() + off, r.size() - off, MSG_NOSIGNAL);
        if (n <= 0)
          break;
        off += static_cast<size_t>(n);
      }
      shutdown(c, SHUT_WR);
      close(c);
    }
  }
  // The Content-Length header's value in a request's head (0 where it has none or it is not a
  // number). Only a header line counts: a redirect the input asked for can put the same text in
  // the request line's target.
  static size_t content_length(const std::string& head) {
    const std::string name = "\r\nContent-Length: ";
    size_t at = head.find(name);
    if (at == std::string::npos)
      return 0;
    size_t value = 0;
    const char* first = head.data() + at + name.size();
    std::from_chars(first, head.data() + head.size(), value);
    return value;
  }
  // Headers, then as many body bytes as Content-Length says (a POST's results document), so the
  // client is not reset while it still sends.
  static void read_request(int c) {
    std::string req;
    char buf[4096];
    size_t need = std::string::npos;
    for (;;) {
      ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0)
        return;
      req.append(buf, static_cast<size_t>(n));
      if (need == std::string::npos) {
        size_t end = req.find("\r\n\r\n");
        if (end == std::string::npos)
          continue;
        need = end + 4 + content_length(req.substr(0, end + 2));
      }
      if (req.size() >= need)
        return;
    }
  }

  int m_fd = -1;
  int m_port = 0;
  std::mutex m_mutex;
  std::string m_response;
};

// Built once, in place: the server thread holds a pointer to it.
struct fixture {
  canned_server server;
  net::http_options http;
  std::vector<run> runs; // one published run to POST
  json systems = json::array();

  fixture() {
    http.token_env = "";
    http.connect_timeout = std::chrono::milliseconds(500);
    http.total_timeout = std::chrono::milliseconds(3000);
    // One retry, without waiting: the retry path (and Retry-After) is exercised, not the clock.
    http.max_attempts = 2;
    http.backoff_initial = std::chrono::milliseconds(0);
    http.backoff_max = std::chrono::milliseconds(0);
    http.retry_after_max = std::chrono::milliseconds(1);
    http.max_response_bytes = 1 << 20;
    http.log = [](const std::string&) {};
    std::ifstream in(std::string(ACCELBENCH_SOURCE_DIR) + "/results/published/kernels.json");
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<run> all = read_results_document(ss.str(), "kernels.json", &systems);
    runs.push_back(all.front());
  }
};

fixture& setup() {
  static fixture f;
  return f;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fixture& f = setup();
  const std::string response(fuzz::as_text(data, size));
  f.server.set_response(response);
  const std::string base = "http://127.0.0.1:" + std::to_string(f.server.port());
  fuzz::guarded([&] {
    json systems;
    net::import_results_url(base + "/results.json", f.http, &systems);
  });
  fuzz::guarded([&] {
    net::publish_options p;
    p.url = base + "/api/results";
    p.http = f.http;
    net::publish_runs(f.runs, f.systems, p);
  });
  fuzz::must_succeed("parse_retry_after", [&] { net::parse_retry_after(response); });
  return 0;
}
