#include <catch2/catch.hpp>

#include "harness/core/error.hpp"
#include "harness/core/model.hpp"

using namespace accelbench;

namespace {
workload_spec spec() {
  workload_spec s;
  s.name = "toy";
  s.family = "kernel";
  s.backends = {"cpu"};
  s.axes = {{"M", axis_type::integer, "8", {}, 1, ""},
            {"dtype", axis_type::string, "fp32", {"fp32", "bf16"}, 1, ""},
            {"causal", axis_type::boolean, "0", {}, 0, ""},
            {"scale", axis_type::number, "0.5", {}, 0, ""}};
  return s;
}
} // namespace

TEST_CASE("resolve_config fills defaults and canonicalises", "[model]") {
  auto c = resolve_config(spec(), "cpu", {{"M", "0016"}, {"causal", "true"}});
  CHECK(c.at("M") == "16");
  CHECK(c.at("causal") == "1");
  CHECK(c.at("dtype") == "fp32");
  CHECK(c.key() == "toy/cpu/M=16,causal=1,dtype=fp32,scale=0.5");
  CHECK(c.to_json()["M"] == 16);
  CHECK(c.to_json()["dtype"] == "fp32");
}

TEST_CASE("resolve_config rejects bad input naming the parameter and value", "[model]") {
  auto msg = [](std::map<std::string, std::string> v, std::string backend = "cpu") {
    try {
      resolve_config(spec(), backend, v);
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(msg({{"M", "abc"}}), Catch::Contains("M") && Catch::Contains("abc"));
  CHECK_THAT(msg({{"M", "0"}}), Catch::Contains("M must be >= 1, got 0"));
  CHECK_THAT(msg({{"M", "-4"}}), Catch::Contains("-4"));
  CHECK_THAT(msg({{"dtype", "fp64"}}), Catch::Contains("unknown dtype 'fp64'"));
  CHECK_THAT(msg({{"Q", "1"}}), Catch::Contains("unknown parameter 'Q'"));
  CHECK_THAT(msg({}, "tpu"), Catch::Contains("unknown backend 'tpu'"));
  CHECK_THAT(msg({{"causal", "2"}}), Catch::Contains("causal must be 0 or 1"));
}

TEST_CASE("run round-trips through JSON", "[model]") {
  run r;
  r.uuid = new_uuid();
  r.cfg = resolve_config(spec(), "cpu", {});
  r.system = "box";
  r.ruleset = "kernel-v1";
  r.samples = {{0, 1.5, 10, json::object()}, {1, 1.25, 10, json{{"clock_mhz", 1980}}}};
  r.add_metric("tflops", 3.5, "TFLOP/s", direction::higher_is_better);
  r.mark_invalid("wrong answer");
  r.tags = {"nightly"};
  run back = run_from_json(to_json(r));
  CHECK(back.uuid == r.uuid);
  CHECK(back.cfg.key() == r.cfg.key());
  CHECK(back.samples.size() == 2);
  CHECK(back.samples[1].extra["clock_mhz"] == 1980);
  CHECK(back.find_metric("tflops")->value == 3.5);
  CHECK_FALSE(back.valid);
  CHECK(back.invalid_reasons == std::vector<std::string>{"wrong answer"});
  CHECK(back.tags == r.tags);
}

TEST_CASE("uuids are version 4 and distinct", "[model]") {
  auto a = new_uuid(), b = new_uuid();
  CHECK(a != b);
  CHECK(a.size() == 36);
  CHECK(a[14] == '4');
}
