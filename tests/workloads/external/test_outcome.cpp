// What a run of an external program amounts to: the outcome table of docs/external.md, judged on
// outcomes made by hand (the runner's own tests run real programs).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
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
  late.timeout_s = 2;
  late.wall_seconds = 3.031;
  judged_run j = judge(late);
  CHECK(j.status == run_status::failed);
  CHECK(j.reason == "timed out: its timeout is 2 s (ended after 3.03 s)");
  CHECK(j.protocol.samples.size() == 1); // kept for the record, not for the statistics
  CHECK(j.seconds.empty());
}

TEST_CASE("a limit the program ran into makes the run failed, named with its setting") {
  process_outcome hog = exited(-1);
  hog.signal = SIGKILL;
  hog.memory_exceeded = true;
  hog.limits.memory_bytes = std::uint64_t{64} << 20;
  CHECK(to_string(judge(hog).status) == "failed");
  CHECK(judge(hog).reason == "used more than 64 MiB of resident memory, its limit (summed over its "
                             "processes; they were killed)");
  process_outcome big = exited(-1);
  big.signal = SIGXFSZ;
  big.limits.file_bytes = std::uint64_t{3} << 19;
  CHECK(judge(big).reason ==
        "killed by signal SIGXFSZ: it wrote past its file-size limit of 1.5 MiB");
  process_outcome shell = exited(128 + SIGXFSZ);
  shell.limits.file_bytes = std::uint64_t{1} << 20;
  CHECK(judge(shell).reason ==
        "exit code 153 (a process of it wrote past its file-size limit of 1 MiB)");
  process_outcome files = exited(1);
  files.stderr_tail = "OSError: [Errno 24] Too many open files: 'x'\n";
  files.limits.open_files = 64;
  CHECK(judge(files).reason ==
        "exit code 1 (its stderr says 'Too many open files': its open-files limit is 64)");
  files.limits.open_files = 0; // no limit of accelbench's: nothing to name
  CHECK(judge(files).reason == "exit code 1");
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
