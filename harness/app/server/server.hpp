#pragma once
// `accelbench serve`: the results server of a fleet (cpp-httplib from
// Debian; HTTPS through its OpenSSL support when given a certificate and key).
//
// Each connection has a thread of its own (harness/app/server/connection.hpp reads it with
// deadlines and limits; at most max_connections, max_connections_per_client per client address),
// and a request takes one of `threads` request slots, each with its own store connection, only once
// its head is read; the health endpoint has a slot of its own. Every error is a JSON body
// {"error": "...", "status": N}: 400 malformed input, 401 no or bad token, 403 a token whose role
// does not allow the request, 404 no such route or object, 405 a method a route does not take,
// 413 a body over the limit, 415 a POST that is not JSON, 422 a well-formed request that cannot be
// honoured, 503 the database does not answer (with Retry-After), 500 a bug. Tokens and the
// Authorization header are never logged; the access log names method, path, status and time.
#include <cstddef>
#include <string>

namespace accelbench::server {

struct serve_options {
  std::string db; // path (or URI) of the store; "" : the default database
  std::string listen =
      "127.0.0.1:8080";     // ADDR:PORT ([ADDR]:PORT for IPv6); port 0 picks a free one
  bool public_read = false; // GET endpoints and the dashboard without a token
  std::string cert, key;    // both: HTTPS
  std::string cors_origin;  // "" : no CORS headers at all
  std::size_t max_body_bytes = std::size_t{64} << 20;
  std::size_t threads = 32;          // requests handled at once, each with its own store connection
  std::size_t max_connections = 512; // open connections in all
  std::size_t max_connections_per_client = 32; // open connections of one client address
  long header_timeout_s = 10; // request line and headers, from the connection or the first byte
  long body_timeout_s = 60;   // the whole body; and the whole response
  bool quiet = false;         // no access log
};

// Runs until SIGINT or SIGTERM; returns the exit code. Bad options (listen address, certificate,
// database) are input_error/storage_error before anything listens.
int cmd_serve(const serve_options& o);

// ADDR:PORT -> (host, port); throws input_error naming the value. Exposed for tests.
std::pair<std::string, int> parse_listen(const std::string& listen);

} // namespace accelbench::server
