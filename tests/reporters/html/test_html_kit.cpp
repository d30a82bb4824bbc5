// The HTML kit's nightly chart, read back from its SVG: where the points fall in the plot, which
// ticks the value axis has and what they say, what a lone night shows.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reporters/html/chart.hpp"
#include "reporters/html/html.hpp"
#include "reporters/html/nightly_chart.hpp"

using namespace accelbench;

namespace {

html::nightly_chart chart_of(const std::vector<double>& values, const std::string& unit) {
  html::nightly_chart c;
  c.title = "t";
  c.unit = unit;
  c.y_title = "median per night";
  for (size_t i = 0; i < values.size(); ++i)
    c.nights.push_back({fmt::format("2026-12-{:02}", i + 1), values[i], {}, "tip"});
  return c;
}

// The cy of every point, in drawing order.
std::vector<double> point_ys(const std::string& svg) {
  std::vector<double> ys;
  const std::regex circle(R"re(<circle cx="[0-9.]+" cy="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator();
       ++it)
    ys.push_back(std::stod((*it)[1]));
  return ys;
}

// The labels of the value axis's ticks, top to bottom as drawn (bottom first).
std::vector<std::string> tick_labels(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex tick(R"re(class="tl tick"[^>]*>([^<]*)<)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

} // namespace

TEST_CASE("nightly chart: two nights 2% apart do not span the plot's height", "[html][nightly]") {
  // A throughput of two default jobs: 66.5 and 65.2 GFLOP/s.
  const std::string svg = html::nightly_svg(chart_of({0.0665, 0.0652}, "TFLOP/s"));
  const auto ys = point_ys(svg);
  REQUIRE(ys.size() == 2);
  // The plot is 186 px high (260 - 30 - 44): scaled from the smaller to the larger value, the
  // two points would be 186 px apart.
  const double apart = std::fabs(ys[0] - ys[1]);
  CHECK(apart > 0);
  CHECK(apart < 0.25 * 186);
  const auto axis = html::nightly_axis({0.0665, 0.0652});
  CHECK(axis.hi - axis.lo >= 2 * html::k_min_half_span * 0.0652);
}

TEST_CASE("nightly chart: a real step still shows", "[html][nightly]") {
  const auto ys = point_ys(html::nightly_svg(chart_of({1.0, 1.0, 2.0, 2.0}, "ms")));
  REQUIRE(ys.size() == 4);
  CHECK(std::fabs(ys[0] - ys[2]) > 0.5 * 186);
}

TEST_CASE("nightly chart: 4 to 6 round ticks with units", "[html][nightly]") {
  for (const auto& values : std::vector<std::vector<double>>{
           {0.0665, 0.0652}, {1e-3, 1.12e-3, 1.01e-3}, {250, 900}, {3.0}, {0, 0}, {-2, 5}}) {
    INFO(values.front());
    const auto axis = html::nightly_axis(values);
    CHECK(axis.ticks.size() >= 4);
    CHECK(axis.ticks.size() <= 6);
    CHECK(axis.ticks.front() == axis.lo);
    CHECK(axis.ticks.back() == axis.hi);
    for (double v : values) {
      CHECK(v >= axis.lo);
      CHECK(v <= axis.hi);
    }
    // Round: each tick a whole multiple of the step, the step 1, 2, 2.5 or 5 times a power of ten.
    const double step = axis.ticks[1] - axis.ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    CHECK((std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 ||
           std::fabs(mantissa - 2.5) < 1e-6 || std::fabs(mantissa - 5) < 1e-6));
  }
  const auto labels = tick_labels(html::nightly_svg(chart_of({0.0665, 0.0652}, "TFLOP/s")));
  REQUIRE(labels.size() >= 4);
  for (const auto& l : labels) {
    INFO(l);
    CHECK(l.find("FLOP/s") != std::string::npos);
  }
  CHECK(labels.front() == "55.0 GFLOP/s");
  const auto ms = tick_labels(html::nightly_svg(chart_of({1e-3, 1.1e-3}, "s")));
  CHECK(std::find(ms.begin(), ms.end(), "1.00 ms") != ms.end());
}

TEST_CASE("nightly chart: a lone night is a point with its value", "[html][nightly]") {
  const std::string svg = html::nightly_svg(chart_of({0.0249}, "TFLOP/s"));
  const auto ys = point_ys(svg);
  REQUIRE(ys.size() == 1);
  CHECK(ys[0] > 30);
  CHECK(ys[0] < 260 - 44);
  CHECK(svg.find("class=\"tl pv\">24.9 GFLOP/s</text>") != std::string::npos);
  CHECK(svg.find("<path") == std::string::npos); // no line through one point
}

TEST_CASE("nightly chart: a night's runs are drawn as its spread", "[html][nightly]") {
  auto c = chart_of({1.0, 1.1}, "ms");
  c.nights[0].runs = {0.9, 1.0, 1.2};
  const std::string svg = html::nightly_svg(c);
  CHECK(svg.find("class=\"spread\"") != std::string::npos);
  CHECK(svg.find("3 runs: 900 us to 1.20 ms") != std::string::npos);
  size_t runs = 0;
  for (size_t at = svg.find("class=\"run\""); at != std::string::npos;
       at = svg.find("class=\"run\"", at + 1))
    ++runs;
  CHECK(runs == 3);
  // The axis holds the spread, not only the medians.
  const auto axis = html::nightly_axis({1.0, 1.1, 0.9, 1.0, 1.2});
  CHECK(axis.lo <= 0.9);
  CHECK(axis.hi >= 1.2);
}

TEST_CASE("nightly chart: labels are escaped", "[html][nightly]") {
  auto c = chart_of({1.0, 2.0}, "ms");
  c.nights[0].tip = "<script>x</script>";
  c.marks.push_back({1, "<b>", "#b00", "\"q\""});
  const std::string svg = html::nightly_svg(c);
  CHECK(svg.find("<script>") == std::string::npos);
  CHECK(svg.find("&lt;script&gt;") != std::string::npos);
  CHECK(svg.find("&lt;b&gt;") != std::string::npos);
  CHECK(svg.find("&quot;q&quot;") != std::string::npos);
}

TEST_CASE("html kit: cell numbers as the report's text writes them", "[html]") {
  // One formatter (harness/core/units.hpp, report_style): a whole number bare, four digits.
  CHECK(html::num(648) == "648");
  CHECK(html::num(25) == "25");
  CHECK(html::num(648.5) == "648.5");
  CHECK(html::num(0.30007) == "0.3001");
  CHECK(html::num(1234567) == "1.235e+06");
  CHECK(html::num(std::nan("")) == "n/a");
}

TEST_CASE("xy chart: a side of one point is labelled with its value, a line is not",
          "[html][chart]") {
  html::series one{"baseline", "#4e79a7", {{1e12, 648}}, false, {}, true};
  html::series many{"candidate", "#e15759", {{1e12, 1500}, {2e12, 1613}}, true, {}, true};
  const std::string svg =
      html::xy_chart("t", "FLOP per iteration (log)", "TFLOP/s", {one, many}, true, false);
  CHECK(svg.find("class=\"tl pv\">648 TFLOP/s</text>") != std::string::npos);
  CHECK(svg.find("1.61 PFLOP/s</text>") == std::string::npos);
  size_t labels = 0;
  for (size_t at = svg.find("class=\"tl pv\""); at != std::string::npos;
       at = svg.find("class=\"tl pv\"", at + 1))
    ++labels;
  CHECK(labels == 1);
}
