// The one translation unit that defines Catch2's main (Catch2 2.x). A run in which a test case
// called ACCELBENCH_SKIP and nothing failed exits with kSkipExitCode, which CTest reports as
// skipped (SKIP_RETURN_CODE, set in cmake/accelbench_helpers.cmake). catch_discover_tests runs one
// test case per process, so the skip belongs to exactly that case.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/support/skip.hpp"

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && accelbench::testing::skip_requested())
    return accelbench::testing::kSkipExitCode;
  return failed;
}
