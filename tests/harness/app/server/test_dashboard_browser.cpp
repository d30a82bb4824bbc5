// The dashboard in a real browser: headless Chromium loads each page of a real `accelbench serve`
// (--public-read) over a database with hostile system names and tags, with every host other than
// the server unresolvable. Each page renders (its data attributes are in the DOM), logs no console
// error or policy violation, asks the server for nothing but its own pages, links only within the
// server, and shows the hostile names as text (no element made of them). Without Chromium the test
// is skipped with a warning.
#include <catch2/catch.hpp>

#include <future>
#include <regex>
#include <set>

#include "harness/app/server/dashboard.hpp"
#include "server_helpers.hpp"
#include "tests/support/skip.hpp"

using namespace server_test;

namespace {

const char* k_chromium = "/usr/bin/chromium";
const std::string k_hostile_system = "<img src=x onerror=alert(1)>\"box'";
const std::string k_hostile_tag = "nightly-</style><script>alert(2)</script>";

struct page_result {
  int rc = -1;
  std::string dom, log;
};

page_result load(const std::string& url, const test_cli::temp_dir& t, const std::string& name) {
  const fs::path out = t.path / (name + ".html"), err = t.path / (name + ".err");
  // Only the server resolves: anything else a page asked for would fail and be logged. The time
  // limit is a hang guard: a browser loads a page in seconds, but five start at once on as few as
  // 2 cores (and beside a sanitizer build's tests).
  const std::string cmd = fmt::format(
      "timeout 180 {} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--disable-extensions "
      "--disable-default-apps --enable-logging=stderr --v=0 "
      "--host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' --user-data-dir={} "
      "--virtual-time-budget=3000 --dump-dom '{}' >{} 2>{} </dev/null",
      k_chromium, (t.path / ("profile-" + name)).string(), url, out.string(), err.string());
  const int st = std::system(cmd.c_str());
  page_result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.dom = test_cli::slurp(out);
  r.log = test_cli::slurp(err);
  return r;
}

void fill(const fs::path& db_path) {
  auto db = store::store::open(db_path);
  store::system_record h100{"h100-node-01", "NVIDIA H100-SXM5-80GB", 8, 1};
  store::system_record evil{k_hostile_system, "NVIDIA B200-SXM-180GB", 8, 1};
  db.upsert_system(h100);
  db.upsert_system(evil);
  std::mt19937_64 g(5);
  std::vector<run> runs;
  for (int night = 0; night < 14; ++night)
    for (int m = 1; m <= 2; ++m) {
      const std::string tag =
          night == 13 ? k_hostile_tag : fmt::format("nightly-2026-11-{:02d}", night + 1);
      runs.push_back(
          nightly_run("h100-node-01", m, tag, night, m == 1 && night >= 7 ? 1.3e-3 : 1e-3, g));
      runs.push_back(nightly_run(k_hostile_system, m, tag, night, 0.5e-3, g));
    }
  db.insert_runs(runs);
}

} // namespace

TEST_CASE("dashboard: pages link only within the server and escape stored names",
          "[server][dashboard]") {
  test_cli::temp_dir t;
  const fs::path db = t.path / "srv.db";
  fill(db);
  live_server s(db, t.path / "server.log", "--public-read");
  REQUIRE(s.start());
  auto c = s.client();
  const std::regex attr(R"re((src|href|xlink:href|action)\s*=\s*"([^"]*)")re", std::regex::icase);
  for (const std::string path :
       {"/", "/history", "/compare", "/report", "/?system=h100-node-01&since=2025-01-01"}) {
    INFO(path);
    auto res = c.Get(path.c_str());
    REQUIRE(res);
    REQUIRE(res->status == 200);
    CHECK(res->get_header_value("Content-Security-Policy") == server::k_dashboard_csp);
    const std::string& html = res->body;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), attr);
         it != std::sregex_iterator(); ++it) {
      const std::string v = (*it)[2];
      INFO((*it)[0].str());
      // The report cites its sources (datasheets) with links and has links within itself; no
      // page loads anything from elsewhere.
      const bool citation = path == "/report" && (*it)[1] == "href" &&
                            (v.rfind("#", 0) == 0 || v.rfind("https://", 0) == 0);
      CHECK(((v.rfind("/", 0) == 0 && v.rfind("//", 0) != 0) || citation));
    }
    CHECK(html.find("<img src=x") == std::string::npos);
    CHECK(html.find("<script>alert") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos); // no script at all
  }
  auto bad = c.Get("/history?colour=red");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(s.stop() == 0);
}

TEST_CASE("dashboard: renders in headless Chromium without console errors or outside requests",
          "[server][dashboard][browser][timing]") {
  if (!fs::exists(k_chromium))
    ACCELBENCH_SKIP(
        k_chromium
        << " not found (scripts/install-deps.sh --test installs the 'chromium' package)");
  test_cli::temp_dir t;
  const fs::path db = t.path / "srv.db";
  fill(db);
  live_server s(db, t.path / "server.log", "--public-read");
  REQUIRE(s.start());
  struct expect {
    std::string path, marker;
  };
  const std::vector<expect> pages = {
      {"/", "data-systems=\"2\""},
      {"/history?workload=gemm&system=h100-node-01", "data-change-points=\"1\""},
      {"/compare", "data-pairs=\"2\""},
      // The H100-vs-Blackwell report over the whole store: its defaults.
      {"/report", "<h1>accelbench report</h1>"},
      // Every filter at once: one system's two runs of one night.
      {"/?system=h100-node-01&accelerator=H100&workload=gemm&tag=nightly-2026-11-03&since=2025-01-"
       "01",
       "data-runs=\"2\" data-systems=\"1\""},
  };
  // One browser per page, all at once: a browser's start-up is most of its time.
  std::vector<std::future<page_result>> loads;
  for (size_t i = 0; i < pages.size(); ++i)
    loads.push_back(std::async(std::launch::async, [&, i] {
      return load(s.url(pages[i].path), t, fmt::format("page{}", i));
    }));
  for (size_t i = 0; i < pages.size(); ++i) {
    const auto& p = pages[i];
    auto r = loads[i].get();
    INFO(p.path);
    INFO("chromium exit " << r.rc << "\nstderr: " << r.log.substr(0, 3000));
    REQUIRE(r.rc == 0);
    CHECK(r.dom.find(p.marker) != std::string::npos);
    CHECK(r.log.find("Refused to") == std::string::npos);
    CHECK(r.log.find("Uncaught") == std::string::npos);
    CHECK(r.log.find("ERR_NAME_NOT_RESOLVED") == std::string::npos);
    // The hostile names are text: no element was made of them.
    CHECK(r.dom.find("<img src=\"x\"") == std::string::npos);
    CHECK(r.dom.find("<script>alert") == std::string::npos);
    if (p.path == "/")
      CHECK(r.dom.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    if (p.path.rfind("/history", 0) == 0)
      CHECK(r.dom.find("class=\"cp\"") != std::string::npos);
  }
  CHECK(s.stop() == 0);
  // Everything the browser asked for was one of the server's own pages (or its favicon).
  const std::regex line(R"(accelbench: (GET|POST|HEAD|OPTIONS) (\S+) )");
  const std::string log = test_cli::slurp(s.log);
  std::set<std::string> asked;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it)
    asked.insert((*it)[2]);
  CHECK(asked.size() >= 4);
  for (const auto& a : asked) {
    INFO(a);
    CHECK(
        (a == "/" || a == "/history" || a == "/compare" || a == "/report" || a == "/favicon.ico"));
  }
}

// ---------------------------------------------------------------------------------------------
// What the pages say, read from their HTML (page_fleet and page_history over a database of their
// own): a newcomer's two default GEMM jobs, 2% apart, and a published figure of one night.

namespace {

// A default GEMM job's run as `run` stores it: metrics read back by name, so "cv" (no unit) first.
run default_job(int night, double tflops, std::mt19937_64& g) {
  run r =
      nightly_run("laptop", 1024, fmt::format("job-{}", night), night, 1e-3 * 0.0665 / tflops, g);
  r.metrics.clear();
  r.add_metric("cv", 0.0249, "", direction::lower_is_better);
  r.add_metric("tflops", tflops, "TFLOP/s", direction::higher_is_better);
  r.add_metric("time", 1e-3 * 0.0665 / tflops, "s", direction::lower_is_better);
  return r;
}

std::vector<double> circle_ys(const std::string& html) {
  std::vector<double> ys;
  const std::regex circle(R"re(<circle cx="[0-9.]+" cy="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), circle);
       it != std::sregex_iterator(); ++it)
    ys.push_back(std::stod((*it)[1]));
  return ys;
}

} // namespace

TEST_CASE("dashboard: the fleet's latest runs show every result with its unit",
          "[server][dashboard]") {
  test_cli::temp_dir t;
  auto db = store::store::open(t.path / "srv.db");
  std::mt19937_64 g(3);
  std::vector<run> runs = {default_job(0, 0.0665, g), default_job(1, 0.0652, g)};
  db.insert_runs(runs);
  const std::string html = server::page_fleet(db, {});
  const auto at = html.find("<h2>Latest runs</h2>");
  REQUIRE(at != std::string::npos);
  const std::string latest = html.substr(at);
  INFO(latest);
  // The throughput, scaled to its unit, never the bare cv that the store reads back first.
  CHECK(latest.find(">66.5 GFLOP/s</td>") != std::string::npos);
  CHECK(latest.find(">65.2 GFLOP/s</td>") != std::string::npos);
  CHECK(latest.find(">0.0249</td>") == std::string::npos);
  CHECK(latest.find(">0.0665</td>") == std::string::npos);
  // Every metric in the cell's tooltip, each with its unit or its name.
  CHECK(latest.find("cv 0.0249; tflops 66.5 GFLOP/s; time 1.00 ms") != std::string::npos);
}

TEST_CASE("dashboard: history charts do not magnify noise, have ticks with units, and draw a "
          "lone night",
          "[server][dashboard]") {
  test_cli::temp_dir t;
  auto db = store::store::open(t.path / "srv.db");
  std::mt19937_64 g(4);
  std::vector<run> runs = {default_job(0, 0.0665, g), default_job(1, 0.0652, g)};
  run lone = nightly_run("published-box", 7, "published", 2, 2.5e-3, g, 1);
  lone.samples[0].value = 2.5e-3;
  runs.push_back(lone);
  db.insert_runs(runs);

  const std::string two = server::page_history(db, {{"system", "laptop"}});
  const auto ys = circle_ys(two);
  REQUIRE(ys.size() == 2);
  // Scaled from its minimum to its maximum, the plot's 186 px would lie between the two nights.
  CHECK(std::fabs(ys[0] - ys[1]) > 0);
  CHECK(std::fabs(ys[0] - ys[1]) < 0.25 * 186);
  // Round ticks with units, more than the two ends.
  size_t ticks = 0;
  for (size_t at = two.find("class=\"tl tick\""); at != std::string::npos;
       at = two.find("class=\"tl tick\"", at + 1))
    ++ticks;
  CHECK(ticks >= 4);
  CHECK(ticks <= 6);
  CHECK(std::regex_search(two, std::regex(R"(class="tl tick"[^>]*>[0-9.]+ (ms|us)<)")));
  CHECK(two.find("class=\"cp\"") == std::string::npos); // two nights: no change point

  const std::string one = server::page_history(db, {{"system", "published-box"}});
  REQUIRE(circle_ys(one).size() == 1);
  CHECK(one.find("class=\"tl pv\">2.50 ms</text>") != std::string::npos);
}
