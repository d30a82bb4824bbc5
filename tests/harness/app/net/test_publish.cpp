// Publishing runs and importing results documents over HTTP (harness/app/net/publish.hpp) against a
// scripted results server on 127.0.0.1 that stores runs keyed by Idempotency-Key.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>

#include <fmt/format.h>

#include "harness/app/net/publish.hpp"
#include "harness/core/results_document.hpp"
#include "local_http_server.hpp"
#include "net_test_support.hpp"

using namespace accelbench;
using namespace accelbench::testing;

namespace {

// A results server that honours Idempotency-Key: a key it has seen is acknowledged again and
// stores nothing. `fail_first_after_store`: the first request is stored, then answered 500 (the
// answer was "lost"), which is exactly when a client retry would duplicate results.
struct results_server {
  std::mutex mutex;
  std::map<std::string, std::vector<run>> by_key;
  json last_systems;
  int requests = 0;
  bool fail_first_after_store = false;
  int status_for_request_2 = 0; // when non-zero, the second request gets this status

  size_t stored_runs() {
    std::lock_guard lock(mutex);
    size_t n = 0;
    for (const auto& [k, v] : by_key)
      n += v.size();
    return n;
  }

  http_exchange_response operator()(const http_exchange_request& r) {
    std::lock_guard lock(mutex);
    ++requests;
    if (r.method != "POST" || r.header("authorization") != std::string("Bearer ") + k_token)
      return {401, "unauthorized", {}, {}};
    if (status_for_request_2 && requests == 2)
      return {status_for_request_2, "rejected", {}, {}};
    const std::string key = r.header("idempotency-key");
    if (key.empty())
      return {400, "Idempotency-Key required", {}, {}};
    bool known = by_key.count(key) > 0;
    if (!known) {
      json systems;
      by_key[key] = read_results_document(r.body, "POST body", &systems);
      last_systems = systems;
    }
    if (fail_first_after_store && requests == 1)
      return {500, "lost answer", {}, {}};
    return {known ? 200 : 201, R"({"ok":true})", {}, {}};
  }
};

} // namespace

TEST_CASE("publish_runs posts one results document per run", "[net]") {
  captured_log log;
  results_server state;
  local_http_server server([&](const http_exchange_request& r) { return state(r); });
  std::vector<run> runs = {make_run("sysA", 8), make_run("sysA", 16), make_run("sysA", 32)};
  json systems = json::array({{{"name", "sysA"}, {"accelerator_model", "CPU"}},
                              {{"name", "sysB"}, {"accelerator_model", "H100"}}});
  net::publish_options po;
  po.url = server.url("/api/results");
  po.http = fast_options(log);
  auto res = net::publish_runs(runs, systems, po);
  CHECK(res.runs == 3);
  CHECK(res.requests == 3);
  CHECK(res.attempts == 3);
  REQUIRE(res.idempotency_keys.size() == 3);
  CHECK(res.idempotency_keys[1] == "accelbench-run-" + runs[1].uuid);
  CHECK(state.stored_runs() == 3);
  const auto& stored = state.by_key.at("accelbench-run-" + runs[2].uuid);
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].uuid == runs[2].uuid);
  CHECK(stored[0].cfg.key() == runs[2].cfg.key());
  CHECK(stored[0].samples.size() == 3);
  // Only the systems the runs ran on travel with them.
  REQUIRE(state.last_systems.size() == 1);
  CHECK(state.last_systems[0]["name"] == "sysA");
}

TEST_CASE("a 500 after storing is retried without duplicating the run", "[net]") {
  captured_log log;
  results_server state;
  state.fail_first_after_store = true;
  local_http_server server([&](const http_exchange_request& r) { return state(r); });
  std::vector<run> runs = {make_run("sysA", 8), make_run("sysA", 16)};
  net::publish_options po;
  po.url = server.url("/api/results");
  po.http = fast_options(log);
  auto res = net::publish_runs(runs, json::array(), po);
  CHECK(res.runs == 2);
  CHECK(res.attempts == 3); // the first run needed a second attempt
  CHECK(state.requests == 3);
  CHECK(state.stored_runs() == 2);
  auto seen = server.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].header("idempotency-key") == seen[1].header("idempotency-key"));
  CHECK(log.count_containing("HTTP 500; retrying") == 1);

  // Publishing the same runs again (the nightly job rerun) adds nothing either.
  net::publish_runs(runs, json::array(), po);
  CHECK(state.requests == 5);
  CHECK(state.stored_runs() == 2);
}

TEST_CASE("batches carry one key derived from all their uuids", "[net]") {
  CHECK(net::idempotency_key_for({"u1"}) == "accelbench-run-u1");
  auto ab = net::idempotency_key_for({"a", "b"});
  CHECK(ab == net::idempotency_key_for({"b", "a"}));
  CHECK(ab != net::idempotency_key_for({"a", "c"}));
  CHECK(ab.rfind("accelbench-batch-", 0) == 0);
  CHECK(ab.size() == std::string("accelbench-batch-").size() + 32);

  captured_log log;
  results_server state;
  local_http_server server([&](const http_exchange_request& r) { return state(r); });
  std::vector<run> runs = {make_run("sysA", 8), make_run("sysA", 16), make_run("sysA", 32)};
  net::publish_options po;
  po.url = server.url();
  po.http = fast_options(log);
  po.batch_size = 2;
  auto res = net::publish_runs(runs, json::array(), po);
  CHECK(res.requests == 2);
  CHECK(res.runs == 3);
  CHECK(state.by_key.at(net::idempotency_key_for({runs[0].uuid, runs[1].uuid})).size() == 2);
  CHECK(state.by_key.at("accelbench-run-" + runs[2].uuid).size() == 1);
}

TEST_CASE("401 and 403 are authentication errors naming the variable, never the token", "[net]") {
  captured_log log;
  int status = 401;
  local_http_server server([&](const http_exchange_request& r) {
    return http_exchange_response{status, "denied for " + r.header("authorization"), {}, {}};
  });
  net::publish_options po;
  po.url = server.url("/api/results");
  po.http = fast_options(log);
  for (int s : {401, 403}) {
    status = s;
    size_t before = server.requests().size();
    try {
      net::publish_runs({make_run("sysA", 8)}, json::array(), po);
      FAIL("expected an authentication error");
    } catch (const net::http_error& e) {
      std::string what = e.what();
      CHECK(e.status() == s);
      CHECK(what.find(fmt::format("authentication failed (HTTP {})", s)) != std::string::npos);
      CHECK(what.find(std::string("check the token in $") + k_token_env) != std::string::npos);
      CHECK(what.find(k_token) == std::string::npos);
    }
    CHECK(server.requests().size() == before + 1); // not retried
  }
  // The variable not being set is said too (a typo in the CI secret's name is the usual cause).
  po.http.token_env = "ACCELBENCH_TEST_NET_TOKEN_MISSING";
  ::unsetenv("ACCELBENCH_TEST_NET_TOKEN_MISSING");
  CHECK_THROWS_WITH(
      net::publish_runs({make_run("sysA", 8)}, json::array(), po),
      Catch::Contains("$ACCELBENCH_TEST_NET_TOKEN_MISSING (the variable is not set)"));
  for (const auto& l : *log.lines)
    CHECK(l.find(k_token) == std::string::npos);
}

TEST_CASE("a server error is reported without the token, with how far publishing got", "[net]") {
  captured_log log;
  results_server state;
  state.status_for_request_2 = 422;
  local_http_server server([&](const http_exchange_request& r) { return state(r); });
  net::publish_options po;
  po.url = server.url();
  po.http = fast_options(log);
  std::vector<run> runs = {make_run("sysA", 8), make_run("sysA", 16), make_run("sysA", 32)};
  CHECK_THROWS_WITH(net::publish_runs(runs, json::array(), po),
                    Catch::Contains("HTTP 422") && Catch::Contains("1 of 3 run(s)"));
  CHECK(state.stored_runs() == 1);

  // Error bodies are quoted, but a token echoed in them is masked.
  local_http_server echo([](const http_exchange_request& r) {
    return http_exchange_response{500, "echo " + r.header("authorization"), {}, {}};
  });
  po.url = echo.url();
  po.http.max_attempts = 2;
  try {
    net::publish_runs({make_run("sysA", 8)}, json::array(), po);
    FAIL("expected an http_error");
  } catch (const net::http_error& e) {
    CHECK(std::string(e.what()).find("echo Bearer ***") != std::string::npos);
    CHECK(std::string(e.what()).find(k_token) == std::string::npos);
  }
}

TEST_CASE("publish checks the URL before sending anything", "[net]") {
  captured_log log;
  net::publish_options po;
  po.http = fast_options(log);
  po.url = "http://results.example.com/api"; // plain http across a network
  CHECK_THROWS_AS(net::publish_runs({make_run("sysA", 8)}, json::array(), po), input_error);
  po.url = "file:///tmp/x";
  CHECK_THROWS_AS(net::publish_runs({make_run("sysA", 8)}, json::array(), po), input_error);
  auto r = net::publish_runs({}, json::array(), po); // nothing to send: no request, no error
  CHECK(r.requests == 0);
  run no_uuid = make_run("sysA", 8);
  no_uuid.uuid.clear();
  po.url = "https://results.example.com/api";
  CHECK_THROWS_WITH(net::publish_runs({no_uuid}, json::array(), po), Catch::Contains("no uuid"));
}

TEST_CASE("import_results_url reads a results document over HTTP", "[net]") {
  captured_log log;
  std::vector<run> runs = {make_run("sysA", 8), make_run("sysB", 16)};
  json systems = json::array({{{"name", "sysA"}}, {{"name", "sysB"}}});
  std::string doc = results_document(runs, systems, json::array()).dump(2);
  local_http_server server([&](const http_exchange_request& r) {
    if (r.target == "/results.json")
      return http_exchange_response{200, doc, {}, {}};
    if (r.target == "/private.json")
      return http_exchange_response{401, "", {}, {}};
    if (r.target == "/html")
      return http_exchange_response{200, "<html>\n<body>oops</body>", {}, {}};
    if (r.target == "/other.json")
      return http_exchange_response{200, R"({"schema_version": 1, "runs": 3})", {}, {}};
    return http_exchange_response{404, "no such file", {}, {}};
  });
  auto o = fast_options(log);
  json got_systems;
  auto got = net::import_results_url(server.url("/results.json"), o, &got_systems);
  REQUIRE(got.size() == 2);
  CHECK(got[0].uuid == runs[0].uuid);
  CHECK(got[1].cfg.key() == runs[1].cfg.key());
  CHECK(got_systems.size() == 2);
  CHECK(server.requests().back().header("authorization") == std::string("Bearer ") + k_token);

  SECTION("a body that is not JSON is an input error with its position") {
    try {
      net::import_results_url(server.url("/html"), o);
      FAIL("expected an input_error");
    } catch (const input_error& e) {
      CHECK_THAT(e.what(),
                 Catch::Contains("not valid JSON") && Catch::Contains("line 1, column 1"));
      CHECK_THAT(e.what(), Catch::Contains(server.url("/html")));
    }
  }
  SECTION("JSON that is not a results document names the violation") {
    CHECK_THROWS_AS(net::import_results_url(server.url("/other.json"), o), input_error);
  }
  SECTION("404 and 401") {
    CHECK_THROWS_AS(net::fetch_url(server.url("/missing.json"), o), input_error);
    CHECK_THROWS_WITH(net::fetch_url(server.url("/missing.json"), o), Catch::Contains("HTTP 404"));
    CHECK_THROWS_WITH(net::fetch_url(server.url("/private.json"), o),
                      Catch::Contains("authentication failed (HTTP 401)"));
  }
  SECTION("file URLs are refused") {
    CHECK_THROWS_AS(net::fetch_url("file:///etc/hostname", o), input_error);
  }
}

TEST_CASE("import_results_url refuses a deeply nested body before parsing it", "[net]") {
  captured_log log;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  local_http_server server([&](const http_exchange_request&) {
    return http_exchange_response{200, deep, {}, {}};
  });
  CHECK_THROWS_WITH(net::import_results_url(server.url("/deep.json"), fast_options(log)),
                    Catch::Contains("nesting too deep") && Catch::Contains("/deep.json"));
}
