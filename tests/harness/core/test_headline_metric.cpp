#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "harness/core/headline_metric.hpp"

using namespace accelbench;

namespace {

// A run with these metrics, in this order (name, unit).
run with_metrics(const std::vector<std::pair<std::string, std::string>>& ms) {
  run r;
  for (const auto& [name, unit] : ms)
    r.add_metric(name, 1.0, unit, direction::higher_is_better);
  return r;
}

std::string headline_of(const run& r, const std::string& primary = "") {
  const metric* m = headline_metric(r, primary);
  return m ? m->name : "(none)";
}

} // namespace

TEST_CASE("headline: the workload's primary metric first, when known and present", "[headline]") {
  const run r = with_metrics({{"busbw", "GB/s"}, {"time", "s"}, {"tflops", "TFLOP/s"}});
  CHECK(headline_of(r, "busbw") == "busbw");
  CHECK(headline_of(r, "time") == "time");
  // Unknown (the server, an unregistered workload) or absent: the list decides.
  CHECK(headline_of(r) == "tflops");
  CHECK(headline_of(r, "tokens_per_s") == "tflops");
}

TEST_CASE("headline: time to train, TFLOP/s, tokens per second, bus bandwidth, time, in that order",
          "[headline]") {
  const std::vector<std::string> order = {"time_to_train_min", "tflops", "tokens_per_s", "busbw",
                                          "time"};
  // Each figure wins over every one after it, whatever the order the run holds them in.
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<std::pair<std::string, std::string>> ms;
    ms.reserve(order.size() + 1);
    ms.emplace_back("achieved_tflops", "TFLOP/s");
    for (size_t j = order.size(); j-- > i;)
      ms.emplace_back(order[j], "u");
    INFO("from " << order[i]);
    CHECK(headline_of(with_metrics(ms)) == order[i]);
  }
}

TEST_CASE("headline: else the first metric with a unit, else the first metric", "[headline]") {
  CHECK(headline_of(with_metrics({{"cv", ""}, {"energy_j", "J"}, {"items_per_s", "items/s"}})) ==
        "energy_j");
  CHECK(headline_of(with_metrics({{"cv", ""}, {"ratio", ""}})) == "cv");
  CHECK(headline_of(run{}) == "(none)");
  CHECK(headline_of(run{}, "tflops") == "(none)");
}

// The store reads a run's metrics back in the order of their names: an external program's run
// comes back as cv, gb_per_s, items_per_s, time; a Google Benchmark import's with its counters.
TEST_CASE("headline: a stored run's metrics in name order lead with cv, never its headline",
          "[headline]") {
  const run external =
      with_metrics({{"cv", ""}, {"gb_per_s", "GB/s"}, {"items_per_s", "items/s"}, {"time", "s"}});
  CHECK(headline_of(external) == "time");
  CHECK(headline_of(external, "time") == "time");
  const run counters = with_metrics({{"bytes_per_second", "B/s"}, {"cpu_time", "s"}, {"cv", ""}});
  CHECK(headline_of(counters) == "bytes_per_second");
}
