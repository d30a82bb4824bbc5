#pragma once
// What one run of an external program amounts to: the one home of the outcome table of
// docs/external.md (failed, INVALID with a reason, or valid with its samples), so that the
// `accelbench run external` command only stores what this says.
#include <string>
#include <vector>

#include "harness/core/mllog.hpp"
#include "workloads/external/process.hpp"
#include "workloads/external/protocol.hpp"

namespace accelbench::external {

enum class run_status { valid, invalid, failed };
std::string to_string(run_status s); // "valid" | "invalid" | "failed"

struct judged_run {
  run_status status = run_status::failed;
  std::string reason;          // one line; empty when valid
  bool whole_process = false;  // no protocol line: the sample is the process's wall time
  std::vector<double> seconds; // the samples' seconds (protocol) or the one wall time
  protocol_result protocol;    // as parsed (kept even when failed, for its extra facts)
  mllog::parsed_log mllog;     // the :::MLLOG lines of stdout
};

// Judges one outcome. `require_protocol`: a program that wrote no protocol line is INVALID
// instead of being timed as a whole process.
judged_run judge(const process_outcome& o, bool require_protocol = false);

} // namespace accelbench::external
