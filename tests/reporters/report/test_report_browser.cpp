// The HTML report in a real browser: headless Chromium loads the page with the network disabled
// by the page's own Content-Security-Policy, runs its script, and dumps the DOM; the test checks
// that the script ran (data-js-ok), that no script error was caught (#js-errors stays empty), and
// saves a screenshot into the build folder. Without Chromium the test is skipped with a warning.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <regex>

#include "report_test_helpers.hpp"
#include "reporters/report/history_html.hpp"
#include "tests/support/skip.hpp"

using namespace accelbench;
using namespace report_test;

namespace {

const char* k_chromium = "/usr/bin/chromium";

struct proc_result {
  int rc = -1;
  std::string out, err;
};

proc_result run_chromium(const std::string& args, const temp_dir& t) {
  const fs::path out = t.path / "stdout.txt", err = t.path / "stderr.txt";
  // A fresh profile, no GPU, no background traffic; `timeout` bounds a hung browser.
  const std::string cmd = fmt::format(
      "timeout 180 {} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--disable-extensions "
      "--disable-default-apps --user-data-dir={} {} >{} 2>{} </dev/null",
      k_chromium, (t.path / "profile").string(), args, out.string(), err.string());
  int st = std::system(cmd.c_str());
  proc_result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

} // namespace

TEST_CASE("report html: no external references in src or href attributes", "[report][html]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db);
  import_mlperf(db);
  auto rep = report::build_report(side_of(query::select_runs(db, "accelerator=H100")),
                                  side_of(query::select_runs(db, "accelerator=Blackwell")),
                                  fixed_options());
  const std::string html = report::to_html(rep);
  std::regex attr(R"re((src|href|xlink:href|action)\s*=\s*"([^"]*)")re", std::regex::icase);
  size_t n = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attr); it != std::sregex_iterator();
       ++it) {
    const std::string v = (*it)[2];
    INFO((*it)[0].str());
    // Nothing is loaded from elsewhere: src and action are in-page; an href is an in-page anchor
    // or a source cited as a link (followed only when clicked, never fetched by the page).
    const bool anchor = v.rfind("#", 0) == 0;
    const auto at = static_cast<size_t>(it->position());
    const bool cited = (*it)[1] == "href" &&
                       (v.rfind("https://", 0) == 0 || v.rfind("http://", 0) == 0) &&
                       html.rfind("<a ", at) + 3 == at;
    CHECK((anchor || cited));
    ++n;
  }
  CHECK(n > 0);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("report html: renders in headless Chromium without script errors",
          "[report][html][browser][timing]") {
  if (!fs::exists(k_chromium))
    ACCELBENCH_SKIP(
        k_chromium
        << " not found (scripts/install-deps.sh --test installs the 'chromium' package)");
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  fill_synthetic(db, "h100-box", "<script>alert(1)</script> b200 \"box\"");
  import_mlperf(db);
  // Baseline: H100 systems; candidate: everything Blackwell ("B200" is also in "GB200").
  auto b = query::select_runs(db, "accelerator=H100");
  auto c = query::select_runs(db, "accelerator=B200");
  auto rep = report::build_report(side_of(b), side_of(c), fixed_options());
  REQUIRE(rep.pairs.size() >= 4);
  const fs::path page = t.path / "report.html";
  {
    std::ofstream o(page);
    o << report::to_html(rep);
  }
  const std::string url = "file://" + page.string();
  auto dom = run_chromium("--virtual-time-budget=3000 --dump-dom " + url, t);
  INFO("chromium exit " << dom.rc << "\nstderr: " << dom.err.substr(0, 2000));
  REQUIRE(dom.rc == 0);
  CHECK(dom.out.find("data-js-ok=\"1\"") != std::string::npos);
  CHECK(dom.out.find(fmt::format("data-pairs=\"{}\"", rep.pairs.size())) != std::string::npos);
  CHECK(dom.out.find("<div id=\"js-errors\" hidden=\"\"></div>") != std::string::npos);
  CHECK(dom.out.find("alert(1)</script>") == std::string::npos);
  // Console errors Chromium logs to stderr with --enable-logging (e.g. a CSP violation).
  CHECK(dom.err.find("Refused to") == std::string::npos);
  CHECK(dom.err.find("Uncaught") == std::string::npos);

  const fs::path shot = fs::path(ACCELBENCH_BINARY_DIR) / "report-screenshot.png";
  std::error_code ec;
  fs::remove(shot, ec);
  auto s = run_chromium(fmt::format("--hide-scrollbars --window-size=1280,2000 --screenshot={} {}",
                                    shot.string(), url),
                        t);
  INFO("chromium exit " << s.rc << "\nstderr: " << s.err.substr(0, 2000));
  CHECK(s.rc == 0);
  CHECK(fs::exists(shot));
  if (fs::exists(shot))
    CHECK(fs::file_size(shot) > 10000);
}

namespace {

// A nightly series with a planted step on night 15 (a regression: times went up 12%).
json history_doc() {
  json pts = json::array();
  for (int d = 1; d <= 24; ++d)
    pts.push_back({{"run_id", d},
                   {"started_at", fmt::format("2026-10-{:02}T02:00:00.000Z", d)},
                   {"value", (d <= 14 ? 1.0e-3 : 1.12e-3) * (1 + 0.004 * ((d * 7) % 5 - 2))}});
  json cp = {
      {"index", 14},         {"run_id", 15},          {"started_at", "2026-10-15T02:00:00.000Z"},
      {"mean_before", 1e-3}, {"mean_after", 1.12e-3}, {"magnitude", 1.12},
      {"p_value", 1e-9},     {"regression", true}};
  json s = {{"system", "ci-box <b>"},
            {"config_key", "gemm/cpu/K=1024,M=1024,N=1024,dtype=fp32"},
            {"ruleset", "kernel-v1"},
            {"unit", "s"},
            {"direction", "lower"},
            {"points", pts},
            {"change_points", json::array({cp})}};
  return {{"schema_version", 1}, {"workload", "gemm"}, {"series", json::array({s})}};
}

} // namespace

TEST_CASE("history html: one chart per series, the change point marked, SI units, escaped",
          "[report][html][history]") {
  const std::string html = report::history_to_html(history_doc());
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("regression x1.120") != std::string::npos);
  CHECK(html.find("stroke-dasharray") != std::string::npos); // the change's line
  CHECK(html.find(">1.00 ms<") != std::string::npos);        // value axis in SI units
  CHECK(html.find("2026-10-15") != std::string::npos);
  CHECK(html.find("ci-box &lt;b&gt;") != std::string::npos);
  CHECK(html.find("ci-box <b>") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("1 regression(s) and 0 improvement(s)") != std::string::npos);
}

TEST_CASE("history html: renders in headless Chromium",
          "[report][html][history][browser][timing]") {
  if (!fs::exists(k_chromium))
    ACCELBENCH_SKIP(
        k_chromium
        << " not found (scripts/install-deps.sh --test installs the 'chromium' package)");
  temp_dir t;
  const fs::path page = t.path / "history.html";
  std::ofstream(page) << report::history_to_html(history_doc());
  const std::string url = "file://" + page.string();
  auto dom = run_chromium("--virtual-time-budget=2000 --dump-dom " + url, t);
  INFO("chromium exit " << dom.rc << "\nstderr: " << dom.err.substr(0, 2000));
  REQUIRE(dom.rc == 0);
  // The browser parsed the SVG: 24 nights as 24 circles, the change point's label.
  size_t circles = 0;
  for (size_t at = dom.out.find("<circle"); at != std::string::npos;
       at = dom.out.find("<circle", at + 1))
    ++circles;
  CHECK(circles == 24);
  CHECK(dom.out.find("regression x1.120") != std::string::npos);
  const fs::path shot = fs::path(ACCELBENCH_BINARY_DIR) / "history-screenshot.png";
  std::error_code ec;
  fs::remove(shot, ec);
  auto s = run_chromium(fmt::format("--hide-scrollbars --window-size=1100,700 --screenshot={} {}",
                                    shot.string(), url),
                        t);
  INFO("chromium exit " << s.rc << "\nstderr: " << s.err.substr(0, 2000));
  CHECK(s.rc == 0);
  CHECK(fs::exists(shot));
}

TEST_CASE("history html: a lone night is a point with its value, a night's runs its spread",
          "[report][html][history]") {
  json doc = history_doc();
  json& s = doc["series"][0];
  s["change_points"] = json::array();
  s["points"] = json::array({{{"run_id", 7},
                              {"started_at", "2026-10-01T02:00:00.000Z"},
                              {"value", 2.5e-3},
                              {"run_medians", {2.4e-3, 2.5e-3, 2.7e-3}}}});
  const std::string html = report::history_to_html(doc);
  size_t circles = 0;
  for (size_t at = html.find("<circle"); at != std::string::npos; at = html.find("<circle", at + 1))
    ++circles;
  CHECK(circles == 1);
  CHECK(html.find(">2.50 ms</text>") != std::string::npos);            // the point's value
  CHECK(html.find("3 runs: 2.40 ms to 2.70 ms") != std::string::npos); // its spread
  // The value axis has round ticks with units, not only its two ends.
  size_t ticks = 0;
  for (size_t at = html.find("class=\"tl tick\""); at != std::string::npos;
       at = html.find("class=\"tl tick\"", at + 1))
    ++ticks;
  CHECK(ticks >= 4);
  CHECK(std::regex_search(html, std::regex(R"(class="tl tick" text-anchor="end">2\.[0-9]0 ms<)")));
}
