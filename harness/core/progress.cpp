#include "harness/core/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

#include <fmt/format.h>

namespace accelbench {

std::string format_duration(double s) {
  if (!(s >= 0) || !std::isfinite(s))
    return "?";
  if (s < 10)
    return fmt::format("{:.1f} s", s);
  const auto total = static_cast<long long>(std::llround(s));
  if (total < 60)
    return fmt::format("{} s", total);
  if (total < 3600)
    return fmt::format("{} min {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

progress::progress(size_t total, options opt) : total_(total), opt_(std::move(opt)) {
  start_ = now();
}

std::ostream& progress::out() const { return opt_.out ? *opt_.out : std::cerr; }

double progress::now() const {
  if (opt_.clock)
    return opt_.clock();
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string progress::timing(size_t index, double elapsed) const {
  std::string t = "elapsed " + format_duration(elapsed);
  if (index > 0 && index < total_) {
    const double left = elapsed / static_cast<double>(index) * static_cast<double>(total_ - index);
    t += ", about " + format_duration(left) + " left";
  }
  return t;
}

std::string progress::line(size_t index, const std::string& label, double elapsed) const {
  return fmt::format("[{}/{}] {} ({})", index + 1, total_, label, timing(index, elapsed));
}

namespace {

size_t columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

// Cuts text to width columns (UTF-8 code points), ending in "…" when cut.
std::string fit(const std::string& s, size_t width) {
  if (width == 0)
    return s;
  size_t cols = 0, i = 0, cut = std::string::npos;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
      continue;
    if (cols == width - 1)
      cut = i;
    if (++cols > width)
      return s.substr(0, cut) + "\u2026";
  }
  return s;
}

} // namespace

void progress::step(size_t index, const std::string& label) {
  if (opt_.quiet)
    return;
  const double elapsed = now() - start_;
  if (!opt_.terminal) {
    out() << "accelbench: " << line(index, label, elapsed) << "\n";
    return;
  }
  // On a terminal the label gives way first: the count and the times are what the line is for.
  const std::string head = fmt::format("[{}/{}] ", index + 1, total_);
  const std::string tail = " (" + timing(index, elapsed) + ")";
  std::string text = head + label + tail;
  if (opt_.width > 0 && columns(text) > opt_.width) {
    const size_t fixed = columns(head) + columns(tail);
    text = opt_.width > fixed + 8 ? head + fit(label, opt_.width - fixed) + tail
                                  : fit(head + label + tail, opt_.width);
  }
  out() << "\r\033[K" << text << std::flush;
  line_open_ = true;
}

void progress::message(const std::string& text) {
  if (line_open_)
    out() << "\r\033[K";
  out() << text << "\n";
  line_open_ = false;
}

void progress::finish() {
  if (line_open_)
    out() << "\r\033[K" << std::flush;
  line_open_ = false;
}

progress::options progress::for_stderr(bool quiet) {
  options o;
  o.quiet = quiet;
  o.terminal = isatty(STDERR_FILENO) != 0;
  o.out = &std::cerr;
  if (o.terminal) {
    winsize ws{};
    // The last column would wrap on some terminals; 79 when the terminal does not say.
    o.width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col - 1 : 79;
  }
  return o;
}

} // namespace accelbench
