// The results protocol of external programs (workloads/external/protocol): the JSON lines a
// user's program writes on ACCELBENCH_RESULTS_FD, read whole (parse_protocol) and as a pipe
// delivers them (protocol_parser::feed in pieces of every size, then finish). The parser answers
// bad input with data (the result's error), never an exception. Properties: the pieces do not
// change the result; a refusal is one line that names a line of the text, and the text up to that
// line gives the same refusal while the text before it is accepted; an accepted result holds only
// what docs/external.md allows (samples with finite seconds > 0 and finite counts >= 0, metrics
// with a name, a finite value and a direction, version 0 or 1).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_common.hpp"
#include "workloads/external/protocol.hpp"

using namespace accelbench;
using external::k_protocol_version;
using external::parse_protocol;
using external::protocol_parser;
using external::protocol_result;

namespace {

// The text fed in pieces whose sizes (1 to 64 bytes) are drawn from a generator seeded by the
// text, so that each input is split the same way on every run and differently from its mutants.
protocol_result parse_in_pieces(std::string_view text) {
  uint64_t state = 0x9e3779b97f4a7c15ULL ^ text.size();
  for (char c : text.substr(0, 16))
    state = state * 31 + static_cast<unsigned char>(c);
  protocol_parser p;
  while (!text.empty()) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const std::size_t n = std::min<std::size_t>(text.size(), 1 + state % 64);
    p.feed(text.substr(0, n));
    text.remove_prefix(n);
  }
  return p.finish();
}

bool same_optional(const std::optional<double>& a, const std::optional<double>& b) {
  return a.has_value() == b.has_value() && (!a || *a == *b);
}

bool same_samples(const protocol_result& a, const protocol_result& b) {
  if (a.samples.size() != b.samples.size())
    return false;
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    const external::sample &x = a.samples[i], &y = b.samples[i];
    if (x.seconds != y.seconds || !same_optional(x.items, y.items) ||
        !same_optional(x.flops, y.flops) || !same_optional(x.bytes, y.bytes))
      return false;
  }
  return true;
}

bool same_metrics(const protocol_result& a, const protocol_result& b) {
  if (a.metrics.size() != b.metrics.size())
    return false;
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    const external::metric &x = a.metrics[i], &y = b.metrics[i];
    if (x.name != y.name || x.value != y.value || x.unit != y.unit || x.direction != y.direction)
      return false;
  }
  return true;
}

bool same_result(const protocol_result& a, const protocol_result& b) {
  const bool same_verdict = a.verdict.has_value() == b.verdict.has_value() &&
                            (!a.verdict || (a.verdict->passed == b.verdict->passed &&
                                            a.verdict->reason == b.verdict->reason));
  return a.version == b.version && a.lines == b.lines && a.error == b.error && same_verdict &&
         a.extra == b.extra && same_samples(a, b) && same_metrics(a, b);
}

bool finite_count(const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v >= 0); }

// What an accepted result may hold (docs/external.md, "The results protocol").
void check_accepted(const protocol_result& r) {
  if (r.version != 0 && r.version != k_protocol_version)
    fuzz::finding("accepted protocol", "version " + std::to_string(r.version));
  for (const external::sample& s : r.samples) {
    if (!std::isfinite(s.seconds) || s.seconds <= 0)
      fuzz::finding("accepted protocol", "sample seconds " + std::to_string(s.seconds));
    if (!finite_count(s.items) || !finite_count(s.flops) || !finite_count(s.bytes))
      fuzz::finding("accepted protocol", "a sample count that is not finite and >= 0");
  }
  for (const external::metric& m : r.metrics)
    if (m.name.empty() || !std::isfinite(m.value) ||
        (m.direction != "lower" && m.direction != "higher"))
      fuzz::finding("accepted protocol", "metric '" + m.name + "' direction '" + m.direction + "'");
  if (!r.extra.is_object())
    fuzz::finding("accepted protocol", "extra is not an object");
  const auto counted = static_cast<int64_t>(r.samples.size() + r.metrics.size()) +
                       (r.verdict ? 1 : 0) + (r.version != 0 ? 1 : 0);
  if (r.lines < counted)
    fuzz::finding("accepted protocol",
                  std::to_string(r.lines) + " lines for " + std::to_string(counted) + " objects");
  if (r.silent() != (r.lines == 0))
    fuzz::finding("accepted protocol", "silent() disagrees with the line count");
}

// The offset where line `n` (from 1) of `text` begins, or npos when the text has fewer lines.
std::size_t line_start(std::string_view text, int64_t n) {
  std::size_t at = 0;
  for (int64_t i = 1; i < n; ++i) {
    at = text.find('\n', at);
    if (at == std::string_view::npos)
      return at;
    ++at;
  }
  return at;
}

// The N of a refusal "protocol line N: ...", or 0 when it does not begin so.
int64_t refused_line(const std::string& error) {
  constexpr std::string_view prefix = "protocol line ";
  if (error.compare(0, prefix.size(), prefix) != 0)
    return 0;
  const char* const last = error.data() + error.size();
  int64_t n = 0;
  auto [end, ec] = std::from_chars(error.data() + prefix.size(), last, n);
  if (ec != std::errc() || last - end < 2 || std::string_view(end, 2) != ": ")
    return 0;
  return n;
}

// A refusal: one line, "protocol line N: ...", N a line of the text; the first refused line, so
// the text through line N is refused the same way and the text before it is accepted.
void check_refused(std::string_view text, const protocol_result& r) {
  if (r.error.find_first_of("\r\n") != std::string::npos)
    fuzz::finding("refusal is not one line", r.error);
  const int64_t n = refused_line(r.error);
  if (n < 1)
    fuzz::finding("refusal does not name its line", r.error);
  const std::size_t begin = line_start(text, n);
  if (begin == std::string_view::npos)
    fuzz::finding("refusal names a line the text does not have", r.error);
  const std::size_t end = text.find('\n', begin);
  const std::string_view through = text.substr(0, end == std::string_view::npos ? end : end + 1);
  const protocol_result upto = parse_protocol(through);
  if (upto.error != r.error)
    fuzz::finding("the text through the refused line is refused otherwise",
                  r.error + " | " + upto.error);
  const protocol_result before = parse_protocol(text.substr(0, begin));
  if (!before.ok())
    fuzz::finding("a line before the refused one is refused", r.error + " | " + before.error);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::must_succeed("parsing a protocol text", [&] {
    const protocol_result whole = parse_protocol(text);
    if (!same_result(whole, parse_in_pieces(text)))
      fuzz::finding("the text read in pieces gives another result", "whole: '" + whole.error + "'");
    if (whole.ok())
      check_accepted(whole);
    else
      check_refused(text, whole);
  });
  return 0;
}
