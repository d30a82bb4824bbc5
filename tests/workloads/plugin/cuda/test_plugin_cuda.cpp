// The CUDA example plugin through the command line: timed with CUDA events on the harness's stream
// and checked on a GPU; skipped visibly (tests/support/gpu_skip.hpp) without one.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/cli_helpers.hpp"
#include "tests/support/gpu_skip.hpp"
#include "tests/support/load_free.hpp"

using nlohmann::json;

TEST_CASE("the CUDA example plugin is measured with CUDA events and checked", "[timing]") {
  ACCELBENCH_REQUIRE_GPU();
  test_cli::temp_dir t;
  const std::string so =
      std::string(ACCELBENCH_PLUGIN_DIR) + "/libaccelbench_example_saxpy_cuda.so";
  // The load-free bounds (tests/support/load_free.hpp): VALID is the plugin's, not the machine's.
  auto r = test_cli::ab("run --plugin " + so +
                        " example.saxpy_cuda --backend cuda --set n=1048576 --json --rules "
                        "kernel-quick --rule repetitions=3 --quiet" +
                        test_support::k_load_free_rules + "--db " + t.db());
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = json::parse(r.out)["runs"][0];
  INFO(run.dump());
  CHECK(run["status"] == "ok");
  CHECK(run["validity"] == "VALID");
  CHECK(run["extra"]["correctness"]["passed"] == true);
  CHECK(run["samples"].size() == 3);
  // Device timing: each sample carries the device's per-sample facts (an object, maybe empty).
  CHECK(run["samples"][0].contains("extra"));
}

TEST_CASE("the CUDA example plugin asks for --backend cuda") {
  test_cli::temp_dir t;
  const std::string so =
      std::string(ACCELBENCH_PLUGIN_DIR) + "/libaccelbench_example_saxpy_cuda.so";
  auto r = test_cli::ab("run --plugin " + so + " example.saxpy_cuda --quiet --db " + t.db());
  INFO(r.err);
  CHECK(r.rc == 2);
  CHECK(r.err.find("cuda") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t.db()));
}
