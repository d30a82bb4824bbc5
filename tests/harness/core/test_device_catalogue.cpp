// harness/core/device_catalogue: results/devices.json embedded at build time, the one source of
// datasheet peaks (report and harness/device), NVL, PCIe and SXM parts matched apart.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/core/device_catalogue.hpp"
#include "harness/core/ruleset.hpp"

using namespace accelbench;

namespace {
std::string id_of(const std::string& model) {
  const device_spec* d = device_catalogue::builtin().match(model);
  return d ? d->id : "";
}
} // namespace

TEST_CASE("device names as CUDA and nvidia-smi report them match their exact part", "[core]") {
  CHECK(id_of("NVIDIA H200 NVL") == "h200-nvl");
  CHECK(id_of("NVIDIA H200") == "h200");
  CHECK(id_of("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(id_of("NVIDIA H100 PCIe") == "h100-pcie");
  CHECK(id_of("NVIDIA H100 NVL") == "h100-nvl");
  CHECK(id_of("NVIDIA GH200 480GB") == "gh200");
  CHECK(id_of("NVIDIA B200") == "b200");
  CHECK(id_of("NVIDIA GB200") == "gb200");
  CHECK(id_of("nvidia h200 nvl") == "h200-nvl"); // case-insensitive
  CHECK(id_of("NVIDIA A100-SXM4-80GB").empty());
  // An NVL part never gets the SXM part's peaks (the report once gave it them).
  const auto& c = device_catalogue::builtin();
  CHECK(c.match("NVIDIA H200 NVL")->peak_for("bf16") < c.match("NVIDIA H200")->peak_for("bf16"));
  CHECK(c.match("NVIDIA H100 NVL")->peak_for("bf16") <
        c.match("NVIDIA H100 80GB HBM3")->peak_for("bf16"));
}

TEST_CASE("the catalogue's dtype names cover the kernels' dtypes", "[core]") {
  const device_spec* h200 = device_catalogue::builtin().find("h200");
  REQUIRE(h200);
  for (const char* fp8 : {"fp8", "fp8_e4m3", "fp8_e5m2", "mxfp8", "fp8-cs", "fp8-mx"})
    CHECK(h200->peak_for(fp8) == h200->peak_tflops.at("fp8"));
  CHECK(h200->peak_for("fp16") == h200->peak_tflops.at("fp16"));
  CHECK(h200->peak_for("nvfp4") == 0); // Hopper has no FP4 tensor cores
  const device_spec* b200 = device_catalogue::builtin().find("b200");
  REQUIRE(b200);
  CHECK(b200->peak_for("nvfp4") == b200->peak_tflops.at("fp4"));
}

TEST_CASE("the embedded catalogue is results/devices.json as built", "[core]") {
  const auto file = device_catalogue::load(data_root() / "results" / "devices.json");
  const auto& built = device_catalogue::builtin();
  REQUIRE(file.devices().size() == built.devices().size());
  for (size_t i = 0; i < file.devices().size(); ++i) {
    CHECK(file.devices()[i].id == built.devices()[i].id);
    CHECK(file.devices()[i].peak_tflops == built.devices()[i].peak_tflops);
  }
}

TEST_CASE("the catalogue's families name every model of a generation", "[core]") {
  const auto& c = device_catalogue::builtin();
  CHECK(c.families() == std::vector<std::string>{"Blackwell", "Hopper"});
  std::vector<std::string> blackwell;
  for (const auto* d : c.family("blackwell")) // case-insensitive
    blackwell.push_back(d->id);
  CHECK(blackwell == std::vector<std::string>{"gb200", "b300", "b200"});
  // family= matches by name tokens: GB300 is listed beside B300, which finds it only as a
  // substring.
  const auto* b300 = c.find("b300");
  REQUIRE(b300);
  CHECK(std::find(b300->patterns.begin(), b300->patterns.end(), "GB300") != b300->patterns.end());
  CHECK(c.family("Hopper").size() == 6);
  CHECK(c.family("Ampere").empty());
  CHECK(c.find("cpu")->family.empty());
}
