// accelbench serve on PostgreSQL: test_server's publish, idempotency, load, bad-request
// and CLI-equivalence cases run again here with the server's database on a real PostgreSQL 15
// server this program starts (tests/support/pg_server, one server for the program, a fresh schema
// per case), plus the fault only a database server has: PostgreSQL stopped in the middle of a
// publish. The server answers 503 with Retry-After while it is down, the publishers' retries
// complete once it is back, and every run is stored exactly once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "harness/app/net/publish.hpp"
#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"
#include "server_helpers.hpp"
#include "tests/support/pg_server.hpp"
#include "tests/support/skip.hpp"

namespace server_test {
fs::path server_db(const fs::path&) {
  static std::atomic<int> n{0};
  return accelbench::testing::shared_pg_server().create_schema("serve_cases",
                                                               "s" + std::to_string(n++));
}
std::string server_db_unavailable() { return accelbench::testing::pg_unavailable(); }
} // namespace server_test

using namespace server_test;

namespace {

// One POST of a fresh run while the database is down: the answer a client sees.
httplib::Result post_while_down(const live_server& s, const std::string& token, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<run> one = {nightly_run("box-down", 1, "nightly-down", 0, 1e-3, g)};
  const std::string doc =
      dump_json(accelbench::results_document(one, json::array(), json::array()));
  httplib::Headers h = {{"Authorization", "Bearer " + token},
                        {"Idempotency-Key", net::idempotency_key_for({one[0].uuid})}};
  return s.client().Post("/api/v1/runs", h, doc, "application/json");
}

int64_t count_while_up(const fs::path& db) {
  try {
    return count_runs(db);
  } catch (const storage_error&) {
    return -1;
  }
}

} // namespace

TEST_CASE("serve: PostgreSQL restarted in the middle of a publish, nothing lost or duplicated",
          "[server][fault][dbrestart][timing]") {
  SERVER_DB(db, fs::path());
  auto& pg = accelbench::testing::shared_pg_server();
  test_cli::temp_dir t;
  constexpr int k_publishers = 4, k_runs = 40;
  std::set<std::string> all;
  for (int i = 0; i < k_publishers; ++i)
    for (const auto& u : fill_source(t.path / fmt::format("src{}.db", i), fmt::format("box-r{}", i),
                                     k_runs, 300 + i))
      all.insert(u);
  const std::string w = make_token(db, "write");
  live_server s(db, t.path / "server.log");
  REQUIRE(s.start());
  std::vector<pid_t> pids;
  for (int i = 0; i < k_publishers; ++i) {
    test_cli::spawn_options o;
    o.err = t.path / fmt::format("p{}.err", i);
    pids.push_back(test_cli::spawn_sh(
        fmt::format("ACCELBENCH_TOKEN={} exec {} publish --url {} --db {} --retries 60", w, k_exe,
                    s.url("/api/v1/runs"), sh_word((t.path / fmt::format("src{}.db", i)).string())),
        o));
  }
  // Stop the database once some runs, not all, are stored, with the server stopped (SIGSTOP)
  // while they are counted and while PostgreSQL stops: nothing is stored between the count and
  // the outage (but one COMMIT per request in flight that PostgreSQL may still finish), however
  // fast this machine publishes. A publisher with two runs or more not stored then must send one
  // while the database is down.
  const auto counted = [&] { return count_while_up(db); };
  const int64_t seen = pause_at(s, counted, 10);
  REQUIRE(seen >= 10);
  std::map<std::string, int> stored_of;
  {
    store::run_filter f;
    f.with_samples = false;
    for (const auto& r : store::store::open(db, store::access::read_only).query(f))
      ++stored_of[r.system];
  }
  std::vector<int> behind;
  for (int i = 0; i < k_publishers; ++i)
    if (k_runs - stored_of[fmt::format("box-r{}", i)] >= 2)
      behind.push_back(i);
  REQUIRE_FALSE(behind.empty());
  pg.stop();
  // Up again on every way out, for the cases that follow on the same server.
  struct restart_guard {
    accelbench::testing::pg_server& pg;
    bool down = true;
    ~restart_guard() {
      if (down)
        try {
          pg.start();
        } catch (const std::exception&) {
        }
    }
  } up_again{pg};
  s.resume();
  // While it is down: 503 with Retry-After and a JSON error, for writes and for the health check.
  auto down = post_while_down(s, w, 1);
  REQUIRE(down);
  CHECK(down->status == 503);
  CHECK(down->get_header_value("Retry-After") == "1");
  CHECK(body_json(down).value("status", 0) == 503);
  auto health = s.client().Get("/api/v1/health");
  REQUIRE(health);
  CHECK(health->status == 503);
  // Every publisher behind has met the outage (its log says so: an event, not a sleep) before the
  // database comes back. The limit is a hang guard: a 503 comes within a retry or two.
  auto met_outage = [&](int i) {
    return test_cli::slurp(t.path / fmt::format("p{}.err", i)).find("HTTP 503") !=
           std::string::npos;
  };
  const auto give_up = std::chrono::steady_clock::now() + 120s;
  while (!std::all_of(behind.begin(), behind.end(), met_outage) &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  for (int i : behind) {
    INFO("publisher " << i << " had " << k_runs - stored_of[fmt::format("box-r{}", i)]
                      << " runs to publish");
    CHECK(met_outage(i));
  }
  pg.start();
  up_again.down = false;
  int retried = 0;
  for (int i = 0; i < k_publishers; ++i) {
    auto e = test_cli::wait_for(pids[i], 180s);
    const std::string err = test_cli::slurp(t.path / fmt::format("p{}.err", i));
    INFO("publisher " << i << ": " << err);
    CHECK(e.rc == 0);
    retried += err.find("HTTP 503") != std::string::npos;
  }
  // Those that had runs left when the database went away retried them.
  CHECK(retried >= (int)behind.size());
  // The server reconnected by itself: healthy again, and every run is there exactly once.
  auto back = s.client().Get("/api/v1/health");
  REQUIRE(back);
  CHECK(back->status == 200);
  CHECK(s.stop() == 0);
  const std::string log = test_cli::slurp(s.log);
  CHECK(log.find("database error") != std::string::npos); // the outage was seen, and logged
  CHECK(log.find(w.substr(6)) == std::string::npos);
  auto st = store::store::open(db, store::access::read_only);
  store::run_filter f;
  f.with_samples = true;
  auto runs = st.query(f);
  CHECK(runs.size() == all.size());
  std::set<std::string> stored;
  for (const auto& r : runs) {
    stored.insert(r.uuid);
    CHECK(r.samples.size() == 10); // no half-stored run
  }
  CHECK(stored == all);
}
