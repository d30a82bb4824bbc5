#include "harness/core/datasheet_peak.hpp"

#include "harness/core/device_catalogue.hpp"

namespace accelbench {

double datasheet_peak_tflops(const std::string& accelerator_model, const std::string& dtype) {
  const device_spec* d = device_catalogue::builtin().match(accelerator_model);
  return d && !d->measured_peak ? d->peak_for(dtype) : 0;
}

kernel_peak datasheet_peak(const std::string& accelerator_model, dtype type) {
  const std::string dt = to_string(type);
  kernel_peak pk;
  pk.source = peak_source::datasheet;
  pk.tflops = datasheet_peak_tflops(accelerator_model, dt);
  pk.record = {{"tflops", pk.tflops}, {"dtype", dt}, {"source", "NVIDIA datasheet, dense"}};
  pk.what = "NVIDIA datasheet, " + dt + " dense";
  return pk;
}

} // namespace accelbench
