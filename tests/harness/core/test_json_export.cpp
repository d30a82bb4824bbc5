// The results document (harness/core/results_document.hpp): our export format read back at the
// import boundary. Every value a reader later converts (integers, doubles, the typed
// extra/environment fields) is checked here, so that a bad document is an input error naming the
// field, never a crash or a wrapped number later.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"

using namespace accelbench;
using Catch::Contains;

namespace {

run sample_run() {
  run r;
  r.uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  r.cfg.workload = "gemm";
  r.cfg.backend = "cpu";
  r.cfg.values = {{"M", "64"}, {"dtype", "fp32"}};
  r.system = "box";
  r.ruleset = "kernel-v1";
  r.source = "imported";
  r.samples = {{0, 1.5e-3, 10, json::object()}, {1, 1.6e-3, 10, json::object()}};
  r.add_metric("tflops", 12.5, "TFLOP/s", direction::higher_is_better);
  r.environment = {{"hostname", "box"}, {"accelerator", {{"model", "CPU: x"}, {"count", 1}}}};
  r.extra = {{"implementation", "onednn"}, {"flops_per_iteration", 1e6}};
  return r;
}

json sample_doc() { return results_document({sample_run()}, json::array(), json::array()); }

// The error message of reading `text`, or "(accepted)".
std::string error_of(const std::string& text) {
  try {
    read_results_document(text, "in.json");
  } catch (const input_error& e) {
    return e.what();
  }
  return "(accepted)";
}

// `doc` as text with `literal` written as is (1e400, 18446744073709551615: values a json object
// cannot hold) at `where`.
std::string with_literal(json doc, const json::json_pointer& where, const std::string& literal) {
  doc[where] = "@@LITERAL@@";
  std::string text = dump_json(doc);
  return text.replace(text.find("\"@@LITERAL@@\""), 13, literal);
}

} // namespace

TEST_CASE("an export reads back unchanged", "[json_export]") {
  auto runs = read_results_document(dump_json(sample_doc(), 2), "in.json");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].uuid == sample_run().uuid);
  CHECK(runs[0].samples[1].iterations == 10);
  CHECK(runs[0].cfg.values.at("M") == "64");
}

TEST_CASE("a run with an older version's fingerprint reads with the current one", "[json_export]") {
  run old = sample_run();
  old.fingerprint = legacy_environment_fingerprint(old.environment);
  run other = sample_run();
  other.uuid = "1f8fad5b-d9cb-469f-a165-70867728950e";
  other.fingerprint = "0123456789abcdef"; // not its environment's: kept as written
  const auto runs = read_results_document(
      dump_json(results_document({old, other}, json::array(), json::array())), "in.json");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].fingerprint == environment_fingerprint(old.environment));
  CHECK(runs[0].fingerprint != old.fingerprint);
  CHECK(runs[1].fingerprint == "0123456789abcdef");
}

TEST_CASE("deeply nested documents are refused before parsing", "[json_export]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(error_of(deep), Contains("in.json") && Contains("nesting too deep"));
  json doc = sample_doc();
  std::string nested = std::string(300, '[') + std::string(300, ']');
  CHECK_THAT(error_of(with_literal(doc, "/runs/0/extra/x"_json_pointer, nested)),
             Contains("nesting too deep"));
}

TEST_CASE("a document that is not UTF-8 is refused with the position", "[json_export]") {
  std::string text = dump_json(sample_doc(), 2);
  text.replace(text.find("\"box\""), 5, "\"caf\xE9\"");
  CHECK_THAT(error_of(text),
             Contains("in.json") && Contains("not valid UTF-8 at line") && Contains("0xe9"));
}

TEST_CASE("numbers out of range name the field and the value", "[json_export]") {
  json doc = sample_doc();
  SECTION("a sample of 1e400 overflows a double") {
    CHECK_THAT(error_of(with_literal(doc, "/runs/0/samples/0/value"_json_pointer, "1e400")),
               Contains("in.json") && Contains("1e400") && Contains("out of range"));
  }
  SECTION("anywhere in the document, typed by the schema or not") {
    CHECK_THAT(error_of(with_literal(doc, "/runs/0/extra/custom"_json_pointer, "-1e999")),
               Contains("-1e999") && Contains("out of range"));
  }
  SECTION("iterations of 1e19 would wrap to INT64_MIN") {
    CHECK_THAT(error_of(with_literal(doc, "/runs/0/samples/0/iterations"_json_pointer, "1e19")),
               Contains("/runs/0/samples/0/iterations") && Contains("1e+19") &&
                   Contains("outside the 64-bit integer range"));
  }
  SECTION("an id of 2^64-1 would wrap to -1") {
    CHECK_THAT(error_of(with_literal(doc, "/runs/0/id"_json_pointer, "18446744073709551615")),
               Contains("/runs/0/id") && Contains("18446744073709551615"));
  }
  SECTION("iterations below 1 are refused") {
    CHECK_THAT(error_of(with_literal(doc, "/runs/0/samples/0/iterations"_json_pointer, "0")),
               Contains("/runs/0/samples/0/iterations"));
  }
  SECTION("a config integer beyond int64 keeps its written form") {
    auto runs = read_results_document(
        with_literal(doc, "/runs/0/config/M"_json_pointer, "18446744073709551615"), "in.json");
    CHECK(runs[0].cfg.values.at("M") == "18446744073709551615");
  }
}

TEST_CASE("extra and environment fields that readers convert are typed at import",
          "[json_export]") {
  json doc = sample_doc();
  struct bad {
    const char* pointer;
    json value;
  };
  for (const auto& b : std::vector<bad>{{"/runs/0/extra/mllogs", "not a list"},
                                        {"/runs/0/extra/mllogs", json::array({1, 2})},
                                        {"/runs/0/extra/implementation", 3},
                                        {"/runs/0/extra/flops_per_iteration", "many"},
                                        {"/runs/0/extra/scaling_factor", json::object()},
                                        {"/runs/0/extra/per_accelerator", "yes"},
                                        {"/runs/0/extra/peak", json::object({{"tflops", "fast"}})},
                                        {"/runs/0/environment/accelerator", "H100"},
                                        {"/runs/0/environment/accelerator/count", "eight"},
                                        {"/runs/0/environment/accelerator/count", 1e30}}) {
    INFO(b.pointer << " = " << b.value.dump());
    json d = doc;
    d[json::json_pointer(b.pointer)] = b.value;
    CHECK_THAT(error_of(dump_json(d)), Contains("in.json is invalid") && Contains(b.pointer));
  }
}

TEST_CASE("stored text that is not UTF-8 cannot break an export", "[json_export]") {
  run r = sample_run();
  r.system = "caf\xE9";
  r.tags = {"\xFF\xFE"};
  r.extra["note"] = "line from a latin-1 log: \xB5s";
  std::string text;
  REQUIRE_NOTHROW(text = dump_json(results_document({r}, json::array(), json::array()), 2));
  CHECK(valid_utf8(text));
  auto back = read_results_document(text, "out.json");
  CHECK(back[0].system == "caf\xEF\xBF\xBD");
}

TEST_CASE("the run check refuses what the store, gc and compare cannot use, naming the run and the "
          "value",
          "[json_export]") {
  for (const char* t : {"2026-12-02T10:13:01.123Z", "2026-12-02T10:13:01Z", "2024-02-29T00:00:00Z",
                        "2000-02-29T23:59:60.123456789Z"})
    CHECK(is_utc_timestamp(t));
  for (const char* t : {"yesterday", "2026-12-02", "2026-12-02T10:13:01", "2026-12-02 10:13:01Z",
                        "2026-12-02T10:13:01+01:00", "2026-02-30T10:00:00Z", "2023-02-29T00:00:00Z",
                        "1900-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-02T24:00:00Z",
                        "2026-12-02T10:13:01.Z", "2026-12-02T10:13:01.1234567890Z",
                        "2026-12-02T10:13:01.123Zx", "+026-12-02T10:13:01Z"})
    CHECK_FALSE(is_utc_timestamp(t));

  CHECK(storable_run_problem(sample_run()).empty());
  run r = sample_run();
  r.samples[1].index = 0;
  CHECK(storable_run_problem(r) == "sample index 0 appears twice");
  r = sample_run();
  r.samples[0].value = 0;
  CHECK_THAT(storable_run_problem(r),
             Contains("sample index 0 is 0 s: a time must be more than 0"));
  r.sample_unit = "TFLOP/s";
  r.sample_dir = direction::higher_is_better;
  CHECK_THAT(storable_run_problem(r), Contains("a rate must be more than 0"));
  r = sample_run();
  r.samples[1].value = std::nan("");
  CHECK_THAT(storable_run_problem(r), Contains("must be more than 0"));
  r = sample_run();
  r.add_metric("x", 1, "", direction::higher_is_better);
  r.metrics.push_back(r.metrics.back());
  CHECK(storable_run_problem(r) == "metric 'x' appears twice");
  r = sample_run();
  r.tags = {"a", "a"}; // said once by the store: nothing to refuse
  r.started_at = "";   // stored as the import time
  CHECK(storable_run_problem(r).empty());
  r.finished_at = "later";
  CHECK_THAT(storable_run_problem(r), Contains("finished_at 'later' is not a UTC date and time"));

  // The error names the origin, the run's position and uuid.
  std::vector<run> runs = {sample_run(), r};
  CHECK_THROWS_WITH(require_storable_runs(runs, "in.json"),
                    Contains("in.json: run 1 (uuid 0f8fad5b-d9cb-469f-a165-70867728950e): "
                             "finished_at 'later'"));
  json doc = results_document(runs, json::array(), json::array());
  CHECK_THAT(error_of(dump_json(doc)), Contains("run 1 (uuid"));
}

TEST_CASE("a run over a limit is refused before the document is validated, naming the run and the "
          "limit, and a run at the limits reads",
          "[json_export][limits]") {
  run at = sample_run();
  at.samples.clear();
  at.samples.reserve(limits::k_max_samples);
  for (std::size_t i = 0; i < limits::k_max_samples; ++i)
    at.samples.push_back({(int64_t)i, 1e-3, 1, json::object()});
  at.metrics.clear();
  for (std::size_t i = 0; i < limits::k_max_metrics; ++i)
    at.add_metric(std::string(limits::k_max_metric_name_bytes - 8, 'm') +
                      std::to_string(10'000'000 + i),
                  1, "", direction::higher_is_better);
  at.tags.clear();
  for (std::size_t i = 0; i < limits::k_max_tags; ++i)
    at.tags.push_back(std::string(limits::k_max_tag_bytes - 8, 't') +
                      std::to_string(10'000'000 + i));
  const json doc = results_document({sample_run(), at}, json::array(), json::array());
  const auto runs = read_results_document(dump_json(doc), "in.json");
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].samples.size() == limits::k_max_samples);
  CHECK(runs[1].metrics.size() == limits::k_max_metrics);
  CHECK(runs[1].tags.size() == limits::k_max_tags);

  // One more of each, in a document that is otherwise invalid too (no schema_version): the limit
  // is what is said, before the schema is checked.
  const std::string prefix = "in.json: run 1 (uuid 0f8fad5b-d9cb-469f-a165-70867728950e): ";
  for (const char* what : {"samples", "metrics", "tags"}) {
    json over = doc;
    over.erase("schema_version");
    json& list = over["runs"][1][what];
    list.push_back(list.back());
    CHECK(error_of(dump_json(over)) ==
          prefix + (what == std::string("samples")   ? limits::sample_count_problem(100'001)
                    : what == std::string("metrics") ? limits::metric_count_problem(10'001)
                                                     : limits::tag_count_problem(10'001)));
  }
  // Nothing after the run is read: the document may even end broken.
  json over = doc;
  over["runs"][1]["tags"].push_back("one-more");
  std::string cut = dump_json(over);
  cut.resize(cut.size() - 1);
  cut += ", \"broken\": [1, 2,";
  CHECK(error_of(cut) == prefix + limits::tag_count_problem(10'001));
  // A run whose uuid comes first (other writers' order) is named by it too, even when the
  // document breaks off right after the item past the limit.
  std::string uuid_first =
      R"({"runs": [{"uuid": "0f8fad5b-d9cb-469f-a165-70867728950e", "tags": [)";
  for (int i = 0; i <= 10'000; ++i)
    uuid_first += "\"t\", ";
  uuid_first += "broken";
  CHECK(error_of(uuid_first) == "in.json: run 0 (uuid 0f8fad5b-d9cb-469f-a165-70867728950e): " +
                                    limits::tag_count_problem(10'001));
  json long_tag = sample_doc();
  long_tag["runs"][0]["tags"] = {"ok", std::string(limits::k_max_tag_bytes + 1, 't')};
  CHECK_THAT(error_of(dump_json(long_tag)),
             Contains("in.json: run 0 (uuid") &&
                 Contains("is 257 bytes, longer than the 256 a tag"));
  json long_name = sample_doc();
  long_name["runs"][0]["metrics"][0]["name"] =
      std::string(limits::k_max_metric_name_bytes + 1, 'm');
  CHECK_THAT(error_of(dump_json(long_name)), Contains("longer than the 256 a metric name may be"));
  // The same check holds for runs made here (gbench import, selector files): require_storable_runs.
  run many = sample_run();
  many.tags.assign(limits::k_max_tags + 1, "t");
  CHECK(storable_run_problem(many) == limits::tag_count_problem(limits::k_max_tags + 1));
}
