// End-to-end tests of compare, history and report selectors through the accelbench executable,
// on runs with planted samples imported from a results document.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "harness/core/model.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"

using namespace accelbench;
using test_cli::ab;
namespace fs = std::filesystem;

namespace {
// A gemm run whose samples are `median` seconds with 1% noise, tagged, started at night `day`.
run planted(const std::string& tag, double median, int day, stats::rng& g,
            const std::string& m = "1024") {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", m},          {"N", "1024"},         {"K", "1024"},
                  {"dtype", "fp32"}, {"library", "onednn"}, {"trans_a", "0"},
                  {"trans_b", "0"}};
  r.system = "ci-box";
  r.ruleset = "kernel-v1";
  r.tags = {tag};
  char date[32];
  std::snprintf(date, sizeof date, "2026-10-%02dT02:00:00.000Z", day);
  r.started_at = r.finished_at = date;
  for (int i = 0; i < 10; ++i)
    r.samples.push_back({i, median * (1 + 0.01 * g.normal()), 10, json::object()});
  return r;
}

void write_doc(const std::string& path, const std::vector<run>& runs) {
  std::ofstream(path) << results_document(runs, json::array(), json::array()).dump();
}
} // namespace

TEST_CASE("compare: a planted 10 percent slowdown fails the job, noise does not",
          "[cli][compare]") {
  test_cli::temp_dir t;
  stats::rng g(1);
  std::vector<run> runs = {planted("n1", 1.0, 1, g), planted("n2", 1.10, 2, g),
                           planted("n3", 1.002, 3, g)};
  std::string doc = (t.path / "runs.json").string();
  write_doc(doc, runs);
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);

  auto bad = ab("compare --baseline tag=n1 --candidate tag=n2 --format markdown --db " + t.db());
  CHECK(bad.rc == 1);
  CHECK_THAT(bad.out, Catch::Contains("regressed"));
  auto same = ab("compare --baseline tag=n1 --candidate tag=n3 --db " + t.db());
  CHECK(same.rc == 0);
  CHECK_THAT(same.out, Catch::Contains("unchanged"));
  // The job summary file is written atomically with -o; JUnit has the failure.
  std::string junit = (t.path / "c.xml").string();
  CHECK(ab("compare --baseline tag=n1 --candidate tag=n2 --format junit -o " + junit + " --db " +
           t.db())
            .rc == 1);
  CHECK_THAT(test_cli::slurp(junit), Catch::Contains("<failure"));
  auto j = ab("compare --baseline tag=n1 --candidate tag=n2 --format json --db " + t.db());
  CHECK(json::parse(j.out)["schema_version"] == 3);

  // Bad input: nothing matches (the message lists what exists), nothing in common, bad format.
  auto none = ab("compare --baseline tag=nope --candidate tag=n2 --db " + t.db());
  CHECK(none.rc == 2);
  CHECK_THAT(none.err, Catch::Contains("ci-box") && Catch::Contains("n1"));
  stats::rng g2(2);
  write_doc(doc, {planted("other", 1.0, 4, g2, "2048")});
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  auto disjoint = ab("compare --baseline tag=n1 --candidate tag=other --db " + t.db());
  CHECK(disjoint.rc == 2);
  CHECK_THAT(disjoint.err, Catch::Contains("no config in common"));
  auto yaml = ab("compare --baseline tag=n1 --candidate tag=n2 --format yaml --db " + t.db());
  CHECK(yaml.rc == 2);
  CHECK_THAT(yaml.err,
             Catch::Contains("unknown --format 'yaml' (table, markdown, junit, json, bmf, csv)"));
  // A format of the table is a --format at once: csv needs no code in the command.
  auto csv = ab("compare --baseline tag=n1 --candidate tag=n2 --format csv --db " + t.db());
  CHECK(csv.rc == 1);
  CHECK(csv.out.rfind("name,workload,backend,ruleset,unit,direction,verdict,", 0) == 0);
  CHECK_THAT(csv.out, Catch::Contains(",regressed,"));
}

TEST_CASE("history: the rounds of one job are one night's point", "[cli][history]") {
  // run --rounds stores each round as a run with the job's id: a night of 3 rounds is one point
  // of the series (the median of the rounds' medians), not three nights.
  test_cli::temp_dir t;
  stats::rng g(9);
  std::vector<run> runs;
  for (int day = 1; day <= 24; ++day) {
    const std::string job = new_uuid();
    for (int round = 1; round <= 3; ++round) {
      runs.push_back(planted("nightly", day <= 14 ? 1.0 : 1.12, day, g));
      runs.back().extra = {{"job_id", job}, {"job_round", round}, {"job_rounds", 3}};
    }
  }
  std::string doc = (t.path / "n.json").string();
  write_doc(doc, runs);
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  auto h = ab("history gemm --set M=1024 --format json --db " + t.db());
  REQUIRE(h.rc == 0);
  auto j = json::parse(h.out);
  REQUIRE(j["series"].size() == 1);
  CHECK(j["series"][0]["points"].size() == 24);
  auto cps = j["series"][0]["change_points"];
  REQUIRE(cps.size() == 1);
  CHECK(cps[0]["index"] == 14); // the 15th night, not the 15th run
}

TEST_CASE("history: a step change is reported at the run where it started", "[cli][history]") {
  test_cli::temp_dir t;
  stats::rng g(5);
  std::vector<run> runs;
  for (int day = 1; day <= 24; ++day)
    runs.push_back(planted("nightly", day <= 14 ? 1.0 : 1.12, day, g));
  runs[5].samples[0].value *= 1.5; // one bad sample on one night is not a change
  std::string doc = (t.path / "n.json").string();
  write_doc(doc, runs);
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  auto h = ab("history gemm --set M=1024 --format json --db " + t.db());
  REQUIRE(h.rc == 0);
  auto j = json::parse(h.out);
  REQUIRE(j["series"].size() == 1);
  auto cps = j["series"][0]["change_points"];
  REQUIRE(cps.size() == 1);
  CHECK(cps[0]["index"] == 14); // the 15th night
  CHECK(cps[0]["started_at"].get<std::string>().rfind("2026-10-15", 0) == 0);
  CHECK(cps[0]["regression"] == true);
  CHECK(ab("history gemm --fail-on-regression --db " + t.db()).rc == 1);
  auto table = ab("history gemm --db " + t.db());
  CHECK_THAT(table.out, Catch::Contains("REGRESSION"));
  CHECK(ab("history nosuch --db " + t.db()).rc == 2);

  // --html: the same series as a self-contained page, the change point marked at its night.
  const std::string page = (t.path / "history.html").string();
  auto html = ab("history gemm --html " + page + " --db " + t.db());
  CHECK(html.rc == 0);
  CHECK_THAT(html.out, Catch::Contains("REGRESSION")); // the table still goes to stdout
  const std::string text = test_cli::slurp(page);
  CHECK_THAT(text, Catch::Contains("<svg") && Catch::Contains("regression x1.1") &&
                       Catch::Contains("2026-10-15") && Catch::Contains("1 regression(s)"));
  CHECK(text.find("src=") == std::string::npos);
  CHECK(text.find("http") == std::string::npos); // nothing fetched, nothing linked
  // The page may not replace the database it reads; nothing is written on bad input.
  auto clash = ab("history gemm --html " + t.db() + " --db " + t.db());
  CHECK(clash.rc == 2);
  CHECK_THAT(clash.err, Catch::Contains("--html"));
  const std::string none = (t.path / "none.html").string();
  CHECK(ab("history nosuch --html " + none + " --db " + t.db()).rc == 2);
  CHECK_FALSE(fs::exists(none));
}

TEST_CASE("history: every --format of its table, and an unknown one refused with the list",
          "[cli][history]") {
  test_cli::temp_dir t;
  stats::rng g(5);
  std::vector<run> runs;
  for (int day = 1; day <= 24; ++day)
    runs.push_back(planted("nightly", day <= 14 ? 1.0 : 1.12, day, g));
  std::string doc = (t.path / "n.json").string();
  write_doc(doc, runs);
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  const std::string history = "history gemm --db " + t.db();

  auto table = ab(history + " --format table");
  REQUIRE(table.rc == 0);
  CHECK(table.out == ab(history).out); // the default
  CHECK(table.out.rfind("system  config", 0) == 0);
  CHECK_THAT(table.out, Catch::Contains("REGRESSION at run ") && Catch::Contains("(2026-10-15)"));
  auto j = ab(history + " --format json");
  REQUIRE(j.rc == 0);
  CHECK(json::parse(j.out)["series"][0]["change_points"][0]["index"] == 14);
  // One row per night; the change point on the row of the night it began.
  auto csv = ab(history + " --format csv");
  REQUIRE(csv.rc == 0);
  CHECK(csv.out.rfind("system,config,ruleset,unit,direction,run_id,started_at,value,change,"
                      "magnitude,p_value\n",
                      0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 25);
  auto row_of = [&csv](const std::string& night) {
    const size_t at = csv.out.find("," + night + "T");
    const size_t begin = csv.out.rfind('\n', at) + 1;
    return at == std::string::npos ? "" : csv.out.substr(begin, csv.out.find('\n', at) - begin);
  };
  CHECK(row_of("2026-10-14").rfind("ci-box,\"gemm/cpu/K=1024,", 0) == 0); // RFC 4180 quoting
  CHECK_THAT(row_of("2026-10-14"), Catch::EndsWith(",,,"));
  CHECK_THAT(row_of("2026-10-15"),
             Catch::Contains(",kernel-v1,s,lower,") && Catch::Contains(",regression,1.1"));
  // The names come from the table: in --help and in the one-line error (exit 2, nothing written).
  CHECK_THAT(ab("history --help").out, Catch::Contains("table | json | csv"));
  auto nope = ab(history + " --format nope");
  CHECK(nope.rc == 2);
  CHECK(nope.out.empty());
  CHECK_THAT(nope.err, Catch::Contains("unknown --format 'nope' (table, json, csv)"));
}

TEST_CASE("a 0 % of peak stored for an unknown peak is never averaged, charted or compared",
          "[cli][compare]") {
  // Versions before extra.pct_of_peak_unknown stored pct_of_peak = 0 when a run beat the CPU
  // probe; of the candidate's two runs one has 40%, the other that 0. The median is 40, not 20.
  test_cli::temp_dir t;
  stats::rng g(3);
  run base = planted("n1", 1.0, 1, g), known = planted("n2", 1.0, 2, g),
      unknown = planted("n2", 1.0, 3, g);
  base.add_metric("pct_of_peak", 40.0, "%", direction::higher_is_better);
  known.add_metric("pct_of_peak", 40.0, "%", direction::higher_is_better);
  unknown.add_metric("pct_of_peak", 0.0, "%", direction::higher_is_better);
  unknown.extra["peak"] = {{"tflops", 0.044}, {"below_achieved", true}};
  {
    auto db = store::store::open(t.db());
    std::vector<run> runs = {base, known, unknown};
    REQUIRE(db.insert_runs(runs) == 3);
  }
  const std::string doc = (t.path / "candidate.json").string();
  write_doc(doc, {known, unknown});
  for (const std::string& candidate : {std::string("tag=n2"), doc}) {
    INFO(candidate);
    auto j =
        ab("compare --baseline tag=n1 --candidate " + candidate + " --format json --db " + t.db());
    REQUIRE(j.rc == 0);
    const json pair = json::parse(j.out)["pairs"][0];
    bool seen = false;
    for (const auto& m : pair["candidate_metrics"])
      if (m["name"] == "pct_of_peak") {
        seen = true;
        CHECK(m["median"] == 40.0);
        CHECK(m["min"] == 40.0);
        CHECK(m["runs"] == 1);
      }
    CHECK(seen);
    auto bmf =
        ab("compare --baseline tag=n1 --candidate " + candidate + " --format bmf --db " + t.db());
    REQUIRE(bmf.rc == 0);
    const json doc_bmf = json::parse(bmf.out); // kept alive: items() walks into it
    for (const auto& [name, measures] : doc_bmf.items())
      CHECK(measures.at("pct_of_peak (%)").at("lower_value") == 40.0);
  }
  auto shown = ab("show 3 --json --db " + t.db());
  REQUIRE(shown.rc == 0);
  const json shown_run = json::parse(shown.out);
  for (const auto& m : shown_run["metrics"])
    CHECK(m["name"] != "pct_of_peak");
}

TEST_CASE("compare --only-changed lists what changed, and counts still cover every pair",
          "[cli][compare]") {
  test_cli::temp_dir t;
  stats::rng g(7);
  std::vector<run> runs = {planted("a", 1.0, 1, g), planted("b", 1.2, 2, g),
                           planted("a", 1.0, 1, g, "2048"), planted("b", 1.0, 2, g, "2048")};
  std::string doc = (t.path / "runs.json").string();
  write_doc(doc, runs);
  REQUIRE(ab("import " + doc + " --db " + t.db()).rc == 0);
  auto r = ab("compare --baseline tag=a --candidate tag=b --only-changed --db " + t.db());
  CHECK(r.rc == 1);
  CHECK_THAT(r.out, Catch::Contains("M=1024") && Catch::Contains("regressed"));
  CHECK(r.out.find("M=2048") == std::string::npos);
  CHECK_THAT(r.out, Catch::Contains("1 unchanged or inconclusive config(s) not shown"));
  CHECK_THAT(r.out, Catch::Contains("OVERALL_GEOMEAN"));
  auto j =
      ab("compare --baseline tag=a --candidate tag=b --only-changed --format json --db " + t.db());
  const auto doc_j = json::parse(j.out);
  CHECK(doc_j["pairs"].size() == 1);
  CHECK(doc_j["summary"]["pairs"] == 2);
  CHECK(doc_j["overall"]["pairs"] == 2);
}
