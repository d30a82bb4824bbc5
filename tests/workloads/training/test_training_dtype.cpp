// train.llama's dtype: the core's typed dtype, read once where the config is (parse_compute_dtype)
// and offered as the axis' choices by name; fp32 and bf16 only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "harness/core/dtype.hpp"
#include "harness/core/error.hpp"
#include "workloads/training/cpu/ops.hpp"
#include "workloads/training/train_workload.hpp"

using namespace accelbench;
using namespace accelbench::training;

TEST_CASE("train.llama dtype: fp32 and bf16 parse to the core's dtype, nothing else does") {
  CHECK(parse_compute_dtype("fp32") == dtype::fp32);
  CHECK(parse_compute_dtype("bf16") == dtype::bf16);
  for (const char* other : {"tf32", "fp16", "fp8_e4m3", "nvfp4", "int4", "", "BF16"}) {
    INFO(other);
    try {
      parse_compute_dtype(other);
      FAIL("accepted");
    } catch (const input_error& e) {
      CHECK(std::string(e.what()) ==
            "train.llama: dtype must be fp32 or bf16, got '" + std::string(other) + "'");
    }
  }
}

TEST_CASE("train.llama dtype: the axis offers the names of the training dtypes, fp32 first") {
  auto w = make_training_workload();
  const auto& axes = w->spec().axes;
  auto it = std::find_if(axes.begin(), axes.end(), [](const axis& a) { return a.name == "dtype"; });
  REQUIRE(it != axes.end());
  CHECK(it->default_value == "fp32");
  CHECK(it->choices == std::vector<std::string>{"fp32", "bf16"});
  for (const auto& name : it->choices)
    CHECK(to_string(parse_compute_dtype(name)) == name);
  // The settings carry the enum; what is stored is its name.
  auto cfg = resolve_config(w->spec(), "cpu", {{"dtype", "bf16"}});
  CHECK(resolve_settings(cfg, nullptr).options.dtype == dtype::bf16);
}
