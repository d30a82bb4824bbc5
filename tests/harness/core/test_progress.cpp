// harness/core/progress: the line's text, the estimate, and what reaches the stream on a
// terminal, in a log and when quiet. A fake clock drives the time; nothing sleeps.
#include <catch2/catch.hpp>

#include <sstream>

#include "harness/core/progress.hpp"

using namespace accelbench;

namespace {
struct fake_clock {
  double t = 100;
  std::function<double()> fn() {
    return [this] { return t; };
  }
};
} // namespace

TEST_CASE("durations read as people say them", "[progress]") {
  CHECK(format_duration(0.42) == "0.4 s");
  CHECK(format_duration(42) == "42 s");
  CHECK(format_duration(185) == "3 min 05 s");
  CHECK(format_duration(7620) == "2 h 07 min");
  CHECK(format_duration(-1) == "?");
}

TEST_CASE("the estimate is the mean step time times the steps left", "[progress]") {
  fake_clock c;
  std::ostringstream out;
  progress p(4, {false, false, 0, &out, c.fn()});
  CHECK(p.line(0, "gemm M=1", 0) == "[1/4] gemm M=1 (elapsed 0.0 s)");
  // Two steps done in 30 s: 15 s each, two left -> about 30 s.
  CHECK(p.line(2, "gemm M=3", 30) == "[3/4] gemm M=3 (elapsed 30 s, about 30 s left)");
  CHECK(p.line(3, "gemm M=4", 600) ==
        "[4/4] gemm M=4 (elapsed 10 min 00 s, about 3 min 20 s left)");
}

TEST_CASE("a log gets one plain line per step, and quiet gets nothing", "[progress]") {
  fake_clock c;
  std::ostringstream log, none;
  progress p(2, {false, false, 0, &log, c.fn()});
  p.step(0, "a");
  c.t += 12;
  p.step(1, "b");
  p.finish();
  CHECK(log.str() == "accelbench: [1/2] a (elapsed 0.0 s)\n"
                     "accelbench: [2/2] b (elapsed 12 s, about 12 s left)\n");
  progress q(2, {true, true, 80, &none, c.fn()});
  q.step(0, "a");
  q.finish();
  CHECK(none.str().empty());
}

TEST_CASE("a terminal gets one line rewritten, and a long label gives way to the times",
          "[progress]") {
  fake_clock c;
  std::ostringstream tty;
  progress p(3, {false, true, 40, &tty, c.fn()});
  p.step(0, "attention heads=32 seq=4096 dtype=bf16");
  const std::string first = tty.str();
  CHECK(first.rfind("\r\033[K", 0) == 0);
  CHECK(first.find('\n') == std::string::npos);
  // 40 columns: "[1/3] " (6) + the label cut to 18 with its ellipsis + " (elapsed 0.0 s)" (16).
  CHECK(first.substr(4) == "[1/3] attention heads=3\u2026 (elapsed 0.0 s)");
  c.t += 30;
  p.message("accelbench: run 1 warning: high CV");
  p.step(1, "x");
  p.finish();
  const std::string all = tty.str();
  CHECK(all.find("\r\033[Kaccelbench: run 1 warning: high CV\n") != std::string::npos);
  // The times alone are wider than 40 columns here: the line is cut, still one line.
  CHECK(all.find("\r\033[K[2/3] x (elapsed 30 s, about 1 min 00 s\u2026") != std::string::npos);
  CHECK(all.size() >= 4);
  CHECK(all.substr(all.size() - 4) == "\r\033[K"); // the line is cleared at the end
  // Too narrow for the times: the whole line is cut.
  std::ostringstream narrow;
  progress q(3, {false, true, 12, &narrow, c.fn()});
  q.step(0, "attention");
  CHECK(narrow.str().substr(4) == "[1/3] atten\u2026");
}
