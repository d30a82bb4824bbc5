// The HTTP client's policies (harness/app/net/http.hpp) against a scripted server on 127.0.0.1.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <ctime>
#include <set>

#include "harness/app/net/http.hpp"
#include "local_http_server.hpp"
#include "net_test_support.hpp"

using namespace accelbench;
using namespace accelbench::testing;
using clk = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {
double seconds_since(clk::time_point t0) {
  return std::chrono::duration<double>(clk::now() - t0).count();
}
// A port nothing listens on: bind one, note it, close it.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, (sockaddr*)&a, sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, (sockaddr*)&a, &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}
} // namespace

TEST_CASE("http options default to verified TLS, https only and bounded timeouts", "[net]") {
  net::http_options o;
  CHECK_FALSE(o.insecure);
  CHECK_FALSE(o.allow_plain_http);
  CHECK(o.token_env == "ACCELBENCH_TOKEN");
  CHECK(o.connect_timeout == milliseconds(10'000));
  CHECK(o.total_timeout == milliseconds(60'000));
  CHECK(o.max_attempts > 1);
  CHECK(o.backoff_max >= o.backoff_initial);
  CHECK_NOTHROW(net::check_url("https://results.example.com/api/runs", o));
  CHECK_THROWS_AS(net::check_url("http://results.example.com/api/runs", o), input_error);
  CHECK_THROWS_WITH(net::check_url("http://results.example.com/api/runs", o),
                    Catch::Contains("use https"));
  CHECK_NOTHROW(net::check_url("http://127.0.0.1:8080/x", o));
  CHECK_NOTHROW(net::check_url("http://localhost:8080/x", o));
  o.allow_plain_http = true;
  CHECK_NOTHROW(net::check_url("http://results.example.com/api/runs", o));
}

TEST_CASE("check_url refuses file and other schemes", "[net]") {
  net::http_options o;
  CHECK_THROWS_AS(net::check_url("file:///etc/passwd", o), input_error);
  CHECK_THROWS_WITH(net::check_url("file:///etc/passwd", o), Catch::Contains("file://"));
  CHECK_THROWS_WITH(net::check_url("ftp://example.com/r.json", o), Catch::Contains("ftp"));
  CHECK_THROWS_AS(net::check_url("results.json", o), input_error);
  CHECK(net::is_http_url("https://example.com/x"));
  CHECK(net::is_http_url("HTTP://127.0.0.1/x"));
  CHECK_FALSE(net::is_http_url("results.json"));
  CHECK_FALSE(net::is_http_url("file:///tmp/results.json"));
}

TEST_CASE("redact_url drops credentials and the query string", "[net]") {
  std::string r =
      net::redact_url("https://alice:pa55word@results.example.com/api/runs?token=abc123#x");
  CHECK(r.find("pa55word") == std::string::npos);
  CHECK(r.find("alice") == std::string::npos);
  CHECK(r.find("abc123") == std::string::npos);
  CHECK(r.find("results.example.com/api/runs") != std::string::npos);
}

TEST_CASE("backoff grows exponentially up to its cap, with jitter", "[net]") {
  net::http_options o;
  o.backoff_initial = milliseconds(100);
  o.backoff_max = milliseconds(1000);
  for (int retry = 1; retry <= 8; ++retry) {
    long long full = std::min<long long>(1000, 100LL << (retry - 1));
    for (int k = 0; k < 20; ++k) {
      auto d = net::backoff_delay(retry, o).count();
      CHECK(d >= full / 2);
      CHECK(d <= full);
    }
  }
  std::set<long long> seen;
  for (int k = 0; k < 50; ++k)
    seen.insert(net::backoff_delay(3, o).count());
  CHECK(seen.size() > 1); // jittered, not a fixed schedule
}

TEST_CASE("parse_retry_after reads delta-seconds and HTTP dates", "[net][timing]") {
  CHECK(net::parse_retry_after("3") == milliseconds(3000));
  CHECK(net::parse_retry_after(" 0 ") == milliseconds(0));
  CHECK(net::parse_retry_after("").count() < 0);
  CHECK(net::parse_retry_after("soon").count() < 0);
  std::time_t later = std::time(nullptr) + 3600;
  std::tm tm{};
  gmtime_r(&later, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  auto d = net::parse_retry_after(buf);
  CHECK(d >= milliseconds(3590'000));
  CHECK(d <= milliseconds(3600'000));
  CHECK(net::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == milliseconds(0)); // past
}

TEST_CASE("post_json sends the token, the idempotency key and the body", "[net]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{201, R"({"stored":1})", {}, {}};
  });
  net::http_request req;
  req.url = server.url("/api/runs");
  req.body = R"({"hello":"world"})";
  req.idempotency_key = "key-123";
  req.options = fast_options(log);
  auto resp = net::post_json(req);
  CHECK(resp.status == 201);
  CHECK(resp.ok());
  CHECK(resp.attempts == 1);
  CHECK(resp.body == R"({"stored":1})");
  CHECK(resp.headers.at("content-length") == "12");
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/api/runs");
  CHECK(seen[0].header("authorization") == std::string("Bearer ") + k_token);
  CHECK(seen[0].header("idempotency-key") == "key-123");
  CHECK(seen[0].header("content-type") == "application/json");
  CHECK(seen[0].body == req.body);
  CHECK(log.lines->empty());
}

TEST_CASE("every request gets an Idempotency-Key, and no token header without a token", "[net]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{200, "{}", {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.token_env = "ACCELBENCH_TEST_NET_TOKEN_UNSET";
  ::unsetenv("ACCELBENCH_TEST_NET_TOKEN_UNSET");
  auto a = net::get(req);
  auto b = net::get(req);
  auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].header("authorization").empty());
  CHECK(seen[0].header("idempotency-key").size() == 36);
  CHECK(seen[0].header("idempotency-key") != seen[1].header("idempotency-key"));
  CHECK(a.idempotency_key == seen[0].header("idempotency-key"));
}

TEST_CASE("5xx is retried with the same idempotency key", "[net][timing]") {
  captured_log log;
  std::atomic<int> n{0};
  local_http_server server([&](const http_exchange_request&) {
    return ++n <= 2 ? http_exchange_response{503, "busy", {}, {}}
                    : http_exchange_response{200, "ok", {}, {}};
  });
  net::http_request req;
  req.url = server.url("/api/runs");
  req.body = "{}";
  req.options = fast_options(log);
  auto resp = net::post_json(req);
  CHECK(resp.status == 200);
  CHECK(resp.attempts == 3);
  auto seen = server.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].header("idempotency-key") == seen[1].header("idempotency-key"));
  CHECK(seen[1].header("idempotency-key") == seen[2].header("idempotency-key"));
  CHECK(log.count_containing("HTTP 503; retrying") == 2);
}

TEST_CASE("other 4xx are not retried", "[net]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{400, "bad", {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.body = "{}";
  req.options = fast_options(log);
  auto resp = net::post_json(req);
  CHECK(resp.status == 400);
  CHECK(resp.attempts == 1);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("retries stop after max_attempts", "[net][timing]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{500, "down", {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.max_attempts = 3;
  auto resp = net::get(req);
  CHECK(resp.status == 500);
  CHECK(resp.attempts == 3);
  CHECK(server.requests().size() == 3);
}

TEST_CASE("429 waits for Retry-After before retrying", "[net][timing]") {
  captured_log log;
  std::atomic<int> n{0};
  local_http_server server([&](const http_exchange_request&) {
    if (++n == 1)
      return http_exchange_response{429, "slow down", {{"Retry-After", "1"}}, {}};
    return http_exchange_response{200, "ok", {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  auto t0 = clk::now();
  auto resp = net::get(req);
  double took = seconds_since(t0);
  CHECK(resp.status == 200);
  CHECK(resp.attempts == 2);
  CHECK(took >= 1.0); // the 10 ms backoff would have retried far earlier
  // Which delay was used is in the log; how much longer than 1 s the retry took is this
  // machine's speed, not bounded here.
  CHECK(log.count_containing("retrying in 1.0 s") == 1);
}

TEST_CASE("a Retry-After longer than allowed ends the retries", "[net][timing]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{429, "", {{"Retry-After", "3600"}}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.retry_after_max = std::chrono::seconds(120);
  auto t0 = clk::now();
  auto resp = net::get(req);
  // No wait at all: waiting the most allowed (120 s), let alone the 3600 s asked, would pass this
  // bound, which is only a hang guard far above the milliseconds one request takes.
  CHECK(seconds_since(t0) < 30.0);
  CHECK(resp.status == 429);
  CHECK(resp.attempts == 1);
  CHECK(log.count_containing("giving up") == 1);
}

TEST_CASE("connection refused is retried, then reported", "[net][timing]") {
  captured_log log;
  net::http_request req;
  req.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/api/runs";
  req.body = "{}";
  req.options = fast_options(log);
  req.options.max_attempts = 3;
  try {
    net::post_json(req);
    FAIL("expected an http_error");
  } catch (const net::http_error& e) {
    CHECK(e.status() == 0);
    CHECK(std::string(e.what()).find("3 attempt(s)") != std::string::npos);
    CHECK(e.exit_code() == exit_usage);
  }
  CHECK(log.count_containing("retrying") == 2);
}

TEST_CASE("the total timeout ends a request to a server that does not answer", "[net][timing]") {
  captured_log log;
  // The answer comes after 20 s (within the test server's 30 s life; its destructor cuts the wait
  // short), far after the 600 ms timeout.
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{200, "late", {}, milliseconds(20'000)};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.total_timeout = milliseconds(600);
  req.options.max_attempts = 1;
  auto t0 = clk::now();
  try {
    net::get(req);
    FAIL("expected a timeout");
  } catch (const net::http_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("timed out", Catch::CaseSensitive::No));
  }
  double took = seconds_since(t0);
  CHECK(took >= 0.5);
  // Well before the answer would have come (20 s): a hang guard for a slow or loaded machine, and
  // what tells the timeout from waiting for the answer.
  CHECK(took < 10.0);
}

TEST_CASE("insecure prints a warning on every request", "[net]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{200, "{}", {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.insecure = true;
  net::get(req);
  net::get(req);
  net::get(req);
  CHECK(log.count_containing("TLS certificate verification is OFF") == 3);
}

TEST_CASE("an oversized response is refused and not retried", "[net]") {
  captured_log log;
  local_http_server server([](const http_exchange_request&) {
    return http_exchange_response{200, std::string(50'000, 'x'), {}, {}};
  });
  net::http_request req;
  req.url = server.url();
  req.options = fast_options(log);
  req.options.max_response_bytes = 1000;
  CHECK_THROWS_WITH(net::get(req), Catch::Contains("larger than 1000 bytes"));
  CHECK(server.requests().size() == 1);
}

TEST_CASE("the token never appears in errors or log lines", "[net][timing]") {
  captured_log log;
  // A hostile server echoing the Authorization header back in its error body.
  local_http_server server([](const http_exchange_request& r) {
    return http_exchange_response{500, "you sent: " + r.header("authorization"), {}, {}};
  });
  net::http_request req;
  req.url = server.url("/echo");
  req.options = fast_options(log);
  req.options.max_attempts = 2;
  auto resp = net::get(req);
  CHECK(resp.status == 500);
  REQUIRE_FALSE(log.lines->empty());
  for (const auto& l : *log.lines)
    CHECK(l.find(k_token) == std::string::npos);
  CHECK(net::redact_token(resp.body, req.options) == "you sent: Bearer ***");

  // A token with a line break would inject headers: refused, without showing the value.
  ::setenv(k_token_env, "abc\r\nX-Evil: 1", 1);
  try {
    net::get(req);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("abc") == std::string::npos);
    CHECK(std::string(e.what()).find(k_token_env) != std::string::npos);
  }
  ::setenv(k_token_env, k_token, 1);
}

TEST_CASE("redirects: http->http is followed, the token stays with its origin", "[net]") {
  captured_log log;
  local_http_server other([](const http_exchange_request&) {
    return http_exchange_response{200, R"({"from":"other"})", {}, {}};
  });
  local_http_server server([&](const http_exchange_request& r) {
    if (r.target == "/old")
      return http_exchange_response{302, "", {{"Location", "/new"}}, {}};
    if (r.target == "/away")
      return http_exchange_response{301, "", {{"Location", other.url("/x")}}, {}};
    if (r.target == "/loop")
      return http_exchange_response{307, "", {{"Location", "/loop"}}, {}};
    if (r.target == "/remote")
      return http_exchange_response{
          302, "", {{"Location", "http://results.example.com/r.json"}}, {}};
    return http_exchange_response{200, R"({"from":"server"})", {}, {}};
  });
  net::http_request req;
  req.options = fast_options(log);

  req.url = server.url("/old");
  auto same = net::get(req);
  CHECK(same.status == 200);
  CHECK(same.body == R"({"from":"server"})");
  CHECK(same.attempts == 2);
  auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].target == "/new");
  CHECK(seen[1].header("authorization") == std::string("Bearer ") + k_token);
  CHECK(log.count_containing("redirected to") == 1);

  req.url = server.url("/away");
  auto away = net::get(req);
  CHECK(away.body == R"({"from":"other"})");
  REQUIRE(other.requests().size() == 1);
  CHECK(other.requests()[0].header("authorization").empty()); // another port: another origin

  req.url = server.url("/loop");
  CHECK_THROWS_WITH(net::get(req), Catch::Contains("more than 5 redirects"));

  // Plain http to a remote host is refused for a redirect target as for the first URL, before
  // any connection to it.
  req.url = server.url("/remote");
  try {
    net::get(req);
    FAIL("the redirect to a remote plain http URL was followed");
  } catch (const net::http_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("redirects to http://results.example.com/r.json") &&
                             Catch::Contains("refusing plain http"));
    CHECK_THAT(e.what(), !Catch::Contains("disabled"));
  }
}

TEST_CASE("redirects: https may not downgrade to http", "[net]") {
  net::http_options o;
  CHECK_NOTHROW(net::check_redirect("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b", o));
  CHECK_NOTHROW(net::check_redirect("http://127.0.0.1:8080/a", "https://results.example.com/b", o));
  CHECK_NOTHROW(net::check_redirect("https://a.example.com/a", "https://b.example.com/b", o));
  CHECK_THROWS_WITH(net::check_redirect("https://a.example.com/a", "http://a.example.com/b", o),
                    Catch::Contains("must not leave https") &&
                        Catch::Contains("http://a.example.com/b"));
  // Even to loopback, and even with --allow-http: the first URL asked for https.
  o.allow_plain_http = true;
  CHECK_THROWS_AS(net::check_redirect("https://a.example.com/a", "http://127.0.0.1/b", o),
                  net::http_error);
  CHECK_THROWS_WITH(net::check_redirect("http://127.0.0.1/a", "file:///etc/passwd", o),
                    Catch::Contains("file://"));
}
