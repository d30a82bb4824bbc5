#pragma once
// Progress of long work (the runs of a sweep, files of an import): "[3/12] label", the elapsed
// time and an estimate of what remains, on stderr. On a terminal it is one line rewritten with
// \r (cut to the terminal's width, never wrapping); elsewhere (a CI log, a file) one plain line
// per step; nothing at all when quiet.
#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace accelbench {

class progress {
public:
  struct options {
    bool quiet = false;            // print nothing
    bool terminal = false;         // rewrite one line with \r instead of printing lines
    size_t width = 0;              // terminal columns the line may use (0: no limit)
    std::ostream* out = nullptr;   // default std::cerr
    std::function<double()> clock; // seconds on a monotonic clock; default steady_clock
  };

  progress(size_t total, options opt);
  // The options for stderr: a rewritten line cut to the terminal's width when stderr is one,
  // plain lines otherwise, nothing when quiet.
  static options for_stderr(bool quiet);

  // Announces step index (0-based) of total: "[index+1/total] label (elapsed 12 s, about 36 s
  // left)". The estimate is the mean time of the steps done so far times the steps left; there is
  // none before the first step has finished.
  void step(size_t index, const std::string& label);
  // Prints an ordinary message (a warning) without mixing it into the progress line.
  void message(const std::string& text);
  // Ends the progress: a terminal's line is cleared.
  void finish();

  // The text of a step, for tests: no escape codes, no width limit.
  std::string line(size_t index, const std::string& label, double elapsed_s) const;

private:
  size_t total_;
  options opt_;
  double start_ = 0;
  bool line_open_ = false;
  std::ostream& out() const;
  std::string timing(size_t index, double elapsed_s) const; // "elapsed 12 s, about 36 s left"
  double now() const;
};

// A duration as people read it: "0.4 s", "42 s", "3 min 05 s", "2 h 07 min".
std::string format_duration(double seconds);

} // namespace accelbench
