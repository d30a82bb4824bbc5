#pragma once
// The accelerator catalogue (results/devices.json, embedded at build time): dense peak tensor
// throughput by dtype, HBM bandwidth, TDP, matched from an accelerator model name. The one source
// of datasheet peaks: the report (per-accelerator normalisation, % of peak) and harness/device's
// datasheet peak of CUDA kernel runs both read it.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

struct device_spec {
  std::string id;                            // h100-sxm, h200-nvl, b200, gb200, cpu, ...
  std::string name;                          // "H100 SXM"
  std::string family;                        // "Hopper", "Blackwell"; "": none (the CPU)
  std::vector<std::string> patterns;         // case-insensitive substrings of the accelerator model
  std::map<std::string, double> peak_tflops; // dense peak by dtype (bf16, fp8, fp4, tf32, fp32)
  double hbm_tb_s = 0;
  double tdp_w = 0;             // 0: unknown
  bool measured_peak = false;   // "cpu": the peak accelbench measures itself
  json source = json::object(); // {doc, url}
  // Peak for a dtype; "fp8-cs"/"fp8-mx", fp8_e4m3, fp8_e5m2 and mxfp8 count as fp8, nvfp4 as
  // fp4, "fp16" falls back to bf16. 0: unknown.
  double peak_for(const std::string& dtype) const;
};

class device_catalogue {
public:
  device_catalogue() = default;
  explicit device_catalogue(std::vector<device_spec> d) : m_devices(std::move(d)) {}
  // Throws input_error naming the file and the problem.
  static device_catalogue load(const std::filesystem::path& file);
  static device_catalogue from_json(const json& doc, const std::string& origin);
  // results/devices.json as this binary was built with it (embedded, parsed once).
  static const device_catalogue& builtin();
  // First device (in file order) with a pattern contained in `accelerator_model`, compared
  // case-insensitively: the file lists specific parts first ("H200 NVL" before "H200", "H100 NVL"
  // and "H100 PCIe" before the "H100" of the SXM part). nullptr: none.
  const device_spec* match(const std::string& accelerator_model) const;
  const device_spec* find(const std::string& id) const;
  // The devices of a family (its name compared case-insensitively), in file order; none: a
  // family the catalogue does not know.
  std::vector<const device_spec*> family(const std::string& name) const;
  // The families the catalogue knows, in file order, each once.
  std::vector<std::string> families() const;
  const std::vector<device_spec>& devices() const { return m_devices; }

private:
  std::vector<device_spec> m_devices;
};

} // namespace accelbench
