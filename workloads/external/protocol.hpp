#pragma once
// The results protocol of external programs (docs/external.md,
// schemas/external-protocol.schema.json): JSON lines a program writes to the file descriptor
// accelbench opens for it and names in ACCELBENCH_RESULTS_FD, so that its stdout and stderr stay
// its own. One home for what a line may say; the parser refuses the first bad line with a one-line
// reason naming its number and value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "harness/core/mllog.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::external {

// The protocol version this build speaks; a `{"protocol": N}` hello line, when present, must be the
// first line and name it.
inline constexpr int k_protocol_version = 1;
// The environment variable that names the results file descriptor.
inline constexpr std::string_view k_results_fd_env = "ACCELBENCH_RESULTS_FD";
// Longest protocol line accepted (1 MiB): a sample line is under 200 bytes; a longer line is not
// the protocol (a binary written to the wrong descriptor).
inline constexpr std::size_t k_max_line_bytes = std::size_t{1} << 20;

// One timed repetition as the program measured it: seconds > 0, and what it processed.
struct sample {
  double seconds = 0;
  std::optional<double> items; // items (tokens, images, requests) per sample
  std::optional<double> flops; // floating-point operations per sample
  std::optional<double> bytes; // bytes moved per sample
};

// A figure of the program's own, with the direction in which it is better.
struct metric {
  std::string name;
  double value = 0;
  std::string unit;
  std::string direction; // "lower" | "higher"
};

// The program's correctness verdict.
struct check {
  bool passed = false;
  std::string reason;
};

struct protocol_result {
  int version = 0;   // from the hello line; 0 when the program sent none
  int64_t lines = 0; // non-blank lines read
  std::vector<sample> samples;
  std::vector<metric> metrics;
  std::optional<check> verdict;
  json extra = json::object(); // the `extra` objects merged in order (a later key wins)
  std::string error;           // the first refused line: "protocol line N: ..."; empty when none

  bool ok() const { return error.empty(); }
  // True when the program wrote no protocol line at all (it is then timed as a whole process).
  bool silent() const { return lines == 0 && ok(); }
};

// Reads the protocol one line at a time, as the bytes arrive; after the first refused line it
// ignores the rest (the run is failed, and later lines cannot make it valid again).
class protocol_parser {
public:
  // Feeds one line without its '\n' (a trailing '\r' is dropped). Returns ok().
  bool feed_line(std::string_view line);
  // Feeds a chunk of bytes; a line is complete at its '\n'. Returns ok().
  bool feed(std::string_view bytes);
  // Ends the input: an unterminated last line is read as a line. Returns the result.
  const protocol_result& finish();
  const protocol_result& result() const { return result_; }

private:
  void refuse(const std::string& why);
  bool read_object(const json& j);
  std::string one_more_sample(std::size_t samples_so_far);
  std::string one_more_metric(const std::string& name);
  protocol_result result_;
  std::unordered_set<std::string> metric_names_; // so far (limits::k_max_program_metrics)
  std::string pending_;
  int64_t line_no_ = 0;
};

// Parses a whole protocol text.
protocol_result parse_protocol(std::string_view text);

// The MLPerf log lines (":::MLLOG {json}") in a program's stdout, read by the one MLLOG reader;
// other stdout lines are ignored. Empty events when the program printed none.
mllog::parsed_log read_stdout_mllog(std::string_view stdout_text);

} // namespace accelbench::external
