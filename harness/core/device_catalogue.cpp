// The accelerator catalogue: results/devices.json, embedded at build time (devices_json.hpp).
#include "harness/core/device_catalogue.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "devices_json.hpp"
#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

namespace fs = std::filesystem;

double device_spec::peak_for(const std::string& dtype_in) const {
  std::string d = ascii_lower(dtype_in);
  // "fp8-cs" (current scaling), "fp8-mx" (MXFP8) run on the FP8 tensor cores.
  if (d.rfind("fp8", 0) == 0)
    d = "fp8";
  if (d == "mxfp8")
    d = "fp8";
  if (d.rfind("fp4", 0) == 0 || d == "nvfp4")
    d = "fp4";
  if (d == "float32")
    d = "fp32";
  if (d == "bfloat16")
    d = "bf16";
  if (auto it = peak_tflops.find(d); it != peak_tflops.end())
    return it->second;
  if (d == "fp16")
    if (auto it = peak_tflops.find("bf16"); it != peak_tflops.end())
      return it->second;
  return 0;
}

device_catalogue device_catalogue::from_json(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("devices") || !doc["devices"].is_array())
    throw input_error(
        fmt::format("device catalogue '{}': expected an object with a 'devices' array", origin));
  std::vector<device_spec> out;
  size_t i = 0;
  for (const auto& d : doc["devices"]) {
    device_spec s;
    try {
      s.id = d.at("id").get<std::string>();
      s.name = d.value("name", s.id);
      s.family = d.value("family", "");
      for (const auto& p : d.at("patterns"))
        s.patterns.push_back(p.get<std::string>());
      if (d.contains("peak_tflops"))
        for (const auto& [k, v] : d["peak_tflops"].items())
          s.peak_tflops[ascii_lower(k)] = v.get<double>();
      s.hbm_tb_s = d.value("hbm_tb_s", 0.0);
      s.tdp_w = d.value("tdp_w", 0.0);
      s.measured_peak = d.value("measured_peak", false);
      s.source = d.value("source", json::object());
    } catch (const json::exception& e) {
      throw input_error(fmt::format("device catalogue '{}': device #{}: {}", origin, i, e.what()));
    }
    if (s.patterns.empty())
      throw input_error(
          fmt::format("device catalogue '{}': device '{}' has no patterns", origin, s.id));
    out.push_back(std::move(s));
    ++i;
  }
  return device_catalogue(std::move(out));
}

device_catalogue device_catalogue::load(const fs::path& file) {
  return from_json(read_json_file(file, "device catalogue"), file.string());
}

const device_catalogue& device_catalogue::builtin() {
  static const device_catalogue c =
      from_json(parse_json_input(k_devices_json, "built-in results/devices.json"),
                "built-in results/devices.json");
  return c;
}

const device_spec* device_catalogue::match(const std::string& accelerator_model) const {
  const std::string m = ascii_lower(accelerator_model);
  if (m.empty())
    return nullptr;
  for (const auto& d : m_devices)
    for (const auto& p : d.patterns)
      if (m.find(ascii_lower(p)) != std::string::npos)
        return &d;
  return nullptr;
}

const device_spec* device_catalogue::find(const std::string& id) const {
  for (const auto& d : m_devices)
    if (d.id == id)
      return &d;
  return nullptr;
}

std::vector<const device_spec*> device_catalogue::family(const std::string& name) const {
  std::vector<const device_spec*> out;
  for (const auto& d : m_devices)
    if (!d.family.empty() && ascii_lower(d.family) == ascii_lower(name))
      out.push_back(&d);
  return out;
}

std::vector<std::string> device_catalogue::families() const {
  std::vector<std::string> out;
  for (const auto& d : m_devices)
    if (!d.family.empty() && std::find(out.begin(), out.end(), d.family) == out.end())
      out.push_back(d.family);
  return out;
}

} // namespace accelbench
