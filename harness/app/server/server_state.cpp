// The server's shared calls (server_state.hpp): the log, error answers, authorization, the
// per-thread request state.
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "harness/app/server/server_state.hpp"

namespace accelbench::server {

namespace {

std::mutex g_log_mutex;

} // namespace

void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::cerr << "accelbench: " << line << "\n";
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

void log_database_error(const httplib::Request& req, const storage_error& e) {
  log_line(fmt::format("database error on {} {}: {}", req.method, printable(req.path),
                       printable(e.what())));
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

thread_local request_state t_request;
thread_local bool t_over_capacity = false;

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace accelbench::server
