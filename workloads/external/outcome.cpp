#include "workloads/external/outcome.hpp"

namespace accelbench::external {

std::string to_string(run_status s) {
  switch (s) {
  case run_status::valid:
    return "valid";
  case run_status::invalid:
    return "invalid";
  case run_status::failed:
    break;
  }
  return "failed";
}

namespace {

// The reason a run that ended well is INVALID, or "".
std::string invalid_reason(const process_outcome& o, const protocol_result& p,
                           bool require_protocol) {
  if (o.protocol_truncated) {
    return "protocol output larger than the limit (" + std::to_string(o.protocol_text.size()) +
           " bytes kept)";
  }
  if (!p.ok()) {
    return p.error;
  }
  if (p.silent()) {
    return require_protocol
               ? "the program wrote no protocol line on " + std::string(k_results_fd_env)
               : "";
  }
  if (p.samples.empty()) {
    return "the program reported no samples (" + std::to_string(p.lines) + " protocol lines)";
  }
  if (p.verdict && !p.verdict->passed) {
    return "the program's check failed: " +
           (p.verdict->reason.empty() ? std::string("no reason given") : p.verdict->reason);
  }
  return "";
}

} // namespace

judged_run judge(const process_outcome& o, bool require_protocol) {
  judged_run j;
  j.protocol = parse_protocol(o.protocol_text);
  j.mllog = read_stdout_mllog(o.stdout_text);
  if (!o.succeeded()) {
    j.status = run_status::failed;
    j.reason = o.failure();
    return j;
  }
  j.reason = invalid_reason(o, j.protocol, require_protocol);
  if (!j.reason.empty()) {
    j.status = run_status::invalid;
    return j;
  }
  j.status = run_status::valid;
  j.whole_process = j.protocol.silent();
  if (j.whole_process) {
    j.seconds.push_back(o.wall_seconds);
  } else {
    for (const sample& s : j.protocol.samples) {
      j.seconds.push_back(s.seconds);
    }
  }
  return j;
}

} // namespace accelbench::external
