// accelbench serve over HTTP: publish stores once, retries and duplicated POSTs are
// idempotent, 16 concurrent publishers lose and duplicate nothing, a server killed with -9 in the
// middle of a publish and restarted loses and duplicates nothing, bad requests get a 4xx with a
// JSON error and change nothing, and the GET endpoints answer as the CLI does.
#include <catch2/catch.hpp>

#include <set>

#include "harness/cli/compare_commands.hpp"
#include "harness/core/results_document.hpp"
#include "harness/net/publish.hpp"
#include "harness/server/dashboard.hpp"
#include "harness/server/server.hpp"
#include "harness/server/tokens.hpp"
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

TEST_CASE("serve: 16 concurrent publishers, every run stored exactly once", "[server][load]") {
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
    "[server][fault]") {
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
  // Kill it once some runs, not all, are stored.
  int64_t seen = 0;
  for (int i = 0; i < 3000 && seen < 10; ++i) {
    std::this_thread::sleep_for(5ms);
    seen = count_runs(db);
  }
  REQUIRE(seen >= 10);
  s.kill9();
  const int64_t at_kill = count_runs(db);
  CHECK(at_kill < k_runs);
  std::this_thread::sleep_for(300ms);
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

TEST_CASE("serve: bad requests get a 4xx with a JSON error and change nothing", "[server][bad]") {
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
        : row.method == "GET" ? c.Get(row.path.c_str(), auth(row.token))
                              : c.Delete(row.path.c_str(), auth(row.token));
    REQUIRE(res);
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
  CHECK(count_runs(db) == before);
  CHECK(s.stop() == 0);
  const std::string log = test_cli::slurp(s.log);
  CHECK(log.find(w.substr(6)) == std::string::npos);
  CHECK(log.find(r.substr(6)) == std::string::npos);
}

TEST_CASE("serve: runs, one run, compare, history and report answer as the CLI does",
          "[server][api]") {
  test_cli::temp_dir t;
  SERVER_DB(db, t.path);
  std::vector<run> runs;
  std::mt19937_64 g(11);
  // 20 nights of 3 configs on one box; M=2 steps 20% slower from night 10 on.
  for (int night = 0; night < 20; ++night)
    for (int m = 1; m <= 3; ++m)
      runs.push_back(nightly_run("box-h", m, fmt::format("nightly-{:02d}", night), night,
                                 (m == 2 && night >= 10 ? 1.2e-3 : 1e-3), g));
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
    // only the one or two middle samples of each run: median_samples_only).
    auto st = store::store::open(db, store::access::read_only);
    store::run_filter f;
    f.workloads = {"gemm"};
    f.systems = {"box-h"};
    cli::history_cli_options o;
    o.workload = "gemm";
    CHECK(cli::history_series(st.query(f), o) == hj["series"]);
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
  auto health = c.Get("/api/v1/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(body_json(health)["runs"] == 60);
  auto pre = c.Options("/api/v1/runs");
  REQUIRE(pre);
  CHECK(pre->status == 204);
  CHECK(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization") !=
        std::string::npos);
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
