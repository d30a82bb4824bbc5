// The results protocol of external programs: what a line may say, and the one-line reason that
// names the first refused line.
#include <catch2/catch.hpp>

#include <string>

#include "harness/core/json_schema.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/text_input.hpp"
#include "workloads/external/protocol.hpp"

using namespace accelbench;
using namespace accelbench::external;

TEST_CASE("a protocol text gives its samples, metrics, verdict and extra facts") {
  protocol_result r = parse_protocol(R"({"protocol": 1}
{"sample": {"seconds": 0.5, "items": 128, "flops": 1e12}}

{"sample": {"seconds": 0.25, "bytes": 4096}}
{"metric": {"name": "loss", "value": 2.5, "unit": "", "direction": "lower"}}
{"check": {"passed": true, "reason": "max error 1e-6"}}
{"extra": {"gpu": "H100", "n": 1}}
{"extra": {"n": 2}}
)");
  REQUIRE(r.ok());
  CHECK(r.version == 1);
  CHECK(r.lines == 7);
  REQUIRE(r.samples.size() == 2);
  CHECK(r.samples[0].seconds == 0.5);
  CHECK(r.samples[0].items == 128);
  CHECK(r.samples[0].flops == 1e12);
  CHECK_FALSE(r.samples[0].bytes);
  CHECK(r.samples[1].bytes == 4096);
  REQUIRE(r.metrics.size() == 1);
  CHECK(r.metrics[0].name == "loss");
  CHECK(r.metrics[0].direction == "lower");
  REQUIRE(r.verdict);
  CHECK(r.verdict->passed);
  CHECK(r.verdict->reason == "max error 1e-6");
  CHECK(r.extra == json{{"gpu", "H100"}, {"n", 2}});
}

TEST_CASE("the hello line is optional, and an empty text is silent") {
  protocol_result r = parse_protocol("{\"sample\": {\"seconds\": 1}}");
  CHECK(r.ok());
  CHECK(r.version == 0);
  CHECK(r.samples.size() == 1);
  CHECK(parse_protocol("").silent());
  CHECK(parse_protocol("\n  \n").silent());
  CHECK_FALSE(r.silent());
}

TEST_CASE("a refused line is named by its number and value") {
  auto err = [](const std::string& text) { return parse_protocol(text).error; };
  CHECK(err("{\"sample\": {\"seconds\": 1}}\nnot json\n") ==
        "protocol line 2: not valid JSON: 'not json'");
  CHECK(err("{\"sample\": {\"seconds\": 0}}") ==
        "protocol line 1: sample seconds 0 is not a finite number > 0");
  CHECK(err("{\"sample\": {\"seconds\": -1.5}}") ==
        "protocol line 1: sample seconds -1.5 is not a finite number > 0");
  CHECK(err("{\"sample\": {\"seconds\": \"1\"}}") ==
        "protocol line 1: sample seconds \"1\" is not a finite number > 0");
  CHECK(err("{\"sample\": {\"seconds\": 1e999}}").find("not valid JSON") != std::string::npos);
  CHECK(err("{\"sample\": {\"seconds\": 1, \"items\": -1}}") ==
        "protocol line 1: sample items -1 is not a finite number >= 0");
  CHECK(err("{\"sample\": {\"second\": 1}}") ==
        "protocol line 1: sample has unknown field 'second'");
  CHECK(err("{\"samples\": {\"seconds\": 1}}") ==
        "protocol line 1: unknown kind 'samples' (sample, metric, check, extra, protocol)");
  CHECK(err("{\"sample\": {\"seconds\": 1}, \"extra\": {}}").find("not an object with one key") !=
        std::string::npos);
  CHECK(err("[1]").find("not an object with one key") != std::string::npos);
}

TEST_CASE("a line is one JSON object: nothing after it, no key twice, at most 256 levels") {
  auto err = [](const std::string& text) { return parse_protocol(text).error; };
  // A NUL byte after the object ended the parser's input: the rest of the line was ignored.
  CHECK(err(std::string("{\"sample\": {\"seconds\": 1}}\0{\"check\": 1}\n", 40)) ==
        "protocol line 1: not valid JSON (a NUL byte at offset 26)");
  // A key twice: refused by name, whichever value a reader would keep.
  CHECK(err(R"({"sample": {"seconds": 1, "seconds": 2}})")
            .rfind("protocol line 1: duplicate key 'seconds' in one object", 0) == 0);
  CHECK(err(R"({"check": {"passed": false, "passed": true}})").find("duplicate key 'passed'") !=
        std::string::npos);
  // Nesting past the limit says so, not "not valid JSON".
  const std::string deep =
      "{\"extra\": {\"x\": " + std::string(300, '[') + std::string(300, ']') + "}}";
  CHECK(err(deep) == "protocol line 1: JSON nesting too deep (more than 256 levels)");
  // One key in two objects, and a key again on a later extra line, are fine.
  CHECK(parse_protocol("{\"extra\": {\"n\": 1}}\n{\"extra\": {\"n\": 2}}").ok());
}

TEST_CASE("the hello line must come first and name a version this build speaks") {
  CHECK(parse_protocol("{\"protocol\": 2}").error ==
        "protocol line 1: protocol version 2 is not supported (this accelbench speaks 1)");
  CHECK(parse_protocol("{\"sample\": {\"seconds\": 1}}\n{\"protocol\": 1}").error ==
        "protocol line 2: the protocol hello 1 comes after other lines (it must be the first)");
  CHECK(parse_protocol("\n{\"protocol\": 1}").ok());
}

TEST_CASE("metrics and checks are refused when a field is missing or wrong") {
  auto err = [](const std::string& text) { return parse_protocol(text).error; };
  CHECK(err(R"({"metric": {"name": "x", "value": 1, "unit": "s", "direction": "up"}})") ==
        "protocol line 1: metric 'x' direction \"up\" is not \"lower\" or \"higher\"");
  CHECK(err(R"({"metric": {"name": "x", "value": null, "unit": "s", "direction": "lower"}})") ==
        "protocol line 1: metric 'x' value null is not a finite number");
  CHECK(err(R"({"metric": {"value": 1, "unit": "s", "direction": "lower"}})") ==
        "protocol line 1: metric has no name (a non-empty string)");
  CHECK(err(R"({"check": {"passed": "yes"}})") ==
        "protocol line 1: check passed \"yes\" is not true or false");
  CHECK(err("{\"check\": {\"passed\": true}}\n{\"check\": {\"passed\": false}}") ==
        "protocol line 2: a second check line (one verdict per run)");
  CHECK(err(R"({"extra": [1]})") == "protocol line 1: extra [1] is not an object");
}

TEST_CASE("the incremental parser joins lines split across chunks and stops at the first error") {
  protocol_parser p;
  CHECK(p.feed("{\"sample\": {\"sec"));
  CHECK(p.result().samples.empty());
  CHECK(p.feed("onds\": 2}}\n{\"sample\": {\"seconds\": 3}}"));
  CHECK(p.result().samples.size() == 1);
  CHECK(p.finish().samples.size() == 2);
  protocol_parser bad;
  CHECK_FALSE(bad.feed("oops\n{\"sample\": {\"seconds\": 1}}\n"));
  CHECK(bad.finish().samples.empty());
  CHECK(bad.result().error.rfind("protocol line 1:", 0) == 0);
}

TEST_CASE("a line longer than the limit is refused without being parsed") {
  std::string line = "{\"extra\": {\"x\": \"" + std::string(k_max_line_bytes, 'a') + "\"}}";
  CHECK(parse_protocol(line).error ==
        "protocol line 1: longer than " + std::to_string(k_max_line_bytes) + " bytes");
}

TEST_CASE("MLLOG lines on stdout are read among the program's other output") {
  mllog::parsed_log log = read_stdout_mllog(
      "starting\n:::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": "
      "\"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\nbye\n");
  REQUIRE(log.events.size() == 1);
  CHECK(log.events[0].key == "run_start");
  CHECK(read_stdout_mllog("no log here\n").events.empty());
}

TEST_CASE("the JSON Schema in schemas/ agrees with the parser on each kind of line") {
  json_schema schema = json_schema::load(std::string(ACCELBENCH_SOURCE_DIR) +
                                         "/schemas/external-protocol.schema.json");
  for (const char* good :
       {R"({"protocol": 1})", R"({"sample": {"seconds": 0.5, "items": 3, "flops": 0, "bytes": 1}})",
        R"({"metric": {"name": "tok/s", "value": -1, "unit": "", "direction": "higher"}})",
        R"({"check": {"passed": false, "reason": "diverged"}})", R"({"extra": {"a": [1]}})"}) {
    INFO(good);
    CHECK(schema.validate(json::parse(good)).empty());
    CHECK(parse_protocol(good).ok());
  }
  for (const char* bad :
       {R"({"protocol": 2})", R"({"sample": {"seconds": 0}})", R"({"sample": {"items": 1}})",
        R"({"sample": {"seconds": 1, "x": 1}})", R"({"metric": {"name": "a", "value": 1}})",
        R"({"check": {"passed": 1}})", R"({"extra": 1})", R"({"other": {}})", R"({})",
        R"({"sample": {"seconds": 1}, "extra": {}})"}) {
    INFO(bad);
    CHECK_FALSE(schema.validate(json::parse(bad)).empty());
    CHECK_FALSE(parse_protocol(bad).ok());
  }
}

TEST_CASE("a run's samples and distinct metric names are counted against the limits of a run, and "
          "the line past them is refused") {
  protocol_parser samples;
  for (std::size_t i = 0; i < limits::k_max_samples; ++i)
    REQUIRE(samples.feed_line(R"({"sample": {"seconds": 0.5}})"));
  CHECK(samples.result().samples.size() == limits::k_max_samples);
  CHECK_FALSE(samples.feed_line(R"({"sample": {"seconds": 0.5}})"));
  CHECK(samples.result().error ==
        "protocol line 100001: 100001 samples, more than the 100000 a run may hold");

  // A name given again is one metric (its values' median): two lines of each of the 9,984 names a
  // program may report pass; one name more is refused, leaving room for accelbench's own figures.
  const auto metric_line = [](std::size_t i) {
    return R"({"metric": {"name": "m)" + std::to_string(i) +
           R"(", "value": 1, "unit": "", "direction": "lower"}})";
  };
  protocol_parser metrics;
  for (std::size_t i = 0; i < 2 * limits::k_max_program_metrics; ++i)
    REQUIRE(metrics.feed_line(metric_line(i % limits::k_max_program_metrics)));
  CHECK_FALSE(metrics.feed_line(metric_line(limits::k_max_program_metrics)));
  CHECK(metrics.result().error ==
        "protocol line 19969: 9985 metrics, more than the 9984 a program may report (a run holds "
        "10000, 16 of them kept for accelbench's own figures)");

  const protocol_result long_name = parse_protocol(
      R"({"metric": {"name": ")" + std::string(limits::k_max_metric_name_bytes + 1, 'n') +
      R"(", "value": 1, "unit": "", "direction": "lower"}})");
  CHECK_THAT(long_name.error, Catch::Contains("protocol line 1: metric name 'nnnn") &&
                                  Catch::Contains("is 257 bytes, longer than the 256"));
}
