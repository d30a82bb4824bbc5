#include <catch2/catch.hpp>

#include "harness/core/ranks.hpp"

using namespace accelbench;

TEST_CASE("first_difference names the first setting that differs, with both values") {
  json root = {{"runs", {{{"values", {{"bytes", "1024"}, {"op", "allreduce"}}}}}}, {"seed", 0}};
  json mine = root;
  CHECK(first_difference(root, mine, 1).empty());
  mine["runs"][0]["values"]["bytes"] = "2048";
  CHECK(first_difference(root, mine, 1) ==
        "/runs/0/values/bytes: rank 0 has \"1024\", rank 1 has \"2048\"");
  json fewer = root;
  fewer["runs"][0]["values"].erase("op");
  CHECK(first_difference(root, fewer, 3) ==
        "/runs/0/values/op: rank 0 has \"allreduce\", rank 3 has nothing");
  CHECK(first_difference(fewer, root, 2) ==
        "/runs/0/values/op: rank 0 has nothing, rank 2 has \"allreduce\"");
}

namespace {
std::vector<sample> samples_with(const std::vector<std::vector<double>>& rank_s) {
  std::vector<sample> out;
  for (const auto& t : rank_s) {
    sample s;
    s.extra["rank_s"] = t;
    out.push_back(s);
  }
  return out;
}
} // namespace

TEST_CASE("summarize_rank_times: medians, spread and a consistently slow rank") {
  auto s = summarize_rank_times(
      samples_with({{1.0, 1.2}, {1.0, 1.3}, {1.1, 1.2}, {1.0, 1.25}, {1.0, 1.2}}));
  REQUIRE(s.is_object());
  CHECK(s["world_size"] == 2);
  CHECK(s["median_s"][0].get<double>() == Approx(1.0));
  CHECK(s["median_s"][1].get<double>() == Approx(1.2));
  CHECK(s["spread_pct"].get<double>() == Approx(20.0));
  CHECK(s["slowest_rank"] == 1);
  CHECK(s["slowest_share"].get<double>() == Approx(1.0));
  CHECK(s["consistently_slow_rank"] == 1);
}

TEST_CASE(
    "summarize_rank_times names no rank when the slowest one changes or the samples are few") {
  auto alternating = summarize_rank_times(
      samples_with({{1.0, 1.2}, {1.2, 1.0}, {1.0, 1.2}, {1.2, 1.0}, {1.0, 1.2}}));
  CHECK(alternating["consistently_slow_rank"].is_null());
  auto few = summarize_rank_times(samples_with({{1.0, 1.2}, {1.0, 1.2}}));
  CHECK(few["consistently_slow_rank"].is_null());
  auto equal = summarize_rank_times(
      samples_with({{1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}}));
  CHECK(equal["consistently_slow_rank"].is_null());              // a tie is no slow rank
  CHECK(summarize_rank_times(std::vector<sample>(3)).is_null()); // one process: no per-rank times
}
