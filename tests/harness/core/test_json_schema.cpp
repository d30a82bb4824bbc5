#include <limits>

#include <catch2/catch.hpp>

#include "harness/core/error.hpp"
#include "harness/core/json_schema.hpp"

using namespace accelbench;

TEST_CASE("the validator enforces the keywords our schemas use", "[schema]") {
  json_schema s(json::parse(R"({
    "type": "object", "required": ["a"], "additionalProperties": false,
    "properties": {
      "a": {"type": "integer", "minimum": 1},
      "b": {"enum": ["x", "y"]},
      "c": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1},
      "d": {"type": "string", "pattern": "^[a-z]+$"},
      "e": {"anyOf": [{"type": "string"}, {"type": "number"}]}
    },
    "$defs": {"item": {"type": "object", "required": ["n"]}}
  })"));
  CHECK(s.validate(json::parse(R"({"a": 2, "b": "x", "c": [{"n": 1}], "d": "abc", "e": 3})"))
            .empty());
  auto v = s.validate(json::parse(R"({"b": "z"})"));
  REQUIRE(v.size() == 2);
  CHECK_THAT(v[0].message + v[1].message, Catch::Contains("missing required property 'a'"));
  CHECK_FALSE(s.validate(json::parse(R"({"a": 0})")).empty());
  CHECK_FALSE(s.validate(json::parse(R"({"a": 1.5})")).empty());
  CHECK_FALSE(s.validate(json::parse(R"({"a": 1, "zz": 1})")).empty());
  auto items = s.validate(json::parse(R"({"a": 1, "c": [{"m": 1}]})"));
  REQUIRE(items.size() == 1);
  CHECK(items[0].path == "/c/0");
  CHECK_FALSE(s.validate(json::parse(R"({"a": 1, "c": []})")).empty());
  CHECK_FALSE(s.validate(json::parse(R"({"a": 1, "d": "ABC"})")).empty());
  CHECK_FALSE(s.validate(json::parse(R"({"a": 1, "e": true})")).empty());
  CHECK_THROWS_AS(s.require_valid(json::parse(R"({"a": "1"})"), "doc"), input_error);
}

TEST_CASE("every schema in schemas/ is valid JSON with a title", "[schema]") {
  for (const char* name : {"ruleset.schema.json", "results.schema.json", "suite.schema.json",
                           "catalogue.schema.json"}) {
    INFO(name);
    auto s = load_builtin_schema(name);
    CHECK(s.validate(json::object()).size() > 0); // each requires something
  }
}

TEST_CASE("integers must fit in int64 and numbers must be finite", "[schema]") {
  json_schema s(json::parse(R"({"type": "object", "properties": {
    "n": {"type": "integer", "minimum": 1}, "x": {"type": "number"}, "free": {"type": "object"}}})"));
  CHECK(s.validate(json::parse(R"({"n": 9223372036854775807, "x": 1e308})")).empty());
  auto big = s.validate(json::parse(R"({"n": 1e19})"));
  REQUIRE(big.size() == 1);
  CHECK(big[0].path == "/n");
  CHECK_THAT(big[0].message,
             Catch::Contains("1e+19") && Catch::Contains("outside the 64-bit integer range"));
  auto u = s.validate(json::parse(R"({"n": 18446744073709551615})"));
  REQUIRE(u.size() == 1);
  CHECK_THAT(u[0].message, Catch::Contains("18446744073709551615"));
  CHECK_FALSE(s.validate(json::parse(R"({"n": -9.3e18})")).empty());
  // Infinity cannot come from JSON text, but a document built in memory can hold it anywhere.
  json doc = {{"x", 1.0},
              {"free", {{"deep", json::array({1, std::numeric_limits<double>::infinity()})}}}};
  auto inf = s.validate(doc);
  REQUIRE(inf.size() == 1);
  CHECK(inf[0].path == "/free/deep/1");
  CHECK_THAT(inf[0].message, Catch::Contains("out of range"));
}
