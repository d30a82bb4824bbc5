#pragma once
// A test case that cannot run on this machine (no GPU, no browser) says why and is reported by
// CTest as skipped, never as passed: ACCELBENCH_SKIP(reason) prints the reason, marks the process
// and returns from the test case; tests/support/catch_main.cpp then exits with kSkipExitCode, which
// every test registers as its SKIP_RETURN_CODE. A test case that had failed before asking to skip
// still fails (the failure count wins), so a skip can never hide a failure.
#include <iostream>
#include <sstream>

namespace accelbench::testing {
inline constexpr int kSkipExitCode = 77; // the automake convention, also CTest's usual choice
inline bool& skip_requested() {
  static bool flag = false;
  return flag;
}
} // namespace accelbench::testing

#define ACCELBENCH_SKIP(reason_stream)                                                             \
  do {                                                                                             \
    std::ostringstream accelbench_skip_os_;                                                        \
    accelbench_skip_os_ << reason_stream;                                                          \
    std::cout << "SKIPPED: " << accelbench_skip_os_.str() << std::endl;                            \
    ::accelbench::testing::skip_requested() = true;                                                \
    return;                                                                                        \
  } while (0)
