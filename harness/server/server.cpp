#include "harness/server/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <charconv>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/table.hpp"
#include "harness/core/text_input.hpp"
#include "harness/server/api.hpp"
#include "harness/server/dashboard.hpp"
#include "harness/server/tokens.hpp"

namespace accelbench::server {

namespace {

// Store connections for the request threads: a request takes one for its whole duration and gives
// it back; a connection that failed (the database went away) is dropped, and the next request
// opens a fresh one. The idle ones are dropped with it: when one connection to a PostgreSQL server
// failed, the others were most likely cut by the same restart, and each would fail one more request
// before being replaced.
class store_pool {
public:
  explicit store_pool(std::string path) : m_path(std::move(path)) {}

  class lease {
  public:
    lease(store_pool& pool, std::unique_ptr<store::store> s)
        : m_pool(pool), m_store(std::move(s)) {}
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() {
      if (m_store)
        m_pool.give_back(std::move(m_store));
    }
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
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_free.empty()) {
        auto s = std::move(m_free.back());
        m_free.pop_back();
        return lease(*this, std::move(s));
      }
    }
    return lease(*this, std::make_unique<store::store>(
                            store::store::open(m_path, store::access::read_write)));
  }

  void drop_idle() {
    std::vector<std::unique_ptr<store::store>> dropped;
    std::lock_guard<std::mutex> lock(m_mutex);
    dropped.swap(m_free);
  }

private:
  void give_back(std::unique_ptr<store::store> s) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_free.push_back(std::move(s));
  }
  std::string m_path;
  std::mutex m_mutex;
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

struct server_state {
  serve_options opt;
  store_pool pool;
  explicit server_state(const serve_options& o, const std::string& path) : opt(o), pool(path) {}
};

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

// GET /api/v1/health: answered without a role, 503 while the database is not reachable.
void add_health_route(httplib::Server& svr, server_state& st) {
  svr.Get("/api/v1/health", [&st](const httplib::Request& req, httplib::Response& res) {
    try {
      auto lease = st.pool.acquire();
      try {
        send_json(res, health(*lease));
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
  if (type.rfind("application/json", 0) != 0)
    throw api_error(
        415, fmt::format("POST /api/v1/runs takes application/json, not '{}'", printable(type)));
  if (!req.params.empty())
    throw api_error(400, "POST /api/v1/runs takes no query parameters");
  auto r = ingest(db, req.body, req.get_header_value("Idempotency-Key"));
  if (r.status == 200)
    res.set_header("Idempotent-Replayed", "true");
  send_json(res, r.body, r.status);
}

// The report page carries its own policy (it runs one inline script of its own).
void send_report(httplib::Response& res, const document& doc) {
  if (doc.content_type.rfind("text/html", 0) == 0)
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; style-src 'unsafe-inline'; script-src "
                   "'unsafe-inline'; img-src data:");
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
                  params p = params_of(req);
                  p.erase("format");
                  p.emplace("format", "html");
                  auto doc = report(db, p);
                  res.set_header("Content-Security-Policy",
                                 "default-src 'none'; style-src 'unsafe-inline'; script-src "
                                 "'unsafe-inline'; img-src data:");
                  res.set_content(doc.body, doc.content_type);
                }));
}

// Known paths with a method they do not take.
void add_method_guards(httplib::Server& svr) {
  auto not_allowed = [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", req.path == "/api/v1/runs" ? "GET, POST" : "GET");
    send_error(res, 405, fmt::format("{} is not allowed on {}", req.method, printable(req.path)));
  };
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

void add_policies(httplib::Server& svr, server_state& st) {
  svr.set_payload_max_length(st.opt.max_body_bytes);
  // Statuses httplib answers itself (404 no route, 413, 400 unparsable request): a JSON body too.
  svr.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        std::string why = reason_of(res.status);
        if (res.status == 404)
          why = fmt::format("no such route: {} {}", req.method, printable(req.path));
        send_error(res, res.status, why);
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
        send_error(res, 500, "internal error");
      });
  svr.set_post_routing_handler([&st](const httplib::Request&, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
    if (!st.opt.cors_origin.empty()) {
      res.set_header("Access-Control-Allow-Origin", st.opt.cors_origin);
      res.set_header("Vary", "Origin");
    }
  });
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
      // Method, path and status only: never a header (the token) or the body.
      log_line(fmt::format("{} {} {} {}", req.method, printable(req.path), res.status,
                           res.get_header_value("Server-Timing")));
    });
  const size_t threads = st.opt.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
}

int g_stop_pipe[2] = {-1, -1};
extern "C" void on_stop_signal(int) {
  const char c = 1;
  [[maybe_unused]] auto n = write(g_stop_pipe[1], &c, 1);
}

std::unique_ptr<httplib::Server> make_server(const serve_options& o) {
  if (o.cert.empty() != o.key.empty())
    throw usage_error("HTTPS needs both --cert and --key");
  if (o.cert.empty())
    return std::make_unique<httplib::Server>();
  for (const auto& f : {o.cert, o.key})
    read_input_file(f, f == o.cert ? "certificate" : "private key"); // exists, readable, bounded
  auto s = std::make_unique<httplib::SSLServer>(o.cert.c_str(), o.key.c_str());
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
  const std::string path = cli::resolve_db_path(o.db);
  // Opened (created, migrated) once before listening: a bad database is exit 2 here, not a 503
  // later.
  server_state st(o, path);
  { auto first = st.pool.acquire(); }
  auto svr = make_server(o);
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

int cmd_token_create(const token_cli_options& o) {
  cli::require_text(o.name, "--name", false);
  const role r = role_from_string(o.role);
  auto db = store::store::open(cli::resolve_db_path(o.db), store::access::read_write);
  auto t = create_token(db, o.name, r);
  if (o.json)
    std::cout << dump_json(json{{"id", t.record.id},
                                {"name", t.record.name},
                                {"role", t.record.role},
                                {"token", t.token}},
                           2)
              << "\n";
  else
    std::cout << t.token << "\n";
  std::cerr << fmt::format(
      "accelbench: created {} token {} for '{}'; it is shown only now (the database keeps a "
      "salted hash)\n",
      t.record.role, t.record.id, printable(t.record.name));
  return exit_ok;
}

int cmd_token_list(const token_cli_options& o) {
  auto db = store::store::open(cli::resolve_db_path(o.db), store::access::read_only);
  std::vector<store::token_record> tokens;
  try {
    tokens = db.tokens();
  } catch (const storage_error&) {
    // A database older than schema version 4 opened read-only has no tokens table yet.
  }
  if (o.json) {
    json arr = json::array();
    for (const auto& t : tokens)
      arr.push_back({{"id", t.id},
                     {"name", t.name},
                     {"role", t.role},
                     {"created_at", t.created_at},
                     {"revoked_at", t.revoked_at.empty() ? json(nullptr) : json(t.revoked_at)}});
    std::cout << dump_json(arr, 2) << "\n";
    return exit_ok;
  }
  cli::table t({"id", "name", "role", "created", "revoked"});
  for (const auto& k : tokens)
    t.add({std::to_string(k.id), k.name, k.role, k.created_at.substr(0, 19),
           k.revoked_at.substr(0, 19)});
  t.print(std::cout);
  return exit_ok;
}

int cmd_token_revoke(const token_cli_options& o) {
  auto db = store::store::open(cli::resolve_db_path(o.db), store::access::read_write);
  if (!db.revoke_token(o.id, now_iso8601()))
    throw input_error(fmt::format("no valid token with id {} in {} (see accelbench token list)",
                                  o.id, db.path().string()));
  std::cout << fmt::format("revoked token {}\n", o.id);
  return exit_ok;
}

} // namespace accelbench::server
