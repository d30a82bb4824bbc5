#include <catch2/catch.hpp>

#include "harness/core/error.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/text_input.hpp"
#include "test_helpers.hpp"

using namespace accelbench::mllog;

TEST_CASE("mllog: events are parsed with their fields", "[mlperf][mllog]") {
  const std::string text = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1745154970117, "
                           "\"event_type\": \"INTERVAL_START\", "
                           "\"key\": \"run_start\", \"value\": null, \"metadata\": {\"file\": "
                           "\"a.py\", \"lineno\": 83}}\n"
                           ":::MLLOG {\"namespace\": \"ns\", \"time_ms\": 1745155280501, "
                           "\"event_type\": \"POINT_IN_TIME\", "
                           "\"key\": \"eval_accuracy\", \"value\": 0.94, \"metadata\": {\"file\": "
                           "\"b.py\", \"lineno\": 303, "
                           "\"samples_count\": 1536}}\n";
  parsed_log log = parse_mllog(text, "x.txt");
  REQUIRE(log.diagnostics.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].key == "run_start");
  CHECK(log.events[0].type == event_type::interval_start);
  CHECK(log.events[0].time_ms == 1745154970117);
  CHECK(log.events[0].value.is_null());
  CHECK(log.events[0].line == 1);
  CHECK(log.events[1].name_space == "ns");
  CHECK(log.events[1].type == event_type::point_in_time);
  CHECK(log.events[1].value.get<double>() == Approx(0.94));
  CHECK(log.events[1].meta_number("samples_count") == 1536);
  CHECK(log.events[1].meta_string("file") == "b.py");
  CHECK(log.first("eval_accuracy") == &log.events[1]);
  CHECK(log.count("run_start") == 1);
  CHECK(log.lines == 2);
}

TEST_CASE("mllog: prefixes before the marker are ignored, lines without it are skipped",
          "[mlperf][mllog]") {
  const std::string text =
      "some framework output\n"
      ":::SYSJSON {\"submitter\": \"X\"}\n"
      "[1,0]<stdout>: :::MLLOG {\"namespace\": \"\", \"time_ms\": 5, \"event_type\": "
      "\"POINT_IN_TIME\", "
      "\"key\": \"seed\", \"value\": 7, \"metadata\": {\"file\": \"t.py\", \"lineno\": 1}}\r\n"
      "\n"
      "0: :::MLLOG {\"namespace\": \"\", \"time_ms\": 6, \"event_type\": \"INTERVAL_END\", "
      "\"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n";
  parsed_log log = parse_mllog(text, "p.txt");
  CHECK(log.diagnostics.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].key == "seed");
  CHECK(log.events[0].value == 7);
  CHECK(log.events[0].line == 3);
  CHECK(log.events[1].type == event_type::interval_end);
  CHECK(log.events[1].meta_string("status") == "success");
  CHECK(log.events[1].line == 5);
}

TEST_CASE("mllog: bad lines become diagnostics with file and line, and the rest is kept",
          "[mlperf][mllog]") {
  const std::string good =
      ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", "
      "\"key\": \"k\", \"value\": 1, \"metadata\": {\"file\": \"f\", \"lineno\": 1}}\n";
  const std::string text =
      good + ":::MLLOG {not json at all}\n" +
      ":::MLLOG {\"time_ms\": 2, \"event_type\": \"POINT_IN_TIME\", \"value\": 1, \"metadata\": "
      "{}}\n" +
      ":::MLLOG {\"time_ms\": 3, \"event_type\": \"SOMETIMES\", \"key\": \"q\", \"value\": 1, "
      "\"metadata\": {}}\n" +
      ":::MLLOG {\"time_ms\": 4, \"event_type\": \"POINT_IN_TIME\", \"key\": \"nometa\", "
      "\"value\": 1}\n" +
      good + ":::MLLOG {\"namespace\": \"\", \"time_ms\": 9, \"event_ty"; // cut mid-write
  parsed_log log = parse_mllog(text, "bad.txt");
  REQUIRE(log.diagnostics.size() == 5);
  CHECK(log.diagnostics[0].line == 2);
  CHECK(log.diagnostics[0].message.find("not valid JSON") != std::string::npos);
  CHECK(log.diagnostics[0].to_string().rfind("bad.txt:2: ", 0) == 0);
  CHECK(log.diagnostics[1].line == 3);
  CHECK(log.diagnostics[1].message.find("'key'") != std::string::npos);
  CHECK(log.diagnostics[2].message.find("SOMETIMES") != std::string::npos);
  CHECK(log.diagnostics[3].line == 5);
  CHECK(log.diagnostics[3].message.find("no metadata") != std::string::npos);
  CHECK(log.diagnostics[4].line == 7);
  CHECK(log.diagnostics[4].message.find("truncated final line") != std::string::npos);
  // The good lines and the metadata-less one are kept.
  REQUIRE(log.events.size() == 3);
  CHECK(log.events[1].key == "nometa");
  CHECK(log.events[2].line == 6);
}

TEST_CASE("mllog: format_event writes lines the parser reads back", "[mlperf][mllog]") {
  event e;
  e.time_ms = 1700000000123;
  e.type = event_type::interval_end;
  e.key = "run_stop";
  e.value = nullptr;
  e.metadata = {{"file", "x.py"}, {"lineno", 3}, {"status", "success"}, {"samples_count", 10}};
  const std::string line = format_event(e);
  CHECK(line.rfind(":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000000123, \"event_type\": "
                   "\"INTERVAL_END\"",
                   0) == 0);
  parsed_log log = parse_mllog(line + "\n");
  REQUIRE(log.events.size() == 1);
  CHECK(log.events[0].key == "run_stop");
  CHECK(log.events[0].time_ms == e.time_ms);
  CHECK(log.events[0].metadata == e.metadata);
}

TEST_CASE("mllog: every line of the published logs parses", "[mlperf][mllog]") {
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(mlperf_test::shared_data())) {
    if (e.path().filename().string().rfind("result_", 0) != 0)
      continue;
    parsed_log log = parse_mllog_file(e.path());
    INFO(e.path());
    CHECK(log.diagnostics.empty());
    CHECK(log.count("run_start") == 1);
    // tinycorp's retinanet result_4 is a run that stopped below the target without run_stop.
    const bool unfinished = e.path().string().ends_with("tinybox_green/retinanet/result_4.txt");
    CHECK(log.count("run_stop") == (unfinished ? 0U : 1U));
    ++files;
  }
  CHECK(files == 51);
}

namespace {

std::string event_line(const std::string& key, const std::string& time_ms,
                       const std::string& value = "null") {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + time_ms +
         ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value +
         ", \"metadata\": {\"file\": \"a.py\", \"lineno\": 1}}\n";
}

} // namespace

TEST_CASE("mllog: a line nested 100,000 levels deep is a diagnostic naming its line",
          "[mlperf][mllog]") {
  // It used to recurse in the JSON parser until the stack ran out (exit 139).
  const std::string deep = ":::MLLOG " + std::string(100000, '[') + std::string(100000, ']');
  const std::string text = event_line("a", "1700000000000") + deep + "\n" +
                           event_line("b", "1700000000001") +
                           ":::MLLOG {\"key\": " + std::string(300, '{') + "\n";
  parsed_log log = parse_mllog(text, "deep.txt");
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[1].key == "b");
  REQUIRE(log.diagnostics.size() == 2);
  CHECK(log.diagnostics[0].line == 2);
  CHECK(log.diagnostics[0].to_string().rfind("deep.txt:2: ", 0) == 0);
  CHECK(log.diagnostics[0].message.find("nesting too deep") != std::string::npos);
  CHECK(log.diagnostics[1].line == 4);
  CHECK(log.diagnostics[1].message.find("nesting too deep") != std::string::npos);
}

TEST_CASE("mllog: time_ms outside 0..year 9999 is a diagnostic, not a wrapped number",
          "[mlperf][mllog]") {
  // 1e300 used to be converted to int64 (undefined) and give a VALID run of 1.5e14 minutes.
  for (const std::string t : {"1e300", "-5", "18446744073709551615", "9.3e18", "253402300800000"}) {
    INFO(t);
    parsed_log log = parse_mllog(event_line("run_stop", t), "t.txt");
    CHECK(log.events.empty());
    REQUIRE(log.diagnostics.size() == 1);
    CHECK(log.diagnostics[0].message.find("has time_ms") != std::string::npos);
    CHECK(log.diagnostics[0].message.find("outside 0..") != std::string::npos);
    CHECK(log.diagnostics[0].line == 1);
  }
  parsed_log ok = parse_mllog(event_line("run_stop", "253402300799999") +
                                  event_line("run_start", "1700000000000.7"),
                              "t.txt");
  REQUIRE(ok.events.size() == 2);
  CHECK(ok.events[0].time_ms == k_max_time_ms);
  CHECK(ok.events[1].time_ms == 1700000000000);
}

TEST_CASE("mllog: invalid UTF-8 is repaired line by line with one diagnostic", "[mlperf][mllog]") {
  // Latin-1 "é" (0xE9) in a value and in framework output, as real logs have.
  const std::string text = "ok line\n" + event_line("submission_platform", "1", "\"caf\xE9\"") +
                           "framework says \xE9\xE8\n" + event_line("x", "2");
  std::vector<diagnostic> diags;
  const std::string repaired = repair_text_lines(text, "r.txt", diags);
  CHECK(accelbench::valid_utf8(repaired));
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].file == "r.txt");
  CHECK(diags[0].line == 2);
  CHECK(diags[0].message.find("3 byte(s)") != std::string::npos);
  CHECK(diags[0].message.find("2 line(s)") != std::string::npos);
  parsed_log log = parse_mllog(repaired, "r.txt");
  CHECK(log.diagnostics.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].value == "caf\xEF\xBF\xBD");
  // Valid text is returned as it is, without a diagnostic.
  diags.clear();
  CHECK(repair_text_lines(repaired, "r.txt", diags) == repaired);
  CHECK(diags.empty());
}

TEST_CASE("mllog: a diagnostic quoting a bad line is valid UTF-8", "[mlperf][mllog]") {
  // Diagnostics become INVALID reasons stored in the database and written as JSON; the quoted
  // line may hold latin-1, and the 80-byte cut may split a character.
  const std::string line = ":::MLLOG {not json \xE9" + std::string(75, 'a') + "\xC3\xA9 tail\n";
  parsed_log log = parse_mllog(line, "q.txt");
  REQUIRE(log.diagnostics.size() == 1);
  CHECK(accelbench::valid_utf8(log.diagnostics[0].message));
}

TEST_CASE("mllog: a file larger than the cap, or a folder, is refused by name", "[mlperf][mllog]") {
  mlperf_test::temp_dir tmp;
  const auto big = tmp.path / "result_0.txt";
  mlperf_test::write(big, "");
  std::filesystem::resize_file(big, k_max_log_bytes + 1); // sparse: no 64 MiB written
  CHECK_THROWS_AS(parse_mllog_file(big), accelbench::input_error);
  CHECK_THROWS_WITH(parse_mllog_file(big),
                    Catch::Contains("64 MiB") && Catch::Contains("result_0.txt"));
  CHECK_THROWS_WITH(parse_mllog_file(tmp.path), Catch::Contains("directory"));
}
