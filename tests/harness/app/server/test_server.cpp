// accelbench serve over HTTP: publish stores once, retries and duplicated POSTs are
// idempotent, 16 concurrent publishers lose and duplicate nothing, a server killed with -9 in the
// middle of a publish and restarted loses and duplicates nothing, bad requests get a 4xx with a
// JSON error and change nothing, and the GET endpoints answer as the CLI does.
#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <thread>

#include "harness/app/net/publish.hpp"
#include "harness/app/query/comparison.hpp"
#include "harness/app/server/connection.hpp"
#include "harness/app/server/dashboard.hpp"
#include "harness/app/server/server.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/results_document.hpp"
#include "server_helpers.hpp"
#include "tests/support/skip.hpp"

using namespace server_test;

namespace {

std::string publish_cmd(const live_server& s, const fs::path& src, const std::string& token,
                        const std::string& extra = "") {
  return fmt::format("ACCELBENCH_TOKEN={} exec {} publish --url {} --db {} {}", token, k_exe,
                     s.url("/api/v1/runs"), sh_word(src.string()), extra);
}

test_cli::exit_status run_sh(const std::string& script, const fs::path& err,
                             std::chrono::milliseconds limit = 120s) {
  test_cli::spawn_options o;
  o.err = err;
  return test_cli::wait_for(test_cli::spawn_sh(script, o), limit);
}

// A results document of `runs` as publish sends it, with its idempotency key.
std::pair<std::string, std::string> document_of(const std::vector<run>& runs) {
  std::vector<std::string> uuids;
  for (const auto& r : runs)
    uuids.push_back(r.uuid);
  return {dump_json(accelbench::results_document(runs, json::array(), json::array())),
          net::idempotency_key_for(uuids)};
}

httplib::Headers auth(const std::string& token, const std::string& key = "") {
  httplib::Headers h;
  if (!token.empty())
    h.emplace("Authorization", "Bearer " + token);
  if (!key.empty())
    h.emplace("Idempotency-Key", key);
  return h;
}

} // namespace

TEST_CASE("serve: helpers", "[server]") {
  CHECK(server::parse_listen("127.0.0.1:8080") == std::make_pair(std::string("127.0.0.1"), 8080));
  CHECK(server::parse_listen("[::1]:0") == std::make_pair(std::string("::1"), 0));
  CHECK_THROWS_WITH(server::parse_listen("8080"), Catch::Contains("not ADDR:PORT"));
  CHECK_THROWS_WITH(server::parse_listen("host:65536"), Catch::Contains("[0, 65535]"));
  CHECK_THROWS_WITH(server::parse_listen("host:x"), Catch::Contains("[0, 65535]"));
  CHECK(server::url_encode("tag=a&b <c>") == "tag%3Da%26b%20%3Cc%3E");
  CHECK(server::allows(server::role::admin, server::role::write));
  CHECK(server::allows(server::role::write, server::role::read));
  CHECK_FALSE(server::allows(server::role::read, server::role::write));
  CHECK(server::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Media types: exactly application/json, a UTF-8 charset at most.
  CHECK(server::is_json_media_type("application/json"));
  CHECK(server::is_json_media_type("Application/JSON ; charset=\"UTF-8\""));
  CHECK_FALSE(server::is_json_media_type("application/jsonp"));
  CHECK_FALSE(server::is_json_media_type("application/json-seq"));
  CHECK_FALSE(server::is_json_media_type("application/json; charset=utf-16"));
  CHECK_FALSE(server::is_json_media_type("application/json; boundary=x"));
  CHECK_FALSE(server::is_json_media_type(""));
}

TEST_CASE("serve: chunked bodies are decoded with bounded lines and size", "[server]") {
  using st = server::chunked_decoder::status;
  auto decode = [](const std::string& wire, size_t max, std::string& out, size_t& used) {
    server::chunked_decoder d(max);
    return d.feed(wire.data(), wire.size(), used, out);
  };
  std::string out;
  size_t used = 0;
  // Extensions and trailers are read past; what follows the body is left for the next request.
  const std::string body = "3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n";
  CHECK(decode(body + "GET /", 100, out, used) == st::done);
  CHECK(out == "abcde");
  CHECK(used == body.size());
  // A chunk over the limit is refused from its size line, before its data.
  out.clear();
  CHECK(decode("3\r\nabc\r\n10000\r\n", 100, out, used) == st::too_large);
  CHECK(out == "abc");
  for (const std::string& bad : std::vector<std::string>{
           "x\r\n", "3\nabc\n", "3\r\nabcX\r\n", "1234567890abcdef0\r\n", std::string(2000, '1')}) {
    INFO(bad.substr(0, 40));
    out.clear();
    CHECK(decode(bad, size_t{1} << 40, out, used) == st::malformed);
  }
  // Fed a byte at a time, the same.
  server::chunked_decoder d(100);
  out.clear();
  st last = st::more;
  for (char c : body) {
    size_t n = 0;
    last = d.feed(&c, 1, n, out);
  }
  CHECK(last == st::done);
  CHECK(out == "abcde");

  server::connection_counter counter(2, 3);
  CHECK(counter.admit("a").empty());
  CHECK(counter.admit("a").empty());
  CHECK_THAT(counter.admit("a"), Catch::Contains("a has 2 connections open"));
  CHECK(counter.admit("b").empty());
  CHECK_THAT(counter.admit("c"), Catch::Contains("its most connections (3)"));
  counter.release("a");
  CHECK(counter.admit("c").empty());
  CHECK(counter.open() == 3);
}

TEST_CASE("serve: tokens are stored as salted hashes and checked by role", "[server][token]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  const std::string w = make_token(db, "write", "ci-box");
  const std::string r = make_token(db, "read", "viewer");
  REQUIRE(w.rfind("abt_1_", 0) == 0);
  REQUIRE(r.rfind("abt_2_", 0) == 0);
  {
    auto s = store::store::open(db);
    CHECK(server::check_token(s, w) == server::role::write);
    CHECK(server::check_token(s, r) == server::role::read);
    CHECK_FALSE(server::check_token(s, w.substr(0, w.size() - 1) + (w.back() == '0' ? "1" : "0")));
    CHECK_FALSE(server::check_token(s, "abt_1_"));
    CHECK_FALSE(server::check_token(s, "abt_9_" + w.substr(6)));
    for (const auto& rec : s.tokens()) {
      CHECK(rec.hash.size() == 64);
      CHECK(rec.salt.size() == 32);
    }
  }
  // The secret is nowhere in the database file (nor its WAL); on PostgreSQL, nowhere in the table.
  std::string bytes;
  if (server_db_is_file(db))
    for (const auto& f : fs::directory_iterator(t.path))
      bytes += test_cli::slurp(f.path());
  else
    for (const auto& rec : store::store::open(db).tokens())
      bytes += rec.name + rec.salt + rec.hash;
  CHECK_FALSE(bytes.empty());
  CHECK(bytes.find(w.substr(6)) == std::string::npos);
  CHECK(bytes.find(r.substr(6)) == std::string::npos);

  auto list = test_cli::ab(fmt::format("token list --db {} --json", sh_word(db.string())));
  REQUIRE(list.rc == 0);
  CHECK(list.out.find(w.substr(6)) == std::string::npos);
  CHECK(list.out.find("\"ci-box\"") != std::string::npos);
  CHECK(test_cli::ab(fmt::format("token revoke 1 --db {}", sh_word(db.string()))).rc == 0);
  auto again = test_cli::ab(fmt::format("token revoke 1 --db {}", sh_word(db.string())));
  CHECK(again.rc == 2);
  CHECK(again.err.find("no valid token with id 1") != std::string::npos);
  auto s = store::store::open(db);
  CHECK_FALSE(server::check_token(s, w));
  CHECK(test_cli::ab(fmt::format("token create --db {} --role root --name x", sh_word(db.string())))
            .rc == 2);
}

TEST_CASE(
    "serve: publish stores each run once, and a retried or duplicated POST stores nothing twice",
    "[server][publish]") {
  test_cli::temp_dir t;
  const fs::path src = t.path / "src.db";
  SERVER_DB(db, t.path);
  fill_source(src, "box-a", 5, 1);
  const std::string w = make_token(db, "write");
  live_server s(db, t.path / "server.log");
  REQUIRE(s.start());

  auto first = run_sh(publish_cmd(s, src, w), t.path / "p1.err");
  INFO(test_cli::slurp(t.path / "p1.err"));
  REQUIRE(first.rc == 0);
  CHECK(count_runs(db) == 5);
  const fs::path out2 = t.path / "p2.out";
  auto second = run_sh(publish_cmd(s, src, w, "--batch-size 2 > " + sh_word(out2.string())),
                       t.path / "p2.err");
  REQUIRE(second.rc == 0);
  CHECK(count_runs(db) == 5);
  // ... and says so: every run of the three batches was there already.
  CHECK_THAT(test_cli::slurp(out2), Catch::Contains("5 of them the server held already"));

  // The same POST twice, as a retry after a lost answer would send it.
  std::mt19937_64 g(7);
  auto [doc, key] = document_of({nightly_run("box-b", 1, "nightly-x", 0, 1e-3, g)});
  auto c = s.client();
  auto a = c.Post("/api/v1/runs", auth(w, key), doc, "application/json");
  REQUIRE(a);
  CHECK(a->status == 201);
  CHECK(body_json(a)["stored"] == 1);
  CHECK(body_json(a)["replayed"] == false);
  auto b = c.Post("/api/v1/runs", auth(w, key), doc, "application/json");
  REQUIRE(b);
  CHECK(b->status == 200);
  CHECK(body_json(b)["stored"] == 0);
  CHECK(body_json(b)["already_present"] == 1);
  CHECK(body_json(b)["replayed"] == true);
  CHECK(b->get_header_value("Idempotent-Replayed") == "true");
  CHECK(body_json(a)["run_ids"] == body_json(b)["run_ids"]);
  CHECK(count_runs(db) == 6);
  // A key that is not the body's (the body changed between retries): refused, nothing stored.
  auto [doc2, key2] = document_of({nightly_run("box-b", 2, "nightly-x", 0, 1e-3, g)});
  auto m = c.Post("/api/v1/runs", auth(w, key), doc2, "application/json");
  REQUIRE(m);
  CHECK(m->status == 422);
  CHECK(count_runs(db) == 6);
  CHECK(s.stop() == 0);
  // The token never appears in the server's log.
  CHECK(test_cli::slurp(s.log).find(w.substr(6)) == std::string::npos);
}

TEST_CASE("serve: 16 concurrent publishers, every run stored exactly once",
          "[server][load][timing]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  const std::string w = make_token(db, "write");
  constexpr int k_publishers = 16, k_runs = 12;
  std::set<std::string> all;
  for (int i = 0; i < k_publishers; ++i)
    for (const auto& u : fill_source(t.path / fmt::format("src{}.db", i),
                                     fmt::format("box-{:02d}", i), k_runs, 100 + i))
      all.insert(u);
  live_server s(db, t.path / "server.log", "--quiet");
  REQUIRE(s.start());
  std::vector<pid_t> pids;
  for (int i = 0; i < k_publishers; ++i) {
    test_cli::spawn_options o;
    o.err = t.path / fmt::format("p{}.err", i);
    pids.push_back(test_cli::spawn_sh(publish_cmd(s, t.path / fmt::format("src{}.db", i), w), o));
  }
  for (int i = 0; i < k_publishers; ++i) {
    auto e = test_cli::wait_for(pids[i], 120s);
    INFO("publisher " << i << ": " << test_cli::slurp(t.path / fmt::format("p{}.err", i)));
    CHECK(e.rc == 0);
  }
  CHECK(s.stop() == 0);
  auto st = store::store::open(db, store::access::read_only);
  store::run_filter f;
  f.with_samples = false;
  auto runs = st.query(f);
  CHECK(runs.size() == all.size());
  std::set<std::string> stored;
  for (const auto& r : runs)
    stored.insert(r.uuid);
  CHECK(stored == all);
}

TEST_CASE(
    "serve: killed with -9 in the middle of a publish and restarted, nothing lost or duplicated",
    "[server][fault][timing]") {
  test_cli::temp_dir t;
  const fs::path src = t.path / "src.db";
  SERVER_DB(db, t.path);
  constexpr int k_runs = 60;
  auto uuids = fill_source(src, "box-k", k_runs, 5);
  const std::string w = make_token(db, "write");
  live_server s(db, t.path / "server.log", "--quiet");
  REQUIRE(s.start());
  const int port = s.port;
  test_cli::spawn_options o;
  o.err = t.path / "publish.err";
  const pid_t pub = test_cli::spawn_sh(publish_cmd(s, src, w, "--retries 40"), o);
  // Kill it once some runs, not all, are stored: stopped (SIGSTOP) while they are counted, and
  // killed stopped, so that nothing is stored between the count and the kill however fast the
  // publisher is here. The publisher goes on meanwhile: its request in flight meets the kill, and
  // its retries the restarted server.
  const auto counted = [&] { return count_runs(db); };
  const int64_t at_stop = pause_at(s, counted, 10);
  REQUIRE(at_stop >= 10);
  s.kill9();
  const int64_t at_kill = count_runs(db);
  CHECK(at_kill <= at_stop + 1); // + 1: a COMMIT PostgreSQL had not finished at the stop
  CHECK(at_kill < k_runs);
  live_server again(db, t.path / "server2.log", "--quiet");
  REQUIRE(again.start(port));
  auto e = test_cli::wait_for(pub, 120s);
  INFO(test_cli::slurp(t.path / "publish.err"));
  CHECK(e.rc == 0);
  CHECK(again.stop() == 0);
  auto st = store::store::open(db, store::access::read_only);
  store::run_filter f;
  f.with_samples = true;
  auto runs = st.query(f);
  CHECK(runs.size() == (size_t)k_runs);
  std::set<std::string> stored;
  for (const auto& r : runs) {
    stored.insert(r.uuid);
    CHECK(r.samples.size() == 10); // no half-stored run
  }
  CHECK(stored == std::set<std::string>(uuids.begin(), uuids.end()));
  INFO("runs stored before the kill: " << at_kill);
}

TEST_CASE("serve: bad requests get a 4xx with a JSON error and change nothing",
          "[server][bad][timing]") {
  test_cli::temp_dir t;
  const fs::path src = t.path / "src.db";
  SERVER_DB(db, t.path);
  fill_source(src, "box-a", 3, 1);
  const std::string w = make_token(db, "write"), r = make_token(db, "read"),
                    revoked = make_token(db, "write", "old");
  REQUIRE(test_cli::ab(fmt::format("token revoke 3 --db {}", sh_word(db.string()))).rc == 0);
  live_server s(db, t.path / "server.log", "--max-body-mib 1");
  REQUIRE(s.start());
  REQUIRE(run_sh(publish_cmd(s, src, w), t.path / "p.err").rc == 0);
  const int64_t before = count_runs(db);
  REQUIRE(before == 3);

  std::mt19937_64 g(3);
  auto [good, key] = document_of({nightly_run("box-z", 1, "n", 0, 1e-3, g)});
  std::string deep(300, '[');
  deep += std::string(300, ']');
  const std::string big = "{\"pad\":\"" + std::string(2 << 20, 'x') + "\"}";
  struct row {
    std::string what, method, path, token, body, type;
    int status;
  };
  const std::vector<row> table = {
      {"no token for a write", "POST", "/api/v1/runs", "", good, "application/json", 401},
      {"a read token for a write", "POST", "/api/v1/runs", r, good, "application/json", 403},
      {"a revoked token", "POST", "/api/v1/runs", revoked, good, "application/json", 401},
      {"a malformed token", "POST", "/api/v1/runs", "abt_x", good, "application/json", 401},
      {"malformed JSON", "POST", "/api/v1/runs", w, "{\"runs\": [", "application/json", 400},
      {"JSON nested too deep", "POST", "/api/v1/runs", w, deep, "application/json", 400},
      {"wrong types", "POST", "/api/v1/runs", w, R"({"schema_version": "one", "runs": 7})",
       "application/json", 400},
      {"a run without its fields", "POST", "/api/v1/runs", w,
       R"({"schema_version": 1, "runs": [{"uuid": 5}]})", "application/json", 400},
      {"not JSON at all", "POST", "/api/v1/runs", w, good, "text/plain", 415},
      {"a media type that only begins like JSON", "POST", "/api/v1/runs", w, good,
       "application/jsonp", 415},
      {"JSON in a charset other than UTF-8", "POST", "/api/v1/runs", w, good,
       "application/json; charset=latin1", 415},
      {"a report of a selector matching nothing", "GET", "/api/v1/report?baseline=nobody", r, "",
       "", 404},
      {"a body sent to a route that takes none", "PUT", "/api/v1/runs/1", w, good,
       "application/json", 405},
      {"a body sent to an unknown route", "POST", "/nothing", w, good, "application/json", 404},
      {"an oversized body", "POST", "/api/v1/runs", w, big, "application/json", 413},
      {"an unknown API route", "GET", "/api/v1/nothing", r, "", "", 404},
      {"an unknown page", "GET", "/nothing", r, "", "", 404},
      {"a method a route does not take", "DELETE", "/api/v1/runs", w, "", "", 405},
      {"a POST to a read-only route", "POST", "/api/v1/compare", w, good, "application/json", 405},
      {"a read without a token (no --public-read)", "GET", "/api/v1/runs", "", "", "", 401},
      {"an unknown query parameter", "GET", "/api/v1/runs?colour=red", r, "", "", 400},
      {"a bad selector value", "GET", "/api/v1/runs?since=yesterday", r, "", "", 400},
      {"a limit out of range", "GET", "/api/v1/runs?limit=0", r, "", "", 400},
      {"a run id that is not a number", "GET", "/api/v1/runs/abc", r, "", "", 400},
      {"a run that does not exist", "GET", "/api/v1/runs/99999", r, "", "", 404},
      {"compare without a candidate", "GET", "/api/v1/compare?baseline=box-a", r, "", "", 400},
      {"compare of a selector matching nothing", "GET",
       "/api/v1/compare?baseline=box-a&candidate=nobody", r, "", "", 404},
      {"history without a workload", "GET", "/api/v1/history", r, "", "", 400},
      {"a report in an unknown format", "GET", "/api/v1/report?format=pdf", r, "", "", 400},
  };
  auto c = s.client();
  for (const auto& row : table) {
    INFO(row.what);
    httplib::Result res =
        row.method == "POST" ? c.Post(row.path.c_str(), auth(row.token), row.body, row.type.c_str())
        : row.method == "PUT" ? c.Put(row.path.c_str(), auth(row.token), row.body, row.type.c_str())
        : row.method == "GET" ? c.Get(row.path.c_str(), auth(row.token))
                              : c.Delete(row.path.c_str(), auth(row.token));
    REQUIRE(res);
    // Every answer has its server-side time, and no error names where the server keeps its data.
    CHECK(res->has_header("Server-Timing"));
    CHECK(res->body.find(t.path.string()) == std::string::npos);
    CHECK(res->body.find(db.string()) == std::string::npos);
    CHECK(res->status == row.status);
    json j = body_json(res);
    CHECK(j.is_object());
    CHECK(j.value("status", 0) == row.status);
    CHECK(j.contains("error"));
    if (j.contains("error"))
      CHECK(j["error"].is_string());
    CHECK(res->get_header_value("Content-Type").rfind("application/json", 0) == 0);
    CHECK(
        res->get_header_value("Access-Control-Allow-Origin").empty()); // no CORS unless configured
  }
  // Documents the store's keys would refuse, and keys that are not the body's: a 400 or 422
  // naming the value, before the store sees them.
  auto doc_of = [](std::vector<run> runs, const std::function<void(std::vector<run>&)>& spoil) {
    spoil(runs);
    return dump_json(accelbench::results_document(runs, json::array(), json::array()));
  };
  const run one = nightly_run("box-z", 2, "n", 0, 1e-3, g);
  struct post_row {
    std::string what, body, key;
    int status;
    std::string says;
  };
  const std::vector<post_row> posts = {
      {"a repeated sample index", doc_of({one}, [](auto& rs) { rs[0].samples[3].index = 1; }), "",
       400, "sample index 1 appears twice"},
      {"a repeated metric",
       doc_of({one}, [](auto& rs) { rs[0].metrics.push_back(rs[0].metrics[0]); }), "", 400,
       "metric 'time_s' appears twice"},
      {"one run twice", doc_of({one, one}, [](auto&) {}), "", 400, "repeats the uuid"},
      // The limits of a run (harness/core/limits.hpp), refused before the rest is read (samples
      // over theirs make a body over this server's --max-body-mib 1: test_json_export has them).
      {"a run with a tag over the limit",
       doc_of({one}, [](auto& rs) { rs[0].tags.assign(limits::k_max_tags + 1, "t"); }), "", 400,
       "10001 tags, more than the 10000 a run may hold"},
      {"a run with a metric over the limit",
       doc_of({one},
              [](auto& rs) {
                for (size_t i = rs[0].metrics.size(); i <= limits::k_max_metrics; ++i)
                  rs[0].add_metric("m" + std::to_string(i), 1, "", direction::higher_is_better);
              }),
       "", 400, "10001 metrics, more than the 10000 a run may hold"},
      {"a tag too long",
       doc_of({one}, [](auto& rs) { rs[0].tags.assign(1, std::string(300, 't')); }), "", 400,
       "is 300 bytes, longer than the 256 a tag may be"},
      {"an Idempotency-Key that is not publish's", doc_of({one}, [](auto&) {}), "my-own-key", 422,
       "'my-own-key' is not the key of the runs in the body"},
  };
  for (const auto& row : posts) {
    INFO(row.what);
    auto res = c.Post("/api/v1/runs", auth(w, row.key), row.body, "application/json");
    REQUIRE(res);
    CHECK(res->status == row.status);
    CHECK_THAT(body_json(res).value("error", ""), Catch::Contains(row.says));
  }
  CHECK(count_runs(db) == before);
  // Still one pool of healthy database connections: the refusals were not database errors.
  auto after = c.Get("/api/v1/runs", auth(r));
  REQUIRE(after);
  CHECK(after->status == 200);
  CHECK(s.stop() == 0);
  const std::string log = test_cli::slurp(s.log);
  CHECK(log.find(w.substr(6)) == std::string::npos);
  CHECK(log.find(r.substr(6)) == std::string::npos);
  CHECK(log.find("database error") == std::string::npos);
  CHECK(log.find("UNIQUE") == std::string::npos);
}

TEST_CASE("serve: a body is framed, bounded and refused before it is read",
          "[server][bad][timing]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  const std::string w = make_token(db, "write");
  // Not --quiet: the access log says how many bytes of each request the server read before it
  // answered, which is what is bounded here.
  live_server s(db, t.path / "server.log", "--max-body-mib 1");
  REQUIRE(s.start());
  std::this_thread::sleep_for(200ms);
  const double rss_before = peak_rss_mib(s.pid);
  auto head = [](const std::string& token, const std::string& extra) {
    return "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
           (token.empty() ? std::string() : "Authorization: Bearer " + token + "\r\n") + extra +
           "\r\n";
  };
  // The bytes the server read of the n-th (from 1) POST /api/v1/runs answered with `status`, from
  // its access log (written just after the answer): -1 when no such line came within 10 s.
  auto bytes_read = [&](int status, int nth) -> int64_t {
    const std::regex line(fmt::format(R"(POST /api/v1/runs {} read=(\d+) )", status));
    for (int i = 0; i < 1000; ++i) {
      const std::string log = test_cli::slurp(s.log);
      int seen = 0;
      for (auto it = std::sregex_iterator(log.begin(), log.end(), line);
           it != std::sregex_iterator(); ++it)
        if (++seen == nth)
          return std::stoll((*it)[1]);
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  };
  // An endless chunked body, sent until the answer can be read. What bounds it is the server's:
  // it answers before it reads the body (401) or as soon as the decoded body passes the limit
  // (413). What the client manages to send meanwhile is this machine's speed and its socket
  // buffers (and the server reads and drops more for its linger after answering): printed, never
  // bounded.
  struct endless_result {
    int status;
    bool answered_while_sending;
    size_t sent;
    std::string answer;
  };
  auto endless = [&](const std::string& token) {
    raw_socket c(s.port);
    REQUIRE(c.send_all(head(token, "Transfer-Encoding: chunked\r\n")));
    const std::string chunk = fmt::format("{:x}\r\n{}\r\n", 1 << 16, std::string(1 << 16, 'x'));
    const size_t most = size_t{256} << 20;
    size_t sent = 0;
    while (sent < most && !c.readable(0ms) && c.send_all(chunk, 10s))
      sent += chunk.size();
    const bool answered = c.readable(0ms);
    std::string answer = c.read_all(10s);
    return endless_result{status_of(answer), answered, sent, std::move(answer)};
  };
  const auto mib = [](int64_t n) { return (double)n / (1 << 20); };
  {
    auto r = endless("");
    INFO(r.answer.substr(0, 400));
    CHECK(r.answered_while_sending);
    CHECK(r.status == 401);
    // The head, and at most the one 16 KiB buffer of body bytes that came with it: the token is
    // refused before the body is read.
    const int64_t read = bytes_read(401, 1);
    CHECK(read > 0);
    CHECK(read < (int64_t{64} << 10));
    std::cerr << fmt::format("401 to an endless chunked POST: server read {} bytes before "
                             "answering; the client had sent {:.1f} MiB by then\n",
                             read, mib((int64_t)r.sent));
  }
  {
    auto r = endless(w);
    INFO(r.answer.substr(0, 400));
    CHECK(r.answered_while_sending);
    CHECK(r.status == 413);
    CHECK_THAT(r.answer, Catch::Contains("over the limit of 1 MiB"));
    // The limit is on the decoded body: the server read it up to 1 MiB (and the chunk framing,
    // and what one 16 KiB buffer held beyond it), then refused the chunk that passes the limit
    // before reading its data.
    const int64_t read = bytes_read(413, 1);
    CHECK(read >= (int64_t{1} << 20));
    CHECK(read < (int64_t{1} << 20) + (int64_t{64} << 10));
    std::cerr << fmt::format("413 to an endless chunked POST: server read {:.3f} MiB before "
                             "answering; the client had sent {:.1f} MiB by then\n",
                             mib(read), mib((int64_t)r.sent));
  }
  const double rss_after = peak_rss_mib(s.pid);
  std::cerr << fmt::format("chunked bodies: server peak memory (VmHWM) {:.1f} MiB before, {:.1f} "
                           "MiB after 2 endless chunked POSTs\n",
                           rss_before, rss_after);
  CHECK(rss_after - rss_before < 32);

  // A chunked body within the limit is stored, and a second request follows on the connection.
  std::mt19937_64 g(9);
  auto [doc, key] = document_of({nightly_run("box-c", 1, "n", 0, 1e-3, g)});
  {
    raw_socket c(s.port);
    std::string body;
    for (size_t at = 0; at < doc.size(); at += 1000)
      body += fmt::format("{:x};ext=1\r\n{}\r\n", std::min<size_t>(1000, doc.size() - at),
                          doc.substr(at, 1000));
    body += "0\r\nX-Trailer: 1\r\n\r\n";
    REQUIRE(c.send_all(head(w, "Transfer-Encoding: chunked\r\nIdempotency-Key: " + key + "\r\n") +
                       body +
                       "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    const std::string answer = c.read_all(10s);
    INFO(answer.substr(0, 600));
    CHECK(status_of(answer) == 201);
    CHECK_THAT(answer, Catch::Contains("\"status\": \"ok\""));
    CHECK(count_runs(db) == 1);
  }
  // Expect: 100-continue: a refusal comes instead of the go-ahead, and the go-ahead only after
  // the token was checked.
  {
    raw_socket c(s.port);
    REQUIRE(c.send_all(head("", "Content-Length: 100\r\nExpect: 100-continue\r\n")));
    const std::string answer = c.read_all(5s);
    CHECK(status_of(answer) == 401);
  }
  {
    auto [doc2, key2] = document_of({nightly_run("box-c", 2, "n", 0, 1e-3, g)});
    raw_socket c(s.port);
    REQUIRE(c.send_all(
        head(w, fmt::format("Content-Length: {}\r\nExpect: 100-continue\r\n", doc2.size()))));
    REQUIRE(c.readable(5s));
    char buf[64] = {};
    const ssize_t n = ::recv(c.fd, buf, sizeof buf - 1, 0);
    CHECK(std::string(buf, n > 0 ? (size_t)n : 0).rfind("HTTP/1.1 100 Continue", 0) == 0);
    REQUIRE(c.send_all(doc2));
    ::shutdown(c.fd, SHUT_WR);
    const std::string answer = c.read_all(10s);
    INFO(answer.substr(0, 600));
    CHECK(status_of(answer) == 201);
    CHECK(count_runs(db) == 2);
  }
  // Framing a server must not guess at: refused, nothing read.
  struct framing_row {
    std::string what, extra, body;
    int status;
  };
  const std::vector<framing_row> rows = {
      {"Content-Length and Transfer-Encoding",
       "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", 400},
      {"a transfer coding other than chunked", "Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n",
       501},
      {"a Content-Length that is not a number", "Content-Length: 5x\r\n", "hello", 400},
      {"two different Content-Lengths", "Content-Length: 5\r\nContent-Length: 6\r\n", "hello", 400},
      {"a body without a length", "", "", 411},
      {"a compressed body (it could inflate without bound)",
       "Content-Length: 5\r\nContent-Encoding: gzip\r\n", "hello", 415},
      {"a chunk size that is not hex", "Transfer-Encoding: chunked\r\n", "zz\r\nab\r\n0\r\n\r\n",
       400},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    raw_socket c(s.port);
    REQUIRE(c.send_all(head(w, row.extra) + row.body));
    const std::string answer = c.read_all(10s);
    INFO(answer.substr(0, 400));
    CHECK(status_of(answer) == row.status);
    CHECK_THAT(answer, Catch::Contains("Server-Timing: "));
  }
  // Headers without end: cut at 64 KiB.
  {
    raw_socket c(s.port);
    c.send_all("GET /api/v1/health HTTP/1.1\r\nX-Long: " + std::string(1 << 20, 'a'), 5s);
    const std::string answer = c.read_all(10s);
    CHECK((answer.empty() || status_of(answer) == 431));
  }
  CHECK(peak_rss_mib(s.pid) - rss_before < 32);
  CHECK(count_runs(db) == 2);
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: slow clients do not stop the server and health answers before a header timeout",
          "[server][slow][timing]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  const std::string r = make_token(db, "read");
  constexpr int k_threads = 2, k_slow = 4 * k_threads;
  live_server s(db, t.path / "server.log",
                fmt::format("--threads {} --header-timeout 3 --quiet", k_threads));
  REQUIRE(s.start());
  // Each slow client sends its request one byte a second, as a slowloris attack does.
  std::vector<std::unique_ptr<raw_socket>> slow;
  for (int i = 0; i < k_slow; ++i)
    slow.push_back(std::make_unique<raw_socket>(s.port));
  const std::string request = "GET /api/v1/runs HTTP/1.1\r\nHost: x\r\n\r\n";
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (size_t at = 0; at < request.size() && !done; ++at) {
      for (auto& c : slow)
        ::send(c->fd, request.data() + at, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      for (int i = 0; i < 10 && !done; ++i)
        std::this_thread::sleep_for(100ms);
    }
  });
  double worst = 0;
  int asked = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < 5s) {
    httplib::Client c("127.0.0.1", s.port);
    c.set_read_timeout(5, 0);
    const auto a = std::chrono::steady_clock::now();
    auto h = c.Get("/api/v1/health");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    worst = std::max(worst, ms);
    ++asked;
    CHECK(h);
    if (h)
      CHECK(h->status == 200);
    // Other requests are answered too: slow clients hold no request slot.
    auto runs = c.Get("/api/v1/runs", auth(r));
    CHECK(runs);
    std::this_thread::sleep_for(100ms);
  }
  std::cerr << fmt::format("slow clients: {} of them (--threads {}), worst health latency "
                           "{:.1f} ms over {} requests\n",
                           k_slow, k_threads, worst, asked);
  // What is bounded is the server's: a health check waits for no slow client. Had one of them held
  // the slot, the answer would wait for its header deadline, 3 s (--header-timeout 3); 2 s, two
  // thirds of that, tells the two apart with room for a slow or loaded machine (a health check
  // takes milliseconds: the figure printed above).
  CHECK(worst < 2000);
  // Past the header deadline (3 s) the server has ended every slow connection.
  for (auto& c : slow) {
    const std::string rest = c->read_all(5s);
    CHECK((rest.empty() || status_of(rest) == 408));
  }
  done = true;
  trickle.join();
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: one client address cannot take every connection", "[server][slow][timing]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  // A header deadline far past the wait below: the connections it admits stay open and silent.
  live_server s(db, t.path / "server.log",
                "--max-connections-per-client 4 --header-timeout 60 --quiet");
  REQUIRE(s.start());
  // Five connections from one address, saying nothing. The server admits each in a thread of its
  // own, so which of them is the one over the share of 4 is the threads' order: that one is
  // answered 503 and closed at once, the four others are held. The answer is the event waited
  // for, whichever connection it comes on.
  std::vector<std::unique_ptr<raw_socket>> conns;
  try {
    for (int i = 0; i < 5; ++i)
      conns.push_back(std::make_unique<raw_socket>(s.port, "127.0.0.2"));
  } catch (const std::runtime_error& e) {
    ACCELBENCH_SKIP("no second loopback address here: " << e.what());
  }
  int refused = -1;
  // A hang guard, below the header deadline: an answer comes in milliseconds.
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (refused < 0 && std::chrono::steady_clock::now() < give_up)
    for (int i = 0; i < 5 && refused < 0; ++i)
      if (conns[i]->readable(10ms))
        refused = i;
  REQUIRE(refused >= 0);
  const std::string answer = conns[refused]->read_all(10s);
  CHECK(status_of(answer) == 503);
  CHECK_THAT(answer, Catch::Contains("Retry-After: 1"));
  CHECK_THAT(answer, Catch::Contains("127.0.0.2 has 4 connections open"));
  // Only that one: the four others are still open and unanswered.
  for (int i = 0; i < 5; ++i)
    if (i != refused) {
      INFO("connection " << i);
      CHECK_FALSE(conns[i]->readable(0ms));
    }
  // Another client is served.
  auto h = s.client().Get("/api/v1/health");
  REQUIRE(h);
  CHECK(h->status == 200);
  conns.clear();
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: runs, one run, compare, history and report answer as the CLI does",
          "[server][api]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  std::mt19937_64 g(11);
  // 20 nights of 3 configs on one box; M=2 steps 20% slower from night 10 on.
  std::vector<run> runs = nightly_step("box-h", 20, 3, 10, 1.2e-3, g);
  {
    auto s = store::store::open(db);
    s.insert_runs(runs);
  }
  const std::string r = make_token(db, "read");
  live_server s(db, t.path / "server.log", "--cors-origin https://dash.example");
  REQUIRE(s.start());
  auto c = s.client();

  auto list = c.Get("/api/v1/runs?system=box-h&tag=nightly-03&samples=1", auth(r));
  REQUIRE(list);
  REQUIRE(list->status == 200);
  CHECK(list->get_header_value("Access-Control-Allow-Origin") == "https://dash.example");
  json lj = body_json(list);
  CHECK(lj["total"] == 3);
  REQUIRE(lj["runs"].size() == 3);
  CHECK(lj["runs"][0]["samples"].size() == 10);
  CHECK(body_json(c.Get("/api/v1/runs?workload=gemm&limit=5&offset=58", auth(r)))["runs"].size() ==
        2);
  CHECK(body_json(c.Get("/api/v1/runs?system=nobody", auth(r)))["total"] == 0);

  const int64_t id = lj["runs"][0]["id"].get<int64_t>();
  auto one = c.Get(fmt::format("/api/v1/runs/{}", id).c_str(), auth(r));
  REQUIRE(one);
  CHECK(one->status == 200);
  CHECK(body_json(one)["samples"].size() == 10);

  // The CLI's verdicts and exit code, as JSON.
  auto cmp = c.Get("/api/v1/compare?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-19", auth(r));
  REQUIRE(cmp);
  REQUIRE(cmp->status == 200);
  json cj = body_json(cmp);
  CHECK(cj["exit_code"] == 1);
  CHECK(cmp->get_header_value("Accelbench-Exit-Code") == "1");
  CHECK(cj["verdict_counts"]["regressed"] == 1);
  auto cli = test_cli::ab(fmt::format(
      "compare --db {} --baseline tag=nightly-00 --candidate tag=nightly-19 --format json",
      sh_word(db.string())));
  CHECK(cli.rc == 1);
  json cli_j = parse_json_lenient(cli.out);
  CHECK(cli_j["pairs"] == cj["comparison"]["pairs"]);

  auto hist = c.Get("/api/v1/history?workload=gemm&system=box-h", auth(r));
  REQUIRE(hist);
  REQUIRE(hist->status == 200);
  json hj = body_json(hist);
  CHECK(hj["series"].size() == 3);
  CHECK(hj["regression"] == true);
  size_t with_cp = 0;
  for (const auto& series : hj["series"])
    if (!series["change_points"].empty()) {
      ++with_cp;
      CHECK(series["config_key"].get<std::string>().find("M=2") != std::string::npos);
      CHECK(series["change_points"][0]["index"] == 10);
    }
  CHECK(with_cp == 1);
  {
    // The same series as history_series gives from every sample of every run (the server reads
    // only each run's median, stored when the run was: store::history_rows).
    auto st = store::store::open(db, store::access::read_only);
    store::run_filter f;
    f.workloads = {"gemm"};
    f.systems = {"box-h"};
    std::vector<store::history_row> whole;
    for (const auto& r : st.query(f))
      whole.push_back(query::history_row_of(r));
    CHECK(query::history_series(whole, query::history_options{}) == hj["series"]);
  }

  auto rep = c.Get("/api/v1/report?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-19", auth(r));
  REQUIRE(rep);
  CHECK(rep->status == 200);
  CHECK(body_json(rep).contains("pairs"));
  auto html = c.Get(
      "/api/v1/report?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-19&format=html", auth(r));
  REQUIRE(html);
  CHECK(html->status == 200);
  CHECK(html->get_header_value("Content-Type").rfind("text/html", 0) == 0);
  // Every report format of the table (harness/app/query/formats.hpp) is a ?format= with its media
  // type, and is what the CLI prints: text is report's summary.
  auto text = c.Get(
      "/api/v1/report?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-19&format=text", auth(r));
  REQUIRE(text);
  CHECK(text->status == 200);
  CHECK(text->get_header_value("Content-Type") == "text/plain; charset=utf-8");
  CHECK(text->body.find(body_json(rep)["headline"].get<std::string>()) != std::string::npos);
  auto pdf = c.Get("/api/v1/report?format=pdf", auth(r));
  REQUIRE(pdf);
  CHECK(pdf->status == 400);
  CHECK(pdf->body.find("format='pdf' is not one of json, html, text") != std::string::npos);
  // Health is open, and says how many runs there are only to a reader.
  auto health = c.Get("/api/v1/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(health->has_header("Server-Timing"));
  CHECK(body_json(health) == json{{"status", "ok"},
                                  {"database", "ok"},
                                  {"schema_version", body_json(health)["schema_version"]}});
  CHECK(body_json(c.Get("/api/v1/health", auth(r)))["runs"] == 60);
  // The dashboard's report of nothing is an empty report page, not a JSON error.
  auto empty = c.Get("/report?baseline=nobody&candidate=nobody-either", auth(r));
  REQUIRE(empty);
  CHECK(empty->status == 200);
  CHECK(empty->get_header_value("Content-Type").rfind("text/html", 0) == 0);
  CHECK(empty->body.find("<script") == std::string::npos);
  CHECK(empty->get_header_value("Content-Security-Policy") == server::k_dashboard_csp);
  // A JSON media type with a charset parameter is JSON.
  std::mt19937_64 g2(12);
  auto [doc, key] = document_of({nightly_run("box-j", 1, "n", 0, 1e-3, g2)});
  const std::string w = make_token(db, "write");
  auto typed = c.Post("/api/v1/runs", auth(w, key), doc, "Application/JSON; charset=UTF-8");
  REQUIRE(typed);
  CHECK(typed->status == 201);
  auto pre = c.Options("/api/v1/runs");
  REQUIRE(pre);
  CHECK(pre->status == 204);
  CHECK(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization") !=
        std::string::npos);
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: compare answers in every format of compare's table as the CLI writes it",
          "[server][api]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  std::mt19937_64 g(21);
  // Two nights of 3 configs; M=2 is 20% slower on the second.
  std::vector<run> runs = nightly_step("box-f", 2, 3, 1, 1.2e-3, g);
  {
    auto s = store::store::open(db);
    s.insert_runs(runs);
  }
  const std::string r = make_token(db, "read");
  live_server s(db, t.path / "server.log");
  REQUIRE(s.start());
  auto c = s.client();
  const std::string query = "/api/v1/compare?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-01";
  auto cli = [&db](const std::string& format) {
    return test_cli::ab(fmt::format(
        "compare --db {} --baseline tag=nightly-00 --candidate tag=nightly-01 --format {}",
        sh_word(db.string()), format));
  };
  struct expect {
    const char* format;
    const char* media_type;
    const char* line; // a line of the body
  };
  for (const auto& e :
       {expect{"markdown", "text/markdown; charset=utf-8",
               "| verdict | config | baseline | candidate | change |"},
        expect{"junit", "application/xml", "<failure type=\"regression\" message=\"regressed: "},
        expect{"csv", "text/csv; charset=utf-8",
               "name,workload,backend,ruleset,unit,direction,verdict,"}}) {
    INFO(e.format);
    auto res = c.Get((query + "&format=" + e.format).c_str(), auth(r));
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Type") == e.media_type);
    CHECK(res->get_header_value("Accelbench-Exit-Code") == "1");
    CHECK_THAT(res->body, Catch::Contains(e.line));
    const auto written = cli(e.format);
    CHECK(written.rc == 1);
    CHECK(res->body == written.out);
  }
  // Without format=, the JSON answer with the exit code, as before.
  auto plain = c.Get(query.c_str(), auth(r));
  REQUIRE(plain);
  CHECK(plain->status == 200);
  CHECK(plain->get_header_value("Content-Type") == "application/json");
  CHECK(body_json(plain)["verdict_counts"]["regressed"] == 1);
  // An unknown name: 400, a JSON error naming it and the table's names.
  auto nope = c.Get((query + "&format=nope").c_str(), auth(r));
  REQUIRE(nope);
  CHECK(nope->status == 400);
  CHECK(nope->get_header_value("Content-Type") == "application/json");
  CHECK_THAT(body_json(nope)["error"].get<std::string>(),
             Catch::Equals("query parameter format='nope' is not one of table, markdown, junit, "
                           "json, bmf, csv"));
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: compare with only_changed=1 answers as compare --only-changed in every format",
          "[server][api]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  std::mt19937_64 g(23);
  // Two nights of 3 configs; M=2 is twice as slow on the second (far beyond what one run a side
  // can see), M=1 and M=3 are not shown.
  std::vector<run> runs = nightly_step("box-o", 2, 3, 1, 2e-3, g);
  {
    auto s = store::store::open(db);
    s.insert_runs(runs);
  }
  const std::string r = make_token(db, "read");
  live_server s(db, t.path / "server.log");
  REQUIRE(s.start());
  auto c = s.client();
  const std::string query = "/api/v1/compare?baseline=tag%3Dnightly-00&candidate=tag%3Dnightly-01";
  for (const char* format : {"table", "markdown", "junit", "json", "bmf", "csv"}) {
    INFO(format);
    auto res = c.Get((query + "&only_changed=1&format=" + format).c_str(), auth(r));
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Accelbench-Exit-Code") == "1");
    const auto written = test_cli::ab(fmt::format("compare --db {} --baseline tag=nightly-00 "
                                                  "--candidate tag=nightly-01 --only-changed "
                                                  "--format {}",
                                                  sh_word(db.string()), format));
    CHECK(written.rc == 1);
    CHECK(res->body == written.out);
  }
  // The table leaves the unchanged configs out, and says so, as the CLI's does.
  auto table = c.Get((query + "&only_changed=true&format=table").c_str(), auth(r));
  REQUIRE(table);
  CHECK_THAT(table->body, Catch::Contains("config(s) not shown (--only-changed)"));
  CHECK_THAT(table->body, !Catch::Contains("M=1,"));
  // Without format=, the JSON answer says it.
  auto plain = c.Get((query + "&only_changed=1").c_str(), auth(r));
  REQUIRE(plain);
  CHECK(plain->status == 200);
  CHECK(body_json(plain)["comparison"]["only_changed"] == true);
  // A value that is not 0, 1, true or false: 400 naming it, as strict's.
  auto bad = c.Get((query + "&only_changed=yes").c_str(), auth(r));
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK_THAT(body_json(bad)["error"].get<std::string>(),
             Catch::Equals("query parameter only_changed='yes' is not 0, 1, true or false"));
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: history answers in every format of history's table as the CLI writes it",
          "[server][api]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  std::mt19937_64 g(29);
  // 12 nights of 2 configs on one box; M=2 steps 20% slower from night 6 on. Another box's runs
  // stay out of the selection.
  std::vector<run> runs = nightly_step("box-y", 12, 2, 6, 1.2e-3, g);
  runs.push_back(nightly_run("box-other", 1, "nightly-00", 0, 1e-3, g));
  {
    auto s = store::store::open(db);
    s.insert_runs(runs);
  }
  const std::string r = make_token(db, "read");
  live_server s(db, t.path / "server.log");
  REQUIRE(s.start());
  auto c = s.client();
  const std::string query = "/api/v1/history?workload=gemm&system=box-y";
  auto cli = [&db](const std::string& options) {
    return test_cli::ab(
        fmt::format("history gemm --db {} --system box-y {}", sh_word(db.string()), options));
  };
  struct expect {
    const char* format;
    const char* media_type;
    const char* line; // a line of the body
  };
  for (const auto& e :
       {expect{"table", "text/plain; charset=utf-8", "system  config"},
        expect{"json", "application/json", "\"change_points\": ["},
        expect{"csv", "text/csv; charset=utf-8",
               "system,config,ruleset,unit,direction,run_id,started_at,value,change,"}}) {
    INFO(e.format);
    auto res = c.Get((query + "&format=" + e.format).c_str(), auth(r));
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Type") == e.media_type);
    CHECK_THAT(res->body, Catch::Contains(e.line));
    const auto written = cli(std::string("--format ") + e.format);
    CHECK(written.rc == 0);
    CHECK(res->body == written.out);
  }
  // The series are judged with the parameters given: 12 nights are too few for min_segment=7.
  auto few = c.Get((query + "&format=table&min_segment=7").c_str(), auth(r));
  REQUIRE(few);
  CHECK(few->status == 200);
  CHECK_THAT(few->body, Catch::Contains("too few points (12 < 14)"));
  CHECK(few->body == cli("--format table --min-segment 7").out);
  // Without format=, the JSON answer with the runs and whether one regressed, as before.
  auto plain = c.Get(query.c_str(), auth(r));
  REQUIRE(plain);
  CHECK(plain->status == 200);
  CHECK(plain->get_header_value("Content-Type") == "application/json");
  json pj = body_json(plain);
  CHECK(pj["runs"] == 24);
  CHECK(pj["regression"] == true);
  CHECK(pj["series"] == json::parse(cli("--format json").out)["series"]);
  // An unknown name: 400, a JSON error naming it and the table's names.
  auto nope = c.Get((query + "&format=nope").c_str(), auth(r));
  REQUIRE(nope);
  CHECK(nope->status == 400);
  CHECK(nope->get_header_value("Content-Type") == "application/json");
  CHECK_THAT(body_json(nope)["error"].get<std::string>(),
             Catch::Equals("query parameter format='nope' is not one of table, json, csv"));
  CHECK(s.stop() == 0);
}

TEST_CASE("serve: HTTPS with a certificate and key", "[server][tls]") {
  test_cli::temp_dir t;
  const fs::path cert = t.path / "cert.pem", key = t.path / "key.pem";
  const std::string gen = fmt::format("openssl req -x509 -newkey rsa:2048 -nodes -subj "
                                      "/CN=127.0.0.1 -days 1 -keyout {} -out {} >/dev/null 2>&1",
                                      key.string(), cert.string());
  if (std::system(gen.c_str()) != 0)
    ACCELBENCH_SKIP("the openssl command could not make a test certificate");
  SERVER_DB(db, t.path);
  live_server s(db, t.path / "server.log",
                fmt::format("--public-read --cert {} --key {}", cert.string(), key.string()));
  REQUIRE(s.start());
  CHECK(test_cli::slurp(s.log).find("serving https://") != std::string::npos);
  httplib::SSLClient c("127.0.0.1", s.port);
  c.enable_server_certificate_verification(false);
  auto h = c.Get("/api/v1/health");
  REQUIRE(h);
  CHECK(h->status == 200);
  CHECK(s.stop() == 0);
  // Half a pair, or files that are not a certificate: exit 2 before anything listens.
  auto half = test_cli::ab(fmt::format("serve --db {} --listen 127.0.0.1:0 --cert {}",
                                       sh_word(db.string()), cert.string()));
  CHECK(half.rc == 2);
  auto wrong = test_cli::ab(fmt::format("serve --db {} --listen 127.0.0.1:0 --cert {} --key {}",
                                        sh_word(db.string()), key.string(), key.string()));
  CHECK(wrong.rc == 2);
  CHECK(wrong.err.find("cannot use certificate") != std::string::npos);
}
