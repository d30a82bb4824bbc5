// The hooks cpp-httplib calls on every request of `accelbench serve`: the body's framing and the
// checks made on a request's head before its body is read, the JSON bodies of the statuses it
// answers itself, the headers of every response, CORS, the access log, the connection threads.
#include <algorithm>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "harness/app/server/dashboard.hpp"
#include "harness/app/server/server_state.hpp"

namespace accelbench::server {

namespace {

using steady = std::chrono::steady_clock;

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
} // namespace

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
namespace {

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
    with_store(st.pool,
               [&](store::store& db) { authorize(db, req, role::write, st.opt.public_read); });
  } catch (const api_error& e) {
    refuse(rs, e.status(), e.what());
  } catch (const storage_error& e) {
    // An outage seen while checking the token before the body is an outage all the same: logged
    // as the routes log it.
    log_database_error(req, e);
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
} // namespace

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

} // namespace accelbench::server
