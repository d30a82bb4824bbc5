#pragma once
// A tiny single-threaded HTTP/1.1 server for the tests: bound to 127.0.0.1 on a port the kernel
// picks (port 0), serving one connection at a time from a std::thread, answering each request
// with what a scripted handler returns ("Connection: close" after every answer). Every loop is
// bounded in count and time: the server stops after k_max_connections or k_max_lifetime.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace accelbench::testing {

struct http_exchange_request {
  std::string method, target, body;
  std::map<std::string, std::string> headers; // names lower-cased
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct http_exchange_response {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  std::chrono::milliseconds delay{0}; // wait before answering (timeout tests)
};

class local_http_server {
public:
  using handler = std::function<http_exchange_response(const http_exchange_request&)>;
  static constexpr int k_max_connections = 200;
  static constexpr std::chrono::seconds k_max_lifetime{30};

  explicit local_http_server(handler h) : m_handler(std::move(h)) {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (m_fd < 0)
      throw std::runtime_error("test server: socket() failed");
    int one = 1;
    ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(m_fd, (sockaddr*)&addr, sizeof addr) != 0 || ::listen(m_fd, 16) != 0) {
      ::close(m_fd);
      throw std::runtime_error("test server: bind/listen on 127.0.0.1 failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(m_fd, (sockaddr*)&addr, &len);
    m_port = ntohs(addr.sin_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~local_http_server() {
    m_stop = true;
    if (m_thread.joinable())
      m_thread.join();
    ::close(m_fd);
  }
  local_http_server(const local_http_server&) = delete;
  local_http_server& operator=(const local_http_server&) = delete;

  int port() const { return m_port; }
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(m_port) + path;
  }
  std::vector<http_exchange_request> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }

private:
  bool wait_readable(int fd, std::chrono::steady_clock::time_point deadline) {
    while (!m_stop && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, 20);
      if (r > 0)
        return true;
      if (r < 0)
        return false;
    }
    return false;
  }

  void serve() {
    auto end_of_life = std::chrono::steady_clock::now() + k_max_lifetime;
    for (int n = 0; n < k_max_connections && !m_stop; ++n) {
      if (!wait_readable(m_fd, end_of_life))
        return;
      int c = ::accept(m_fd, nullptr, nullptr);
      if (c < 0)
        continue;
      handle(c);
      ::close(c);
    }
  }

  void handle(int c) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::string data;
    char buf[8192];
    size_t header_end = std::string::npos;
    size_t content_length = 0;
    // Read the head, then exactly Content-Length bytes of body; bounded by size and deadline.
    while (data.size() < (64u << 20)) {
      if (header_end == std::string::npos) {
        header_end = data.find("\r\n\r\n");
        if (header_end != std::string::npos)
          content_length = parse_content_length(data.substr(0, header_end));
      }
      if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length)
        break;
      if (!wait_readable(c, deadline))
        return;
      ssize_t got = ::recv(c, buf, sizeof buf, 0);
      if (got <= 0)
        return;
      data.append(buf, (size_t)got);
    }
    if (header_end == std::string::npos)
      return;
    http_exchange_request req;
    std::string head = data.substr(0, header_end);
    req.body = data.substr(header_end + 4, content_length);
    size_t line_end = head.find("\r\n");
    std::string first = head.substr(0, line_end);
    size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos)
        e = head.size();
      std::string line = head.substr(pos, e - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon), value = line.substr(colon + 1);
        for (auto& ch : name)
          ch = (char)std::tolower((unsigned char)ch);
        value.erase(0, value.find_first_not_of(' '));
        req.headers[name] = value;
      }
      pos = e + 2;
    }
    {
      std::lock_guard lock(m_mutex);
      m_requests.push_back(req);
    }
    http_exchange_response resp = m_handler(req);
    // Sleep in small steps so that the destructor never waits long for a sleeping handler.
    auto until = std::chrono::steady_clock::now() + resp.delay;
    while (!m_stop && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " Scripted\r\n";
    out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
    out += "Connection: close\r\n";
    for (const auto& [k, v] : resp.headers)
      out += k + ": " + v + "\r\n";
    out += "\r\n" + resp.body;
    size_t sent = 0;
    for (int tries = 0; sent < out.size() && tries < 1000; ++tries) {
      ssize_t w = ::send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (w <= 0)
        return;
      sent += (size_t)w;
    }
  }

  static size_t parse_content_length(const std::string& head) {
    std::string lower = head;
    for (auto& ch : lower)
      ch = (char)std::tolower((unsigned char)ch);
    size_t p = lower.find("\r\ncontent-length:");
    if (p == std::string::npos)
      return 0;
    return (size_t)std::stoull(lower.substr(p + 17));
  }

  handler m_handler;
  int m_fd = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::vector<http_exchange_request> m_requests;
};

} // namespace accelbench::testing
