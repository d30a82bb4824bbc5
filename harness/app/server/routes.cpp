// The routes of `accelbench serve`: each endpoint and page with the role it needs, its store
// lease and its error statuses (route), the health endpoint on its own slot, and the methods the
// known paths do not take.
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "harness/app/server/dashboard.hpp"
#include "harness/app/server/server_state.hpp"

namespace accelbench::server {

namespace {

params params_of(const httplib::Request& req) {
  return params(req.params.begin(), req.params.end());
}

using body_fn = std::function<void(store::store&, const httplib::Request&, httplib::Response&)>;

// A route: authorization, the store lease, the mapping of errors to statuses, and the server-side
// time in a Server-Timing header (what the benchmark reads).
httplib::Server::Handler route(server_state& st, role need, const body_fn& fn) {
  return [&st, need, fn](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_ms();
    try {
      with_store(st.pool, [&](store::store& db) {
        authorize(db, req, need, st.opt.public_read);
        fn(db, req, res);
      });
    } catch (const api_error& e) {
      send_error(res, e.status(), e.what());
    } catch (const storage_error& e) {
      log_database_error(req, e);
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

// A body in the media type of its format. The HTML report is the file `accelbench report` writes;
// served, it runs no script either (its script only sorts tables).
void send_document(httplib::Response& res, const document& doc) {
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
                  const compare_answer a = compare_runs(db, params_of(req));
                  res.set_header("Accelbench-Exit-Code", std::to_string(a.exit_code));
                  send_document(res, a.doc);
                }));
  svr.Get("/api/v1/history",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_document(res, history(db, params_of(req)));
                }));
  svr.Get("/api/v1/report",
          route(st, role::read,
                [](store::store& db, const httplib::Request& req, httplib::Response& res) {
                  send_document(res, report(db, params_of(req)));
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

} // namespace

bool known_path(const std::string& path) {
  return path.rfind("/api/v1/", 0) == 0 || path == "/" || path == "/history" ||
         path == "/compare" || path == "/report";
}

namespace {

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
} // namespace

void add_routes(httplib::Server& svr, server_state& st) {
  add_health_route(svr, st);
  add_api_routes(svr, st);
  add_page_routes(svr, st);
  add_method_guards(svr);
}

} // namespace accelbench::server
