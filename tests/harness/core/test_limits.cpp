// The limits of one run (harness/core/limits.hpp): each refused with its one-line message at one
// past the limit and accepted at it, the schemas stating the same figures, and the metric list's
// index kept in step with every change to a run's metrics.
#include <catch2/catch.hpp>

#include <string>

#include "harness/core/limits.hpp"
#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"

using namespace accelbench;
using Catch::Matchers::Contains;

namespace {

metric named(const std::string& name, double value = 1) {
  return {name, value, "", direction::higher_is_better};
}

std::vector<std::string> tags_of(std::size_t n) {
  std::vector<std::string> tags;
  tags.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    tags.push_back("t" + std::to_string(i));
  return tags;
}

json schema_file(const std::string& name) {
  return read_json_file(data_root() / "schemas" / name, "schema");
}

} // namespace

TEST_CASE("each limit is refused one past it, naming the value and the limit", "[limits]") {
  using namespace limits;
  CHECK(tag_count_problem(k_max_tags).empty());
  CHECK(tag_count_problem(k_max_tags + 1) == "10001 tags, more than the 10000 a run may hold");
  CHECK(metric_count_problem(k_max_metrics).empty());
  CHECK(metric_count_problem(k_max_metrics + 1) ==
        "10001 metrics, more than the 10000 a run may hold");
  CHECK(program_metric_count_problem(k_max_program_metrics).empty());
  CHECK(program_metric_count_problem(k_max_program_metrics + 1) ==
        "9985 metrics, more than the 9984 a program may report (a run holds 10000, 16 of them "
        "kept for accelbench's own figures)");
  CHECK(sample_count_problem(k_max_samples).empty());
  CHECK(sample_count_problem(k_max_samples + 1) ==
        "100001 samples, more than the 100000 a run may hold");
  CHECK(tag_problem(std::string(k_max_tag_bytes, 'a')).empty());
  CHECK(tag_problem(std::string(k_max_tag_bytes + 1, 'a')) ==
        "tag '" + std::string(40, 'a') + "...' is 257 bytes, longer than the 256 a tag may be");
  CHECK(metric_name_problem(std::string(k_max_metric_name_bytes, 'm')).empty());
  CHECK_THAT(metric_name_problem(std::string(k_max_metric_name_bytes + 1, 'm')),
             Contains("is 257 bytes, longer than the 256 a metric name may be"));
  // A long tag that is not UTF-8 is shown printable: the message stays one line of text.
  CHECK_THAT(tag_problem(std::string(300, '\n')), !Contains("\n"));
}

TEST_CASE("a run is checked for every limit, and passes at the limits", "[limits]") {
  using namespace limits;
  run r;
  r.tags = tags_of(k_max_tags);
  for (std::size_t i = 0; i < k_max_metrics; ++i)
    r.metrics.push_back(named("m" + std::to_string(i)));
  r.samples.resize(k_max_samples);
  CHECK(run_problem(r).empty());

  run more = r;
  more.samples.emplace_back();
  CHECK(run_problem(more) == sample_count_problem(k_max_samples + 1));
  more = r;
  more.metrics.push_back(named("one-more"));
  CHECK(run_problem(more) == metric_count_problem(k_max_metrics + 1));
  more = r;
  more.tags.emplace_back("one-more");
  CHECK(run_problem(more) == tag_count_problem(k_max_tags + 1));

  run small;
  small.tags = {"nightly", std::string(300, 'x')};
  CHECK_THAT(run_problem(small), Contains("is 300 bytes, longer than the 256 a tag may be"));
  small.tags = {"nightly"};
  small.metrics.push_back(named(std::string(300, 'm')));
  CHECK_THAT(run_problem(small), Contains("a metric name may be"));
}

TEST_CASE("the tags of a command line are checked for their count, then each tag", "[limits]") {
  CHECK(limits::tags_problem(tags_of(limits::k_max_tags)).empty());
  CHECK(limits::tags_problem(tags_of(limits::k_max_tags + 1)) ==
        limits::tag_count_problem(limits::k_max_tags + 1));
  CHECK_THAT(limits::tags_problem({"a", std::string(257, 'b')}), Contains("257 bytes"));
}

TEST_CASE("a run over a limit is failed with the reason and kept within the limits", "[limits]") {
  run r;
  r.samples.resize(limits::k_max_samples + 5);
  r.metrics.push_back(named("time"));
  r.metrics.push_back(named(std::string(300, 'm')));
  r.tags = {"nightly", std::string(300, 't')};
  CHECK(limits::fail_over_limits(r));
  CHECK(r.status == run_status::failed);
  CHECK(r.status_reason == limits::sample_count_problem(limits::k_max_samples + 5));
  CHECK_FALSE(r.valid);
  CHECK(r.samples.size() == limits::k_max_samples);
  REQUIRE(r.metrics.size() == 1);
  CHECK(r.find_metric("time"));
  CHECK(r.tags == std::vector<std::string>{"nightly"});
  CHECK(limits::run_problem(r).empty());

  run fine;
  fine.samples.resize(3);
  CHECK_FALSE(limits::fail_over_limits(fine));
  CHECK(fine.status == run_status::ok);
}

TEST_CASE("the schemas state the limits of harness/core/limits.hpp", "[limits]") {
  const json results = schema_file("results.schema.json");
  const json& props = results["$defs"]["run"]["properties"];
  CHECK(props["tags"]["maxItems"] == limits::k_max_tags);
  CHECK(props["metrics"]["maxItems"] == limits::k_max_metrics);
  CHECK(props["samples"]["maxItems"] == limits::k_max_samples);
  CHECK_THAT(props["tags"]["items"]["description"].get<std::string>(),
             Contains(std::to_string(limits::k_max_tag_bytes) + " bytes"));
  CHECK_THAT(results["$defs"]["metric"]["properties"]["name"]["description"].get<std::string>(),
             Contains(std::to_string(limits::k_max_metric_name_bytes) + " bytes"));
  const json rules = schema_file("ruleset.schema.json");
  CHECK(rules["properties"]["measurement"]["properties"]["repetitions"]["maximum"] ==
        limits::k_max_samples);
  const std::string protocol = schema_file("external-protocol.schema.json")["description"];
  CHECK_THAT(protocol, Contains("100,000 sample lines") && Contains("9,984 distinct metric") &&
                           Contains("256 bytes"));
}

TEST_CASE("a run's metric index follows every change to its metrics", "[limits][model]") {
  run r;
  r.add_metric("time", 2, "s", direction::lower_is_better);
  r.add_metric("tflops", 5, "TFLOP/s", direction::higher_is_better);
  r.add_metric("time", 3, "ms", direction::lower_is_better); // replaced in place
  REQUIRE(r.metrics.size() == 2);
  CHECK(r.metrics[0].name == "time");
  CHECK(r.metrics[0].value == 3);
  CHECK(r.metrics[0].unit == "ms");
  CHECK(r.find_metric("tflops")->value == 5);
  CHECK(r.find_metric("cv") == nullptr);

  // A name pushed twice (a document from outside may hold it): the first is found, both kept.
  r.metrics.push_back(named("tflops", 7));
  CHECK(r.metrics.size() == 3);
  CHECK(r.find_metric("tflops")->value == 5);
  // Removing the first makes the second the one found.
  CHECK(r.metrics.erase_if([](const metric& m) { return m.value == 5; }) == 1);
  CHECK(r.find_metric("tflops")->value == 7);
  CHECK(r.find_metric("time")->value == 3);
  r.metrics.truncate(1);
  CHECK(r.find_metric("tflops") == nullptr);
  CHECK(r.find_metric("time"));
  r.metrics.clear();
  CHECK(r.find_metric("time") == nullptr);
  CHECK(r.metrics.empty());

  // Copies and moves carry their own index.
  r.add_metric("a", 1, "", direction::higher_is_better);
  run copy = r;
  copy.add_metric("b", 2, "", direction::higher_is_better);
  CHECK(r.find_metric("b") == nullptr);
  CHECK(copy.find_metric("a") == &copy.metrics[0]);
  run moved = std::move(copy);
  CHECK(moved.find_metric("b") == &moved.metrics[1]);
  const metric_list listed{named("x"), named("y"), named("x", 9)};
  CHECK(listed.size() == 3);
  CHECK(listed.find("x")->value == 1);
}

TEST_CASE("many distinct metrics are each found and set by name", "[limits][model]") {
  // The external workload adds a program's metrics one by one, looking each name up first: every
  // one of 10^5 names must still be found, set in place and kept once.
  run r;
  constexpr int k_n = 100'000;
  for (int i = 0; i < k_n; ++i)
    r.add_metric("m" + std::to_string(i), i, "", direction::lower_is_better);
  for (int i = 0; i < k_n; i += 3)
    r.add_metric("m" + std::to_string(i), -i, "x", direction::lower_is_better);
  REQUIRE(r.metrics.size() == (size_t)k_n);
  for (int i = 0; i < k_n; ++i) {
    const metric* m = r.find_metric("m" + std::to_string(i));
    REQUIRE(m);
    CHECK(m == &r.metrics[i]);
    CHECK(m->value == (i % 3 == 0 ? -i : i));
  }
}
