// Results housekeeping through the binary: import --tag/--system for every
// format and format detection, delete and gc, export --format csv|jsonl read back, compare
// --metric on imported Google Benchmark counters, report --json FILE's deprecated spelling.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"

using namespace test_cli;
using nlohmann::json;

namespace {

// A Google Benchmark file: one benchmark with `reps` repetitions of `us` microseconds, a flops
// rate, CPU time `cpu_us`, and a counter whose direction its name does not tell.
std::string gbench_file(const std::string& dir, const std::string& name, const std::string& date,
                        double us, double cpu_us, int reps = 6) {
  json doc = {{"context",
               {{"date", date},
                {"host_name", "gb-host"},
                {"executable", "./bm"},
                {"num_cpus", 2},
                {"library_build_type", "release"}}},
              {"benchmarks", json::array()}};
  for (int i = 0; i < reps; ++i)
    doc["benchmarks"].push_back({{"name", "BM_dot/1024"},
                                 {"run_name", "BM_dot/1024"},
                                 {"run_type", "iteration"},
                                 {"repetitions", reps},
                                 {"repetition_index", i},
                                 {"threads", 1},
                                 {"iterations", 1000},
                                 {"real_time", us * (1 + 0.001 * i)},
                                 {"cpu_time", cpu_us * (1 + 0.001 * i)},
                                 {"time_unit", "us"},
                                 {"flops", 2048 / (us * 1e-6)},
                                 {"widgets", 7}});
  const std::string path = dir + "/" + name;
  std::ofstream(path) << doc.dump(1);
  return path;
}

// RFC 4180: fields separated by commas, quoted fields may hold commas, CR/LF and doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear(), was_quoted = false;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field), field.clear(), was_quoted = false;
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (!rows.back().empty() || !field.empty())
    rows.back().push_back(field);
  else
    rows.pop_back();
  return rows;
}

std::string count_runs(const std::string& db) {
  auto r = ab("export --db " + db + " --format jsonl");
  return std::to_string(std::count(r.out.begin(), r.out.end(), '\n'));
}

} // namespace

TEST_CASE("import --tag and --system apply to Google Benchmark and accelbench files, the format "
          "is detected and named",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  const std::string f = gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 9);
  auto r = ab("import " + f + " --tag nightly-1 --tag gb --system lab-a --db " + db);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("read as --format gbench") != std::string::npos);
  CHECK(r.err.find("counter 'widgets'") != std::string::npos); // direction unknown: said so
  auto shown = json::parse(ab("show --db " + db + " --json").out);
  REQUIRE(shown.size() == 1);
  CHECK(shown[0]["system"] == "lab-a");
  CHECK(shown[0]["tags"] == json({"gb", "nightly-1"})); // the store keeps tags sorted
  std::map<std::string, std::string> dirs;
  for (const auto& m : shown[0]["metrics"])
    dirs[m["name"]] = m["direction"];
  CHECK(dirs["flops"] == "higher");
  CHECK(dirs["cpu_time"] == "lower");
  CHECK(dirs["time"] == "lower");
  CHECK(dirs.count("widgets") == 0);

  // Our own export, imported elsewhere under another system and tag.
  REQUIRE(ab("export --db " + db + " -o " + dir + "/e.json").rc == 0);
  const std::string db2 = dir + "/two.db";
  r = ab("import " + dir + "/e.json --tag moved --system lab-b --db " + db2);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("read as --format accelbench") != std::string::npos);
  shown = json::parse(ab("show --db " + db2 + " --json").out);
  REQUIRE(shown.size() == 1);
  CHECK(shown[0]["system"] == "lab-b");
  CHECK(shown[0]["tags"] == json({"gb", "moved", "nightly-1"}));
  CHECK(ab("compare --db " + db2 + " --baseline tag=moved --candidate lab-b").rc != 2);

  // --counter names a direction the name does not tell; wrong forms are usage errors.
  const std::string g = gbench_file(dir, "b.json", "2020-01-02T10:00:00+00:00", 10, 9);
  CHECK(ab("import " + g + " --counter widgets=higher --db " + db).rc == 0);
  CHECK(ab("show --db " + db + " --tag nightly-1 --json").out.find("widgets") == std::string::npos);
  r = ab("import " + g + " --counter widgets=up --db " + db);
  CHECK(r.rc == 2);
  CHECK(r.err.find("higher or lower") != std::string::npos);
}

TEST_CASE("delete and gc list what goes, need --yes without a terminal, and keep the database "
          "consistent",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + gbench_file(dir, "old.json", "2020-01-01T10:00:00+00:00", 10, 9) +
             " --tag old --system sys-old --db " + db)
              .rc == 0);
  REQUIRE(ab("import " + gbench_file(dir, "base.json", "2020-01-02T10:00:00+00:00", 10, 9) +
             " --tag baseline --system sys-base --db " + db)
              .rc == 0);
  REQUIRE(
      ab("run gemm --set M=8 --set N=8 --set K=8 --rule repetitions=3 --tag new --quiet --db " + db)
          .rc <= 1); // stored either way; INVALID (exit 1) when the machine is loaded
  REQUIRE(count_runs(db) == "3");

  auto r = ab("delete tag=old --dry-run --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("sys-old") != std::string::npos);
  CHECK(r.out.find("would be deleted") != std::string::npos);
  CHECK(count_runs(db) == "3");

  r = ab("delete tag=old --db " + db); // stdin is /dev/null: no terminal to ask on
  CHECK(r.rc == 2);
  CHECK(r.err.find("--yes") != std::string::npos);
  CHECK(count_runs(db) == "3");

  r = ab("delete tag=old --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("deleted 1 run(s) (6 sample(s)") != std::string::npos);
  CHECK(r.out.find("1 system(s)") != std::string::npos);
  CHECK(count_runs(db) == "2");
  CHECK(ab("delete tag=old --yes --db " + db).rc == 2); // matches nothing now

  // gc: the 2020 baseline is old but kept by its tag; the run measured now is young.
  r = ab("gc --keep-days 30 --keep-tag baseline --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("nothing to delete") != std::string::npos);
  r = ab("gc --keep-days 30 --yes --db " + db);
  CHECK(r.rc == 0);
  CHECK(r.out.find("deleted 1 run(s)") != std::string::npos);
  CHECK(count_runs(db) == "1");
  CHECK(ab("show --db " + db + " --json").out.find("\"new\"") != std::string::npos);
}

TEST_CASE("export --format csv reads back to the same values as jsonl", "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  REQUIRE(ab("import " + gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 9) +
             " --system 'lab, \"quoted\"' --tag 'a b' --db " + db)
              .rc == 0);
  for (const char* rows : {"run", "metric", "sample"}) {
    CAPTURE(rows);
    auto csv = ab(fmt::format("export --db {} --format csv --rows {}", db, rows));
    auto jsonl = ab(fmt::format("export --db {} --format jsonl --rows {}", db, rows));
    REQUIRE(csv.rc == 0);
    REQUIRE(jsonl.rc == 0);
    auto table = parse_csv(csv.out);
    std::vector<json> objs;
    std::istringstream in(jsonl.out);
    for (std::string line; std::getline(in, line);)
      objs.push_back(json::parse(line));
    REQUIRE(table.size() == objs.size() + 1); // the header
    const auto& header = table[0];
    for (size_t i = 0; i < objs.size(); ++i) {
      REQUIRE(table[i + 1].size() == header.size());
      for (size_t c = 0; c < header.size(); ++c) {
        const json& v = objs[i].at(header[c]);
        const std::string& cell = table[i + 1][c];
        if (v.is_number_float())
          CHECK(std::stod(cell) == v.get<double>()); // bit for bit
        else if (v.is_string())
          CHECK(cell == v.get<std::string>());
      }
    }
    CHECK(objs[0]["system"] == "lab, \"quoted\"");
  }
  CHECK(ab("export --db " + db + " --format csv --rows nope").rc == 2);
  CHECK(ab("export --db " + db + " --format xml").rc == 2);
  CHECK(ab("export --db " + db + " --rows metric").rc == 2); // json exports whole runs
}

TEST_CASE("compare --metric compares CPU time and user counters of imported runs", "[cli][house]") {
  temp_dir t;
  const std::string db = t.db(), dir = t.path.string();
  // Wall time the same, CPU time 50% higher in the candidate.
  REQUIRE(ab("import " + gbench_file(dir, "a.json", "2020-01-01T10:00:00+00:00", 10, 8) +
             " --system s --tag A --db " + db)
              .rc == 0);
  REQUIRE(ab("import " + gbench_file(dir, "b.json", "2020-01-02T10:00:00+00:00", 10, 12) +
             " --system s --tag B --db " + db)
              .rc == 0);
  auto time = ab("compare --db " + db + " --baseline tag=A --candidate tag=B --format json");
  CHECK(time.rc == 0);
  auto cpu = ab("compare --db " + db +
                " --baseline tag=A --candidate tag=B --metric cpu_time --format json");
  CHECK(cpu.rc == 1); // a regression
  CHECK(cpu.out.find("regressed") != std::string::npos);
  auto flops =
      ab("compare --db " + db + " --baseline tag=A --candidate tag=B --metric flops --format json");
  CHECK(flops.rc == 0);
  auto none = ab("compare --db " + db + " --baseline tag=A --candidate tag=B --metric nope");
  CHECK(none.rc == 2);
  CHECK(none.err.find("flops") != std::string::npos); // names the metrics there are

  // report: -o FILE writes the JSON, --json alone prints it, --json FILE still works with a note.
  const std::string sel = " --baseline tag=A --candidate tag=B --db " + db;
  auto o = ab("report" + sel + " -o " + dir + "/o.json");
  CHECK(o.rc != 2);
  CHECK(o.err.find("deprecated") == std::string::npos);
  auto old = ab("report" + sel + " --json " + dir + "/old.json");
  CHECK(old.rc == o.rc);
  CHECK(old.err.find("deprecated; use -o FILE") != std::string::npos);
  CHECK(json::parse(slurp(dir + "/old.json"))["pairs"] ==
        json::parse(slurp(dir + "/o.json"))["pairs"]);
  auto out = ab("report" + sel + " --json");
  CHECK(out.rc == o.rc);
  CHECK(json::parse(out.out)["pairs"] == json::parse(slurp(dir + "/o.json"))["pairs"]);
}

TEST_CASE("show's config column holds what differs from the defaults and between rows, show RUN "
          "the whole config",
          "[cli][house]") {
  temp_dir t;
  const std::string db = t.db();
  for (const char* m : {"8", "16"})
    REQUIRE(ab(fmt::format("run gemm --set M={} --set N=8 --set K=8 --rule repetitions=3 --quiet "
                           "--db {}",
                           m, db))
                .rc <= 1); // stored either way; INVALID (exit 1) when the machine is loaded
  auto r = ab("show --db " + db);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("M=8 ") != std::string::npos);
  CHECK(r.out.find("M=16 ") != std::string::npos);
  CHECK(r.out.find("N=8") != std::string::npos);    // not gemm's default
  CHECK(r.out.find("dtype=") == std::string::npos); // the default, the same in both rows
  auto one = ab("show 1 --db " + db);
  CHECK(one.out.find("dtype=fp32") != std::string::npos);
}
