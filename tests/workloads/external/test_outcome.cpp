// What a run of an external program amounts to: the outcome table of docs/external.md, judged on
// outcomes made by hand (the runner's own tests run real programs).
#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include "workloads/external/outcome.hpp"

using namespace accelbench::external;

namespace {

process_outcome exited(int code, std::string protocol = "", std::string out = "") {
  process_outcome o;
  o.exit_code = code;
  o.wall_seconds = 1.5;
  o.protocol_text = std::move(protocol);
  o.stdout_text = std::move(out);
  return o;
}

} // namespace

TEST_CASE("a program without the protocol is one whole-process sample") {
  judged_run j = judge(exited(0));
  CHECK(j.status == run_status::valid);
  CHECK(j.whole_process);
  CHECK(j.seconds == std::vector<double>{1.5});
  judged_run strict = judge(exited(0), true);
  CHECK(strict.status == run_status::invalid);
  CHECK(strict.reason == "the program wrote no protocol line on ACCELBENCH_RESULTS_FD");
}

TEST_CASE("protocol samples are the run's samples") {
  judged_run j =
      judge(exited(0, "{\"sample\": {\"seconds\": 0.5}}\n{\"sample\": {\"seconds\": 0.25}}\n"));
  CHECK(j.status == run_status::valid);
  CHECK_FALSE(j.whole_process);
  CHECK(j.seconds == std::vector<double>{0.5, 0.25});
}

TEST_CASE("exit codes, signals, timeouts and cancels make the run failed") {
  CHECK(judge(exited(2)).reason == "exit code 2");
  CHECK(to_string(judge(exited(2)).status) == "failed");
  process_outcome crash = exited(-1);
  crash.signal = SIGABRT;
  CHECK(judge(crash).reason == "killed by signal SIGABRT");
  process_outcome late = exited(-1, "{\"sample\": {\"seconds\": 1}}\n");
  late.signal = SIGTERM;
  late.timed_out = true;
  judged_run j = judge(late);
  CHECK(j.status == run_status::failed);
  CHECK(j.reason.rfind("timed out after", 0) == 0);
  CHECK(j.protocol.samples.size() == 1); // kept for the record, not for the statistics
  CHECK(j.seconds.empty());
}

TEST_CASE("bad protocol, no samples and a failed check make the run INVALID") {
  judged_run bad = judge(exited(0, "{\"sample\": {\"seconds\": 0}}\n"));
  CHECK(to_string(bad.status) == "invalid");
  CHECK(bad.reason == "protocol line 1: sample seconds 0 is not a finite number > 0");
  CHECK(judge(exited(0, "{\"protocol\": 1}\n")).reason ==
        "the program reported no samples (1 protocol lines)");
  CHECK(judge(exited(0, "{\"sample\": {\"seconds\": 1}}\n{\"check\": {\"passed\": false, "
                        "\"reason\": \"max error 0.3\"}}"))
            .reason == "the program's check failed: max error 0.3");
  process_outcome big = exited(0, "{\"sample\": {\"seconds\": 1}}\n");
  big.protocol_truncated = true;
  CHECK(judge(big).status == run_status::invalid);
}

TEST_CASE("MLLOG lines of stdout come with the judged run") {
  judged_run j = judge(exited(0, "",
                              ":::MLLOG {\"namespace\": \"\", \"time_ms\": 5, \"event_type\": "
                              "\"POINT_IN_TIME\", \"key\": \"seed\", \"value\": 7, "
                              "\"metadata\": {}}\n"));
  REQUIRE(j.mllog.events.size() == 1);
  CHECK(j.mllog.events[0].value == 7);
}
