#include "harness/app/server/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "harness/app/query/database.hpp"
#include "harness/app/server/api.hpp"
#include "harness/app/server/connection.hpp"
#include "harness/app/server/dashboard.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::server {

namespace {

using steady = std::chrono::steady_clock;

// How long a request waits for one of the --threads request slots before it is answered 503.
constexpr std::chrono::seconds k_slot_wait{10};

// Store connections, one per request being handled: at most `capacity` at once (the request
// slots; a request waits for one, then gets 503). A connection that failed (the database went
// away) is dropped, and the next request opens a fresh one. The idle ones are dropped with it:
// when one connection to a PostgreSQL server failed, the others were most likely cut by the same
// restart, and each would fail one more request before being replaced.
class store_pool {
public:
  store_pool(std::string path, std::size_t capacity)
      : m_path(std::move(path)), m_capacity(capacity) {}

  class lease {
  public:
    lease(store_pool& pool, std::unique_ptr<store::store> s)
        : m_pool(pool), m_store(std::move(s)) {}
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() { m_pool.give_back(std::move(m_store)); }
    store::store& operator*() { return *m_store; }
    void discard() {
      m_store.reset();
      m_pool.drop_idle();
    }

  private:
    store_pool& m_pool;
    std::unique_ptr<store::store> m_store;
  };

  lease acquire() {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (!m_freed.wait_for(lock, k_slot_wait, [this] { return m_leased < m_capacity; }))
      throw api_error(503, "the server is busy; retry later");
    ++m_leased;
    if (!m_free.empty()) {
      auto s = std::move(m_free.back());
      m_free.pop_back();
      return lease(*this, std::move(s));
    }
    lock.unlock();
    try {
      return lease(*this, std::make_unique<store::store>(
                              store::store::open(m_path, store::access::read_write)));
    } catch (...) {
      give_back(nullptr);
      throw;
    }
  }

  void drop_idle() {
    std::vector<std::unique_ptr<store::store>> dropped;
    std::lock_guard<std::mutex> lock(m_mutex);
    dropped.swap(m_free);
  }

private:
  void give_back(std::unique_ptr<store::store> s) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (s)
      m_free.push_back(std::move(s));
    --m_leased;
    m_freed.notify_one();
  }
  std::string m_path;
  std::size_t m_capacity, m_leased = 0;
  std::mutex m_mutex;
  std::condition_variable m_freed;
  std::vector<std::unique_ptr<store::store>> m_free;
};

std::mutex g_log_mutex;
void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::cerr << "accelbench: " << line << "\n";
}

const char* reason_of(int status) {
  switch (status) {
  case 400:
    return "bad request";
  case 401:
    return "a valid token is required";
  case 403:
    return "forbidden";
  case 404:
    return "no such route";
  case 405:
    return "method not allowed";
  case 413:
    return "request body too large";
  case 415:
    return "unsupported media type";
  case 503:
    return "database unavailable";
  default:
    return status >= 500 ? "internal error" : "request refused";
  }
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(dump_json(json{{"error", message}, {"status", status}}) + "\n",
                  "application/json");
  if (status == 401)
    res.set_header("WWW-Authenticate", "Bearer realm=\"accelbench\"");
  if (status == 503)
    res.set_header("Retry-After", "1");
}

params params_of(const httplib::Request& req) {
  return params(req.params.begin(), req.params.end());
}

// The role a request has, or an api_error (401/403). Only the header is read: a token is never
// taken from the URL (URLs end up in logs and histories).
void authorize(store::store& db, const httplib::Request& req, role need, bool public_read) {
  const std::string header = req.get_header_value("Authorization");
  if (header.empty()) {
    if (need == role::read && public_read)
      return;
    throw api_error(
        401,
        need == role::read
            ? "reads need a token (Authorization: Bearer ...): this server was not started with "
              "--public-read"
            : "writes need a token with role write or admin (Authorization: Bearer ...)");
  }
  if (header.size() < 7 || strncasecmp(header.c_str(), "Bearer ", 7) != 0)
    throw api_error(401, "the Authorization header is not 'Bearer TOKEN'");
  auto r = check_token(db, header.substr(7));
  if (!r)
    throw api_error(401, "the token is not valid (unknown, revoked or malformed)");
  if (!allows(*r, need))
    throw api_error(403, fmt::format("a {} token cannot do this (it needs role {})", to_string(*r),
                                     to_string(need)));
}

connection_limits limits_of(const serve_options& o) {
  connection_limits l;
  l.header_timeout = std::chrono::seconds(o.header_timeout_s);
  l.body_timeout = std::chrono::seconds(o.body_timeout_s);
  l.max_body_bytes = o.max_body_bytes;
  return l;
}

// Requests of one connection before it is closed (a client reconnects; no client keeps a thread).
constexpr std::size_t k_keep_alive_requests = 100;

struct server_state {
  serve_options opt;
  store_pool pool;
  // The health endpoint's own slot and store connection: it answers while every request slot is
  // taken (a monitor must tell a busy server from a dead one).
  store_pool health_pool;
  connection_limits limits;
  connection_counter counter;
  explicit server_state(const serve_options& o, const std::string& path)
      : opt(o), pool(path, o.threads), health_pool(path, 1), limits(limits_of(o)),
        counter(o.max_connections_per_client, o.max_connections) {}
};

// What the server knows of the request its thread is reading: its connection, when it began, and
// a refusal decided from its head alone (before any of its body is read). cpp-httplib calls the
// handlers of one request on the thread that reads it, so the state is per thread.
struct request_state {
  connection* conn = nullptr;
  steady::time_point start = steady::now();
  double cpu0 = 0;
  connection::framing framing = connection::framing::none;
  bool checked = false;
  int status = 0; // a refusal: its status and message
  std::string message;
};
thread_local request_state t_request;
// Set while the accept thread runs a connection itself: the server holds its most connections.
thread_local bool t_over_capacity = false;

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

using body_fn = std::function<void(store::store&, const httplib::Request&, httplib::Response&)>;

// A route: authorization, the store lease, the mapping of errors to statuses, and the server-side
// time in a Server-Timing header (what the benchmark reads).
httplib::Server::Handler route(server_state& st, role need, const body_fn& fn) {
  return [&st, need, fn](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_ms();
    try {
      auto lease = st.pool.acquire();
      try {
        authorize(*lease, req, need, st.opt.public_read);
        fn(*lease, req, res);
      } catch (const storage_error&) {
        lease.discard();
        throw;
      }
    } catch (const api_error& e) {
      send_error(res, e.status(), e.what());
    } catch (const storage_error& e) {
      log_line(fmt::format("database error on {} {}: {}", req.method, printable(req.path),
                           printable(e.what())));
      send_error(res, 503, "the database is not available; retry later");
    } catch (const error& e) {
      if (e.exit_code() == exit_usage)
        send_error(res, 400, printable(e.what()));
      else {
        log_line(fmt::format("internal error on {} {}: {}", req.method, printable(req.path),
                             printable(e.what())));
        send_error(res, 500, "internal error (logged by the server)");
      }
    } catch (const std::exception& e) {
      log_line(fmt::format("internal error on {} {}: {}", req.method, printable(req.path),
                           printable(e.what())));
      send_error(res, 500, "internal error (logged by the server)");
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // Wall time, and the CPU time of the request's own thread (helpers' threads not included): on
    // a loaded machine the two differ, and the benchmark reports both.
    res.set_header("Server-Timing",
                   fmt::format("app;dur={:.3f}, cpu;dur={:.3f}", ms, thread_cpu_ms() - cpu0));
  };
}

void send_json(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_content(dump_json(j, 2) + "\n", "application/json");
}

void send_page(httplib::Response& res, const std::string& html) {
  res.set_header("Content-Security-Policy", k_dashboard_csp);
  res.set_content(html, "text/html; charset=utf-8");
}

// GET /api/v1/health: open (no token), on its own slot; 503 while the database is not reachable.
// It says the server and its database answer and the schema version; the number of runs only to
// a caller who may read them (--public-read, or a valid read token).
void add_health_route(httplib::Server& svr, server_state& st) {
  svr.Get("/api/v1/health", [&st](const httplib::Request& req, httplib::Response& res) {
    try {
      auto lease = st.health_pool.acquire();
      try {
        json h = health(*lease);
        bool may_read = st.opt.public_read;
        if (!may_read && req.has_header("Authorization")) {
          try {
            authorize(*lease, req, role::read, false);
            may_read = true;
          } catch (const api_error&) {
          }
        }
        if (!may_read)
          h.erase("runs");
        send_json(res, h);
      } catch (...) {
        lease.discard();
        throw;
      }
    } catch (const std::exception& e) {
      send_error(res, 503, "the database is not available");
    }
  });
}

// POST /api/v1/runs: one run document as JSON, stored once per Idempotency-Key.
void post_run(store::store& db, const httplib::Request& req, httplib::Response& res) {
  const std::string type = req.get_header_value("Content-Type");
  if (!is_json_media_type(type))
    throw api_error(
        415, fmt::format("POST /api/v1/runs takes application/json, not '{}'", printable(type)));
  if (!req.params.empty())
    throw api_error(400, "POST /api/v1/runs takes no query parameters");
  auto r = ingest(db, req.body, req.get_header_value("Idempotency-Key"));
  if (r.status == 200)
    res.set_header("Idempotent-Replayed", "true");
  send_json(res, r.body, r.status);
}

// The HTML report is the file `accelbench report` writes; served, it runs no script either (its
// script only sorts tables).
void send_report(httplib::Response& res, const document& doc) {
  if (doc.content_type.rfind("text/html", 0) == 0)
    res.set_header("Content-Security-Policy", k_dashboard_csp);
  res.set_content(doc.body, doc.content_type);
}

void add_api_routes(httplib::Server& svr, server_state& st) {
  svr.Get("/api/v1/runs",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_json(res, list_runs(db, params_of(req)));
                }));
  svr.Get(R"(/api/v1/runs/([^/]+))",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_json(res, one_run(db, req.matches[1], params_of(req)));
                }));
  svr.Post("/api/v1/runs", route(st, role::write, post_run));
  svr.Get("/api/v1/compare",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  json j = compare_runs(db, params_of(req));
                  res.set_header("Accelbench-Exit-Code", std::to_string(j["exit_code"].get<int>()));
                  send_json(res, j);
                }));
  svr.Get("/api/v1/history",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_json(res, history(db, params_of(req)));
                }));
  svr.Get("/api/v1/report",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_report(res, report(db, params_of(req)));
                }));
}

void add_page_routes(httplib::Server& svr, server_state& st) {
  svr.Get("/", route(st, role::read,
                     [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                       send_page(res, page_fleet(db, params_of(req)));
                     }));
  svr.Get("/history",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_page(res, page_history(db, params_of(req)));
                }));
  svr.Get("/compare",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_page(res, page_compare(db, params_of(req)));
                }));
  svr.Get("/report",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_page(res, page_report(db, params_of(req)));
                }));
}

bool known_path(const std::string& path) {
  return path.rfind("/api/v1/", 0) == 0 || path == "/" || path == "/history" ||
         path == "/compare" || path == "/report";
}

void not_allowed(const httplib::Request& req, httplib::Response& res) {
  res.set_header("Allow", req.path == "/api/v1/runs" ? "GET, POST" : "GET");
  send_error(res, 405, fmt::format("{} is not allowed on {}", req.method, printable(req.path)));
}

// Known paths with a method they do not take.
void add_method_guards(httplib::Server& svr) {
  for (const char* pattern : {"/api/v1/.*", "/", "/history", "/compare", "/report"}) {
    svr.Put(pattern, not_allowed);
    svr.Delete(pattern, not_allowed);
    svr.Patch(pattern, not_allowed);
  }
  svr.Post(R"(/api/v1/(?!runs$).*)", not_allowed);
  for (const char* pattern : {"/", "/history", "/compare", "/report"})
    svr.Post(pattern, not_allowed);
}

void add_routes(httplib::Server& svr, server_state& st) {
  add_health_route(svr, st);
  add_api_routes(svr, st);
  add_page_routes(svr, st);
  add_method_guards(svr);
}

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

// A thread per connection, at most `most` at once. A connection waiting for its request costs a
// thread blocked in poll, not one of the --threads request slots, so slow clients cannot take the
// slots from others. Over the limit, the accept thread turns the connection away itself
// (t_over_capacity), without waiting.
class connection_threads final : public httplib::TaskQueue {
public:
  explicit connection_threads(size_t most) : m_most(most) {}
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_live < m_most) {
        ++m_live;
        try {
          std::thread([this, fn = std::move(fn)] { run(fn); }).detach();
          return;
        } catch (const std::system_error&) {
          --m_live; // no thread to be had: turned away like any connection over the limit
        }
      }
    }
    t_over_capacity = true;
    fn();
    t_over_capacity = false;
  }
  void shutdown() override {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_done.wait(lock, [this] { return m_live == 0; });
  }

private:
  void run(const std::function<void()>& fn) {
    fn();
    std::lock_guard<std::mutex> lock(m_mutex);
    --m_live;
    m_done.notify_all();
  }
  size_t m_most, m_live = 0;
  std::mutex m_mutex;
  std::condition_variable m_done;
};

std::string lower_trimmed(const std::string& v) {
  const size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
  std::string out = b == std::string::npos ? "" : v.substr(b, e - b + 1);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return (char)std::tolower(c); });
  return out;
}

void refuse(request_state& rs, int status, std::string message) {
  if (rs.status == 0) {
    rs.status = status;
    rs.message = std::move(message);
  }
}

// Called by cpp-httplib once the head is read, before anything else: how the body is framed, and
// whether it is refused by its framing alone. A chunked body is decoded by the connection (which
// bounds it), so cpp-httplib is shown a body that simply ends.
void read_framing(const server_state& st, httplib::Request& req) {
  request_state& rs = t_request;
  rs.start = steady::now();
  rs.cpu0 = thread_cpu_ms();
  const size_t te = req.get_header_value_count("Transfer-Encoding");
  const size_t cl = req.get_header_value_count("Content-Length");
  if (te > 0) {
    const std::string coding = req.get_header_value("Transfer-Encoding");
    if (cl > 0)
      refuse(rs, 400, "a request with both Transfer-Encoding and Content-Length is ambiguous");
    else if (te > 1 || lower_trimmed(coding) != "chunked")
      refuse(
          rs, 501,
          fmt::format("Transfer-Encoding '{}' is not supported (only chunked)", printable(coding)));
    req.headers.erase("Transfer-Encoding");
    rs.framing = connection::framing::chunked;
    rs.conn->begin_body(rs.framing);
    return;
  }
  if (cl == 0) {
    rs.conn->begin_body(connection::framing::none);
    return;
  }
  const std::string text = req.get_header_value("Content-Length");
  uint64_t length = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
  bool same = true;
  for (size_t i = 1; i < cl; ++i)
    same = same && req.get_header_value("Content-Length", i) == text;
  rs.framing = connection::framing::length;
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !same) {
    refuse(rs, 400, fmt::format("Content-Length '{}' is not one byte count", printable(text)));
    length = UINT64_MAX; // unread: the connection closes after the answer
  } else if (length > st.opt.max_body_bytes)
    refuse(rs, 413,
           fmt::format("the body of {} bytes is over the limit of {} MiB (--max-body-mib)", length,
                       st.opt.max_body_bytes >> 20));
  rs.conn->begin_body(connection::framing::length, length);
}

// Everything decided before a body is read (once per request; from the Expect: 100-continue
// handler or the pre-routing handler, whichever runs first): the framing's verdict, a body sent
// to a route that takes none, then for POST /api/v1/runs its media type and its token. A refused
// body is never read.
void check_before_body(server_state& st, const httplib::Request& req) {
  request_state& rs = t_request;
  if (rs.checked)
    return;
  rs.checked = true;
  const bool post_runs = req.method == "POST" && req.path == "/api/v1/runs";
  const bool takes_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
                          req.method == "DELETE";
  if (rs.status != 0)
    return;
  if (post_runs && rs.framing == connection::framing::none)
    return refuse(rs, 411, "POST /api/v1/runs needs a Content-Length or a chunked body");
  if (rs.framing != connection::framing::none && takes_body && !post_runs) {
    if (known_path(req.path))
      return refuse(rs, 405,
                    fmt::format("{} is not allowed on {}", req.method, printable(req.path)));
    return refuse(rs, 404, fmt::format("no such route: {} {}", req.method, printable(req.path)));
  }
  if (!post_runs)
    return;
  // cpp-httplib would inflate a gzip or brotli body into memory without a bound (a few MiB on the
  // wire can be GiB inflated); publish never compresses.
  const std::string coding = req.get_header_value("Content-Encoding");
  if (!coding.empty() && lower_trimmed(coding) != "identity")
    return refuse(rs, 415,
                  fmt::format("Content-Encoding '{}' is not accepted (send the body uncompressed)",
                              printable(coding)));
  const std::string type = req.get_header_value("Content-Type");
  if (!is_json_media_type(type))
    return refuse(
        rs, 415,
        fmt::format("POST /api/v1/runs takes application/json, not '{}'", printable(type)));
  try {
    auto lease = st.pool.acquire();
    try {
      authorize(*lease, req, role::write, st.opt.public_read);
    } catch (const storage_error&) {
      lease.discard();
      throw;
    }
  } catch (const api_error& e) {
    refuse(rs, e.status(), e.what());
  } catch (const storage_error& e) {
    // An outage seen while checking the token before the body is an outage all the same: logged
    // as the routes log it.
    log_line(fmt::format("database error on {} {}: {}", req.method, printable(req.path),
                         printable(e.what())));
    refuse(rs, 503, "the database is not available; retry later");
  }
}

// The answer to a refused request, or false when it goes on (and its body is read).
bool answer_refusal(const httplib::Request& req, httplib::Response& res) {
  const request_state& rs = t_request;
  if (rs.status == 0)
    return false;
  if (rs.status == 405)
    res.set_header("Allow", req.path == "/api/v1/runs" ? "GET, POST" : "GET");
  send_error(res, rs.status, rs.message);
  return true;
}

// Statuses cpp-httplib answers itself (404 no route, 400 unparsable request or a body it could not
// read): a JSON body too, with the reason the connection knows.
httplib::Server::HandlerResponse on_error(const server_state& st, const httplib::Request& req,
                                          httplib::Response& res) {
  if (!res.body.empty())
    return httplib::Server::HandlerResponse::Unhandled;
  const connection* c = t_request.conn;
  const auto failure = c ? c->last_failure() : connection::failure::none;
  std::string why = reason_of(res.status);
  if (failure == connection::failure::body_too_large) {
    res.status = 413;
    why = fmt::format("the body is over the limit of {} MiB (--max-body-mib)",
                      st.opt.max_body_bytes >> 20);
  } else if (failure == connection::failure::timed_out) {
    res.status = 408;
    why = "the request did not arrive in time";
  } else if (failure == connection::failure::head_too_large) {
    res.status = 431;
    why =
        fmt::format("the request line and headers are over {} KiB", st.limits.max_head_bytes >> 10);
  } else if (failure == connection::failure::bad_chunking)
    why = "the chunked body is malformed";
  else if (res.status == 404)
    why = fmt::format("no such route: {} {}", req.method, printable(req.path));
  send_error(res, res.status, why);
  return httplib::Server::HandlerResponse::Handled;
}

// Every response: its server-side time (the routes set their own, from inside the handler), no
// sniffing or caching, CORS when configured, and Connection: close when the request's body was
// not read to its end (what follows it on the connection is not a request).
void after_routing(const server_state& st, httplib::Response& res) {
  const request_state& rs = t_request;
  if (!res.has_header("Server-Timing")) {
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - rs.start).count();
    res.set_header("Server-Timing",
                   fmt::format("app;dur={:.3f}, cpu;dur={:.3f}", ms, thread_cpu_ms() - rs.cpu0));
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  if (!st.opt.cors_origin.empty()) {
    res.set_header("Access-Control-Allow-Origin", st.opt.cors_origin);
    res.set_header("Vary", "Origin");
  }
  if (rs.conn && !rs.conn->body_complete()) {
    res.headers.erase("Keep-Alive");
    res.set_header("Connection", "close");
  }
}

void add_policies(httplib::Server& svr, server_state& st) {
  svr.set_payload_max_length(st.opt.max_body_bytes);
  svr.set_keep_alive_max_count(k_keep_alive_requests);
  svr.set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(st.limits.idle_timeout).count());
  svr.set_expect_100_continue_handler([&st](const httplib::Request& req, httplib::Response& res) {
    check_before_body(st, req);
    if (!answer_refusal(req, res))
      return 100;
    // cpp-httplib 0.11 writes the answer given here without a Content-Length (it sets one only
    // on the routed path): on a connection kept open, its client could not tell where it ends.
    res.set_header("Content-Length", std::to_string(res.body.size()));
    return res.status;
  });
  svr.set_pre_routing_handler([&st](const httplib::Request& req, httplib::Response& res) {
    check_before_body(st, req);
    return answer_refusal(req, res) ? httplib::Server::HandlerResponse::Handled
                                    : httplib::Server::HandlerResponse::Unhandled;
  });
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [&st](const httplib::Request& req, httplib::Response& res) {
        return on_error(st, req, res);
      }));
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
        send_error(res, 500, "internal error");
      });
  svr.set_post_routing_handler(
      [&st](const httplib::Request&, httplib::Response& res) { after_routing(st, res); });
  if (!st.opt.cors_origin.empty())
    svr.Options(R"(/api/v1/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST");
      res.set_header("Access-Control-Allow-Headers",
                     "Authorization, Content-Type, Idempotency-Key");
      res.set_header("Access-Control-Max-Age", "600");
    });
  if (!st.opt.quiet)
    svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      // Method, path, status, the bytes read off the connection for the request before it was
      // answered (a refused body shows here as unread), and the server-side time: never a header
      // (the token) or the body.
      const connection* c = t_request.conn;
      log_line(fmt::format("{} {} {} read={} {}", req.method, printable(req.path), res.status,
                           c ? c->request_bytes_read() : 0, res.get_header_value("Server-Timing")));
    });
  const size_t most = st.opt.max_connections;
  svr.new_task_queue = [most] { return new connection_threads(most); };
}

int g_stop_pipe[2] = {-1, -1};
extern "C" void on_stop_signal(int) {
  const char c = 1;
  [[maybe_unused]] auto n = write(g_stop_pipe[1], &c, 1);
}

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
