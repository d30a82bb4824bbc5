#pragma once
// HTTP client for publishing and importing results: a thin RAII layer over libcurl with the
// policies a CI job needs built in (docs/architecture.md, "RAII around C handles"):
//   - a bearer token read from an environment variable whose NAME is configured; the value is
//     never written to a log line, an error message or the database (only the variable's name);
//   - TLS verification always on; it can be turned off only by an explicit option (--insecure)
//     that prints a warning on every request, never silently;
//   - plain http:// only to a loopback host (a token or results sent in clear text across a
//     network is a leak), unless explicitly allowed, again with a warning on every request;
//   - connect and total timeouts;
//   - retries with capped exponential backoff and jitter on connection errors, timeouts, 429
//     (honouring Retry-After) and 5xx; never on other 4xx (the request itself is wrong);
//   - an Idempotency-Key header on every request, the same on every retry of that request, so a
//     server that honours it does not store a retried POST twice.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

using CURL = void; // as curl.h declares it
struct curl_slist;

namespace accelbench::net {

// An HTTP exchange that failed: the server could not be reached, timed out, or answered with an
// error status. Like storage_error, from the user's point of view the command could not do its
// job because of something outside it: exit code 2. status is 0 when no HTTP answer arrived.
class http_error : public accelbench::error {
public:
  http_error(const std::string& what, long status) : error(what), m_status(status) {}
  long status() const { return m_status; }
  int exit_code() const override { return exit_usage; }

private:
  long m_status;
};

// Where warnings and retry notes go. The default writes "accelbench: <line>" to stderr.
using log_sink = std::function<void(const std::string& line)>;

struct http_options {
  // NAME of the environment variable holding the bearer token; empty or unset: no token sent.
  std::string token_env = "ACCELBENCH_TOKEN";
  // --insecure: skip TLS certificate and host name verification (warns on every request).
  bool insecure = false;
  // Allow plain http:// to a host that is not loopback (warns on every request).
  bool allow_plain_http = false;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{60'000}; // per attempt, transfer included
  int max_attempts = 5;                            // first try included
  std::chrono::milliseconds backoff_initial{500};  // delay before the first retry (before jitter)
  std::chrono::milliseconds backoff_max{30'000};   // cap of the exponential delay
  // Longest Retry-After we wait for; a server asking for more ends the retries.
  std::chrono::milliseconds retry_after_max{120'000};
  std::size_t max_response_bytes = k_max_input_bytes; // a bigger body is refused (not retried)
  // GET only; POST never follows redirects. Each hop is checked like the first URL: http->http
  // and http->https are followed, https->http is refused, and the token is sent only to the
  // origin (scheme, host, port) it was configured for.
  int max_redirects = 5;
  log_sink log; // empty: stderr
};

struct http_request {
  std::string url;
  std::string body;                              // POST only
  std::string content_type = "application/json"; // POST only
  // Sent as Idempotency-Key on every attempt of this request; empty: a fresh random UUID.
  std::string idempotency_key;
  std::vector<std::pair<std::string, std::string>> headers; // extra headers (never logged)
  http_options options;
  // false: no Authorization header (set by get() after a redirect to another origin).
  bool send_token = true;
};

struct http_response {
  long status = 0; // final HTTP status
  std::string body;
  std::map<std::string, std::string> headers; // names lower-cased; last value wins
  std::string redirect_url;                   // 3xx: the absolute target of Location
  std::string idempotency_key;                // the key that was sent
  int attempts = 0;                           // HTTP attempts made (1 = no retry)
  bool ok() const { return status >= 200 && status < 300; }
};

// Both return the final response whatever its status (after the retries the policy allows) and
// throw http_error only when no HTTP answer came back (connection refused, timeout, too large
// after all attempts), input_error for a URL that is not http(s) or is plain http to a remote host.
http_response post_json(const http_request& req);
http_response get(const http_request& req);

// ---- helpers shared with publish/import (and tested on their own) ----

// Checks the URL against the options: scheme http or https, a host, plain http only to loopback
// unless allow_plain_http. Throws input_error naming the (redacted) URL.
void check_url(const std::string& url, const http_options& options);
// The policy for one redirect hop of a GET from `from` to `to`: https must not redirect to
// anything but https (a downgrade to clear text), and `to` must pass check_url. Throws
// http_error saying that the redirect was refused, naming both (redacted) URLs.
void check_redirect(const std::string& from, const std::string& to, const http_options& options);
// True for http:// and https:// URLs (what `accelbench import` fetches instead of reading a file).
bool is_http_url(const std::string& text);
// The URL as it may appear in messages: without user:password@ and without the query string
// (both are where credentials hide).
std::string redact_url(const std::string& url);
// `text` with every occurrence of the token (the value of options.token_env) replaced by "***".
std::string redact_token(std::string text, const http_options& options);
// Delay before retry number `retry` (1-based): min(max, initial * 2^(retry-1)), then "equal
// jitter" (half fixed, half uniform random) so that a fleet of nightly jobs does not retry in
// lockstep yet never retries immediately.
std::chrono::milliseconds backoff_delay(int retry, const http_options& options);
// Retry-After as a delay: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); -1 ms when absent
// or unreadable.
std::chrono::milliseconds parse_retry_after(const std::string& value);

// ---- RAII owners of libcurl handles (move-only) ----
class curl_handle {
public:
  curl_handle(); // curl_easy_init; throws http_error when libcurl cannot allocate one
  ~curl_handle();
  curl_handle(curl_handle&& other) noexcept;
  curl_handle& operator=(curl_handle&& other) noexcept;
  curl_handle(const curl_handle&) = delete;
  curl_handle& operator=(const curl_handle&) = delete;
  CURL* get() const { return m_handle; }

private:
  CURL* m_handle = nullptr;
};

class curl_header_list {
public:
  curl_header_list() = default;
  ~curl_header_list();
  curl_header_list(curl_header_list&& other) noexcept;
  curl_header_list& operator=(curl_header_list&& other) noexcept;
  curl_header_list(const curl_header_list&) = delete;
  curl_header_list& operator=(const curl_header_list&) = delete;
  void append(const std::string& line); // "Name: value"
  curl_slist* get() const { return m_list; }

private:
  curl_slist* m_list = nullptr;
};

} // namespace accelbench::net
