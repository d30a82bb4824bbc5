#include "harness/app/net/http.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <curl/curl.h>
#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/model.hpp"

namespace accelbench::net {

namespace {

// libcurl wants curl_global_init once per process before any handle exists (it is not
// thread-safe with every TLS backend); call_once gives exactly that.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string to_lower(std::string s) {
  for (auto& c : s)
    c = (char)std::tolower((unsigned char)c);
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace((unsigned char)s[b]))
    ++b;
  while (e > b && std::isspace((unsigned char)s[e - 1]))
    --e;
  return s.substr(b, e - b);
}

bool has_control_char(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; });
}

// The token, read at request time so that a CI step exporting it later is honoured. Never
// stored anywhere but in the header list of the request that sends it.
std::string read_token(const http_options& o) {
  if (o.token_env.empty())
    return {};
  const char* v = std::getenv(o.token_env.c_str());
  return v ? std::string(v) : std::string();
}

void emit(const http_options& o, const std::string& line) {
  // Every line leaves through here, so redaction here covers every log line we write.
  std::string l = redact_token(line, o);
  if (o.log)
    o.log(l);
  else
    std::cerr << "accelbench: " << l << "\n";
}

// RAII owner of a CURLU (libcurl's URL parser), local to this file.
class url_handle {
public:
  url_handle() : m_h(::curl_url()) {}
  ~url_handle() { curl_url_cleanup(m_h); }
  url_handle(const url_handle&) = delete;
  url_handle& operator=(const url_handle&) = delete;
  bool set(const std::string& url) {
    return m_h && curl_url_set(m_h, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK;
  }
  std::string part(CURLUPart p) const {
    char* out = nullptr;
    if (curl_url_get(m_h, p, &out, 0) != CURLUE_OK || !out)
      return {};
    std::string s(out);
    curl_free(out);
    return s;
  }
  void clear(CURLUPart p) { curl_url_set(m_h, p, nullptr, 0); }

private:
  CURLU* m_h;
};

bool is_loopback_host(std::string host) {
  host = to_lower(host);
  if (host == "localhost" || host == "[::1]" || host == "::1")
    return true;
  // 127.0.0.0/8 (RFC 1122 §3.2.1.3)
  return host.rfind("127.", 0) == 0 && std::all_of(host.begin(), host.end(), [](char c) {
           return std::isdigit((unsigned char)c) || c == '.';
         });
}

struct attempt {
  CURLcode code = CURLE_OK;
  std::string curl_message;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  bool too_large = false;
  std::size_t limit = 0;
  std::string redirect_url; // a 3xx's Location, made absolute by libcurl
};

size_t write_body(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<attempt*>(user);
  size_t bytes = size * n;
  if (a->body.size() + bytes > a->limit) {
    a->too_large = true;
    return 0; // makes libcurl stop with CURLE_WRITE_ERROR
  }
  a->body.append(data, bytes);
  return bytes;
}

size_t write_header(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<attempt*>(user);
  std::string line(data, size * n);
  // A new status line starts a new response (after a redirect or a 100 Continue): keep only the
  // headers of the last one.
  if (line.rfind("HTTP/", 0) == 0) {
    a->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos)
    a->headers[to_lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return size * n;
}

enum class method { get, post };

attempt perform_once(method m, const http_request& req, const std::string& key,
                     const std::string& token) {
  const http_options& o = req.options;
  curl_handle h;
  CURL* c = h.get();
  attempt a;
  a.limit = o.max_response_bytes;
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_header_list headers;
  if (!token.empty())
    headers.append("Authorization: Bearer " + token);
  headers.append("Idempotency-Key: " + key);
  headers.append("Accept: application/json");
  // libcurl sends "Expect: 100-continue" for large bodies and waits for the server; an empty
  // Expect header turns that off (one round trip less, and simple servers do not answer 100).
  headers.append("Expect:");
  if (m == method::post)
    headers.append("Content-Type: " + req.content_type);
  for (const auto& [name, value] : req.headers) {
    std::string line = name;
    line += ": ";
    line += value;
    headers.append(line);
  }

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); // timeouts without SIGALRM: we may run in threads
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)o.connect_timeout.count());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)o.total_timeout.count());
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, o.insecure ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, o.insecure ? 0L : 2L);
  std::string agent = std::string("accelbench/") + build_info::version();
  curl_easy_setopt(c, CURLOPT_USERAGENT, agent.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, write_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
  if (m == method::post) {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req.body.size());
    // A POST is never redirected: a 301/302 would turn it into a GET and drop the results.
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    // Redirects are followed by get() one hop at a time, so that every target passes the same
    // policy as the first URL (check_url, no https -> http downgrade, no token to another host).
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  }

  a.code = curl_easy_perform(c);
  if (a.code != CURLE_OK) {
    a.curl_message = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(a.code));
  } else {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
    char* location = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location)
      a.redirect_url = location;
  }
  return a;
}

// Transport failures worth another try: the network or the server may recover.
bool retryable(CURLcode code) {
  switch (code) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
    return true;
  default:
    return false; // certificate failures, bad URLs, oversized bodies: retrying cannot help
  }
}

bool retryable_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

const char* method_name(method m) { return m == method::post ? "POST" : "GET"; }

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:.1f} s", d.count() / 1000.0);
}

// libcurl reads a timeout of 0 as "no timeout": a zero or negative one (from a bad --timeout, or a
// value too small for whole milliseconds) would let a hung server hang the job forever.
void check_options(const http_options& o) {
  if (o.connect_timeout.count() <= 0 || o.total_timeout.count() <= 0)
    throw input_error(
        fmt::format("HTTP timeouts must be at least 1 ms (connect {} ms, total {} ms)",
                    o.connect_timeout.count(), o.total_timeout.count()));
  if (o.max_attempts < 1)
    throw input_error(fmt::format("HTTP attempts must be at least 1, got {}", o.max_attempts));
}

// What a request adds to its headers, checked: headers, the token and the idempotency key go on
// the wire as they are, so a line break in one would let it add headers of its own.
struct request_secrets {
  std::string token, key;
};

request_secrets checked_request(const http_request& req) {
  const http_options& o = req.options;
  for (const auto& [name, value] : req.headers)
    if (has_control_char(name) || has_control_char(value) || name.find(':') != std::string::npos)
      throw input_error(fmt::format("HTTP header '{}' has a line break, control character or colon "
                                    "in its name or value",
                                    redact_token(name, o)));
  request_secrets s;
  s.token = req.send_token ? read_token(o) : std::string();
  if (has_control_char(s.token))
    // The value is not shown: it is the secret.
    throw input_error(fmt::format("the token in ${} contains a line break or control character "
                                  "(check how the secret is stored)",
                                  o.token_env));
  s.key = req.idempotency_key.empty() ? new_uuid() : req.idempotency_key;
  if (has_control_char(s.key))
    throw input_error(fmt::format("Idempotency-Key '{}' contains a control character", s.key));
  return s;
}

// Said on every request, never once per process: a forgotten --insecure in a nightly job must
// stay visible in every log.
void warn_unprotected(method m, const http_request& req, const std::string& shown) {
  const http_options& o = req.options;
  if (o.insecure)
    emit(o, fmt::format("warning: TLS certificate verification is OFF (--insecure) for {} {}",
                        method_name(m), shown));
  if (o.allow_plain_http && to_lower(req.url).rfind("http://", 0) == 0)
    emit(o, fmt::format("warning: sending over plain http (not encrypted): {} {}", method_name(m),
                        shown));
}

// A transport failure: thrown when retrying cannot help or the attempts are spent, otherwise the
// delay before the next attempt.
std::chrono::milliseconds transport_retry_delay(method m, const std::string& shown, int n,
                                                int max_attempts, const attempt& a,
                                                const http_options& o) {
  if (a.too_large)
    throw http_error(fmt::format("{} {}: response larger than {} bytes, refused", method_name(m),
                                 shown, o.max_response_bytes),
                     0);
  std::string what =
      redact_token(fmt::format("{} {} failed after {} attempt(s): {} (curl error {})",
                               method_name(m), shown, n, a.curl_message, (int)a.code),
                   o);
  if (!retryable(a.code) || n >= max_attempts)
    throw http_error(what, 0);
  return backoff_delay(n, o);
}

http_response response_of(attempt& a, const std::string& key, int n) {
  http_response r;
  r.status = a.status;
  r.body = std::move(a.body);
  r.headers = std::move(a.headers);
  r.redirect_url = std::move(a.redirect_url);
  r.idempotency_key = key;
  r.attempts = n;
  return r;
}

// A response: the delay before the next attempt, or nothing when the response is the answer (its
// status is not worth a retry, the attempts are spent, or the server asks for longer than we wait).
std::optional<std::chrono::milliseconds> status_retry_delay(method m, const std::string& shown,
                                                            int n, int max_attempts,
                                                            const http_response& r,
                                                            const http_options& o) {
  if (!retryable_status(r.status) || n >= max_attempts)
    return std::nullopt;
  auto it = r.headers.find("retry-after");
  auto asked =
      it == r.headers.end() ? std::chrono::milliseconds{-1} : parse_retry_after(it->second);
  if (asked.count() < 0)
    return backoff_delay(n, o);
  // Honour the server's Retry-After (RFC 9110 §10.2.3): never earlier than asked. When it asks
  // for longer than we are willing to wait, stop and let the caller report it.
  if (asked > o.retry_after_max) {
    emit(o, fmt::format("{} {}: HTTP {}, server asks to retry after {} (more than the {} we "
                        "wait); giving up",
                        method_name(m), shown, r.status, seconds_text(asked),
                        seconds_text(o.retry_after_max)));
    return std::nullopt;
  }
  return asked;
}

http_response perform(method m, const http_request& req) {
  const http_options& o = req.options;
  check_options(o);
  check_url(req.url, o);
  global_init();
  const request_secrets sec = checked_request(req);
  const std::string shown = redact_url(req.url);
  const int max_attempts = std::max(1, o.max_attempts);
  for (int n = 1;; ++n) {
    warn_unprotected(m, req, shown);
    attempt a = perform_once(m, req, sec.key, sec.token);
    std::chrono::milliseconds delay{-1};
    std::string why;
    if (a.code != CURLE_OK) {
      delay = transport_retry_delay(m, shown, n, max_attempts, a, o);
      why = a.curl_message;
    } else {
      http_response r = response_of(a, sec.key, n);
      const auto wait = status_retry_delay(m, shown, n, max_attempts, r, o);
      if (!wait)
        return r;
      delay = *wait;
      why = fmt::format("HTTP {}", r.status);
    }
    emit(o, fmt::format("{} {}: {}; retrying in {} (attempt {} of {})", method_name(m), shown, why,
                        seconds_text(delay), n + 1, max_attempts));
    std::this_thread::sleep_for(delay);
  }
}

} // namespace

// ---------------------------------------------------------------------------------------------
curl_handle::curl_handle() {
  global_init();
  m_handle = curl_easy_init();
  if (!m_handle)
    throw http_error("libcurl could not create a handle (out of memory?)", 0);
}
curl_handle::~curl_handle() {
  if (m_handle)
    curl_easy_cleanup(m_handle);
}
curl_handle::curl_handle(curl_handle&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)) {}
curl_handle& curl_handle::operator=(curl_handle&& other) noexcept {
  if (this != &other) {
    if (m_handle)
      curl_easy_cleanup(m_handle);
    m_handle = std::exchange(other.m_handle, nullptr);
  }
  return *this;
}

curl_header_list::~curl_header_list() { curl_slist_free_all(m_list); }
curl_header_list::curl_header_list(curl_header_list&& other) noexcept
    : m_list(std::exchange(other.m_list, nullptr)) {}
curl_header_list& curl_header_list::operator=(curl_header_list&& other) noexcept {
  if (this != &other) {
    curl_slist_free_all(m_list);
    m_list = std::exchange(other.m_list, nullptr);
  }
  return *this;
}
void curl_header_list::append(const std::string& line) {
  curl_slist* next = curl_slist_append(m_list, line.c_str());
  if (!next)
    throw http_error("libcurl could not extend a header list (out of memory?)", 0);
  m_list = next;
}

// ---------------------------------------------------------------------------------------------
bool is_http_url(const std::string& text) {
  std::string l = to_lower(text.substr(0, 8));
  return l.rfind("http://", 0) == 0 || l.rfind("https://", 0) == 0;
}

std::string redact_url(const std::string& url) {
  url_handle u;
  if (!u.set(url)) {
    // Not parseable: still drop what follows '?' and a user:password@ before the host.
    std::string s = url.substr(0, url.find('?'));
    auto scheme = s.find("://");
    auto at = s.find('@', scheme == std::string::npos ? 0 : scheme + 3);
    auto slash = s.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash))
      s = (scheme == std::string::npos ? "" : s.substr(0, scheme + 3)) + s.substr(at + 1);
    return s;
  }
  u.clear(CURLUPART_USER);
  u.clear(CURLUPART_PASSWORD);
  u.clear(CURLUPART_OPTIONS);
  u.clear(CURLUPART_QUERY);
  u.clear(CURLUPART_FRAGMENT);
  std::string s = u.part(CURLUPART_URL);
  return s.empty() ? std::string("<url>") : s;
}

std::string redact_token(std::string text, const http_options& options) {
  std::string token = read_token(options);
  if (token.empty())
    return text;
  for (size_t pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos + 3))
    text.replace(pos, token.size(), "***");
  return text;
}

void check_url(const std::string& url, const http_options& options) {
  url_handle u;
  if (!u.set(url))
    throw input_error(
        fmt::format("'{}' is not a valid URL (expected https://host/path)", redact_url(url)));
  std::string scheme = to_lower(u.part(CURLUPART_SCHEME));
  if (scheme == "file")
    throw input_error(fmt::format("'{}': file:// URLs are not fetched over the network; give the "
                                  "file's path instead",
                                  redact_url(url)));
  if (scheme != "http" && scheme != "https")
    throw input_error(fmt::format("'{}': unsupported scheme '{}' (only https, or http to this "
                                  "machine)",
                                  redact_url(url), scheme));
  std::string host = u.part(CURLUPART_HOST);
  if (host.empty())
    throw input_error(fmt::format("'{}' has no host", redact_url(url)));
  // https is the expectation: a token and results crossing a network in clear text can be read
  // and altered by anyone on the path. Loopback never leaves the machine (the tests use it).
  if (scheme == "http" && !is_loopback_host(host) && !options.allow_plain_http)
    throw input_error(fmt::format("refusing plain http to {} ('{}'): use https (plain http is only "
                                  "used for 127.0.0.1/localhost unless explicitly allowed)",
                                  host, redact_url(url)));
}

std::chrono::milliseconds backoff_delay(int retry, const http_options& o) {
  double base = (double)o.backoff_initial.count();
  double cap = (double)o.backoff_max.count();
  double d = base;
  for (int i = 1; i < retry && d < cap; ++i)
    d *= 2; // bounded: stops at the cap
  d = std::min(d, cap);
  thread_local std::mt19937_64 gen{std::random_device{}()};
  std::uniform_real_distribution<double> uni(0.0, 0.5 * d);
  return std::chrono::milliseconds((long long)(0.5 * d + uni(gen)));
}

std::chrono::milliseconds parse_retry_after(const std::string& value) {
  std::string v = trim(value);
  if (v.empty())
    return std::chrono::milliseconds{-1};
  if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit((unsigned char)c); })) {
    if (v.size() > 9)
      return std::chrono::milliseconds{-1}; // absurd: treat as unreadable
    return std::chrono::milliseconds(std::stoll(v) * 1000);
  }
  time_t when = curl_getdate(v.c_str(), nullptr);
  if (when == -1)
    return std::chrono::milliseconds{-1};
  long long secs = (long long)when - (long long)std::time(nullptr);
  return std::chrono::milliseconds(std::max(0LL, secs) * 1000);
}

namespace {

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Same scheme, host and port: where a bearer token may follow a redirect.
bool same_origin(const std::string& a, const std::string& b) {
  url_handle ua, ub;
  if (!ua.set(a) || !ub.set(b))
    return false;
  for (CURLUPart p : {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT})
    if (to_lower(ua.part(p)) != to_lower(ub.part(p)))
      return false;
  return true;
}

} // namespace

void check_redirect(const std::string& from, const std::string& to, const http_options& o) {
  const std::string shown_from = redact_url(from), shown_to = redact_url(to);
  if (to_lower(from).rfind("https://", 0) == 0 && to_lower(to).rfind("https://", 0) != 0)
    throw http_error(fmt::format("GET {}: the server redirects to {}; refused: a redirect must not "
                                 "leave https (that would downgrade to clear text)",
                                 shown_from, shown_to),
                     0);
  try {
    check_url(to, o);
  } catch (const input_error& e) {
    throw http_error(fmt::format("GET {}: the server redirects to {}; refused: {}", shown_from,
                                 shown_to, e.what()),
                     0);
  }
}

http_response post_json(const http_request& req) { return perform(method::post, req); }

http_response get(const http_request& req) {
  http_request hop = req;
  int attempts = 0;
  for (int redirects = 0;; ++redirects) {
    http_response r = perform(method::get, hop);
    attempts += r.attempts;
    r.attempts = attempts;
    if (!is_redirect(r.status) || r.redirect_url.empty())
      return r;
    if (redirects >= hop.options.max_redirects)
      throw http_error(fmt::format("GET {}: more than {} redirects, stopped at {}",
                                   redact_url(req.url), hop.options.max_redirects,
                                   redact_url(r.redirect_url)),
                       r.status);
    check_redirect(hop.url, r.redirect_url, hop.options);
    // The token is for the server it was configured for, not wherever that server points.
    if (!same_origin(hop.url, r.redirect_url))
      hop.send_token = false;
    emit(hop.options, fmt::format("GET {}: HTTP {}, redirected to {}", redact_url(hop.url),
                                  r.status, redact_url(r.redirect_url)));
    hop.url = r.redirect_url;
  }
}

} // namespace accelbench::net
